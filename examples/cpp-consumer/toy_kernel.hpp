// A toy CPU kernel for the example: it returns what a real kernel returns (int32 top-k ids
// [Hq,R,topk], float32 block scores [Hq,R,NB]). To stay short it borrows the oracle's
// arithmetic, and it carries a PLANTED BUG unless built with TOY_PLANTED_BUG=0: it masks
// the keys as if every row were one token shorter (an off-by-one in the masked length).
#pragma once
#include "ixo/case.hpp"
#include "ixo/observed.hpp"

namespace toy {

ixo::Observed kernel(const ixo::Case& c);

}  // namespace toy
