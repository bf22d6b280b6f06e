// Pointwise kernels of the CPU backend: one strided loop template per arity, and each op a
// small functor. The Python layer has already broadcast the operands (stride 0), promoted
// them to the compute dtype and allocated the output.
#include "common.h"

#include <unordered_map>

namespace fw {
namespace {

struct Params { double p0, p1, p2; };

// Which dtypes an op accepts; the dispatch switch is generated from this.
enum Types { FLOATS, INTS, ALL_NUMERIC /* ints + floats */, ALL /* + bool */, INTS_BOOL };

template <typename R, typename C> inline R to_out(C v) {
  if constexpr (std::is_same<R, bool>::value) return v != C(0);
  else return R(v);
}

// ---- loops ----------------------------------------------------------------------------

template <typename Op, typename T>
void unary_loop(uintptr_t out, uintptr_t x, const Shape& shape, const Shape& so, const Shape& sx,
                const Params& p) {
  using R = typename Op::template out_t<T>;
  using C = acc_t<T>;
  Nest<2> nest(shape, {&so, &sx});
  const int64_t io = nest.inner_stride(0), ix = nest.inner_stride(1);
  R* o0 = ptr<R>(out);
  const T* x0 = ptr<T>(x);
  nest.parallel([&](const int64_t* off, int64_t n) {
    R* o = o0 + off[0];
    const T* a = x0 + off[1];
    if (io == 1 && ix == 1) {
      for (int64_t i = 0; i < n; i++) o[i] = to_out<R>(Op::apply(C(a[i]), p));
    } else {
      for (int64_t i = 0; i < n; i++) o[i * io] = to_out<R>(Op::apply(C(a[i * ix]), p));
    }
  });
}

template <typename Op, typename T>
void binary_loop(uintptr_t out, uintptr_t a, uintptr_t b, const Shape& shape, const Shape& so,
                 const Shape& sa, const Shape& sb, const Params& p) {
  using R = typename Op::template out_t<T>;
  using C = acc_t<T>;
  Nest<3> nest(shape, {&so, &sa, &sb});
  const int64_t io = nest.inner_stride(0), ia = nest.inner_stride(1), ib = nest.inner_stride(2);
  R* o0 = ptr<R>(out);
  const T* a0 = ptr<T>(a);
  const T* b0 = ptr<T>(b);
  nest.parallel([&](const int64_t* off, int64_t n) {
    R* o = o0 + off[0];
    const T* x = a0 + off[1];
    const T* y = b0 + off[2];
    // the common layouts get loops the compiler can vectorize
    if (io == 1 && ia == 1 && ib == 1) {
      for (int64_t i = 0; i < n; i++) o[i] = to_out<R>(Op::apply(C(x[i]), C(y[i]), p));
    } else if (io == 1 && ia == 1 && ib == 0) {
      const C yv = C(y[0]);
      for (int64_t i = 0; i < n; i++) o[i] = to_out<R>(Op::apply(C(x[i]), yv, p));
    } else if (io == 1 && ia == 0 && ib == 1) {
      const C xv = C(x[0]);
      for (int64_t i = 0; i < n; i++) o[i] = to_out<R>(Op::apply(xv, C(y[i]), p));
    } else {
      for (int64_t i = 0; i < n; i++)
        o[i * io] = to_out<R>(Op::apply(C(x[i * ia]), C(y[i * ib]), p));
    }
  });
}

// ---- op functors ------------------------------------------------------------------------
// Each has `out_t<T>` (result element type) and `apply` on the compute type acc_t<T>.

template <typename T> using same_t = T;
template <typename T> using bool_t = bool;

#define FW_UNARY_OP(NAME, OUT, EXPR)                                          \
  struct NAME {                                                               \
    template <typename T> using out_t = OUT<T>;                               \
    template <typename C> static inline auto apply(C x, const Params& p) {    \
      (void)p; return EXPR;                                                   \
    }                                                                         \
  };
#define FW_BINARY_OP(NAME, OUT, EXPR)                                         \
  struct NAME {                                                               \
    template <typename T> using out_t = OUT<T>;                               \
    template <typename C> static inline auto apply(C a, C b, const Params& p) { \
      (void)p; return EXPR;                                                   \
    }                                                                         \
  };

FW_UNARY_OP(Neg, same_t, C(-x))
FW_UNARY_OP(Abs, same_t, C(x < C(0) ? C(-x) : x))
FW_UNARY_OP(Exp, same_t, C(std::exp(x)))
FW_UNARY_OP(Sqrt, same_t, C(std::sqrt(x)))
FW_UNARY_OP(IsNan, bool_t, x != x)

FW_BINARY_OP(Add, same_t, C(a + C(p.p0) * b))
FW_BINARY_OP(Sub, same_t, C(a - C(p.p0) * b))
FW_BINARY_OP(Mul, same_t, C(a * b))
FW_BINARY_OP(Div, same_t, C(a / b))
FW_BINARY_OP(Maximum, same_t, C((a != a || a > b) ? a : b))
FW_BINARY_OP(Eq, bool_t, a == b)
FW_BINARY_OP(Ne, bool_t, a != b)
FW_BINARY_OP(Lt, bool_t, a < b)
FW_BINARY_OP(Le, bool_t, a <= b)
FW_BINARY_OP(Gt, bool_t, a > b)
FW_BINARY_OP(Ge, bool_t, a >= b)

// Add on bool is logical or (PyTorch); alpha applies to ints as an integer.
struct AddBool {
  template <typename T> using out_t = T;
  static inline bool apply(bool a, bool b, const Params&) { return a || b; }
};

// ---- registration -----------------------------------------------------------------------

using UnaryFn = void (*)(int, int, uintptr_t, uintptr_t, const Shape&, const Shape&,
                         const Shape&, const Params&);
using BinaryFn = void (*)(int, int, uintptr_t, uintptr_t, uintptr_t, const Shape&, const Shape&,
                          const Shape&, const Shape&, const Params&);

template <typename Op, Types TY>
void unary_entry(int dt, int dt_out, uintptr_t out, uintptr_t x, const Shape& shape,
                 const Shape& so, const Shape& sx, const Params& p, const char* name) {
  auto go = [&](auto tag) {
    using T = decltype(tag);
    using R = typename Op::template out_t<T>;
    (void)sizeof(R);
    unary_loop<Op, T>(out, x, shape, so, sx, p);
  };
  if constexpr (TY == FLOATS) { FW_DISPATCH_FLOAT(dt, name, go(scalar_t{})) }
  else if constexpr (TY == INTS) { FW_DISPATCH_INT(dt, name, go(scalar_t{})) }
  else if constexpr (TY == INTS_BOOL) {
    if (dt == 0) go(bool{}); else { FW_DISPATCH_INT(dt, name, go(scalar_t{})) }
  } else if constexpr (TY == ALL_NUMERIC) {
    if (dt == 0) not_implemented(name, dt);
    FW_DISPATCH_ALL(dt, name, go(scalar_t{}))
  } else { FW_DISPATCH_ALL(dt, name, go(scalar_t{})) }
  (void)dt_out;
}

template <typename Op, Types TY>
void binary_entry(int dt, int dt_out, uintptr_t out, uintptr_t a, uintptr_t b, const Shape& shape,
                  const Shape& so, const Shape& sa, const Shape& sb, const Params& p,
                  const char* name) {
  auto go = [&](auto tag) {
    using T = decltype(tag);
    binary_loop<Op, T>(out, a, b, shape, so, sa, sb, p);
  };
  if constexpr (TY == FLOATS) { FW_DISPATCH_FLOAT(dt, name, go(scalar_t{})) }
  else if constexpr (TY == INTS) { FW_DISPATCH_INT(dt, name, go(scalar_t{})) }
  else if constexpr (TY == INTS_BOOL) {
    if (dt == 0) go(bool{}); else { FW_DISPATCH_INT(dt, name, go(scalar_t{})) }
  } else if constexpr (TY == ALL_NUMERIC) {
    if (dt == 0) not_implemented(name, dt);
    FW_DISPATCH_ALL(dt, name, go(scalar_t{}))
  } else { FW_DISPATCH_ALL(dt, name, go(scalar_t{})) }
  (void)dt_out;
}

struct UnaryKernel { const char* name; std::function<void(int, int, uintptr_t, uintptr_t,
    const Shape&, const Shape&, const Shape&, const Params&)> fn; };
struct BinaryKernel { const char* name; std::function<void(int, int, uintptr_t, uintptr_t,
    uintptr_t, const Shape&, const Shape&, const Shape&, const Shape&, const Params&)> fn; };

#define FW_U(NAME, OP, TY) {NAME, [](int dt, int dto, uintptr_t o, uintptr_t x, const Shape& s, \
    const Shape& so, const Shape& sx, const Params& p) {                                      \
    unary_entry<OP, TY>(dt, dto, o, x, s, so, sx, p, NAME); }}
