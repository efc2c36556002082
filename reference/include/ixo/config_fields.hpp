// The integer knobs of a case's config, each written once (issue 24): the list below makes
// the Config field with its default (ixo/case.hpp), its case.json key and check
// (case_io.cpp, validate), the kernels' common::IndexConfig field and its copy from a Case
// (kernels/case_config.hpp), and the Python Case keyword and property (via
// _core.config_int_fields). A new integer knob is one line here, plus the oracle and the
// kernel that use it (docs/NOTES.md "A new config knob"). Plain macros: host and device.
//
// X(name, default, least, most, required, written_at_default)
//   least / most: the accepted range (validate names the field and value otherwise;
//   2147483647: no upper bound); most is read where ixo/case.hpp is included only;
//   required: case.json must name it (else the default); written_at_default: case.json
//   names it even at its default (false keeps older case files byte-equal).
#pragma once

#define IXO_CONFIG_INT_FIELDS(X)                   \
  X(block_size, 128, 1, 2147483647, true, true)    \
  X(topk, 16, 1, ixo::kMaxTopk, true, true)        \
  X(init_blocks, 0, 0, 2147483647, true, true)     \
  X(local_blocks, 1, 0, 2147483647, true, true)    \
  X(packed_queries, 1, 1, 2147483647, false, true) \
  X(page_size, 1, 1, 2147483647, false, false)
