// Multi-tensor loops (fused optimizer steps, GradScaler's unscale): one call walks every
// tensor of a list. The work is cut into chunks of kChunk elements over all tensors (a chunk
// lies in one tensor, found by binary search in the prefix sums of the chunk counts) and the
// chunks are spread over the thread pool.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "common.h"

namespace fw {

constexpr int64_t kMultiTensorChunk = 16384;

using Ptrs = std::vector<uintptr_t>;

// The index of each tensor's first chunk, and the number of chunks last: tensor t's chunk
// holding element lo is start[t] + lo / kMultiTensorChunk.
inline std::vector<int64_t> chunk_starts(const Shape& numels) {
  std::vector<int64_t> start(numels.size() + 1, 0);
  for (size_t t = 0; t < numels.size(); t++)
    start[t + 1] = start[t] + (numels[t] + kMultiTensorChunk - 1) / kMultiTensorChunk;
  return start;
}

// Calls f(tensor index, begin, end) over all chunks of all tensors, in parallel.
template <typename F>
void for_chunks(const Shape& numels, F&& f) {
  const int64_t n = (int64_t)numels.size();
  const std::vector<int64_t> start = chunk_starts(numels);
  parallel_for(0, start[n], 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; c++) {
      int64_t t = std::upper_bound(start.begin(), start.end(), c) - start.begin() - 1;
      int64_t lo = (c - start[t]) * kMultiTensorChunk;
      f(t, lo, std::min(numels[t], lo + kMultiTensorChunk));
    }
  });
}

// Raises "<what>: tensor lists differ in length" unless every list has numels' length.
inline void check_sizes(const char* what, const Shape& numels,
                        std::initializer_list<const Ptrs*> lists) {
  for (const Ptrs* l : lists)
    if (l->size() != numels.size()) fail(std::string(what) + ": tensor lists differ in length");
}

}  // namespace fw
