// Convolution kernels of the CPU backend: im2col and col2im, the data movement around the
// GEMM that convolutions are built on (framework/_ops/conv.py).
//
// Both work on 1, 2 or 3 spatial dims; the launcher (framework/_cpu/conv.py) makes 1-d and
// 2-d problems 3-d with leading size-1 dims (kernel 1, stride 1, no padding), so one loop
// nest serves all and the innermost loop runs along the last (widest) spatial dim. Names:
//   input  x    (N, C, I0, I1, I2), any strides
//   columns     (N, C * K0 * K1 * K2, G0, G1, G2): strides cs[0] (batch) and cs[1] (row)
//               of the caller's choice, the grid contiguous; row c*KK + (k0, k1, k2)
//               holds, at grid position (g0, g1, g2), the input element at
//               i_d = g_d * stride_d - pad_d + k_d * dilation_d (zero outside the input)
// col2im is im2col's adjoint: it sums every column entry back onto the input element it
// was read from (entries that read padding are dropped). Its output is contiguous.
#include <algorithm>

#include "common.h"

namespace fw {
namespace {

struct Geometry {
  int64_t n, c;
  int64_t in[3], grid[3], k[3], dil[3], pad[3], stride[3];
  int64_t kk() const { return k[0] * k[1] * k[2]; }
  int64_t grid_numel() const { return grid[0] * grid[1] * grid[2]; }
  int64_t in_numel() const { return in[0] * in[1] * in[2]; }
};

// The grid positions [lo, hi) of the last dim whose input index g * s + off lies in [0, n).
inline void valid_range(int64_t off, int64_t s, int64_t n, int64_t g, int64_t& lo, int64_t& hi) {
  lo = off >= 0 ? 0 : (-off + s - 1) / s;
  hi = (n - 1 - off) < 0 ? 0 : (n - 1 - off) / s + 1;
  lo = std::min(lo, g);
  hi = std::max(lo, std::min(hi, g));
}

template <typename T>
void im2col(const T* x, const int64_t* xs, T* cols, const int64_t* cs, const Geometry& q) {
  const int64_t kk = q.kk(), ng = q.grid_numel();
  const int64_t rows = q.n * q.c * kk;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(ng, 1));
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; r++) {
      int64_t t = r;
      const int64_t k2 = t % q.k[2]; t /= q.k[2];
      const int64_t k1 = t % q.k[1]; t /= q.k[1];
      const int64_t k0 = t % q.k[0]; t /= q.k[0];
      const int64_t c = t % q.c, n = t / q.c;
      const T* xb = x + n * xs[0] + c * xs[1];
      T* out = cols + n * cs[0] + (r - n * q.c * kk) * cs[1];
      const int64_t off2 = k2 * q.dil[2] - q.pad[2];
      int64_t lo, hi;
      valid_range(off2, q.stride[2], q.in[2], q.grid[2], lo, hi);
      for (int64_t g0 = 0; g0 < q.grid[0]; g0++) {
        const int64_t i0 = g0 * q.stride[0] - q.pad[0] + k0 * q.dil[0];
        for (int64_t g1 = 0; g1 < q.grid[1]; g1++, out += q.grid[2]) {
          const int64_t i1 = g1 * q.stride[1] - q.pad[1] + k1 * q.dil[1];
          if (i0 < 0 || i0 >= q.in[0] || i1 < 0 || i1 >= q.in[1]) {
            std::fill(out, out + q.grid[2], T(0));
            continue;
          }
          const T* src = xb + i0 * xs[2] + i1 * xs[3];
          std::fill(out, out + lo, T(0));
          if (q.stride[2] == 1 && xs[4] == 1) {
            std::copy(src + lo + off2, src + hi + off2, out + lo);
          } else {
            const int64_t step = q.stride[2] * xs[4];
            const T* p = src + (lo * q.stride[2] + off2) * xs[4];
            for (int64_t g2 = lo; g2 < hi; g2++, p += step) out[g2] = *p;
          }
          std::fill(out + hi, out + q.grid[2], T(0));
        }
      }
    }
  });
}

