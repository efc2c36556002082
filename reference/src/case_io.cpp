#include "ixo/case_io.hpp"
#include "ixo/observed_arrays.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ixo/checked.hpp"
#include "ixo/error.hpp"
#include "ixo/npy.hpp"

namespace ixo {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A JSON value for a message: at most 80 characters.
std::string brief(const json& v) {
  const std::string d = v.dump();
  return d.size() > 80 ? d.substr(0, 77) + "..." : d;
}

int json_int(const json& j, const char* key) {
  const json& v = j.at(key);
  if (!v.is_number_integer()) throw InputError(key, "must be an integer, got " + brief(v));
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw InputError(key, "out of range: " + brief(v));
  const auto x = v.get<long long>();
  if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max())
    throw InputError(key, "out of range: " + brief(v));
  return static_cast<int>(x);
}

double json_num(const json& j, const char* key) {
  const json& v = j.at(key);
  if (!v.is_number()) throw InputError(key, "must be a number, got " + brief(v));
  return v.get<double>();
}

std::string json_str(const json& j, const char* key) {
  const json& v = j.at(key);
  if (!v.is_string()) throw InputError(key, "must be a string, got " + brief(v));
  return v.get<std::string>();
}

// Throws InputError(name) unless `a` has one of `descrs` and rank `rank`.
void check_tensor(const NpyArray& a, const std::string& name, std::size_t rank,
                  std::initializer_list<const char*> descrs) {
  bool ok = false;
  std::string want;
  for (const char* d : descrs) {
    ok |= a.descr == d;
    want += std::string(want.empty() ? "" : " or ") + d;
  }
  if (!ok) throw InputError(name, "has npy dtype '" + a.descr + "', expected " + want);
  if (a.shape.size() != rank)
    throw InputError(name, "has rank " + std::to_string(a.shape.size()) + " (shape " + shape_string(a.shape) +
                               "), expected " + std::to_string(rank));
}

NpyArray read_tensor(const std::string& dir, const std::string& name, std::size_t rank,
                     std::initializer_list<const char*> descrs) {
  NpyArray a = read_npy((fs::path(dir) / (name + ".npy")).string(), name);
  check_tensor(a, name, rank, descrs);
  return a;
}

// json::parse, except that an object key given twice is an InputError naming the key (the
// library would silently keep the last value), and nesting deeper than 64 levels is refused
// (messages dump values recursively). `what` names the document in messages.
json parse_json_strict(const std::string& text, const std::string& what) {
  std::vector<std::set<std::string>> keys;  // one set per open object
  const json::parser_callback_t cb = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > 64) throw InputError(what, "nests deeper than 64 levels");
    if (event == json::parse_event_t::object_start) {
      keys.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!keys.empty()) keys.pop_back();
    } else if (event == json::parse_event_t::key && !keys.empty()) {
      const std::string k = parsed.is_string() ? parsed.get<std::string>() : parsed.dump();
      if (!keys.back().insert(k).second) throw InputError(k, "appears more than once in " + what + " (duplicate key)");
    }
    return true;
  };
  try {
    return json::parse(text, cb);
  } catch (const json::exception& e) {  // syntax errors, and numbers that overflow a double
    throw InputError(what, std::string("is not valid JSON: ") + e.what());
  }
}

std::vector<std::int64_t> as_int64(const NpyArray& a) {
  if (a.descr == "<i8") return npy_values<std::int64_t>(a);
  const auto v = npy_values<std::int32_t>(a);
  return {v.begin(), v.end()};
}

}  // namespace

Config parse_config_json(const std::string& text) {
  const json j = parse_json_strict(text, "case.json");
  if (!j.is_object()) throw InputError("case.json", "must hold a JSON object, got " + brief(j));
  // clang-format off
  static const char* known[] = {
#define IXO_CONFIG_FIELD(name, dflt, least, most, required, written) #name,
      IXO_CONFIG_INT_FIELDS(IXO_CONFIG_FIELD)
#undef IXO_CONFIG_FIELD
      "score_type", "sm_scale", "q_scale", "k_scale", "k_dtype", "q_dtype"};
  // clang-format on
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool found = false;
    for (const char* k : known) found |= it.key() == k;
    if (!found) throw InputError(it.key(), "unknown key in case.json");
  }
  Config c;
