// 64-bit K offsets (issue 13, section 2): token slots above 2^24 with D 128, so the element
// offset slot * Hk * D + h * D + d passes 2^31 (and, Hk 2, 2^32), and the byte offset of bf16
// passes 2^32. The K cache is a few GB on the device (cudaMalloc + cudaMemset 0); only the
// slots the table references hold data. No host copy of the big K exists: the case is
// "lifted" -- a small generated case (S_small slots, checked by the oracle) is run on a big
// K whose slot B + t holds small slot t (B = 2^24), with every token slot and slot-id alias
// rewritten so the lifted case reads exactly the same keys. Same keys -> same logits, so
// the big launch must equal the CUDA backend on the small case bit for bit (ids and every
// score cell, poison included) and pass ixo::judge against the oracle of the small case.
//
// A decoy K (another seed) sits at slots 0 .. S_small - 1: a 32-bit wrap of the bf16 byte
// offset (2^32 + 256 t -> 256 t) or of the Hk 2 element offset (2^32 + ... -> slot t) reads
// the decoy, whose answer is checked to differ; a signed 32-bit offset goes negative and the
// launch faults. Paths: cuda-rows, cuda-packed (launch_index_step) and cuda-cp
// (launch_cp_step_sim) where the case is CP-shaped (Hk 1). Skipped without a device or with
// less than max(8 GB, K + 1 GB) free device memory.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cp_plan.hpp"
#include "gpu/case_inputs.hpp"
#include "gpu/cp_backends.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/index_args.hpp"
#include "gpu/indexer_launch.hpp"
#include "gpu_test_util.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"
#include "ixo/transform.hpp"
#include "ixo_test/support.hpp"

