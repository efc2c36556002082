#include <nlohmann/json.hpp>

#include "ixo/case_io.hpp"
#include "ixo/error.hpp"
#include "ixo/generate.hpp"

namespace ixo {

using json = nlohmann::json;

namespace {

Values parse_values(const std::string& s) {
  for (Values v :
       {Values::gaussian, Values::exact, Values::near_tie, Values::ladder, Values::plateau, Values::selector_sweep})
    if (s == values_name(v)) return v;
  throw InputError("values",
                   "unknown value family '" + s + "' (gaussian, exact, near_tie, ladder, plateau, selector_sweep)");
}

PageTable parse_pages(const std::string& s) {
  for (PageTable p : {PageTable::random, PageTable::interval, PageTable::reverse})
    if (s == page_table_name(p)) return p;
  throw InputError("pages", "unknown page table '" + s + "' (random, interval, reverse)");
}

template <class T>
T get(const json& j, const char* key) {
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    throw InputError(key, std::string("bad value ") + j.at(key).dump() + ": " + e.what());
  }
}

}  // namespace

GenSpec spec_from_json(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError("spec", std::string("is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw InputError("spec", "must be a JSON object");
  GenSpec s = j.contains("preset") ? preset(get<std::string>(j, "preset")) : GenSpec{};
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k == "preset")
      continue;
    else if (k == "requests")
      s.requests = get<int>(j, "requests");
    else if (k == "draft_rows")
      s.draft_rows = get<int>(j, "draft_rows");
    else if (k == "prefixes")
      s.prefixes = get<std::vector<std::int64_t>>(j, "prefixes");
    else if (k == "max_prefix")
      s.max_prefix = get<std::int64_t>(j, "max_prefix");
    else if (k == "Hq")
      s.Hq = get<std::int64_t>(j, "Hq");
    else if (k == "Hk")
      s.Hk = get<std::int64_t>(j, "Hk");
    else if (k == "D")
      s.D = get<std::int64_t>(j, "D");
    else if (k == "config") {
      // Partial configs override the base: merge over the base's case.json.
      json base = json::parse(config_to_json(s.cfg));
      base.merge_patch(it.value());
      s.cfg = parse_config_json(base.dump());
    } else if (k == "values")
      s.values = parse_values(get<std::string>(j, "values"));
    else if (k == "permute_slots")
      s.permute_slots = get<bool>(j, "permute_slots");
    else if (k == "request_slots")
      s.request_slots = get<std::vector<std::int64_t>>(j, "request_slots");
    else if (k == "permute_tokens")
      s.permute_tokens = get<bool>(j, "permute_tokens");
    else if (k == "negative_aliases")
      s.negative_aliases = get<bool>(j, "negative_aliases");
    else if (k == "padding_requests")
      s.padding_requests = get<int>(j, "padding_requests");
    else if (k == "inactive_requests")
      s.inactive_requests = get<int>(j, "inactive_requests");
    else if (k == "extra_width")
      s.extra_width = get<std::int64_t>(j, "extra_width");
    // Real CUDA-graph batches (generate.hpp): packed_queries (0 = draft_rows), single
    // trailing padding / inactive rows that need not fill a group, inactive rows inside
    // requests.
    else if (k == "packed_queries")
      s.packed_queries = get<int>(j, "packed_queries");
    else if (k == "trailing_padding_rows")
      s.trailing_padding_rows = get<int>(j, "trailing_padding_rows");
    else if (k == "trailing_inactive_rows")
      s.trailing_inactive_rows = get<int>(j, "trailing_inactive_rows");
    else if (k == "inactive_rows_in_requests")
      s.inactive_rows_in_requests = get<int>(j, "inactive_rows_in_requests");
    else if (k == "ladder_levels")
      s.ladder_levels = get<int>(j, "ladder_levels");
    else if (k == "fp8_specials")
      s.fp8_specials = get<bool>(j, "fp8_specials");
    else if (k == "fp8_nonfinite")
      s.fp8_nonfinite = get<bool>(j, "fp8_nonfinite");
    else if (k == "fp8_subnormal_only")
      s.fp8_subnormal_only = get<bool>(j, "fp8_subnormal_only");
    else if (k == "alias_minus_s")
      s.alias_minus_s = get<bool>(j, "alias_minus_s");
    else if (k == "pages")
      s.pages = parse_pages(get<std::string>(j, "pages"));
    else if (k == "shared_prefix")
      s.shared_prefix = get<std::int64_t>(j, "shared_prefix");
    else
      throw InputError(k, "unknown key in a generator spec");
  }
  return s;
}

std::string spec_to_json(const GenSpec& s) {
  json j;
  j["requests"] = s.requests;
  j["draft_rows"] = s.draft_rows;
  j["prefixes"] = s.prefixes;
  j["max_prefix"] = s.max_prefix;
  j["Hq"] = s.Hq;
  j["Hk"] = s.Hk;
  j["D"] = s.D;
  j["config"] = json::parse(config_to_json(s.cfg));
  j["values"] = values_name(s.values);
  j["permute_slots"] = s.permute_slots;
  j["request_slots"] = s.request_slots;
  j["permute_tokens"] = s.permute_tokens;
  j["negative_aliases"] = s.negative_aliases;
  j["padding_requests"] = s.padding_requests;
  j["inactive_requests"] = s.inactive_requests;
  j["extra_width"] = s.extra_width;
  j["packed_queries"] = s.packed_queries;
  j["trailing_padding_rows"] = s.trailing_padding_rows;
  j["trailing_inactive_rows"] = s.trailing_inactive_rows;
  j["inactive_rows_in_requests"] = s.inactive_rows_in_requests;
  // The boundary dimensions only when set (older spec.json files stay as they were).
  if (s.values == Values::ladder) j["ladder_levels"] = s.ladder_levels;
  if (s.fp8_specials) j["fp8_specials"] = true;
  if (s.fp8_nonfinite) j["fp8_nonfinite"] = true;
  if (s.fp8_subnormal_only) j["fp8_subnormal_only"] = true;
  if (s.alias_minus_s) j["alias_minus_s"] = true;
  if (s.cfg.page_size > 1) j["pages"] = page_table_name(s.pages);  // config holds page_size
  if (s.shared_prefix > 0) j["shared_prefix"] = s.shared_prefix;
  return j.dump(2) + "\n";
}

}  // namespace ixo