// One (n, c) plane of the output per task: only that plane's KK column rows write to it,
// so tasks never share output memory. 16-bit floats accumulate in float.
template <typename T>
void col2im(const T* cols, const int64_t* cs, T* out, const Geometry& q) {
  using A = acc_t<T>;
  const int64_t kk = q.kk(), ng = q.grid_numel(), plane = q.in_numel();
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(kk * ng, 1));
  parallel_for(0, q.n * q.c, grain, [&](int64_t b, int64_t e) {
    std::vector<A> buf(std::is_same<A, T>::value ? 0 : plane);
    for (int64_t nc = b; nc < e; nc++) {
      T* o = out + nc * plane;
      A* acc = std::is_same<A, T>::value ? reinterpret_cast<A*>(o) : buf.data();
      std::fill(acc, acc + plane, A(0));
      for (int64_t kr = 0; kr < kk; kr++) {
        const int64_t k2 = kr % q.k[2], k1 = (kr / q.k[2]) % q.k[1], k0 = kr / (q.k[2] * q.k[1]);
        const int64_t n = nc / q.c, c = nc % q.c;
        const T* col = cols + n * cs[0] + (c * kk + kr) * cs[1];
        const int64_t off2 = k2 * q.dil[2] - q.pad[2];
        int64_t lo, hi;
        valid_range(off2, q.stride[2], q.in[2], q.grid[2], lo, hi);
        for (int64_t g0 = 0; g0 < q.grid[0]; g0++) {
          const int64_t i0 = g0 * q.stride[0] - q.pad[0] + k0 * q.dil[0];
          for (int64_t g1 = 0; g1 < q.grid[1]; g1++, col += q.grid[2]) {
            const int64_t i1 = g1 * q.stride[1] - q.pad[1] + k1 * q.dil[1];
            if (i0 < 0 || i0 >= q.in[0] || i1 < 0 || i1 >= q.in[1]) continue;
            A* dst = acc + (i0 * q.in[1] + i1) * q.in[2];
            const int64_t s = q.stride[2];
            for (int64_t g2 = lo; g2 < hi; g2++) dst[g2 * s + off2] += A(col[g2]);
          }
        }
      }
      if (!std::is_same<A, T>::value)
        for (int64_t i = 0; i < plane; i++) o[i] = T(acc[i]);
    }
  });
}

Geometry geometry(const Shape& nc, const Shape& in, const Shape& grid, const Shape& k,
                  const Shape& dil, const Shape& pad, const Shape& stride) {
  if (nc.size() != 2 || in.size() != 3 || grid.size() != 3 || k.size() != 3 ||
      dil.size() != 3 || pad.size() != 3 || stride.size() != 3)
    fail("internal: conv geometry must have 3 spatial dims");
  Geometry q;
  q.n = nc[0];
  q.c = nc[1];
  for (int d = 0; d < 3; d++) {
    q.in[d] = in[d]; q.grid[d] = grid[d]; q.k[d] = k[d];
    q.dil[d] = dil[d]; q.pad[d] = pad[d]; q.stride[d] = stride[d];
    if (k[d] < 1 || dil[d] < 1 || stride[d] < 1 || pad[d] < 0 || in[d] < 0 || grid[d] < 0)
      fail("internal: bad conv geometry");
  }
  return q;
}

}  // namespace

void register_conv(py::module_& m) {
  // x: (N, C, *in) with strides xs (5 values); cols: (N, C*KK, *grid) with batch and row
  // strides cs (2 values), the grid contiguous
  m.def("im2col", [](int dt, uintptr_t x, const Shape& xs, uintptr_t cols, const Shape& cs,
                     const Shape& nc, const Shape& in, const Shape& grid, const Shape& k,
                     const Shape& dil, const Shape& pad, const Shape& stride) {
    Geometry q = geometry(nc, in, grid, k, dil, pad, stride);
    if (xs.size() != 5 || cs.size() != 2) fail("internal: im2col needs 5 + 2 strides");
    py::gil_scoped_release nogil;
    FW_DISPATCH_NUMERIC(dt, "im2col_out", im2col<scalar_t>(ptr<scalar_t>(x), xs.data(),
                                                           ptr<scalar_t>(cols), cs.data(), q));
  });
  // cols: (N, C*KK, *grid) with batch and row strides cs, the grid contiguous; out:
  // contiguous (N, C, *in), fully written
  m.def("col2im", [](int dt, uintptr_t cols, const Shape& cs, uintptr_t out, const Shape& nc,
                     const Shape& in, const Shape& grid, const Shape& k, const Shape& dil,
                     const Shape& pad, const Shape& stride) {
    Geometry q = geometry(nc, in, grid, k, dil, pad, stride);
    if (cs.size() != 2) fail("internal: col2im needs 2 column strides");
    py::gil_scoped_release nogil;
    FW_DISPATCH_NUMERIC(dt, "col2im_out", col2im<scalar_t>(ptr<scalar_t>(cols), cs.data(),
                                                           ptr<scalar_t>(out), q));
  });
}

}  // namespace fw
