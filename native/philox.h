// Philox 4x32-10, the counter-based generator of the framework's random streams: the same
// words as Triton's `tl.randint4x(seed, offset)`, so cpu and cuda draw the same numbers
// (random.cpp, and the dropout masks of attention.cpp).
#pragma once

#include <cstdint>

namespace fw {

struct Words {
  uint32_t w0, w1, w2, w3;
};

// Philox 4x32 with 10 rounds, key (seed_lo, seed_hi), counter (ctr_lo, ctr_hi, 0, 0): the
// round function of triton/language/random.py (philox_impl).
inline Words philox(uint64_t seed, uint64_t ctr) {
  uint32_t c0 = (uint32_t)ctr, c1 = (uint32_t)(ctr >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int r = 0; r < 10; r++) {
    const uint64_t pa = (uint64_t)0xD2511F53u * c0;
    const uint64_t pb = (uint64_t)0xCD9E8D57u * c2;
    const uint32_t n0 = (uint32_t)(pb >> 32) ^ c1 ^ k0;
    const uint32_t n2 = (uint32_t)(pa >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)pb;
    c3 = (uint32_t)pa;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {c0, c1, c2, c3};
}

}  // namespace fw