namespace ixo::test {
namespace {

constexpr std::int64_t kBase = std::int64_t{1} << 24;  // small slot t lives at big slot kBase + t

void ck(cudaError_t e, const char* what) { gpu::check(e, "test_gpu_offsets", what); }
void ck(int e, const char* what) { ck(static_cast<cudaError_t>(e), what); }

// The small case's metadata over S_big = kBase + S slots (k_cache left empty: never on the
// host). Token slot t >= 0 -> t + kBase; an alias t - S (t in [0, S)) is already the alias
// of kBase + t under S_big, so it stays. Slot ids alias with S too: v in [-S, 0) -> v - kBase.
Case lift(const Case& small) {
  Case big = small;
  big.k_cache.clear();
  big.k_cache.shrink_to_fit();
  big.S = small.S + kBase;
  for (auto& v : big.req_to_token)
    if (v >= 0) v = static_cast<std::int32_t>(v + kBase);
  for (auto& v : big.slot_ids)
    if (v < 0 && v >= -small.S) v -= kBase;
  return big;
}

std::int64_t elem_bytes(const Case& c) { return static_cast<std::int64_t>(c.k_cache.size()) / (c.S * c.Hk * c.D); }

struct OffsetParam {
  std::string name;
  KDtype k_dtype;
  std::int64_t Hq, Hk;
  int P;
  ScoreType score;
};
void PrintTo(const OffsetParam& p, std::ostream* os) { *os << p.name; }

Case small_case(const OffsetParam& p, std::uint64_t seed) {
  GenSpec s = GenSpec{}
                  .rows(3, p.P)
                  .lengths({32 * 40 + 5, 32 * 23 - 1, 32 * 31})
                  .heads(p.Hq, p.Hk, 128)
                  .blocks(32, 8, 1, 1)
                  .score(p.score)
                  .k(p.k_dtype, p.k_dtype == KDtype::bf16 ? 1.0 : 1.25);
  s.alias_minus_s = true;                       // token slot 0 stored as -S: the alias that must become kBase
  return append_rows(generate(s, seed), 1, 1);  // a graph padding request and an inactive one
}

// The K cache of kBase + S slots on the device: decoy at [0, S), the case's K at [kBase, kBase + S).
struct BigK {
  gpu::DevBuf<std::uint8_t> k;
  BigK(const Case& small, const Case& decoy, std::size_t bytes) : k(bytes) {
    const std::size_t row = static_cast<std::size_t>(small.Hk * small.D * elem_bytes(small));
    ck(cudaMemset(k.p, 0, bytes), "memset K");
    ck(cudaMemcpy(k.p, decoy.k_cache.data(), decoy.k_cache.size(), cudaMemcpyHostToDevice), "decoy K");
    ck(cudaMemcpy(k.p + static_cast<std::size_t>(kBase) * row, small.k_cache.data(), small.k_cache.size(),
                  cudaMemcpyHostToDevice),
       "K rows above 2^24");
  }
};

// Ids (and scores, when given) of a launch on `big`, read back from the device.
Observed read_outputs(const Case& big, const gpu::DevBuf<std::int32_t>& ids, const gpu::DevBuf<float>* scores) {
  std::vector<std::int32_t> id(ids.n);
  ck(cudaMemcpy(id.data(), ids.p, ids.n * sizeof(std::int32_t), cudaMemcpyDeviceToHost), "D2H ids");
  std::vector<float> sc(scores ? scores->n : 0);
  if (scores) ck(cudaMemcpy(sc.data(), scores->p, scores->n * sizeof(float), cudaMemcpyDeviceToHost), "D2H scores");
  return observed_of(big, std::move(id), std::move(sc));
}

Observed run_index(const Case& big, const void* k, bool packed) {
  gpu::IndexArgs a = gpu::index_args(big, big.cfg.q_scale);
  const gpu::CaseInputs in(big, big.q);  // big.k_cache is empty: K is the device cache k
  in.point(a);
  a.k_cache = k;
  a.mutant = test_mutant();  // mutant.k_offset_32bit injects the 32-bit offset here
  const std::size_t ncells = static_cast<std::size_t>(big.Hq * big.R * big.NB());
  gpu::DevBuf<float> scores(ncells);
  gpu::DevBuf<std::int32_t> topk(static_cast<std::size_t>(big.Hq * big.R * big.cfg.topk));
  a.scores = scores.p;
  a.topk_idx = topk.p;
  ck(cudaMemset(topk.p, 0x7f, topk.n * sizeof(std::int32_t)), "clobber ids");
  ck(gpu::launch_fill_u32(scores.p, kScorePoisonBits, ncells, nullptr), "fill");
  ck(gpu::launch_index_step(a, packed, nullptr), "index step");
  ck(cudaDeviceSynchronize(), "synchronize");
  return read_outputs(big, topk, &scores);
}

Observed run_cp(const Case& small, const Case& big, const void* k) {
  const cp::Plan plan = cp::plan_for(small, true, RunOptions{});
  const int W = plan.world;
  gpu::CpArgs a = gpu::cp_args(big, W, 0, W, plan.pack);
  const gpu::CaseInputs in(big, gpu::gathered_q(big));  // K: the device cache k (big.k_cache is empty)
  in.point(a);
  a.k_cache = k;
  const gpu::CpScratch scratch(a, static_cast<std::size_t>(W * big.R * big.cfg.topk));  // poisoned
  const gpu::DevBuf<std::int32_t>& out = scratch.out;
  ck(gpu::launch_cp_step_sim(a, out.p, nullptr), "cp step");
  ck(cudaDeviceSynchronize(), "synchronize");
  return read_outputs(big, out, nullptr);
}

class KOffsets64 : public ::testing::TestWithParam<OffsetParam> {};

// Host-only guards of the lift (run with or without a device): the lifted case reads the
// same keys, its token slots pass 2^24, its K offsets pass 2^31, and the decoy would give
// another answer (so a wrapped offset cannot pass).
TEST_P(KOffsets64, LiftReadsTheSameKeysAboveTwoPow24) {
  const Case small = small_case(GetParam(), 5);
  ASSERT_LE(small.S, 65536) << "small case too large for the decoy region";
  const Case big = lift(small);
  ASSERT_EQ(big.R, small.R);
  std::int64_t max_slot = 0, active_long = 0;
  for (std::int64_t r = 0; r < small.R; ++r) {
    ASSERT_EQ(table_row(big, r), table_row(small, r)) << "row " << r;
    const std::int64_t sid = table_row(small, r);
    if (sid < 0) continue;
    if (row_blocks(small, r) > small.cfg.topk) ++active_long;
    for (std::int64_t t = 0; t < small.seq_lens[static_cast<std::size_t>(r)]; ++t) {
      const std::size_t at = static_cast<std::size_t>(sid * small.width + t);
      const std::int64_t s = small.req_to_token[at] < 0 ? small.req_to_token[at] + small.S : small.req_to_token[at];
      const std::int64_t b = big.req_to_token[at] < 0 ? big.req_to_token[at] + big.S : big.req_to_token[at];
      ASSERT_EQ(b, s + kBase) << "row " << r << " position " << t;
      max_slot = std::max(max_slot, b);
    }
  }
  EXPECT_GE(active_long, 3) << "rows with nb > topk (scored rows) are needed";
  EXPECT_GE(max_slot * big.Hk * big.D, std::int64_t{1} << 31) << "K element offsets must pass 2^31";
  Case decoy = small;
  decoy.k_cache = small_case(GetParam(), 99).k_cache;
  ASSERT_NE(decoy.k_cache, small.k_cache);
  // The decoy's answer differs from the case's: a wrapped offset reading it fails the oracle check.
  const Expected e = oracle(small);
  const Expected d = oracle(decoy);
  EXPECT_NE(e.topk_idx, d.topk_idx) << "the decoy K gives the same ids: a 32-bit wrap could pass";
}

TEST_P(KOffsets64, BigKMatchesSmallCaseBitwise) {
  IXO_REQUIRE_CUDA();
  const OffsetParam& p = GetParam();
  const Case small = small_case(p, 5);
  Case decoy = small;
  decoy.k_cache = small_case(p, 99).k_cache;
  const Case big = lift(small);
  const std::size_t bytes = static_cast<std::size_t>(big.S * big.Hk * big.D * elem_bytes(small));
  std::size_t free_b = 0, total_b = 0;
  ck(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  const std::size_t need = std::max<std::size_t>(std::size_t{8} << 30, bytes + (std::size_t{1} << 30));
  if (free_b < need) GTEST_SKIP() << "needs " << need << " bytes of free device memory, has " << free_b;
  const BigK K(small, decoy, bytes);
  const Expected e = oracle(small);
  for (const bool packed : {false, true}) {
    SCOPED_TRACE(packed ? "cuda-packed" : "cuda-rows");
    if (packed) {
      gpu::IndexArgs a = gpu::index_args(big, 1.0);
      ASSERT_TRUE(gpu::packed_supported(a)) << "the packed variant must take the packed path";
    }
    const Observed o = run_index(big, K.k.p, packed);
    const Observed ref = (packed ? make_cuda_packed_backend() : make_cuda_rows_backend())->run(small);
    EXPECT_TRUE(bitwise_equal(o, ref, small, "K above 2^24 vs the small case"));
    EXPECT_TRUE(matches_oracle(small, e, o, false, "K above 2^24 vs oracle"));
  }
  std::string why;
  if (cp::supported(small, &why)) {
    SCOPED_TRACE("cuda-cp");
    const Observed o = run_cp(small, big, K.k.p);
    EXPECT_TRUE(bitwise_equal(o, make_cuda_cp_backend()->run(small), small, "cuda-cp K above 2^24 vs the small case"));
    EXPECT_TRUE(matches_oracle(small, e, o, false, "cuda-cp K above 2^24 vs oracle"));
  } else {
    EXPECT_GT(small.Hk, 1) << "a CP-shaped variant must run cuda-cp: " << why;
  }
}

// bf16 Hk 1: element offsets ~2^31, byte offsets ~2^32 (4.3 GB). e4m3fn Hk 1: element = byte
// offsets ~2^31 (2.1 GB). e4m3fn Hk 2: element offsets ~2^32 (4.3 GB; no CP: Hk 2).
INSTANTIATE_TEST_SUITE_P(CudaOffsets, KOffsets64,
                         ::testing::Values(OffsetParam{"bf16_hk1_max", KDtype::bf16, 4, 1, 4, ScoreType::max},
                                           OffsetParam{"e4m3fn_hk1_lse", KDtype::e4m3fn, 4, 1, 4, ScoreType::lse},
                                           OffsetParam{"e4m3fn_hk2_max", KDtype::e4m3fn, 8, 2, 2, ScoreType::max}),
                         [](const ::testing::TestParamInfo<OffsetParam>& i) { return i.param.name; });

}  // namespace
}  // namespace ixo::test