#define IXO_CONFIG_FIELD(name, dflt, least, most, required, written) \
  if (required && !j.contains(#name)) throw InputError(#name, "missing from case.json");
  IXO_CONFIG_INT_FIELDS(IXO_CONFIG_FIELD)
#undef IXO_CONFIG_FIELD
  for (const char* k : {"score_type", "k_dtype"})
    if (!j.contains(k)) throw InputError(k, "missing from case.json");
#define IXO_CONFIG_FIELD(name, dflt, least, most, required, written) \
  if (j.contains(#name)) c.name = json_int(j, #name);
  IXO_CONFIG_INT_FIELDS(IXO_CONFIG_FIELD)
#undef IXO_CONFIG_FIELD
  c.score_type = parse_score_type(json_str(j, "score_type"));
  c.k_dtype = parse_kdtype(json_str(j, "k_dtype"));
  if (j.contains("sm_scale") && !j.at("sm_scale").is_null()) c.sm_scale = json_num(j, "sm_scale");
  if (j.contains("q_scale")) c.q_scale = json_num(j, "q_scale");
  if (j.contains("k_scale")) c.k_scale = json_num(j, "k_scale");
  if (j.contains("q_dtype")) c.q_dtype = parse_qdtype(json_str(j, "q_dtype"));
  return c;
}

std::string config_to_json(const Config& c) {
  json j;  // keys sorted: the written order is the file's whatever the order here
  // A knob not written at its default (page_size) keeps token-slot case files as they were.
#define IXO_CONFIG_FIELD(name, dflt, least, most, required, written) \
  if (written || c.name != dflt) j[#name] = c.name;
  IXO_CONFIG_INT_FIELDS(IXO_CONFIG_FIELD)
#undef IXO_CONFIG_FIELD
  j["score_type"] = std::string(to_string(c.score_type));
  if (c.sm_scale) j["sm_scale"] = *c.sm_scale;
  j["q_scale"] = c.q_scale;
  j["k_scale"] = c.k_scale;
  j["k_dtype"] = std::string(to_string(c.k_dtype));
  if (c.q_dtype != KDtype::bf16)
    j["q_dtype"] = std::string(to_string(c.q_dtype));  // absent: bf16 (older cases stay byte-equal)
  return j.dump(2) + "\n";
}

namespace {

Case load_case_dir(const std::string& dir, bool map_k) {
  if (!fs::is_directory(dir)) throw InputError("case", "'" + dir + "' is not a directory");
  const std::string json_path = (fs::path(dir) / "case.json").string();
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(json_path, ec))) throw InputError("case.json", "missing in '" + dir + "'");
  require_regular_file(json_path, "case.json");  // a FIFO or directory is refused, never opened
  std::ifstream in(json_path);
  if (!in) throw InputError("case.json", "cannot open '" + json_path + "' for reading");
  std::stringstream ss;
  ss << in.rdbuf();
  Case c;
  c.cfg = parse_config_json(ss.str());

  // q: bf16 bits (uint16) or, with "q_dtype": "e4m3fn", one-byte codes.
  const bool q8 = c.cfg.q_dtype != KDtype::bf16;
  NpyArray q = read_npy((fs::path(dir) / "q.npy").string(), "q");
  try {
    check_tensor(q, "q", 3, {q8 ? "|u1" : "<u2", q8 ? "|i1" : "<i2"});
  } catch (const InputError& e) {
    throw InputError(e.field(),
                     std::string(e.what()) + " (case.json q_dtype " + std::string(to_string(c.cfg.q_dtype)) + ")");
  }
  // k_cache: bf16 bits, fp8 codes, or nvfp4 packed E2M1 codes [S, Hk, D/2] (+ k_scales.npy).
  const bool k1 = c.cfg.k_dtype != KDtype::bf16;
  const char* const k_descrs[2] = {k1 ? "|u1" : "<u2", k1 ? "|i1" : "<i2"};
  NpyArray k;  // owned: header and data; mapped: header only (the data stays in the file)
  NpyMap km;
  if (map_k) {
    km = map_npy((fs::path(dir) / "k_cache.npy").string(), "k_cache");
    k.descr = km.descr;
    k.shape = km.shape;
    check_tensor(k, "k_cache", 3, {k_descrs[0], k_descrs[1]});
  } else {
    k = read_tensor(dir, "k_cache", 3, {k_descrs[0], k_descrs[1]});
  }
  // Paged K: page_table.npy is the truth; req_to_token.npy may be left out (derived), and
  // when given it must agree with the table (validate()).
  const bool has_pages = fs::exists(fs::symlink_status(fs::path(dir) / "page_table.npy", ec));
  const NpyArray pt = has_pages ? read_tensor(dir, "page_table", 2, {"<i4"}) : NpyArray{};
  const bool has_table = !has_pages || fs::exists(fs::symlink_status(fs::path(dir) / "req_to_token.npy", ec));
  const NpyArray t = has_table ? read_tensor(dir, "req_to_token", 2, {"<i4"}) : NpyArray{};
  const NpyArray s = read_tensor(dir, "slot_ids", 1, {"<i8", "<i4"});
  const NpyArray l = read_tensor(dir, "seq_lens", 1, {"<i4", "<i8"});

  c.R = q.shape[0];
  c.Hq = q.shape[1];
  c.D = q.shape[2];
  c.S = k.shape[0];
  c.Hk = k.shape[1];
  const bool fp4 = is_nvfp4(c.cfg.k_dtype);
  if (fp4) check_nvfp4_head_dim(c.cfg.k_dtype, c.D);
  const std::int64_t k_dim = fp4 ? c.D / 2 : c.D;
  if (k.shape[2] != k_dim)
    throw InputError(
        "k_cache",
        fp4 ? "dim 2 is " + std::to_string(k.shape[2]) + ", expected " + std::to_string(k_dim) +
                  " (nvfp4: D/2 bytes of two E2M1 codes, D = " + std::to_string(c.D) + " from q)"
            : "head dim " + std::to_string(k.shape[2]) + " does not match q head dim " + std::to_string(c.D));
  const std::string scales_path = (fs::path(dir) / "k_scales.npy").string();
  if (fp4) {
    const NpyArray ks = read_tensor(dir, "k_scales", 3, {"|u1", "|i1"});
    const std::vector<std::int64_t> want = {c.S, c.Hk, c.D / kNvfp4Block};
    if (ks.shape != want)
      throw InputError("k_scales",
                       "shape " + shape_string(ks.shape) + " does not match [S, Hk, D/16] = " + shape_string(want));
    c.k_scales = ks.data;
  } else if (fs::exists(fs::symlink_status(scales_path, ec))) {
    throw InputError("k_scales", "k_scales.npy is present but case.json k_dtype is " +
                                     std::string(to_string(c.cfg.k_dtype)) + " (only nvfp4 K has block scales)");
  }
  if (has_pages) {
    c.rows = pt.shape[0];
    c.max_pages = pt.shape[1];
    if (has_table && t.shape[0] != c.rows)
      throw InputError("page_table", "has " + std::to_string(c.rows) + " rows (shape " + shape_string(pt.shape) +
                                         "), req_to_token " + std::to_string(t.shape[0]) + " (shape " +
                                         shape_string(t.shape) + ")");
    c.page_table = npy_values<std::int32_t>(pt);
  }
  if (has_table) {
    c.rows = t.shape[0];
    c.width = t.shape[1];
  }
  if (s.shape[0] != c.R)
    throw InputError("slot_ids", "shape " + shape_string(s.shape) + " does not match q rows " + std::to_string(c.R));
  if (l.shape[0] != c.R)
    throw InputError("seq_lens", "shape " + shape_string(l.shape) + " does not match q rows " + std::to_string(c.R));
  if (q8) {
    const auto& qb = q.data;  // one byte a code; widened into Case::q's low byte
    c.q.assign(qb.begin(), qb.end());
  } else {
    c.q = npy_values<std::uint16_t>(q);
  }
  c.k_cache = std::move(k.data);  // moved, not copied: K is held once
  c.k_mapped = std::move(km.data);
  c.k_mapped_bytes = km.bytes;
  if (has_table)
    c.req_to_token = npy_values<std::int32_t>(t);
  else
    derive_req_to_token(c);
  c.slot_ids = as_int64(s);
  c.seq_lens = as_int64(l);
  validate(c);
  return c;
}

}  // namespace

Case load_case(const std::string& dir) { return load_case_dir(dir, false); }
Case load_case_mapped(const std::string& dir) { return load_case_dir(dir, true); }

void save_case(const Case& c, const std::string& dir) {
  fs::create_directories(dir);
  std::ofstream(fs::path(dir) / "case.json") << config_to_json(c.cfg);
  auto p = [&](const char* n) { return (fs::path(dir) / n).string(); };
  if (c.cfg.q_dtype == KDtype::bf16) {
    write_npy(p("q.npy"), "<u2", {c.R, c.Hq, c.D}, c.q.data(), c.q.size() * 2);
  } else {
    const std::vector<std::uint8_t> codes(c.q.begin(), c.q.end());  // validate(): every code <= 0xFF
    write_npy(p("q.npy"), "|u1", {c.R, c.Hq, c.D}, codes.data(), codes.size());
  }
  const auto k = c.k_view();
  const bool fp4 = is_nvfp4(c.cfg.k_dtype);
  write_npy(p("k_cache.npy"), c.cfg.k_dtype == KDtype::bf16 ? "<u2" : "|u1", {c.S, c.Hk, fp4 ? c.D / 2 : c.D}, k.data(),
            k.size());
  if (fp4)
    write_npy(p("k_scales.npy"), "|u1", {c.S, c.Hk, c.D / kNvfp4Block}, c.k_scales.data(), c.k_scales.size());
  else {
    std::error_code ec;
    fs::remove(p("k_scales.npy"), ec);  // an older nvfp4 case saved to the same directory
  }
  write_npy(p("req_to_token.npy"), "<i4", {c.rows, c.width}, c.req_to_token.data(), c.req_to_token.size() * 4);
  write_npy(p("slot_ids.npy"), "<i8", {c.R}, c.slot_ids.data(), c.slot_ids.size() * 8);
  write_npy(p("seq_lens.npy"), "<i8", {c.R}, c.seq_lens.data(), c.seq_lens.size() * 8);
  if (c.paged())
    write_npy(p("page_table.npy"), "<i4", {c.rows, c.max_pages}, c.page_table.data(), c.page_table.size() * 4);
  else
    fs::remove(p("page_table.npy"));  // a directory written over: no stale table
}

Observed load_observed(const Case& c, const std::string& topk_path, const std::string& scores_path) {
  const NpyArray t = read_npy(topk_path, "topk_idx");
  if (t.descr != "<i4") throw InputError("topk_idx", "has npy dtype '" + t.descr + "', expected <i4 (int32)");
  if (scores_path.empty()) return observed_from_arrays(c, t.shape, npy_values<std::int32_t>(t));
  const NpyArray s = read_npy(scores_path, "scores");
  if (s.descr != "<f4") throw InputError("scores", "has npy dtype '" + s.descr + "', expected <f4 (float32)");
  const ScoresArray scores{s.shape, npy_values<float>(s)};
  return observed_from_arrays(c, t.shape, npy_values<std::int32_t>(t), &scores);
}

void save_observed(const Observed& o, const std::string& dir) {
  fs::create_directories(dir);
  write_npy((fs::path(dir) / "topk_idx.npy").string(), "<i4", {o.Hq, o.R, o.topk}, o.topk_idx.data(),
            o.topk_idx.size() * 4);
  if (o.has_scores)
    write_npy((fs::path(dir) / "scores.npy").string(), "<f4", {o.Hq, o.R, o.NB}, o.scores.data(), o.scores.size() * 4);
}

}  // namespace ixo
