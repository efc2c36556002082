// Condition coverage: the boundary conditions a generated case really hits, computed from
// the Case and the oracle's output (never from the generator's knobs), tallied over a fuzz
// run (`ixo fuzz --coverage`). Each condition has a small witness spec that hits it: the
// tests check every detector on its witness, and a backend "reaches" a condition when it
// supports the witness case (and, for the CP conditions, runs context parallel).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backend.hpp"
#include "ixo/contract.hpp"
#include "ixo/generate.hpp"
#include "ixo/oracle.hpp"

namespace ixo::coverage {

enum class Scope : std::uint8_t { any, cp };  // cp: only meaningful on a context-parallel backend

struct Condition {
  std::string name;  // stable key (JSON, the gate test)
  std::string what;  // one line for the table
  Scope scope = Scope::any;
  GenSpec witness;  // generate(witness, 1) hits the condition
};

const std::vector<Condition>& conditions();

// hits[i] is true when case c (with e = oracle(c)) hits conditions()[i].
std::vector<bool> hits(const Case& c, const Expected& e);

// The backend runs the context-parallel kernels (its CP conditions count).
bool context_parallel(const Backend& b);
// The backend can meet the condition: scope matches and it supports the witness case.
bool reaches(const Backend& b, const Condition& cond);

// Tally over a run: per condition, the cases that hit it among the cases run by backends
// that reach it.
class Tally {
 public:
  // contracts[i] (optional, may be null): backend i's contract; a condition whose witness
  // lies outside it is unreachable for that backend (shown, never counted as a miss).
  explicit Tally(const std::vector<Backend*>& backends, const std::vector<const Contract*>& contracts = {});
  void add(std::size_t backend_index, const Case& c, const Expected& e);
  struct Row {
    std::string name, what;
    long hit = 0, cases = 0;        // cases: run by backends that reach the condition
    bool reachable = false;         // some backend of the run reaches it
    bool outside_contract = false;  // unreachable because its witness lies outside the contracts
  };
  std::vector<Row> rows() const;
  long cases() const { return total_; }
  std::string table() const;                           // reachable conditions: name, hits, share
  std::map<std::string, long> counts() const;          // reachable conditions -> hits
  std::vector<std::string> never_hit() const;          // reachable conditions with 0 hits
  std::vector<std::string> below(double share) const;  // reachable conditions hit in < share of cases

 private:
  std::vector<std::vector<bool>> reach_;  // [backend][condition]
  std::vector<long> hit_, cases_;
  std::vector<bool> outside_;  // some backend would reach it but its contract excludes the witness
  long total_ = 0;
};

}  // namespace ixo::coverage
