// Named generator presets: the canonical shapes of the spec and the upstream tests.
#include <map>

#include "ixo/error.hpp"
#include "ixo/generate.hpp"

namespace ixo {

namespace {

Config m3() {  // MiniMax-M3: block 128, top-16, init 0, local 1, score max, bf16 K
  return Config{};
}

std::map<std::string, GenSpec> make_presets() {
  std::map<std::string, GenSpec> p;
  GenSpec s;
  s.cfg = m3();

  GenSpec tiny = s;  // small and quick: bs 16, topk 4, Hq 2 / Hk 1
  tiny.requests = 2;
  tiny.draft_rows = 2;
  tiny.max_prefix = 300;
  tiny.Hq = 2;
  tiny.D = 64;
  tiny.cfg.block_size = 16;
  tiny.cfg.topk = 4;
  tiny.cfg.init_blocks = 1;
  p["tiny"] = tiny;

  GenSpec verify = s;  // 4 requests x 4 draft rows, random prefixes
  verify.requests = 4;
  verify.max_prefix = 6000;
  p["verify"] = verify;

  GenSpec boundary = s;  // lengths 32767..32770: one group mixes 256- and 257-block rows
  boundary.requests = 4;
  boundary.prefixes = {255 * 128 + 126};
  p["boundary"] = boundary;

  GenSpec km = s;  // the KM packed test's prefixes and request slots
  km.requests = 4;
  km.prefixes = {128 * 40 - 2, 128 * 23 - 1, 7777, 128 * 60};
  km.request_slots = {5, 2, 7, 1};
  p["km-slots"] = km;

  for (KDtype t : {KDtype::e4m3fn, KDtype::e4m3fnuz}) {
    GenSpec f = s;
    f.requests = 3;
    f.prefixes = {128 * 31 - 3, 4321, 128 * 17 - 2};
    f.cfg.k_dtype = t;
    f.cfg.k_scale = 0.75;
    p[std::string("fp8-") + std::string(to_string(t))] = f;
  }

  GenSpec e5 = s;  // e5m2 K, log2-sum-exp, Hq 4
  e5.requests = 3;
  e5.draft_rows = 3;
  e5.Hq = 4;
  e5.cfg.k_dtype = KDtype::e5m2;
  e5.cfg.k_scale = 1.5;
  e5.cfg.score_type = ScoreType::lse;
  e5.max_prefix = 5000;
  p["e5m2-lse"] = e5;

  GenSpec gqa = s;  // Hq 8 : Hk 2, D 64, bs 64, init 2, local 3
  gqa.requests = 3;
  gqa.draft_rows = 2;
  gqa.Hq = 8;
  gqa.Hk = 2;
  gqa.D = 64;
  gqa.max_prefix = 3000;
  gqa.cfg.block_size = 64;
  gqa.cfg.topk = 8;
  gqa.cfg.init_blocks = 2;
  gqa.cfg.local_blocks = 3;
  p["gqa"] = gqa;

  GenSpec pad = s;  // graph padding requests and inactive rows next to real ones
  pad.requests = 3;
  pad.padding_requests = 2;
  pad.inactive_requests = 1;
  pad.max_prefix = 4000;
  p["padding"] = pad;

  // A real CUDA-graph verify batch: 3 requests x 4 draft rows and an inactive request, a
  // padding request (a whole group on table row 0), 3 trailing padding rows (a partial
  // group), one row of a request made inactive, 2 trailing inactive rows: R = 25, not a
  // multiple of packed_queries 4; groups mix slot ids at the end.
  GenSpec graph = s;
  graph.requests = 3;
  graph.padding_requests = 1;
  graph.inactive_requests = 1;
  graph.packed_queries = 4;
  graph.trailing_padding_rows = 3;
  graph.trailing_inactive_rows = 2;
  graph.inactive_rows_in_requests = 1;
  graph.max_prefix = 4000;
  p["graph-padded"] = graph;

  GenSpec local0 = s;  // local_blocks 0 with pack 3: nb 5, 6, 6 in one group
  local0.requests = 2;
  local0.draft_rows = 3;
  local0.prefixes = {64 * 5 - 1, 333};
  local0.cfg.block_size = 64;
  local0.cfg.topk = 4;
  local0.cfg.init_blocks = 1;
  local0.cfg.local_blocks = 0;
  p["local0"] = local0;

  GenSpec exact = s;  // tie-free: ids must match exactly
  exact.requests = 3;
  exact.max_prefix = 20000;
  exact.Hq = 2;
  exact.values = Values::exact;
  exact.cfg.k_dtype = KDtype::e4m3fn;
  exact.cfg.k_scale = 0.5;
  p["exact"] = exact;

  GenSpec near = s;  // near ties: many swaps within tau are legal
  near.requests = 2;
  near.max_prefix = 8000;
  near.values = Values::near_tie;
  p["near-tie"] = near;

  GenSpec few = s;  // topk above nb for most rows
  few.requests = 4;
  few.max_prefix = 400;
  few.cfg.block_size = 32;
  few.cfg.topk = 32;
  few.cfg.init_blocks = 2;
  few.cfg.local_blocks = 2;
  p["topk-above-nb"] = few;

  GenSpec forced = s;  // init and local overlap, more forced blocks than topk
  forced.requests = 2;
  forced.draft_rows = 2;
  forced.max_prefix = 700;
  forced.cfg.block_size = 32;
  forced.cfg.topk = 4;
  forced.cfg.init_blocks = 3;
  forced.cfg.local_blocks = 3;
  p["forced-overlap"] = forced;

  GenSpec bench = s;  // the benchmark shape: 16 requests x 4 x 131072
  bench.requests = 16;
  bench.prefixes = {131072};
  p["bench-16x131k"] = bench;

  GenSpec lng = s;  // one 524288-token request
  lng.requests = 1;
  lng.prefixes = {524288};
  p["long-512k"] = lng;
  return p;
}

const std::map<std::string, GenSpec>& presets() {
  static const auto p = make_presets();
  return p;
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> n;
  for (const auto& [k, v] : presets()) n.push_back(k);
  return n;
}

GenSpec preset(const std::string& name) {
  const auto it = presets().find(name);
  if (it == presets().end()) {
    std::string known;
    for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw InputError("preset", "unknown preset '" + name + "' (known: " + known + ")");
  }
  return it->second;
}

}  // namespace ixo
