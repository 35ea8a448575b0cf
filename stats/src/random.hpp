// A small, portable, seedable generator (xoshiro256**) so posteriors are identical on every machine.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace rnx::stats::detail {

class xoshiro256 {
 public:
  explicit xoshiro256(std::uint64_t seed) {
    // splitmix64 spreads any seed (even 0) over the whole state.
    for (auto& word : state_) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word = z ^ (z >> 31);
    }
  }

  std::uint64_t next() {
    const std::uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = std::rotl(state_[3], 45);
    return result;
  }

  // Uniform integer in [0, n), by the high half of a 64x64-bit product (bias below n / 2^64).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

  // Uniform in (0, 1): never 0, so log() is always finite.
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }

  double exponential() { return -std::log(uniform()); }

  // Binomial(trials, 1/2) by counting set bits: the exact law of a Dirichlet-weighted median's rank.
  std::int64_t binomial_half(std::int64_t trials) {
    std::int64_t count = 0;
    while (trials >= 64) {
      count += std::popcount(next());
      trials -= 64;
    }
    if (trials > 0) count += std::popcount(next() >> (64 - trials));
    return count;
  }

 private:
  std::uint64_t state_[4];
};

// FNV-1a over raw bytes; the seed of a posterior is derived from the data it describes.
inline std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t hash = 0xcbf29ce484222325ULL) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace rnx::stats::detail
