// Element types of the index-K cache and their exact decoding to float.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ixo {

// Element types of q and K. q takes bf16 or e4m3fn (Config::q_dtype); K any of them.
// nvfp4: E2M1 codes packed two per byte (low nibble = even element) plus one e4m3fn scale
// per 16 elements (Case::k_scales); see docs/semantics.md "NVFP4 K".
enum class KDtype : std::uint8_t { bf16, e4m3fn, e4m3fnuz, e5m2, nvfp4 };
enum class ScoreType : std::uint8_t { max, lse };

std::string_view to_string(KDtype t);
std::string_view to_string(ScoreType t);
// Parse a name ("bf16", "e4m3fn", "e4m3fnuz", "e5m2", "nvfp4"); throws InputError naming `field`.
KDtype parse_kdtype(std::string_view name, const std::string& field = "k_dtype");
// Parse a q dtype ("bf16" or "e4m3fn"); throws InputError naming `field`.
KDtype parse_qdtype(std::string_view name, const std::string& field = "q_dtype");
ScoreType parse_score_type(std::string_view name, const std::string& field = "score_type");
// One-byte codes decoded through a 256-entry table (not nvfp4: its value needs its scale).
inline bool is_fp8(KDtype t) { return t == KDtype::e4m3fn || t == KDtype::e4m3fnuz || t == KDtype::e5m2; }
inline bool is_nvfp4(KDtype t) { return t == KDtype::nvfp4; }
// Bytes of one stored element (bf16 2, fp8 1); nvfp4 has no whole byte: use k_row_bytes.
inline int element_bytes(KDtype t) { return t == KDtype::bf16 ? 2 : 1; }
// Bytes of one K row of D elements in k_cache: bf16 2D, fp8 D, nvfp4 D/2 (its scales, D/16
// bytes a row, are in k_scales).
inline std::int64_t k_row_bytes(KDtype t, std::int64_t D) { return t == KDtype::nvfp4 ? D / 2 : D * element_bytes(t); }
constexpr int kNvfp4Block = 16;  // elements sharing one e4m3fn scale

// bf16 bits -> float through Eigen::bfloat16 (exact).
float bf16_bits_to_float(std::uint16_t bits);
// float -> bf16 bits, round to nearest even (Eigen::bfloat16).
std::uint16_t float_to_bf16_bits(float x);

// The 256-entry decode table of an fp8 format, built once from the format's definition
// (sign, exponent bias, subnormals, NaN/inf encodings). Throws for bf16.
const std::array<float, 256>& fp8_table(KDtype t);
inline float fp8_to_float(std::uint8_t code, KDtype t) { return fp8_table(t)[code]; }
// float -> nearest finite fp8 code (ties to even code, saturating; NaN -> code 0); used by
// generators and by the nvfp4 decode table below. float_to_fp8_exhaustive is the definition
// (every code tried); float_to_fp8 gives the same code by binary search (tested equal).
std::uint8_t float_to_fp8_exhaustive(float x, KDtype t);
std::uint8_t float_to_fp8(float x, KDtype t);

// A stored q element (Case::q holds bf16 bits, or an e4m3fn code in the low byte), decoded exactly.
float q_to_float(std::uint16_t stored, KDtype q_dtype);
// The stored q element nearest to x (bf16: round to nearest even; e4m3fn: float_to_fp8).
std::uint16_t float_to_q(float x, KDtype q_dtype);

// NVFP4: the value of an E2M1 code (4 bits: sign, 2 exponent bits with bias 1, 1 mantissa
// bit; magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6).
float e2m1_to_float(std::uint8_t nibble);
// Element value = satfinite_e4m3(e2m1 * scale): the exact product rounded to the nearest
// e4m3fn value (ties to even), saturating to +-448; a NaN scale gives NaN. A 16 x 256 table
// [e2m1 code][scale code], built once from float_to_fp8 of the exact product.
const std::array<float, 16 * 256>& nvfp4_table();
inline float nvfp4_to_float(std::uint8_t nibble, std::uint8_t scale_code) {
  return nvfp4_table()[nibble * 256u + scale_code];
}
// Element e of a packed nvfp4 row: byte e/2, low nibble for even e, high nibble for odd e.
inline std::uint8_t nvfp4_nibble(const std::uint8_t* row, std::int64_t e) {
  return static_cast<std::uint8_t>((row[e / 2] >> (4 * (e & 1))) & 0xF);
}

}  // namespace ixo