#define FW_B(NAME, OP, TY) {NAME, [](int dt, int dto, uintptr_t o, uintptr_t a, uintptr_t b,  \
    const Shape& s, const Shape& so, const Shape& sa, const Shape& sb, const Params& p) {     \
    binary_entry<OP, TY>(dt, dto, o, a, b, s, so, sa, sb, p, NAME); }}

const std::vector<UnaryKernel>& unary_kernels() {
  static const std::vector<UnaryKernel> k = {
      FW_U("neg", Neg, ALL_NUMERIC),
      FW_U("abs", Abs, ALL_NUMERIC),
      FW_U("exp", Exp, FLOATS),
      FW_U("sqrt", Sqrt, FLOATS),
      FW_U("isnan", IsNan, ALL),
  };
  return k;
}

// add/sub on bool inputs: PyTorch computes logical or (sub raises in Python first).
template <typename OpNum>
void add_like(int dt, int dto, uintptr_t o, uintptr_t a, uintptr_t b, const Shape& s,
              const Shape& so, const Shape& sa, const Shape& sb, const Params& p,
              const char* name) {
  if (dt == 0) binary_loop<AddBool, bool>(o, a, b, s, so, sa, sb, p);
  else binary_entry<OpNum, ALL>(dt, dto, o, a, b, s, so, sa, sb, p, name);
}

