// Named contracts and the contract's JSON form (docs/contracts.md lists both).
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ixo/contract.hpp"
#include "ixo/error.hpp"

namespace ixo {

using json = nlohmann::json;

namespace {

Contract sglang_triton_decode() {
  Contract c;
  c.name = "sglang-triton-decode";
  c.description =
      "SGLang's Triton decode indexer (flash_decode_with_topk_idx) as its code documents it: tile shapes need block "
      "sizes 16..128 (powers of two) and D 64/128, its top-k tile (128) must exceed topk, Triton cannot compile "
      "e4m3fnuz on sm_90, R must be a multiple of packed_queries (its caller packs only full groups, the rest per "
      "row), no inactive rows (it reads the table out of bounds); NaN blocks rank first there: unspecified here";
  c.block_sizes = {16, 32, 64, 128};
  c.head_dims = {64, 128};
  c.topk_min = 1;
  c.topk_max = 127;
  c.k_dtypes = {KDtype::bf16, KDtype::e4m3fn, KDtype::e5m2};
  c.q_dtypes = {KDtype::bf16};
  c.packing = Packing::full_groups;
  c.inactive_rows = false;
  c.semantics.nan_blocks = NanRank::unspecified;
  c.semantics.scores = ScoreBuffer::ignored;
  return c;
}

Contract ixo_native() {
  Contract c;
  c.name = "ixo-native";
  c.description =
      "our native kernels (cpu-rows, cpu-packed, cuda-rows, cuda-packed): the whole spec, and among "
      "equal forced scores the lowest ids win (their top-k key breaks ties by id)";
  c.semantics.forced_ties = ForcedTies::lowest_id;
  return c;
}

Contract ixo_cp() {
  Contract c;
  c.name = "ixo-cp";
  c.description =
      "our context-parallel kernels (cpu-cp, cuda-cp): one index-K head, WORLD = Hq ranks (1, 2, 4: up to "
      "the TP4 of SGLang's CP gate), "
      "topk 1..64 (candidates a shard), block ids in a 16-bit key field; lowest ids win among equal "
      "forced scores (the key's id field)";
  c.heads = {{1, 1}, {2, 1}, {4, 1}};  // WORLD up to the TP4 of the CP gate (the kernels take 1..16)
  c.topk_max = 64;
  c.k_dtypes = {KDtype::bf16, KDtype::e4m3fn, KDtype::e4m3fnuz, KDtype::e5m2};  // no nvfp4 K
  c.q_dtypes = {KDtype::bf16};                                                  // no fp8 q
  c.semantics.forced_ties = ForcedTies::lowest_id;
  return c;
}

Contract msa_decode() {
  Contract c;
  c.name = "msa-decode";
  c.description =
      "MiniMax's upstream M3 decode indexer (MiniMax-AI/MSA, ../shared/spec/upstream-msa.md): 128-token pages, D 128, "
      "one K head shared by H = 1, 2 or 4 q heads, q bf16 or e4m3fn, K bf16, e4m3fn or NVFP4, max score only, no init "
      "blocks, the local page forced, topk 16, "
      "Q = 1..16 verify rows a request (full groups), no inactive rows, no aliases, finite inputs; selection by its "
      "16-bit quantized selector (ties within one step (hi - lo) / 65534 may swap; replayed bit-exactly on the "
      "kernel's own scores), ids: 15 ranked history pages in descending score then the local page n-1 in slot 15; "
      "scores in natural units (no log2(e)) on the history columns of every row, never the local column";
  c.block_sizes = {128};
  c.head_dims = {128};
  c.topk_min = c.topk_max = 16;
  c.heads = {{1, 1}, {2, 1}, {4, 1}};
  c.q_dtypes = {KDtype::bf16, KDtype::e4m3fn};                 // bf16, Q8KV8 / Q8KV4
  c.k_dtypes = {KDtype::bf16, KDtype::e4m3fn, KDtype::nvfp4};  // bf16, Q8KV8, Q8KV4 (NVFP4 + e4m3 scales)
  c.score_types = {ScoreType::max};
  c.init_max = 0;
  c.local_min = c.local_max = 1;
  c.max_length = 1048576;  // 8192 pages of 128 tokens
  c.packing = Packing::full_groups;
  c.inactive_rows = false;
  c.negative_aliases = false;
  c.nonfinite = false;
  c.semantics.forced_ties = ForcedTies::lowest_id;
  c.semantics.order = IdOrder::ranked_forced_last;
  c.semantics.scores = ScoreBuffer::history;
  c.semantics.selection = Selection::quantized16;
  c.semantics.score_units = ScoreUnits::natural;
  return c;
}

template <class T>
T get(const json& j, const char* key) {
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw InputError(std::string("contract.") + key, "bad value " + j.at(key).dump());
  }
}

template <class E>
E parse_enum(const json& j, const char* key, std::initializer_list<E> all) {
  const auto s = get<std::string>(j, key);
  std::string names;
  for (E e : all) {
    if (s == to_string(e)) return e;
    names += (names.empty() ? "" : ", ") + std::string(to_string(e));
  }
  throw InputError(std::string("contract.") + key, "unknown value '" + s + "' (" + names + ")");
}

std::pair<int, int> range_of(const json& j, const char* key) {
  const auto v = get<std::vector<int>>(j, key);
  if (v.size() != 2 || (v[1] != -1 && v[0] > v[1]))
    throw InputError(std::string("contract.") + key,
                     "must be [min, max] with min <= max (max -1: no limit), got " + j.at(key).dump());
  return {v[0], v[1]};
}

}  // namespace

