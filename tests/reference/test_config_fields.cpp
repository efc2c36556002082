// The config's integer knobs come from one list (ixo/config_fields.hpp, issue 24): the Config
// fields and defaults, case.json reading and writing and validate's range checks all follow it.
// The expected names, defaults and ranges below are written out by hand (docs/semantics.md's
// config table), not read from the list.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ixo/case.hpp"
#include "ixo/case_io.hpp"
#include "ixo/error.hpp"
#include "ixo/generate.hpp"

namespace {

struct Knob {
  std::string name;
  int dflt, least, most;
  bool required;
  std::function<int&(ixo::Config&)> field;
};

const std::vector<Knob>& knobs() {
  static const std::vector<Knob> k = {
      {"block_size", 128, 1, 2147483647, true, [](ixo::Config& c) -> int& { return c.block_size; }},
      {"topk", 16, 1, 2048, true, [](ixo::Config& c) -> int& { return c.topk; }},
      {"init_blocks", 0, 0, 2147483647, true, [](ixo::Config& c) -> int& { return c.init_blocks; }},
      {"local_blocks", 1, 0, 2147483647, true, [](ixo::Config& c) -> int& { return c.local_blocks; }},
      {"packed_queries", 1, 1, 2147483647, false, [](ixo::Config& c) -> int& { return c.packed_queries; }},
      {"page_size", 1, 1, 2147483647, false, [](ixo::Config& c) -> int& { return c.page_size; }},
  };
  return k;
}

std::vector<std::string> listed_names() {
  std::vector<std::string> names;
#define IXO_CONFIG_FIELD(name, dflt, least, most, required, written) names.push_back(#name);
  IXO_CONFIG_INT_FIELDS(IXO_CONFIG_FIELD)
#undef IXO_CONFIG_FIELD
  return names;
}

// The error validate() gives for the Case of preset tiny with one knob changed.
std::string validate_error(const Knob& k, int value) {
  ixo::Case c = ixo::generate(ixo::preset("tiny"), 1);
  k.field(c.cfg) = value;
  try {
    ixo::validate(c);
  } catch (const ixo::InputError& e) {
    EXPECT_EQ(e.field(), k.name);
    return e.what();
  }
  return "(no error)";
}

TEST(ConfigFields, TheListNamesTheKnobsWithTheirDefaults) {
  std::vector<std::string> want;
  for (const Knob& k : knobs()) want.push_back(k.name);
  EXPECT_EQ(listed_names(), want);
  ixo::Config d;
  for (const Knob& k : knobs()) EXPECT_EQ(k.field(d), k.dflt) << k.name;
}

TEST(ConfigFields, EveryKnobRoundTripsThroughCaseJson) {
  ixo::Config c;
  int v = 3;
  for (const Knob& k : knobs()) k.field(c) = v++;  // 3, 4, ...: none at its default
  const ixo::Config back = ixo::parse_config_json(ixo::config_to_json(c));
  for (const Knob& k : knobs()) {
    ixo::Config copy = back;
    EXPECT_EQ(k.field(copy), k.field(c)) << k.name;
  }
}

TEST(ConfigFields, ARequiredKnobMustBeNamedAndAnOptionalOneDefaults) {
  for (const Knob& k : knobs()) {
    ixo::Config c;
    for (const Knob& o : knobs()) o.field(c) = o.dflt + 2;
    nlohmann::json o = nlohmann::json::parse(ixo::config_to_json(c));
    ASSERT_EQ(o.erase(k.name), 1u) << k.name << " not written:\n" << o.dump(2);
    const std::string j = o.dump();
    if (k.required) {
      try {
        ixo::parse_config_json(j);
        ADD_FAILURE() << k.name << ": a case.json without it was read";
      } catch (const ixo::InputError& e) {
        EXPECT_EQ(e.field(), k.name);
        EXPECT_STREQ(e.what(), (k.name + ": missing from case.json").c_str());
      }
    } else {
      ixo::Config back = ixo::parse_config_json(j);
      EXPECT_EQ(k.field(back), k.dflt) << k.name;
    }
  }
}

TEST(ConfigFields, PageSizeIsLeftOutAtItsDefaultTheOthersAreWritten) {
  const std::string j = ixo::config_to_json(ixo::Config{});
  for (const Knob& k : knobs())
    EXPECT_EQ(j.find("\"" + k.name + "\"") != std::string::npos, k.name != "page_size") << k.name << "\n" << j;
}

TEST(ConfigFields, ValidateNamesAKnobOutsideItsRange) {
  for (const Knob& k : knobs()) {
    EXPECT_EQ(validate_error(k, k.least - 1), k.name + ": " +
                                                  (k.most == 2147483647 ? "must be >= " + std::to_string(k.least)
                                                                        : "must be in [" + std::to_string(k.least) +
                                                                              ", " + std::to_string(k.most) + "]") +
                                                  ", got " + std::to_string(k.least - 1));
  }
  const Knob& topk = knobs()[1];
  EXPECT_EQ(validate_error(topk, 2049), "topk: must be in [1, 2048], got 2049");
  EXPECT_EQ(validate_error(topk, 2048).find("topk"), std::string::npos);  // 2048 itself is fine
}

}  // namespace
