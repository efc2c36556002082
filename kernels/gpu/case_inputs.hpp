// A Case's five input arrays on the device (q, K cache, req_to_token, slot_ids, seq_lens),
// uploaded once for the CUDA backends (cuda-rows/-packed upload q as is, cuda-cp the
// gathered q of index_args.hpp).
#pragma once
#include <cstdint>
#include <vector>

#include "gpu/cp_launch.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/indexer_launch.hpp"
#include "ixo/case.hpp"

namespace ixo::gpu {

struct CaseInputs {
  DevBuf<std::uint16_t> q;
  DevBuf<std::uint8_t> k;
  DevBuf<std::int32_t> r2t;
  DevBuf<std::int64_t> slots, lens;
  CaseInputs(const Case& c, const std::vector<std::uint16_t>& q_host)
      : q(q_host.data(), q_host.size()),
        k(c.k_cache.data(), c.k_cache.size()),
        r2t(c.req_to_token.data(), c.req_to_token.size()),
        slots(c.slot_ids.data(), c.slot_ids.size()),
        lens(c.seq_lens.data(), c.seq_lens.size()) {}
  // Points a launch's input pointers at the buffers (IndexArgs::q or CpArgs::qg).
  void point(IndexArgs& a) const { a.q = point_rest(a); }
  void point(CpArgs& a) const { a.qg = point_rest(a); }

 private:
  template <class Args>
  const std::uint16_t* point_rest(Args& a) const {
    a.k_cache = k.p;
    a.req_to_token = r2t.p;
    a.slot_ids = slots.p;
    a.seq_lens = lens.p;
    return q.p;
  }
};

// The CP step's scratch (shard cells, candidate keys) and its top-k output for `out_count`
// ids, poisoned with 0xA5 bytes so every cell, key and id must be rewritten by the launch;
// the constructor points a.cells / a.keys at them (a's shapes set first: they size them).
struct CpScratch {
  DevBuf<std::uint32_t> cells;
  DevBuf<std::uint64_t> keys;
  DevBuf<std::int32_t> out;
  CpScratch(CpArgs& a, std::size_t out_count)
      : cells(cp_cells_bytes(a, cp_local(a)) / sizeof(std::uint32_t)),
        keys(cp_keys_bytes(a) / sizeof(std::uint64_t)),
        out(out_count) {
    a.cells = cells.p;
    a.keys = keys.p;
    poison(cells);
    poison(keys);
    poison(out);
  }

 private:
  template <class T>
  static void poison(const DevBuf<T>& b) {
    if (b.n) check(cudaMemset(b.p, 0xA5, b.n * sizeof(T)), "cuda", "cudaMemset (poison)");
  }
};

}  // namespace ixo::gpu