const std::vector<BinaryKernel>& binary_kernels() {
  static const std::vector<BinaryKernel> k = {
      {"add", [](int dt, int dto, uintptr_t o, uintptr_t a, uintptr_t b, const Shape& s,
                 const Shape& so, const Shape& sa, const Shape& sb, const Params& p) {
         add_like<Add>(dt, dto, o, a, b, s, so, sa, sb, p, "add");
       }},
      FW_B("sub", Sub, ALL_NUMERIC),
      FW_B("mul", Mul, ALL),
      FW_B("div", Div, FLOATS),
      FW_B("maximum", Maximum, ALL),
      FW_B("eq", Eq, ALL),
      FW_B("ne", Ne, ALL),
      FW_B("lt", Lt, ALL),
      FW_B("le", Le, ALL),
      FW_B("gt", Gt, ALL),
      FW_B("ge", Ge, ALL),
  };
  return k;
}

template <typename K>
py::dict names(const std::vector<K>& ks) {
  py::dict d;
  for (size_t i = 0; i < ks.size(); i++) d[ks[i].name] = (int)i;
  return d;
}

void check_code(int code, size_t n, const char* what) {
  if (code < 0 || (size_t)code >= n) fail(std::string("internal: bad ") + what + " kernel code");
}

}  // namespace

void register_pointwise(py::module_& m) {
  m.def("unary_ops", [] { return names(unary_kernels()); });
  m.def("binary_ops", [] { return names(binary_kernels()); });
  m.def("ternary_ops", [] { return py::dict(); });
  m.def("unary", [](int code, int dt, int dto, uintptr_t o, uintptr_t x, const Shape& s,
                    const Shape& so, const Shape& sx, double p0, double p1, double p2) {
    check_code(code, unary_kernels().size(), "unary");
    unary_kernels()[code].fn(dt, dto, o, x, s, so, sx, Params{p0, p1, p2});
  });
  m.def("binary", [](int code, int dt, int dto, uintptr_t o, uintptr_t a, uintptr_t b,
                     const Shape& s, const Shape& so, const Shape& sa, const Shape& sb,
                     double p0, double p1, double p2) {
    check_code(code, binary_kernels().size(), "binary");
    binary_kernels()[code].fn(dt, dto, o, a, b, s, so, sa, sb, Params{p0, p1, p2});
  });
}

}  // namespace fw
