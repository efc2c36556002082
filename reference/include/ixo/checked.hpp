// Checked shape arithmetic: every product of input dimensions goes through checked_mul,
// which throws an InputError naming the field instead of wrapping around (issue 10).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>

#include "ixo/error.hpp"

namespace ixo {

// True when a * b does not fit in int64 (then *out holds the wrapped value).
inline bool mul_overflows(std::int64_t a, std::int64_t b, std::int64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}

// The product of `factors` as int64; throws InputError(field, "<what> = a x b x ... overflows
// int64") when it does not fit. `what` names the quantity (e.g. "q shape R x Hq x D").
template <class Range>
std::int64_t checked_product(const std::string& field, const std::string& what, const Range& factors) {
  std::int64_t p = 1;
  bool overflow = false;
  for (const std::int64_t f : factors) overflow = overflow || mul_overflows(p, f, &p);
  if (overflow) {
    std::string expr;
    for (const std::int64_t f : factors) expr += (expr.empty() ? "" : " x ") + std::to_string(f);
    throw InputError(field, what + " = " + expr + " overflows int64");
  }
  return p;
}
inline std::int64_t checked_product(const std::string& field, const std::string& what,
                                    std::initializer_list<std::int64_t> factors) {
  return checked_product<std::initializer_list<std::int64_t>>(field, what, factors);
}

}  // namespace ixo
