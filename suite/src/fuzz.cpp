#include "ixo/fuzz.hpp"
#include "ixo/judge_mutants.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "ixo/arbitrary.hpp"
#include "ixo/backend_properties.hpp"
#include "ixo/case_run.hpp"
#include "ixo/error.hpp"
#include "ixo/oracle.hpp"
#include "ixo/property_runner.hpp"
#include "ixo/stop.hpp"
#include "ixo/transform.hpp"
#include "ixo/verdict.hpp"

namespace ixo {

namespace {

// What one backend's property runs share: the contract, the judge options, the counts.
struct Judging {
  Backend* b = nullptr;
  Backend* twin = nullptr;
  std::shared_ptr<const Contract> contract;
  std::shared_ptr<const std::vector<gen::ShapeKey>> shapes;
  JudgeOptions opt;
  int judged = 0, failed = 0, skipped = 0, outside = 0;  // failed: failing evaluations (shrink steps too)
  // The last failing evaluation: after RapidCheck's shrinking, the shrunk counterexample.
  std::optional<Case> fail_case;
  Verdict fail_verdict;
  bool fail_exact = false;
};

// The verdict of b on c (tiers 1-2 under the contract, poison for our kernels, tier 3 for
// exact values), then bitwise against the twin. skipped: the kernel declined the case.
Verdict judge_case(Judging& j, const Case& c, const Expected& e, bool exact, const RunOptions& run,
                   bool* skipped = nullptr, std::string* skip_reason = nullptr) {
  JudgeOptions opt = j.opt;
  opt.check_poison = true;
  opt.exact_ids = exact;
  const CaseRun r = run_and_judge(*j.b, c, e, opt, run);
  if (r.skipped) {
    if (skipped) *skipped = true;
    if (skip_reason) *skip_reason = r.skip_reason;
    return {};
  }
  Verdict v = r.verdict;
  if (v.pass && j.twin) {
    v = compare_bitwise(j.twin->run(c, run), r.observed);
    v.contract = opt.contract;
  }
  return v;
}

// One fuzz property: a case drawn inside the contract must pass on the backend.
void fuzz_body(Judging& j, const gen::Knobs& knobs, const RunOptions& run, coverage::Tally* tally, std::size_t index) {
  const Case c = props::draw_case({j.b}, knobs);
  if (j.twin) RC_PRE(j.twin->supports(c));
  if (const auto why = j.contract->refuses(c)) {  // presets only: the generator draws inside
    ++j.outside;
    RC_DISCARD("outside the contract: " + *why);
  }
  const Expected e = oracle(c);
  bool skipped = false;
  std::string why;
  const Verdict v = judge_case(j, c, e, props::last_drawn()->spec.values == Values::exact, run, &skipped, &why);
  if (skipped) {
    ++j.skipped;
    if (IXO_JUDGE_MUTANT(fuzz_declined_counted_judged)) ++j.judged;
    RC_DISCARD(why);
  }
  ++j.judged;
  if (tally) tally->add(index, c, e);  // the conditions of every judged case
  if (!v.pass) {
    ++j.failed;
    j.fail_case = c;
    j.fail_verdict = v;
    j.fail_exact = props::last_drawn()->spec.values == Values::exact;
    RC_FAIL("the verdict failed");
  }  // the report is rebuilt from the shrunk case
}

std::string shape_line(const Case& c) {
  return fmt::format(
      "R={} rows, Hq:Hk={}:{}, D={}, block_size={}, topk={}, init={}, local={}, k_dtype={}{}, score={}, "
      "packed_queries={}, seq_lens [{}..{}]",
      c.R, c.Hq, c.Hk, c.D, c.cfg.block_size, c.cfg.topk, c.cfg.init_blocks, c.cfg.local_blocks,
      to_string(c.cfg.k_dtype),
      c.cfg.q_dtype == KDtype::bf16 ? "" : ", q_dtype=" + std::string(to_string(c.cfg.q_dtype)),
      to_string(c.cfg.score_type), c.cfg.packed_queries,
      c.R ? *std::min_element(c.seq_lens.begin(), c.seq_lens.end()) : 0,
      c.R ? *std::max_element(c.seq_lens.begin(), c.seq_lens.end()) : 0);
}

// The shrunk case reduced to the rows that fail: the first failing row alone, else a chain of
// 2..4 rows of its packed group around it (packed as a group of that many rows: a packed bug
// needs the group's longer rows), else its aligned group; kept only when it stays inside the
// contract and still fails. Returns the case and its verdict.
std::pair<Case, Verdict> fewest_rows(Judging& j, Case c, Verdict v, bool exact, const RunOptions& run) {
  std::int64_t row = -1;
  for (const auto& f : v.details)
    if (f.row >= 0) {
      row = f.row;
      break;
    }
  if (row < 0 || c.R <= 1) return {std::move(c), std::move(v)};
  struct Try {
    std::vector<std::int64_t> rows;
    int pack;  // 0: keep the case's packed_queries
  };
  std::vector<Try> tries = {{{row}, 0}};
  const std::int64_t P = c.cfg.packed_queries;
  if (P > 1) {
    const std::int64_t g = row / P * P;
    for (std::int64_t m = 2; m < P && m <= 4; ++m)
      for (std::int64_t s = std::max(g, row - m + 1); s <= row && s + m <= std::min(g + P, c.R); ++s) {
        Try t{{}, static_cast<int>(m)};
        for (std::int64_t d = 0; d < m; ++d) t.rows.push_back(s + d);
        tries.push_back(std::move(t));
      }
    if (g + P <= c.R && P < c.R) {
      Try t{{}, 0};
      for (std::int64_t d = 0; d < P; ++d) t.rows.push_back(g + d);
      tries.push_back(std::move(t));
    }
  }
  for (const auto& t : tries) {
    if (stop::stopping()) break;
    Case sub = keep_rows(c, t.rows);
    if (t.pack) sub.cfg.packed_queries = t.pack;
    if (j.contract->refuses(sub) || !j.b->supports(sub)) continue;
    try {
      validate(sub);
    } catch (const InputError&) {
      continue;
    }
    bool skipped = false;
    Verdict sv = judge_case(j, sub, oracle(sub), exact, run, &skipped);
    if (!skipped && !sv.pass) return {std::move(sub), std::move(sv)};
  }
  return {std::move(c), std::move(v)};
}

// Then fewer heads: one q head a K head (Hq' = Hk), the failing head's position in its group
// kept, so every new head reads the K head its old head read. Kept only when it still fails
// inside the contract (a GQA mapping bug needs Hq > Hk and keeps its heads).
std::pair<Case, Verdict> fewest_heads(Judging& j, Case c, Verdict v, bool exact, const RunOptions& run) {
  std::int64_t head = -1;
  for (const auto& f : v.details)
    if (f.head >= 0) {
      head = f.head;
      break;
    }
  if (head < 0 || c.Hq <= c.Hk || stop::stopping()) return {std::move(c), std::move(v)};
  const std::int64_t gqa = c.Hq / c.Hk;
  std::vector<std::int64_t> heads;
  for (std::int64_t k = 0; k < c.Hk; ++k) heads.push_back(k * gqa + head % gqa);
  Case sub = keep_heads(c, heads);
  if (j.contract->refuses(sub) || !j.b->supports(sub)) return {std::move(c), std::move(v)};
  bool skipped = false;
  Verdict sv = judge_case(j, sub, oracle(sub), exact, run, &skipped);
  if (!skipped && !sv.pass) return {std::move(sub), std::move(sv)};
  return {std::move(c), std::move(v)};
}

void validate_options(const FuzzOptions& o) {
  if (std::isnan(o.seconds) || o.seconds <= 0)
    throw InputError("seconds", fmt::format("must be a positive number of seconds, got {}", o.seconds));
  if (std::isinf(o.seconds) && o.max_seeds <= 0)
    throw InputError("seconds", "infinite only with a seed count (--seeds N / seeds=N): the run would never end");
  if (o.cases_per_seed < 1) throw InputError("cases", fmt::format("must be >= 1, got {}", o.cases_per_seed));
  if (o.shapes < 0) throw InputError("shapes", fmt::format("must be >= 0 (0: unlimited), got {}", o.shapes));
  if (o.max_failures < 0) throw InputError("max_failures", fmt::format("must be >= 0, got {}", o.max_failures));
  if (o.max_seeds < 0) throw InputError("seeds", fmt::format("must be >= 0, got {}", o.max_seeds));
  if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards)
    throw InputError("shard", fmt::format("expected 0 <= i < n, got {}/{}", o.shard, o.shards));
  if (o.out_dir.empty()) throw InputError("out", "a directory for failing cases is required");
  require_writable_dir(o.out_dir, "out");
}

}  // namespace

