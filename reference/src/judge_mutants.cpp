// The judge's mutant selector (reference/include/ixo/judge_mutants.hpp).
#include "ixo/judge_mutants.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ixo::judge_mutants {

namespace {

int read_active() {
#if defined(IXO_ENABLE_JUDGE_MUTANTS)
  const char* env = std::getenv("IXO_JUDGE_MUTANT");
  if (!env || !*env) return 0;
  const int id = std::atoi(env);
  for (const Info& m : catalogue)
    if (m.id == id) {
      std::fprintf(stderr, "ixo: JUDGE MUTANT %d %s ACTIVE (IXO_JUDGE_MUTANT): verdicts are deliberately wrong\n", m.id,
                   m.key);
      return id;
    }
  std::fprintf(stderr, "ixo: IXO_JUDGE_MUTANT=%s names no judge mutant: ignored\n", env);
#endif
  return 0;
}

}  // namespace

int active() {
  static const int id = read_active();
  return id;
}

const char* banner() {
  static const std::string text = [] {
    for (const Info& m : catalogue)
      if (m.id == active())
        return " [JUDGE MUTANT " + std::to_string(m.id) + " " + m.key + " ACTIVE: verdicts are deliberately wrong]";
    return std::string();
  }();
  return text.c_str();
}

}  // namespace ixo::judge_mutants
