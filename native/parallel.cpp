#include "parallel.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace fw {
namespace {

// Waking a blocked thread takes tens of microseconds on a VM (the idle vCPU has to be
// woken), more than a 256 KiB copy costs, so the workers and the caller spin for a while
// before they block: back-to-back parallel ops then hand work over in about a microsecond.
constexpr auto kSpin = std::chrono::microseconds(200);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

std::atomic<bool> g_release{false};   // set by release_cores(): idle workers block now

// Spins until done(), kSpin has passed or the cores were released; returns done().
template <typename Done>
bool spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; i++) {
    if (done()) return true;
    cpu_relax();
    if ((i & 63) == 63 && (g_release.load(std::memory_order_relaxed) ||
                           std::chrono::steady_clock::now() > until))
      return done();
  }
}

struct Pool {
  std::vector<std::thread> workers;
  std::mutex mu;
  std::condition_variable cv_work, cv_done;
  // the job; written by run() before `generation` is advanced, read by workers after
  const std::function<void(int64_t, int64_t)>* job = nullptr;
  int64_t begin = 0, end = 0, chunk = 0;
  int n_chunks = 0;
  std::atomic<int> next{0};
  std::atomic<int> pending{0};
  std::atomic<uint64_t> generation{0};
  std::atomic<int> sleepers{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;

  explicit Pool(int n) {
    for (int i = 0; i < n; i++) workers.emplace_back([this] { loop(); });
  }
  ~Pool() {
    stop = true;
    { std::lock_guard<std::mutex> g(mu); }
    cv_work.notify_all();
    for (auto& t : workers) t.join();
  }
  void take_chunks() {
    for (int c; (c = next.fetch_add(1)) < n_chunks;) {
      int64_t b = begin + c * chunk, e = std::min(end, b + chunk);
      try {
        (*job)(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> g(mu);
        if (!error) error = std::current_exception();
      }
    }
  }
  void loop() {
    uint64_t seen = 0;
    for (;;) {
      auto ready = [&] { return stop.load() || generation.load() != seen; };
      if (!spin_until(ready)) {
        std::unique_lock<std::mutex> lk(mu);
        sleepers++;
        cv_work.wait(lk, ready);
        sleepers--;
      }
      if (stop) return;
      seen = generation.load();
      take_chunks();
      if (pending.fetch_sub(1) == 1) {
        std::lock_guard<std::mutex> g(mu);  // the caller may be about to block on cv_done
        cv_done.notify_one();
      }
    }
  }
  void run(int64_t b, int64_t e, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
    g_release.store(false, std::memory_order_relaxed);
    int parts = (int)std::min<int64_t>((e - b + grain - 1) / grain, (int64_t)workers.size() + 1);
    job = &fn; begin = b; end = e;
    // a few chunks per thread balances uneven runs without much scheduling cost
    n_chunks = (int)std::min<int64_t>((e - b + grain - 1) / grain, 4 * parts);
    chunk = (e - b + n_chunks - 1) / n_chunks;
    n_chunks = (int)((e - b + chunk - 1) / chunk);
    next = 0;
    error = nullptr;
    pending = (int)workers.size();
    generation++;                       // publishes the job (sequentially consistent)
    if (sleepers.load() > 0) {
      { std::lock_guard<std::mutex> g(mu); }
      cv_work.notify_all();
    }
    take_chunks();
    auto done = [&] { return pending.load() == 0; };
    if (!spin_until(done)) {
      std::unique_lock<std::mutex> lk(mu);
      cv_done.wait(lk, done);
    }
    job = nullptr;
    if (error) std::rethrow_exception(error);
  }
};

int g_threads = 0;        // 0: not decided yet
Pool* g_pool = nullptr;   // leaked on purpose: joining threads at exit can deadlock
std::mutex g_pool_mu;     // one parallel region at a time; nested calls run inline
thread_local bool t_in_region = false;

int default_threads() {
  if (const char* s = std::getenv("OMP_NUM_THREADS")) {
    int n = std::atoi(s);
    if (n > 0) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n ? (int)n : 1;
}

void after_fork_child() {
  // The parent's worker threads do not exist in the child; forget them (without
  // destroying: their mutexes may be in any state).
  g_pool = nullptr;
  new (&g_pool_mu) std::mutex();
  t_in_region = false;
}

struct AtFork {
  AtFork() { pthread_atfork(nullptr, nullptr, after_fork_child); }
} g_atfork;

}  // namespace

int num_threads() {
  if (g_threads == 0) g_threads = default_threads();
  return g_threads;
}

void set_num_threads(int n) {
  if (n < 1) throw std::invalid_argument("set_num_threads expects a positive integer");
  std::lock_guard<std::mutex> g(g_pool_mu);
  g_threads = n;
  g_pool = nullptr;  // rebuilt with the new size on next use (old one leaked, idle)
}

void release_cores() { g_release.store(true, std::memory_order_relaxed); }

void parallel_run(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn) {
  if (t_in_region) { fn(begin, end); return; }
  std::unique_lock<std::mutex> lk(g_pool_mu, std::try_to_lock);
  if (!lk.owns_lock()) { fn(begin, end); return; }  // another thread owns the pool
  if (!g_pool) g_pool = new Pool(num_threads() - 1);
  t_in_region = true;
  try {
    g_pool->run(begin, end, grain, fn);
  } catch (...) {
    t_in_region = false;
    throw;
  }
  t_in_region = false;
}

}  // namespace fw
