// Element types of the index-K cache and their exact decoding to float.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ixo {

enum class KDtype : std::uint8_t { bf16, e4m3fn, e4m3fnuz, e5m2 };
enum class ScoreType : std::uint8_t { max, lse };

std::string_view to_string(KDtype t);
std::string_view to_string(ScoreType t);
// Parse a name ("bf16", "e4m3fn", "e4m3fnuz", "e5m2"); throws InputError naming `field`.
KDtype parse_kdtype(std::string_view name, const std::string& field = "k_dtype");
ScoreType parse_score_type(std::string_view name, const std::string& field = "score_type");
inline bool is_fp8(KDtype t) { return t != KDtype::bf16; }
inline int element_bytes(KDtype t) { return is_fp8(t) ? 1 : 2; }

// bf16 bits -> float through Eigen::bfloat16 (exact).
float bf16_bits_to_float(std::uint16_t bits);
// float -> bf16 bits, round to nearest even (Eigen::bfloat16).
std::uint16_t float_to_bf16_bits(float x);

// The 256-entry decode table of an fp8 format, built once from the format's definition
// (sign, exponent bias, subnormals, NaN/inf encodings). Throws for bf16.
const std::array<float, 256>& fp8_table(KDtype t);
inline float fp8_to_float(std::uint8_t code, KDtype t) { return fp8_table(t)[code]; }
// float -> nearest finite fp8 code (ties to even code, saturating); used by generators.
std::uint8_t float_to_fp8(float x, KDtype t);

}  // namespace ixo
