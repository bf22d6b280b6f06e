// Strided copy with dtype conversion, and fill.
#include "common.h"
#include "fastcall.h"
#include "float8.h"

namespace fw {
namespace {

template <typename D, typename S>
inline D cast(S v) {
  if constexpr (std::is_same<D, bool>::value) {
    return static_cast<float>(v) != 0.0f || (!is_float_v<S> && v != S(0));
  } else if constexpr (std::is_same<D, Half>::value || std::is_same<D, BFloat16>::value ||
                       is_float8_v<D>) {
    return D(static_cast<float>(static_cast<acc_t<S>>(v)));
  } else if constexpr (std::is_integral<S>::value && sizeof(S) < 8 &&
                       std::is_floating_point<D>::value) {
    // small ints convert straight to float (through int64 the loop does not vectorize)
    return static_cast<D>(v);
  } else if constexpr (is_float_v<S> && !std::is_floating_point<D>::value) {
    // float -> int: go through int64 like PyTorch so that e.g. -1.0 -> uint8 wraps to 255
    return static_cast<D>(static_cast<int64_t>(static_cast<acc_t<S>>(v)));
  } else {
    return static_cast<D>(static_cast<acc_t<S>>(v));
  }
}

// One run of the innermost dim: n elements from sp (stride is) to dp (stride id).
template <typename D, typename S>
inline void copy_run(D* dp, const S* sp, int64_t n, int64_t id, int64_t is) {
  if (id == 1 && is == 1) {
    if constexpr (std::is_same<D, S>::value) {
      std::memcpy(dp, sp, n * sizeof(D));
    } else {
      for (int64_t i = 0; i < n; i++) dp[i] = cast<D>(sp[i]);
    }
  } else if (id == 1 && is == 0) {
    const D v = cast<D>(sp[0]);
    for (int64_t i = 0; i < n; i++) dp[i] = v;
  } else if (id == 1 && is == -1) {  // flip along the last dim
    for (int64_t i = 0; i < n; i++) dp[i] = cast<D>(sp[-i]);
  } else if (id == 1) {  // a gather (a permuted or sliced source): unit-stride stores
    for (int64_t i = 0; i < n; i++) dp[i] = cast<D>(sp[i * is]);
  } else {
    for (int64_t i = 0; i < n; i++) dp[i * id] = cast<D>(sp[i * is]);
  }
}

template <typename D, typename S>
void copy_impl(uintptr_t dst, uintptr_t src, const Shape& shape, const Shape& sd, const Shape& ss) {
  Nest<2> nest(shape, {&sd, &ss}, true);
  D* d = ptr<D>(dst);
  const S* s = ptr<S>(src);
  const int64_t id = nest.inner_stride(0), is = nest.inner_stride(1);
  nest.parallel([&](const int64_t* off, int64_t n) {
    copy_run<D, S>(d + off[0], s + off[1], n, id, is);
  });
}

// dst + k * step <- srcs[k] for every k: sources of one layout into the slices of one
// result (stack of a batch), split among threads by source.
template <typename D, typename S>
void copy_many_impl(uintptr_t dst, int64_t step, const Shape& srcs, const Shape& shape,
                    const Shape& sd, const Shape& ss) {
  Nest<2> nest(shape, {&sd, &ss}, true);
  if (nest.numel == 0) return;
  D* d = ptr<D>(dst);
  const int64_t id = nest.inner_stride(0), is = nest.inner_stride(1);
  const int64_t per = nest.numel, grain = std::max<int64_t>(1, 32768 / per);
  parallel_for(0, (int64_t)srcs.size(), grain, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; k++) {
      D* dk = d + k * step;
      const S* sk = ptr<S>((uintptr_t)srcs[k]);
      nest.runs(0, per, [&](const int64_t* off, int64_t n) {
        copy_run<D, S>(dk + off[0], sk + off[1], n, id, is);
      });
    }
  });
}

template <typename T>
void fill_impl(uintptr_t dst, const Shape& shape, const Shape& sd, T v) {
  Nest<1> nest(shape, {&sd}, true);
  T* d = ptr<T>(dst);
  const int64_t id = nest.inner_stride(0);
  nest.parallel([&](const int64_t* off, int64_t n) {
    T* dp = d + off[0];
    if (id == 1) {
      for (int64_t i = 0; i < n; i++) dp[i] = v;
    } else {
      for (int64_t i = 0; i < n; i++) dp[i * id] = v;
    }
  });
}

}  // namespace

// Every dtype, float8 included: copies and fills are what float8 tensors support.
#define FW_DISPATCH_COPY(dt, name, ...)                                     \
  FW_SWITCH(dt, name, FW_CASE(0, bool, __VA_ARGS__) FW_INT_CASES(__VA_ARGS__)             \
                      FW_FLOAT_CASES(__VA_ARGS__) FW_FLOAT8_CASES(__VA_ARGS__))

