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
  // small and quick: bs 16, topk 4, Hq 2 / Hk 1
  p["tiny"] = GenSpec(s).rows(2, 2).up_to(300).heads(2, 1, 64).blocks(16, 4, 1, 1);
  p["verify"] = GenSpec(s).rows(4, 4).up_to(6000);  // 4 requests x 4 draft rows, random prefixes
  // lengths 32767..32770: one group mixes 256- and 257-block rows
  p["boundary"] = GenSpec(s).rows(4, 4).lengths({255 * 128 + 126});
  // the KM packed test's prefixes and request slots
  p["km-slots"] = GenSpec(s).rows(4, 4).lengths({128 * 40 - 2, 128 * 23 - 1, 7777, 128 * 60}).slots({5, 2, 7, 1});
  for (KDtype t : {KDtype::e4m3fn, KDtype::e4m3fnuz})
    p[std::string("fp8-") + std::string(to_string(t))] =
        GenSpec(s).rows(3, 4).lengths({128 * 31 - 3, 4321, 128 * 17 - 2}).k(t, 0.75);
  // e5m2 K, log2-sum-exp, Hq 4
  p["e5m2-lse"] = GenSpec(s).rows(3, 3).heads(4, 1, 128).k(KDtype::e5m2, 1.5).score(ScoreType::lse).up_to(5000);
  // Hq 8 : Hk 2, D 64, bs 64, init 2, local 3
  p["gqa"] = GenSpec(s).rows(3, 2).heads(8, 2, 64).up_to(3000).blocks(64, 8, 2, 3);
  // graph padding requests and inactive rows next to real ones
  GenSpec pad = GenSpec(s).rows(3, 4).up_to(4000);
  pad.padding_requests = 2;
  pad.inactive_requests = 1;
  p["padding"] = pad;

  // A real CUDA-graph verify batch: 3 requests x 4 draft rows and an inactive request, a
  // padding request (a whole group on table row 0), 3 trailing padding rows (a partial
  // group), one row of a request made inactive, 2 trailing inactive rows: R = 25, not a
  // multiple of packed_queries 4; groups mix slot ids at the end.
  GenSpec graph = GenSpec(s).rows(3, 4).pack(4).up_to(4000);
  graph.padding_requests = 1;
  graph.inactive_requests = 1;
  graph.trailing_padding_rows = 3;
  graph.trailing_inactive_rows = 2;
  graph.inactive_rows_in_requests = 1;
  p["graph-padded"] = graph;

  // local_blocks 0 with pack 3: nb 5, 6, 6 in one group
  p["local0"] = GenSpec(s).rows(2, 3).lengths({64 * 5 - 1, 333}).blocks(64, 4, 1, 0);
  // tie-free: ids must match exactly
  p["exact"] = GenSpec(s).rows(3, 4).up_to(20000).heads(2, 1, 128).with(Values::exact).k(KDtype::e4m3fn, 0.5);
  p["near-tie"] =
      GenSpec(s).rows(2, 4).up_to(8000).with(Values::near_tie);  // near ties: many swaps within tau are legal
  p["topk-above-nb"] = GenSpec(s).rows(4, 4).up_to(400).blocks(32, 32, 2, 2);  // topk above nb for most rows
  // init and local overlap, more forced blocks than topk
  p["forced-overlap"] = GenSpec(s).rows(2, 2).up_to(700).blocks(32, 4, 3, 3);
  p["bench-16x131k"] = GenSpec(s).rows(16, 4).lengths({131072});  // the benchmark shape: 16 requests x 4 x 131072
  p["long-512k"] = GenSpec(s).rows(1, 4).lengths({524288});       // one 524288-token request
  // Boundary dimensions (docs/NOTES.md "Condition coverage"): a tie plateau and a 3-level
  // ladder over 16384+ blocks (block size 1, top-1024), fp8 special codes with lse.
  p["plateau-16k"] =
      GenSpec(s).rows(1, 2).heads(2, 1, 64).lengths({16384 + 3}).blocks(1, 1024, 1, 1).with(Values::plateau);
  GenSpec ladder = GenSpec(s).rows(1, 2).heads(2, 1, 64).lengths({16384 + 3}).blocks(1, 64, 0, 1).with(Values::ladder);
  ladder.ladder_levels = 3;
  p["ladder-16k"] = ladder;
  for (KDtype t : {KDtype::e4m3fn, KDtype::e4m3fnuz, KDtype::e5m2}) {
    GenSpec f = GenSpec(s).rows(2, 3).heads(2, 1, 64).up_to(600).blocks(16, 4, 1, 1).k(t, 0.75).score(ScoreType::lse);
    f.fp8_specials = true;
    f.alias_minus_s = true;
    p[std::string("specials-") + std::string(to_string(t))] = f;
  }
  // MiniMax's upstream decode indexer (contract msa-decode, ../shared/spec/upstream-msa.md):
  // H 4 on one K head, lengths around page boundaries p*128 + {-1, 0, 1, 7} past 16 pages,
  // every value set of the selector sweep (one per request), and Q = 16 verify rows.
  p["msa-sweep"] = GenSpec(s)
                       .rows(6, 4)
                       .heads(4, 1, 128)
                       .lengths({128 * 17 - 1, 128 * 18, 128 * 20 + 1, 128 * 33 + 7, 128 * 40 - 1, 4095})
                       .with(Values::selector_sweep);
  p["msa-q16"] = GenSpec(s).rows(2, 16).heads(2, 1, 128).lengths({128 * 16 - 8, 128 * 63 + 7}).k(KDtype::e4m3fn, 1.0);
  // MSA's decode test matrix (upstream-msa.md section 5) on 128-token pages shared between
  // requests (random tables of max_pages + 3 pages): seq_lens p*128 + {-1, 0, 1, 7} and 2^k +- 1
  // (2 rows a request: L = prefix + 1, prefix + 2), batches at the 1024-thread scan and grid
  // boundaries (129 .. 1025 requests of Q = 1), the 1,048,576-token row (8192 pages), a bimodal
  // production mix (1K-200K, Q = 8). The gate judges cpu-msa on all but msa-batch-257/513 and
  // msa-bimodal (tests/kernels/test_msa_backend.cpp; msa-1m: 3 s to generate, 0.6 s to judge);
  // the rest: ixo gen --preset NAME, then ixo check.
  auto paged = [](GenSpec g) {
    g.cfg.page_size = 128;
    g.pages = PageTable::random;
    return g;
  };
  p["msa-lengths"] = paged(
      GenSpec(s).rows(12, 2).heads(4, 1, 128).lengths({128 * 17 - 2, 128 * 17, 128 * 17 + 6, 128 * 32 - 2, 128 * 32,
                                                       128 * 32 + 6, 4094, 4096, 8190, 8192, 16382, 16384}));
  for (int n : {129, 257, 513, 1025})
    p["msa-batch-" + std::to_string(n)] = paged(GenSpec(s).rows(n, 1).heads(2, 1, 128).up_to(2300));
  p["msa-1m"] = paged(GenSpec(s).rows(1, 1).heads(1, 1, 128).lengths({1048575}));
  p["msa-bimodal"] =
      paged(GenSpec(s).rows(8, 8).heads(4, 1, 128).lengths({1024, 200000, 1100, 180000, 4096, 150000, 2000, 100000}));
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
