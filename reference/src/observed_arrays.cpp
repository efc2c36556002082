#include "ixo/observed_arrays.hpp"

#include <algorithm>
#include <string>

#include "ixo/error.hpp"
#include "ixo/npy.hpp"

namespace ixo {

Observed observed_from_arrays(const Case& c, const std::vector<std::int64_t>& topk_shape,
                              std::vector<std::int32_t> topk, const ScoresArray* scores) {
  if (topk_shape.size() != 3 || topk_shape[0] != c.Hq || topk_shape[1] != c.R || topk_shape[2] != c.cfg.topk)
    throw InputError("topk_idx", "shape " + shape_string(topk_shape) + ", expected [" + std::to_string(c.Hq) + "," +
                                     std::to_string(c.R) + "," + std::to_string(c.cfg.topk) + "] (Hq, R, topk)");
  Observed o;
  o.Hq = c.Hq;
  o.R = c.R;
  o.topk = c.cfg.topk;
  o.topk_idx = std::move(topk);
  if (scores) {
    std::int64_t need = 0;
    for (std::int64_t r = 0; r < c.R; ++r) need = std::max(need, row_blocks(c, r));
    const auto& s = scores->shape;
    if (s.size() != 3 || s[0] != c.Hq || s[1] != c.R || s[2] < need)
      throw InputError("scores", "shape " + shape_string(s) + ", expected [" + std::to_string(c.Hq) + "," +
                                     std::to_string(c.R) + ",NB] with NB >= " + std::to_string(need));
    o.has_scores = true;
    o.NB = s[2];
    o.scores = scores->values;
  }
  return o;
}

}  // namespace ixo
