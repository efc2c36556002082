#include "toy_kernel.hpp"

#include "ixo/oracle.hpp"

namespace toy {

ixo::Observed kernel(const ixo::Case& c) {
  ixo::Case masked = c;
#if TOY_PLANTED_BUG
  for (auto& len : masked.seq_lens)  // BUG: the last key of each row is masked out
    if (len > 1) --len;
#endif
  return ixo::expected_as_observed(ixo::oracle(masked));  // scores float64 -> float32, as a kernel stores them
}

}  // namespace toy
