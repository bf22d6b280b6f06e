// Pooling kernels: max pooling with indices (regular windows and adaptive bins).
//
// The input is a contiguous stack of `planes` volumes (D, H, W) (1d and 2d pooling use
// D = 1 or D = H = 1); the outputs are contiguous (planes, OD, OH, OW): the maxima, and
// their int64 positions within the input volume ((d * H + h) * W + w), as PyTorch returns
// them. Windows follow PyTorch's rules:
//   regular: output o covers o*stride - pad + j*dilation for j in [0, kernel), clipped to
//            the input;
//   adaptive: output o covers [floor(o*L/out), ceil((o+1)*L/out)).
// The maximum starts at -inf (the lowest value for integers) at the window's first valid
// position, and moves to an element that is greater, or NaN: ties keep the first position,
// NaN propagates (the last NaN wins). Average, adaptive average and Lp pooling are
// composites in Python (framework/nn/functional/pooling.py).
#include "common.h"

#include <algorithm>
#include <limits>

namespace fw {
namespace {

// First valid input position and end (exclusive) of each output's window along one dim.
struct Windows {
  std::vector<int64_t> start, end;
  int64_t step = 1;
};

Windows windows(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, int64_t d,
                bool adaptive) {
  Windows w;
  w.start.resize(out);
  w.end.resize(out);
  for (int64_t o = 0; o < out; o++) {
    if (adaptive) {
      w.start[o] = (o * in) / out;
      w.end[o] = ((o + 1) * in + out - 1) / out;
    } else {
      int64_t st = o * s - p;
      w.end[o] = std::min(st + (k - 1) * d + 1, in);
      while (st < 0) st += d;
      w.start[o] = st;
    }
  }
  w.step = adaptive ? 1 : d;
  return w;
}

template <typename T> inline bool is_nan(T v) { return v != v; }

template <typename T>
void max_pool(const T* x0, T* v0, int64_t* i0, int64_t planes, const Shape& in,
              const Shape& out, const Shape& k, const Shape& s, const Shape& p, const Shape& d,
              bool adaptive) {
  using C = acc_t<T>;
  const int64_t D = in[0], H = in[1], W = in[2];
  const int64_t OD = out[0], OH = out[1], OW = out[2];
  const Windows wd = windows(D, OD, k[0], s[0], p[0], d[0], adaptive);
  const Windows wh = windows(H, OH, k[1], s[1], p[1], d[1], adaptive);
  const Windows ww = windows(W, OW, k[2], s[2], p[2], d[2], adaptive);
  const C lowest = std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                        : std::numeric_limits<C>::lowest();
  const int64_t vol = D * H * W, ovol = OD * OH * OW;
  int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(OH * OW * 4, 1));
  parallel_for(0, planes * OD, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; t++) {
      const int64_t pl = t / OD, od = t % OD;
      const T* x = x0 + pl * vol;
      T* v = v0 + pl * ovol + od * OH * OW;
      int64_t* ind = i0 + pl * ovol + od * OH * OW;
      const int64_t ds = wd.start[od], de = wd.end[od];
      for (int64_t oh = 0; oh < OH; oh++) {
        const int64_t hs = wh.start[oh], he = wh.end[oh];
        for (int64_t ow = 0; ow < OW; ow++) {
          const int64_t ws = ww.start[ow], we = ww.end[ow];
          C best = lowest;
          int64_t at = (ds * H + hs) * W + ws;
          for (int64_t id = ds; id < de; id += wd.step)
            for (int64_t ih = hs; ih < he; ih += wh.step) {
              const int64_t row = (id * H + ih) * W;
              for (int64_t iw = ws; iw < we; iw += ww.step) {
                const C val = C(x[row + iw]);
                if (val > best || is_nan(val)) { best = val; at = row + iw; }
              }
            }
          v[oh * OW + ow] = T(best);
          ind[oh * OW + ow] = at;
        }
      }
    }
  });
}

void check3(const Shape& s, const char* what) {
  if (s.size() != 3) fail(std::string("max_pool: ") + what + " must have 3 entries");
}

}  // namespace

void register_pool(py::module_& m) {
  // values/indices = max pooling of contiguous x (planes, D, H, W); sizes are (D, H, W)
  // triples; adaptive: bins by PyTorch's adaptive rule (kernel, stride, padding, dilation
  // unused)
  m.def("max_pool", [](int dt, uintptr_t x, uintptr_t v, uintptr_t ind, int64_t planes,
                       const Shape& in, const Shape& out, const Shape& k, const Shape& s,
                       const Shape& p, const Shape& d, bool adaptive) {
    check3(in, "input size");
    check3(out, "output size");
    check3(k, "kernel_size");
    check3(s, "stride");
    check3(p, "padding");
    check3(d, "dilation");
    for (int i = 0; i < 3; i++) {
      if (in[i] <= 0 || out[i] < 0) fail("max_pool: bad sizes");
      if (!adaptive && (k[i] <= 0 || s[i] <= 0 || d[i] <= 0 || p[i] < 0))
        fail("max_pool: bad window");
    }
    if (planes < 0) fail("max_pool: bad sizes");
    py::gil_scoped_release nogil;
    FW_DISPATCH_NUMERIC(dt, "max_pool2d",
                        max_pool<scalar_t>(ptr<const scalar_t>(x), ptr<scalar_t>(v),
                                           ptr<int64_t>(ind), planes, in, out, k, s, p, d,
                                           adaptive));
  });
}

}  // namespace fw
