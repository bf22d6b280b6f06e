// Embedding kernels of the CPU backend: the lookup (forward) and the dense weight gradient
// (embedding_dense_backward).
//
// weight is a contiguous (W, D) table of a floating dtype, indices a contiguous (n,) int32
// or int64 tensor, out / grad contiguous (n, D) rows of that dtype. Every index is checked
// before anything is read or written through it: one outside [0, W) raises IndexError
// ("index out of range in self", PyTorch's text) and leaves the output untouched.
//
// Forward: threads copy rows (bytes; the dtype does not matter).
// Backward, deterministic: a stable counting sort of the positions by index (serial,
// O(n + W)) gives each weight row its list of positions in ascending order; threads then
// own ranges of weight rows and each row sums its positions' gradient rows in acc_t<T>
// (float for 16-bit floats and float32, double for float64), divides by the count with
// scale_grad_by_freq, and writes the row once (zeros for rows never indexed and for
// padding_idx). The sums do not depend on the number of threads.
#include "common.h"

#include <algorithm>
#include <stdexcept>

namespace fw {
namespace {

template <typename I>
void check_indices(const I* idx, int64_t n, int64_t W) {
  for (int64_t i = 0; i < n; i++)
    if (idx[i] < 0 || (int64_t)idx[i] >= W) throw std::out_of_range("index out of range in self");
}

template <typename I>
void forward(const char* weight, const I* idx, char* out, int64_t n, int64_t row_bytes) {
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(row_bytes, 1));
  parallel_for(0, n, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i++)
      std::memcpy(out + i * row_bytes, weight + (int64_t)idx[i] * row_bytes, row_bytes);
  });
}

// offsets (W + 1) and order (n): the positions holding index w are
// order[offsets[w]:offsets[w + 1]], ascending.
template <typename I>
void group_positions(const I* idx, int64_t n, int64_t W, std::vector<int64_t>& offsets,
                     std::vector<int64_t>& order) {
  offsets.assign(W + 1, 0);
  for (int64_t i = 0; i < n; i++) offsets[(int64_t)idx[i] + 1]++;
  for (int64_t w = 0; w < W; w++) offsets[w + 1] += offsets[w];
  std::vector<int64_t> cursor(offsets.begin(), offsets.end() - 1);
  order.resize(n);
  for (int64_t i = 0; i < n; i++) order[cursor[(int64_t)idx[i]]++] = i;
}

template <typename T>
void backward(const T* grad, const int64_t* offsets, const int64_t* order, T* gw, int64_t W,
              int64_t D, int64_t padding_idx, bool scale) {
  using A = acc_t<T>;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(D, 1));
  parallel_for(0, W, grain, [&](int64_t b, int64_t e) {
    std::vector<A> acc(D);
    for (int64_t w = b; w < e; w++) {
      T* dst = gw + w * D;
      const int64_t p0 = offsets[w], p1 = offsets[w + 1];
      if (p0 == p1 || w == padding_idx) {
        std::memset(static_cast<void*>(dst), 0, sizeof(T) * D);  // +0 is all zero bits
        continue;
      }
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t p = p0; p < p1; p++) {
        const T* g = grad + order[p] * D;
        for (int64_t d = 0; d < D; d++) acc[d] += A(g[d]);
      }
      const A s = scale ? A(1) / A(p1 - p0) : A(1);
      for (int64_t d = 0; d < D; d++) dst[d] = T(acc[d] * s);
    }
  });
}

template <typename I>
void backward_of(int dt, uintptr_t grad, const I* idx, uintptr_t gw, int64_t n, int64_t D,
                 int64_t W, int64_t padding_idx, bool scale) {
  check_indices(idx, n, W);
  std::vector<int64_t> offsets, order;
  group_positions(idx, n, W, offsets, order);
  FW_DISPATCH_FLOAT(dt, "embedding_dense_backward",
                    (backward<scalar_t>(ptr<const scalar_t>(grad), offsets.data(),
                                        order.data(), ptr<scalar_t>(gw), W, D, padding_idx,
                                        scale)));
}

void check_sizes(const char* op, int idx_dt, int64_t n, int64_t D, int64_t W) {
  if (n < 0 || D < 0 || W < 0) fail(std::string(op) + ": negative size");
  if (idx_dt != (int)DT::Int32 && idx_dt != (int)DT::Int64)
    fail(std::string(op) + ": indices must be int32 or int64, got " + dtype_name(idx_dt));
}

}  // namespace

void register_embedding(py::module_& m) {
  // out (n, D) = rows of weight (W, D) at idx (n,); row_bytes = D * itemsize
  m.def("embedding_forward", [](int idx_dt, uintptr_t weight, uintptr_t idx, uintptr_t out,
                                int64_t n, int64_t D, int64_t W, int64_t row_bytes) {
    check_sizes("embedding", idx_dt, n, D, W);
    py::gil_scoped_release nogil;
    auto run = [&](auto* ip) {
      check_indices(ip, n, W);
      forward(ptr<const char>(weight), ip, ptr<char>(out), n, row_bytes);
    };
    if (idx_dt == (int)DT::Int32) run(ptr<const int32_t>(idx));
    else run(ptr<const int64_t>(idx));
  });
  // gw (W, D) = per weight row, the sum of the grad (n, D) rows at its positions in idx
  // (divided by their count when scale; zero for padding_idx and unused rows)
  m.def("embedding_backward", [](int dt, int idx_dt, uintptr_t grad, uintptr_t idx,
                                 uintptr_t gw, int64_t n, int64_t D, int64_t W,
                                 int64_t padding_idx, bool scale) {
    check_sizes("embedding_dense_backward", idx_dt, n, D, W);
    py::gil_scoped_release nogil;
    if (idx_dt == (int)DT::Int32)
      backward_of(dt, grad, ptr<const int32_t>(idx), gw, n, D, W, padding_idx, scale);
    else
      backward_of(dt, grad, ptr<const int64_t>(idx), gw, n, D, W, padding_idx, scale);
  });
}

}  // namespace fw