const std::vector<std::string>& contract_names() {
  static const std::vector<std::string> n = {"spec", "sglang-triton-decode", "ixo-native", "ixo-cp", "msa-decode"};
  return n;
}

Contract named_contract(const std::string& name) {
  if (name == "spec") return Contract{};
  if (name == "sglang-triton-decode") return sglang_triton_decode();
  if (name == "ixo-native") return ixo_native();
  if (name == "ixo-cp") return ixo_cp();
  if (name == "msa-decode") return msa_decode();
  std::string known;
  for (const auto& n : contract_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("contract", "unknown contract '" + name + "' (known: " + known + ", or a JSON file)");
}

Contract contract_from_json(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError("contract", std::string("is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw InputError("contract", "must be a JSON object");
  Contract c = j.contains("base") ? named_contract(get<std::string>(j, "base")) : Contract{};
  if (!j.contains("name")) c.name = "custom";
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k == "base")
      continue;
    else if (k == "name")
      c.name = get<std::string>(j, "name");
    else if (k == "description")
      c.description = get<std::string>(j, "description");
    else if (k == "block_sizes")
      c.block_sizes = get<std::vector<int>>(j, "block_sizes");
    else if (k == "head_dims")
      c.head_dims = get<std::vector<int>>(j, "head_dims");
    else if (k == "page_sizes")
      c.page_sizes = get<std::vector<int>>(j, "page_sizes");
    else if (k == "topk")
      std::tie(c.topk_min, c.topk_max) = range_of(j, "topk");
    else if (k == "heads")
      c.heads = get<std::vector<std::pair<int, int>>>(j, "heads");
    else if (k == "k_dtypes") {
      c.k_dtypes.clear();
      for (const auto& s : get<std::vector<std::string>>(j, "k_dtypes"))
        c.k_dtypes.push_back(parse_kdtype(s, "contract.k_dtypes"));
    } else if (k == "q_dtypes") {
      c.q_dtypes.clear();
      for (const auto& s : get<std::vector<std::string>>(j, "q_dtypes"))
        c.q_dtypes.push_back(parse_qdtype(s, "contract.q_dtypes"));
    } else if (k == "score_types") {
      c.score_types.clear();
      for (const auto& s : get<std::vector<std::string>>(j, "score_types"))
        c.score_types.push_back(parse_score_type(s, "contract.score_types"));
    } else if (k == "init_max")
      c.init_max = get<int>(j, "init_max");
    else if (k == "local_blocks")
      std::tie(c.local_min, c.local_max) = range_of(j, "local_blocks");
    else if (k == "max_rows")
      c.max_rows = get<std::int64_t>(j, "max_rows");
    else if (k == "max_length")
      c.max_length = get<std::int64_t>(j, "max_length");
    else if (k == "packing")
      c.packing = parse_enum(j, "packing", {Packing::any_rows, Packing::full_groups, Packing::none});
    else if (k == "inactive_rows")
      c.inactive_rows = get<bool>(j, "inactive_rows");
    else if (k == "negative_aliases")
      c.negative_aliases = get<bool>(j, "negative_aliases");
    else if (k == "nonfinite")
      c.nonfinite = get<bool>(j, "nonfinite");
    else if (k == "nan_blocks")
      c.semantics.nan_blocks = parse_enum(j, "nan_blocks", {NanRank::lowest, NanRank::highest, NanRank::unspecified});
    else if (k == "forced_ties")
      c.semantics.forced_ties = parse_enum(j, "forced_ties", {ForcedTies::any, ForcedTies::lowest_id});
    else if (k == "order")
      c.semantics.order =
          parse_enum(j, "order", {IdOrder::ascending, IdOrder::score_descending, IdOrder::ranked_forced_last});
    else if (k == "scores")
      c.semantics.scores = parse_enum(j, "scores", {ScoreBuffer::judged, ScoreBuffer::ignored, ScoreBuffer::history});
    else if (k == "selection")
      c.semantics.selection = parse_enum(j, "selection", {Selection::exact, Selection::quantized16});
    else if (k == "score_units")
      c.semantics.score_units = parse_enum(j, "score_units", {ScoreUnits::log2, ScoreUnits::natural});
    else
      throw InputError("contract." + k, "unknown key (docs/contracts.md lists the keys)");
  }
  for (int b : c.block_sizes)
    if (b < 1) throw InputError("contract.block_sizes", "must be >= 1, got " + std::to_string(b));
  for (int d : c.head_dims)
    if (d < 1) throw InputError("contract.head_dims", "must be >= 1, got " + std::to_string(d));
  for (int p : c.page_sizes)
    if (p < 1) throw InputError("contract.page_sizes", "must be >= 1, got " + std::to_string(p));
  for (const auto& [hq, hk] : c.heads)
    if (hk < 1 || hq < hk || hq % hk != 0)
      throw InputError("contract.heads", "(Hq, Hk) must have Hk >= 1 dividing Hq, got [" + std::to_string(hq) + ", " +
                                             std::to_string(hk) + "]");
  if (c.topk_min < 1 || c.topk_max < c.topk_min || c.topk_max > kMaxTopk)
    throw InputError("contract.topk", "must lie in [1, " + std::to_string(kMaxTopk) + "], got " + j.at("topk").dump());
  if (c.local_min < 0) throw InputError("contract.local_blocks", "must be >= 0");
  if (c.max_rows < 0 || c.max_length < 0) throw InputError("contract", "max_rows and max_length must be >= 0 (0: any)");
  return c;
}

std::string contract_to_json(const Contract& c) {
  json j;
  j["name"] = c.name;
  j["description"] = c.description;
  j["block_sizes"] = c.block_sizes;
  j["head_dims"] = c.head_dims;
  j["page_sizes"] = c.page_sizes;
  j["topk"] = {c.topk_min, c.topk_max};
  j["heads"] = json::array();
  for (const auto& [hq, hk] : c.heads) j["heads"].push_back({hq, hk});
  j["k_dtypes"] = json::array();
  for (KDtype t : c.k_dtypes) j["k_dtypes"].push_back(std::string(to_string(t)));
  j["q_dtypes"] = json::array();
  for (KDtype t : c.q_dtypes) j["q_dtypes"].push_back(std::string(to_string(t)));
  j["score_types"] = json::array();
  for (ScoreType t : c.score_types) j["score_types"].push_back(std::string(to_string(t)));
  j["init_max"] = c.init_max;
  j["local_blocks"] = {c.local_min, c.local_max};
  j["max_rows"] = c.max_rows;
  j["max_length"] = c.max_length;
  j["packing"] = std::string(to_string(c.packing));
  j["inactive_rows"] = c.inactive_rows;
  j["negative_aliases"] = c.negative_aliases;
  j["nonfinite"] = c.nonfinite;
  j["nan_blocks"] = std::string(to_string(c.semantics.nan_blocks));
  j["forced_ties"] = std::string(to_string(c.semantics.forced_ties));
  j["order"] = std::string(to_string(c.semantics.order));
  j["scores"] = std::string(to_string(c.semantics.scores));
  j["selection"] = std::string(to_string(c.semantics.selection));
  j["score_units"] = std::string(to_string(c.semantics.score_units));
  return j.dump(2);
}

Contract load_contract(const std::string& name_or_file) {
  for (const auto& n : contract_names())
    if (n == name_or_file) return named_contract(n);
  if (!std::filesystem::is_regular_file(name_or_file)) {
    std::string known;
    for (const auto& n : contract_names()) known += (known.empty() ? "" : ", ") + n;
    throw InputError("--contract",
                     "'" + name_or_file + "' is neither a named contract (" + known + ") nor a JSON file");
  }
  std::ifstream f(name_or_file);
  std::stringstream ss;
  ss << f.rdbuf();
  try {
    return contract_from_json(ss.str());
  } catch (const InputError& e) {
    throw InputError(e.field(), std::string("in ") + name_or_file + ": " + e.what());
  }
}

}  // namespace ixo
