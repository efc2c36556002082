// ixo diff CASE --backend A --backend B [--chunks N] [--mutant ID]: two backends on one case,
// bit for bit; the first differing ids and score cell, each placed in the native plan (which
// CTA, program, tile row and KV chunk computed it). Exit 0 identical, 1 different.
#include <fmt/format.h>

#include <string>

#include "commands.hpp"
#include "common/mutants.hpp"
#include "ixo/backend_diff.hpp"
#include "ixo/case_io.hpp"
#include "ixo/error.hpp"

namespace ixo::cli {

int diff(const Args& a, int chunks, int mutant) {
  if (a.backends.size() != 2)
    throw InputError("--backend",
                     fmt::format("diff takes exactly two (--backend A --backend B), got {}", a.backends.size()));
  if (chunks < 0) throw InputError("--chunks", fmt::format("must be >= 0 (0: the plan's), got {}", chunks));
  if (mutant != 0) {
#if !defined(IXO_ENABLE_MUTANTS)
    throw InputError("--mutant", "this build has no mutant switches (IXO_MUTANTS=OFF); use a test build");
#endif
    bool known = false;
    for (const auto& m : mutants::sites) known = known || m.id == mutant;
    if (!known)
      throw InputError("--mutant", fmt::format("{} is not a catalogue mutant id (ixo mutate lists them)", mutant));
  }
  const Case c = load_case(a.case_dir);
  auto ba = make_backend(a.backends[0], a.backend_opt);
  auto bb = make_backend(a.backends[1], a.backend_opt);
  RunOptions ra, rb;
  ra.force_num_chunks = rb.force_num_chunks = chunks;
  rb.mutant = mutant;
  const Observed oa = run_on_case(*ba, a.backends[0], c, ra);
  const Observed ob = run_on_case(*bb, a.backends[1], c, rb);
  const std::string name_b = mutant ? fmt::format("{} (mutant {})", a.backends[1], mutant) : a.backends[1];
  const FirstDifference d = first_difference(oa, ob);
  fmt::print("{}", diff_report(c, a.backends[0], ba->traits(), oa, name_b, bb->traits(), ob, d, chunks));
  return d.any() ? 1 : 0;
}

}  // namespace ixo::cli
