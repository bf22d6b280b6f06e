// A small fork-safe thread pool for the CPU kernels.
//
// parallel_for splits [begin, end) into at most num_threads() chunks of at least `grain`
// elements. The pool is rebuilt lazily in a forked child (DataLoader workers), which is
// why we do not use OpenMP: libgomp's pool does not survive fork().
#pragma once

#include <cstdint>
#include <functional>

namespace fw {

int num_threads();
void set_num_threads(int n);

// Lets the pool's idle workers stop spinning and block now: called before handing the
// cores to another thread pool (OpenBLAS), which they would otherwise compete with.
void release_cores();

// Runs fn(b, e) over chunks; the calling thread takes one chunk itself. Exceptions thrown
// by fn are re-thrown on the calling thread.
void parallel_run(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn);

template <typename F>
inline void parallel_for(int64_t begin, int64_t end, int64_t grain, F&& f) {
  if (end - begin <= grain || num_threads() == 1) {
    if (end > begin) f(begin, end);
    return;
  }
  parallel_run(begin, end, grain, std::function<void(int64_t, int64_t)>(f));
}

}  // namespace fw
