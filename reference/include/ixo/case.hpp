// A Case: one batch of indexer inputs (config + tensors), laid out like the arguments of
// SGLang's flash_decode_with_topk_idx. See docs/semantics.md.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ixo/config_fields.hpp"
#include "ixo/dtype.hpp"

namespace ixo {

constexpr int kMaxTopk = 2048;  // topk's most in ixo/config_fields.hpp

struct Config {
  // block_size, topk, init_blocks, local_blocks, packed_queries (consecutive rows forming one
  // request's verify group; a launch hint), page_size (tokens per K page; 1: token slots;
  // > 1 needs Case::page_table): the integer knobs of ixo/config_fields.hpp.
#define IXO_CONFIG_FIELD(name, dflt, least, most, required, written) int name = dflt;
  IXO_CONFIG_INT_FIELDS(IXO_CONFIG_FIELD)
#undef IXO_CONFIG_FIELD
  ScoreType score_type = ScoreType::max;
  std::optional<double> sm_scale;  // default D^-0.5
  double q_scale = 1.0;
  double k_scale = 1.0;
  KDtype k_dtype = KDtype::bf16;
  KDtype q_dtype = KDtype::bf16;  // bf16 or e4m3fn (then Case::q holds codes in the low byte)
};

struct Case {
  Config cfg;
  // Shapes.
  std::int64_t R = 0;      // query rows
  std::int64_t Hq = 1;     // index-Q heads
  std::int64_t Hk = 1;     // index-K heads
  std::int64_t D = 128;    // head dim
  std::int64_t S = 0;      // k_cache slots
  std::int64_t rows = 0;   // req_to_token rows
  std::int64_t width = 0;  // req_to_token columns
  // Tensors (row-major, C order).
  std::vector<std::uint16_t> q;            // [R, Hq, D] bf16 bits, or e4m3fn codes (0..255) when q_dtype is e4m3fn
  std::vector<std::uint8_t> k_cache;       // [S, Hk, D] raw little-endian elements (bf16: 2 bytes, fp8: 1);
                                           // nvfp4: [S, Hk, D/2], two E2M1 codes a byte (low nibble = even element)
  std::vector<std::uint8_t> k_scales;      // nvfp4 only: [S, Hk, D/16] e4m3fn codes, one per 16 elements; else empty
  std::vector<std::int32_t> req_to_token;  // [rows, width]
  std::vector<std::int64_t> slot_ids;      // [R]
  std::vector<std::int64_t> seq_lens;      // [R]
  // Paged K (docs/semantics.md "Paged K"): page_table [rows, max_pages] maps logical page p
  // of table row b to a physical page; cfg.page_size tokens a page. When present it is the
  // truth and req_to_token is derived from it (derive_req_to_token), so everything that
  // reads req_to_token (oracles, twins, GPU kernels) is unchanged. max_pages 0 = no table.
  std::int64_t max_pages = 0;
  std::vector<std::int32_t> page_table;  // [rows, max_pages], entries in [0, S / page_size)
  bool paged() const { return cfg.page_size > 1 || max_pages > 0; }
  // K may instead be a read-only map of k_cache.npy (load_case_mapped(dir), used
  // by `ixo ref`): then k_cache is empty and k_mapped holds the k_view().size() bytes. Only
  // the oracles, validate() and save_case() read K through k_view(); give every other
  // consumer (kernels, transforms) a case whose K is in k_cache (the default).
  std::shared_ptr<const std::uint8_t> k_mapped;
  std::size_t k_mapped_bytes = 0;
  std::span<const std::uint8_t> k_view() const {
    return k_mapped ? std::span<const std::uint8_t>(k_mapped.get(), k_mapped_bytes)
                    : std::span<const std::uint8_t>(k_cache);
  }

  double effective_sm_scale() const;  // sm_scale (or D^-0.5)
  // Block columns of the score buffer: ceil(width / block_size) (graph-constant maximum).
  std::int64_t NB() const;
};

// Per-row facts derived from the inputs (not from any kernel).
std::int64_t ceil_div(std::int64_t a, std::int64_t b);
// Table row of row r, or -1 when the row is inactive (slot outside the table after the
// [-S, 0) alias) or its length is 0.
std::int64_t table_row(const Case& c, std::int64_t r);
std::int64_t row_blocks(const Case& c, std::int64_t r);  // 0 for inactive rows

// K slot of token t of a table row whose logical page t / page_size is physical page
// `page`: page * page_size + t % page_size (the one paging formula).
inline std::int64_t paged_slot(std::int64_t page, std::int64_t t, std::int64_t page_size) {
  return page * page_size + t % page_size;
}
// Sets width = max_pages * page_size and req_to_token[b, t] = paged_slot(page_table[b,
// t / page_size], t) from c.page_table (rows, max_pages, cfg.page_size must be set).
void derive_req_to_token(Case& c);

// Table rows of c that read a K slot another table row reads too (positions below the
// longest active row reading each table row; aliases wrapped): 0 = no slot is shared.
std::int64_t rows_sharing_slots(const Case& c);

// Throws InputError naming the first malformed field and its value.
void validate(const Case& c);
// nvfp4 K needs D % 16 == 0 (one scale per 16 elements): InputError("D", ...) otherwise.
void check_nvfp4_head_dim(KDtype k_dtype, std::int64_t D);

}  // namespace ixo