std::string FuzzResult::outcome() const {
  if (!failures.empty() || !report.empty()) return "FAIL";
  if (interrupted) return "INTERRUPTED";
  if (judged == 0) return "NOTHING JUDGED";
  return "PASS";
}

std::string FuzzResult::summary() const {
  std::string why;
  const std::string o = outcome();
  if (o == "NOTHING JUDGED")
    why = skipped ? fmt::format(": the kernel declined all {} cases drawn (skips are not passes)", skipped)
                  : std::string(": no case was judged (skips are not passes)");
  if (o == "INTERRUPTED") why = ": interrupted (Ctrl-C) before the run finished";
  return fmt::format("fuzz {}{}: {} cases judged ({} passed, {} failures), {} declined, {} runs in {:.1f} s{}{}", o,
                     why, judged, cases, failures.size(), skipped, runs, seconds, out_of_time ? ", budget used" : "",
                     gave_up ? fmt::format(", {} runs gave up (the kernel declined almost every case)", gave_up) : "");
}

FuzzResult run_fuzz(const std::vector<Backend*>& all, const FuzzOptions& o,
                    const std::function<void(const std::string&)>& log) {
  validate_options(o);
  std::vector<Backend*> backends;
  for (Backend* b : all) {
    std::string why;
    if (b->available(&why))
      backends.push_back(b);
    else if (log)
      log(fmt::format("unavailable here, skipped: {}: {}", b->name(), why));
  }
  if (backends.empty()) throw InputError("backend", "no selected backend can run here");
  props::set_presets(o.presets);
  stop::StopScope scope(o.seconds, o.poll);
  RunOptions run;
  run.mutant = o.mutant;
  const Values families[] = {Values::gaussian, Values::gaussian, Values::exact,
                             Values::near_tie, Values::ladder,   Values::plateau};
  std::vector<std::unique_ptr<Backend>> twins;  // each backend's bitwise twin (traits), or null
  std::vector<Judging> judging(backends.size());
  FuzzResult res;
  std::vector<const Contract*> contracts;
  for (std::size_t i = 0; i < backends.size(); ++i) {
    Judging& j = judging[i];
    j.b = backends[i];
    twins.push_back(make_bitwise_twin(*j.b));
    j.twin = twins.back().get();
    j.contract = std::make_shared<const Contract>(o.contract ? *o.contract : named_contract(j.b->traits().contract));
    j.opt.semantics = j.contract->semantics;
    j.opt.contract = j.contract->label();
    if (o.shapes > 0) {
      gen::Knobs k;
      k.contract = j.contract;
      j.shapes = std::make_shared<const std::vector<gen::ShapeKey>>(gen::draw_shapes(k, o.shapes, o.seed));
    }
    res.contracts.push_back(j.b->name() + ": " + j.opt.contract);
    contracts.push_back(j.contract.get());
  }
  if (o.coverage) res.coverage.emplace(backends, contracts);
  coverage::Tally* const tally = res.coverage ? &*res.coverage : nullptr;
  auto done = [&] {
    return stop::stopping() || (o.max_seeds > 0 && res.runs >= o.max_seeds * static_cast<int>(backends.size())) ||
           (o.max_failures > 0 && static_cast<int>(res.failures.size()) >= o.max_failures);
  };
  for (std::uint64_t k = 0; !done(); ++k) {
    const std::uint64_t seed = o.seed + static_cast<std::uint64_t>(o.shard) + k * static_cast<std::uint64_t>(o.shards);
    for (std::size_t i = 0; i < backends.size(); ++i) {
      if (done()) break;
      Judging& j = judging[i];
      gen::Knobs knobs;
      knobs.values = families[seed % std::size(families)];
      knobs.contract = j.contract;
      knobs.shapes = j.shapes;
      props::set_contract(j.contract);
      const PropertyResult r =
          run_property("fuzz/" + j.b->name(), o.cases_per_seed, seed, [&] { fuzz_body(j, knobs, run, tally, i); });
      props::set_contract(nullptr);
      ++res.runs;
      if (r.status == PropertyResult::Status::gave_up) ++res.gave_up;
      if (r.status != PropertyResult::Status::failed) continue;
      // The shrunk case (the last failing evaluation) and its verdict, reduced to the failing
      // rows unless the budget is spent (the run returns within it plus one case).
      std::string where = "(not written)", msg;
      if (r.counterexample && j.fail_case) {
        const bool exact = j.fail_exact;
        Case c = std::move(*j.fail_case);
        Verdict v = std::move(j.fail_verdict);
        j.fail_case.reset();
        const std::int64_t rows_before = c.R;
        const std::int64_t heads_before = c.Hq;
        if (!stop::stopping()) std::tie(c, v) = fewest_rows(j, std::move(c), std::move(v), exact, run);
        if (!stop::stopping()) std::tie(c, v) = fewest_heads(j, std::move(c), std::move(v), exact, run);
        Regression reg;
        reg.dir = unique_regression_dir(o.out_dir, j.b->name(), "fuzz", seed);
        reg.backend = j.b->name();
        reg.what = fmt::format("fuzz seed {} ({}){}", seed, j.opt.contract,
                               o.mutant ? fmt::format(" with mutant {}", o.mutant) : "");
        reg.contract_json = j.contract->name == "spec" ? "" : contract_to_json(*j.contract);
        std::string first;
        for (const auto& f : v.details)
          if (f.row >= 0) {
            first = fmt::format("; first failure at head {} row {}", f.head, f.row);
            break;
          }
        reg.report = v.summary();
        write_case_regression(reg, c, exact, static_cast<std::int64_t>(r.counterexample->seed));
        if (c.R == rows_before && c.Hq == heads_before)  // not reduced: the generator spec and seed rebuild the case
          std::ofstream(std::filesystem::path(reg.dir) / "spec.json") << spec_to_json(r.counterexample->spec);
        where = reg.dir;
        res.failures.push_back(where);
        msg = fmt::format(
            "FAIL {} (fuzz seed {}, {}): shrunk to {}{} after {} passing cases and {} shrinks\nreplay: {}\n{}",
            j.b->name(), seed, j.opt.contract, shape_line(c), first, r.cases, r.shrinks,
            replay_command(where, j.b->name()), reg.report);
      } else {
        msg = fmt::format("FAIL {} (fuzz seed {}, {}): {}", j.b->name(), seed, j.opt.contract, r.description);
      }
      if (res.report.empty()) res.report = msg;
      if (log) log(msg);
    }
  }
  props::set_presets({});
  for (const Judging& j : judging)
    res.judged += j.judged, res.cases += j.judged - j.failed, res.skipped += j.skipped, res.outside += j.outside;
  res.interrupted = stop::interrupted();
  res.out_of_time = stop::out_of_time();
  res.seconds = stop::elapsed_seconds();
  if (log)
    log(res.summary() +
        fmt::format(" over {} backend(s), shard {}/{}, first seed {}", backends.size(), o.shard, o.shards, o.seed));
  return res;
}

}  // namespace ixo