// dst[...] = cast(src[...]) over `shape`; strides in elements, src may broadcast (stride 0).
void copy(int dt_dst, uintptr_t dst, const Shape& sd, int dt_src, uintptr_t src,
          const Shape& ss, const Shape& shape) {
  FW_DISPATCH_COPY(dt_dst, "copy", {
    using D = scalar_t;
    FW_DISPATCH_COPY(dt_src, "copy", { copy_impl<D, scalar_t>(dst, src, shape, sd, ss); });
  });
}

void copy_many(int dt_dst, uintptr_t dst, int64_t step, const Shape& sd, int dt_src,
               const Shape& srcs, const Shape& ss, const Shape& shape) {
  FW_DISPATCH_COPY(dt_dst, "copy", {
    using D = scalar_t;
    FW_DISPATCH_COPY(dt_src, "copy", {
      copy_many_impl<D, scalar_t>(dst, step, srcs, shape, sd, ss);
    });
  });
}

// Fills a strided region with a value given as double (floats) or int64 (ints and bool).
void fill(int dt, uintptr_t dst, const Shape& sd, const Shape& shape, double fv, int64_t iv,
          bool is_float_value) {
  FW_DISPATCH_COPY(dt, "fill", {
    scalar_t v;
    if constexpr (is_float_v<scalar_t>) {
      v = is_float_value ? scalar_t(fv) : scalar_t((double)iv);
    } else if constexpr (std::is_same<scalar_t, bool>::value) {
      v = is_float_value ? fv != 0.0 : iv != 0;
    } else {
      v = is_float_value ? (scalar_t)(int64_t)fv : (scalar_t)iv;
    }
    fill_impl<scalar_t>(dst, shape, sd, v);
  });
}

namespace {
// copy(dt_dst, dst, dst_strides, dt_src, src, src_strides, shape)
void copy_fast(const FastArgs& a) {
  a.expect(7);
  // parse every argument while holding the GIL, then release it for the copy
  Shape sd = a.shape(2), ss = a.shape(5), shape = a.shape(6);
  const int dt_dst = (int)a.i(0), dt_src = (int)a.i(3);
  const uintptr_t dst = a.ptr(1), src = a.ptr(4);
  NoGil nogil(shape_numel(shape) > (1 << 16));
  copy(dt_dst, dst, sd, dt_src, src, ss, shape);
}
// fill(dt, dst, dst_strides, shape, float_value, int_value, is_float)
void fill_fast(const FastArgs& a) {
  a.expect(7);
  Shape sd = a.shape(2), shape = a.shape(3);
  const int dt = (int)a.i(0);
  const uintptr_t dst = a.ptr(1);
  const double fv = a.d(4);
  const int64_t iv = a.i(5);
  const bool is_float = a.b(6);
  NoGil nogil(shape_numel(shape) > (1 << 16));
  fill(dt, dst, sd, shape, fv, iv, is_float);
}
// copy_many(dt_dst, dst, dst_step, dst_strides, dt_src, src_ptrs, src_strides, shape)
void copy_many_fast(const FastArgs& a) {
  a.expect(8);
  Shape sd = a.shape(3), srcs = a.shape(5), ss = a.shape(6), shape = a.shape(7);
  const int dt_dst = (int)a.i(0), dt_src = (int)a.i(4);
  const uintptr_t dst = a.ptr(1);
  const int64_t step = a.i(2);
  NoGil nogil(shape_numel(shape) * (int64_t)srcs.size() > (1 << 16));
  copy_many(dt_dst, dst, step, sd, dt_src, srcs, ss, shape);
}
// concat_bytes(dst, src_ptrs, nbytes): the sources' bytes one after another from dst
// (stack and cat of contiguous tensors: one call instead of one copy per tensor)
void concat_bytes_fast(const FastArgs& a) {
  a.expect(3);
  const uintptr_t dst = a.ptr(0);
  Shape srcs = a.shape(1), nbytes = a.shape(2);
  if (srcs.size() != nbytes.size()) throw std::invalid_argument("concat_bytes: length mismatch");
  std::vector<int64_t> starts(srcs.size() + 1, 0);
  for (size_t k = 0; k < srcs.size(); k++) starts[k + 1] = starts[k] + nbytes[k];
  // one thread: a batch's copy is bound by memory bandwidth, and worker threads only
  // contend with the data loader's own
  NoGil nogil(starts.back() > (1 << 18));
  for (size_t k = 0; k < srcs.size(); k++)
    std::memcpy(reinterpret_cast<char*>(dst) + starts[k], reinterpret_cast<const char*>(srcs[k]),
                (size_t)nbytes[k]);
}
}  // namespace

void register_copy(py::module_& m) {
  def_fast<concat_bytes_fast>(m, "concat_bytes", "concat_bytes(dst, src_ptrs, nbytes)");
  def_fast<copy_many_fast>(m, "copy_many",
                           "copy_many(dt_dst, dst, dst_step, dst_strides, dt_src, src_ptrs, "
                           "src_strides, shape)");
  def_fast<copy_fast>(m, "copy", "copy(dt_dst, dst, dst_strides, dt_src, src, src_strides, shape)");
  def_fast<fill_fast>(m, "fill", "fill(dt, dst, dst_strides, shape, float_value, int_value, is_float)");
}

}  // namespace fw
