// The host stand-in for a GPU runtime (kernels/sim_host/gpu_port_host.hpp) on its own: what the
// simulated kernels (sim-rows / sim-packed, the host top-k tests) rely on. A CTA's threads see one
// copy of a __shared__ variable and each other's writes after __syncthreads; IXO_BALLOT and
// IXO_SHFL_UP give the hardware's values; a barrier that not every thread reaches (a thread that
// exits early, a lane that skips a vote) is reported as a SimtError naming the threads, where a GPU
// would hang or give undefined results. Built with the HIP build's 64-lane warps and CUDA's 32.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/gpu_port.hpp"  // IXO_SIM_HOST: the stand-in

namespace ixo::test {
namespace {

constexpr int W = IXO_WARP_SIZE;

TEST(SimHostPort, SharedMemoryAndBarriersAcrossTheCta) {
  constexpr int NT = 4 * W;
  std::vector<int> got(NT, -1);
  simt_host::run_cta(NT, 3u, 5u, [&] {
    __shared__ int slot[NT];
    const int t = static_cast<int>(threadIdx.x);
    slot[t] = t * 10 + static_cast<int>(blockIdx.x);
    __syncthreads();
    got[t] = slot[NT - 1 - t];  // another warp's write, visible after the barrier
    __syncthreads();
  });
  for (int t = 0; t < NT; ++t) EXPECT_EQ(got[t], (NT - 1 - t) * 10 + 3) << "thread " << t;
}

TEST(SimHostPort, BallotAndShuffleGiveTheHardwareValues) {
  constexpr int NT = 2 * W;
  std::vector<unsigned long long> bits(NT);
  std::vector<std::uint32_t> up(NT);
  simt_host::run_cta(NT, 0u, 1u, [&] {
    const unsigned t = threadIdx.x, lane = t % W;
    bits[t] = IXO_BALLOT(lane % 3 == 0 || t >= static_cast<unsigned>(W) + 60);
    up[t] = IXO_SHFL_UP(t * 7u, 2);
  });
  unsigned long long want = 0;
  for (int l = 0; l < W; l += 3) want |= 1ull << l;
  for (int t = 0; t < NT; ++t) {
    const int lane = t % W;
    const unsigned long long w =
        t < W ? want : want | (W == 64 ? 0xF000000000000000ull : 0ull);  // lanes 60-63 of warp 1 (64 lanes)
    EXPECT_EQ(bits[t], w) << "thread " << t;
    EXPECT_EQ(up[t], lane >= 2 ? (t - 2) * 7u : t * 7u) << "thread " << t;  // own value below delta
  }
}

TEST(SimHostPort, AThreadThatExitsBeforeABarrierIsReported) {
  try {
    simt_host::run_cta(2 * W, 0u, 1u, [&] {
      if (threadIdx.x < static_cast<unsigned>(W)) return;  // warp 0 leaves: not CTA-uniform
      __syncthreads();
    });
    FAIL() << "no SimtError";
  } catch (const simt_host::SimtError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("threads 0-" + std::to_string(W - 1) + " exited"), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(W) + "-" + std::to_string(2 * W - 1) + " __syncthreads"), std::string::npos)
        << what;
  }
}

TEST(SimHostPort, ALaneThatSkipsAVoteIsReported) {
  try {
    simt_host::run_cta(W, 0u, 1u, [&] {
      if (threadIdx.x == 5) return;  // a lane that skips the warp's vote
      (void)IXO_BALLOT(true);
    });
    FAIL() << "no SimtError";
  } catch (const simt_host::SimtError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("5 exited"), std::string::npos) << what;
    EXPECT_NE(what.find("a warp round"), std::string::npos) << what;
  }
}

TEST(SimHostPort, ThreadsWaitingAtDifferentBarriersAreReported) {
  try {
    simt_host::run_cta(2 * W, 0u, 1u, [&] {
      if (threadIdx.x >= static_cast<unsigned>(W) + W / 2) (void)IXO_BALLOT(true);  // half of warp 1 votes
      __syncthreads();
    });
    FAIL() << "no SimtError";
  } catch (const simt_host::SimtError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("0-" + std::to_string(W + W / 2 - 1) + " __syncthreads"), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(W + W / 2) + "-" + std::to_string(2 * W - 1) + " a warp round"),
              std::string::npos)
        << what;
  }
}

TEST(SimHostPort, ACtaMustBeWholeWarps) {
  EXPECT_THROW(simt_host::run_cta(W + 1, 0u, 1u, [] {}), simt_host::SimtError);
}

}  // namespace
}  // namespace ixo::test
