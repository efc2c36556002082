// Launch API of the GPU indexer kernels, usable from plain C++ (no CUDA/HIP headers).
// Every launch takes device pointers and a stream, allocates nothing, never synchronizes
// with the host and sizes its grid from graph-constant values only (R, Hq, Hk, NB,
// packed_queries, the chunk count), so score + top-k can be captured in a CUDA graph.
#pragma once
#include <cstddef>
#include <cstdint>

#include "index_config.hpp"

namespace ixo::gpu {

// The step's configuration (shapes, config, scales: common::IndexConfig, made from a Case by
// ixo::index_config) plus the device buffers and the launch-only knobs.
struct IndexArgs : common::IndexConfig {
  // Device pointers (layouts as in ixo::Case).
  const std::uint16_t* q = nullptr;            // [R, Hq, D] bf16 bits
  const void* k_cache = nullptr;               // [S, Hk, D] bf16 bits or fp8 codes
  const std::int32_t* req_to_token = nullptr;  // [rows, width]
  const std::int64_t* slot_ids = nullptr;      // [R]
  const std::int64_t* seq_lens = nullptr;      // [R]
  float* scores = nullptr;                     // [Hq, R, NB] workspace (score_workspace_bytes)
  std::int32_t* topk_idx = nullptr;            // [Hq, R, topk]
  int num_chunks = 0;                          // 0 = common::num_kv_chunks plan; > 0 forces it
  int mutant = 0;                              // mutation campaign selector (0 = none)
};

// Return codes are the runtime's error codes (0 = success) as int.
// Score kernels write only active rows with nb > topk, columns [0, nb).
int launch_score_rows(const IndexArgs& a, void* stream);
// Packed: the rows of a whole group (packed_queries consecutive rows from row 0, all with
// one slot id) x gqa heads share one 16-row tile. Any batch is accepted: a group whose slot
// ids differ and the R % P trailing rows run per row inside their CTA (decided on the
// device from slot_ids; the grid depends on R, Hk, NB and P only, so a captured graph
// stays valid for any slot ids and lengths). Outputs equal launch_score_rows' bit for bit.
// Falls back to launch_score_rows when !packed_supported(a).
int launch_score_packed(const IndexArgs& a, void* stream);
bool packed_supported(const IndexArgs& a);  // P > 1, P * Hq/Hk <= 16 (shapes only)
int launch_topk(const IndexArgs& a, void* stream);
// The whole index step: score (packed or rows) then top-k on the same stream.
int launch_index_step(const IndexArgs& a, bool packed, void* stream);
// Fill n 32-bit words with `bits` (the score poison).
int launch_fill_u32(void* dst, std::uint32_t bits, std::size_t n, void* stream);
// Bytes of the score workspace for graph-constant maxima.
inline std::size_t score_workspace_bytes(std::int64_t R, std::int64_t Hq, std::int64_t NB) {
  return static_cast<std::size_t>(R * Hq * NB) * sizeof(float);
}
// Head dims the kernels run: 1..256 (64 and 128 on the tensor-core path, others scalar).
bool head_dim_supported(std::int64_t D);
// Name of the error code.
const char* error_string(int code);

}  // namespace ixo::gpu
