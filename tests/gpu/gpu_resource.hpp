// ctest resource allocation -> CUDA_VISIBLE_DEVICES, the way rapids-cmake does it.
// GPU tests declare RESOURCE_GROUPS "gpus:1"; run under `ctest -j --resource-spec-file F`
// (F from ci/gpu-resources.sh), ctest gives each test process CTEST_RESOURCE_GROUP_COUNT,
// CTEST_RESOURCE_GROUP_<i> = "gpus" and CTEST_RESOURCE_GROUP_<i>_GPUS = "id:<id>,slots:<n>"
// (several allocations separated by ';'). The ids of ci/gpu-resources.sh are positions in
// the device list the spec was made from: entry <id> of an inherited CUDA_VISIBLE_DEVICES
// when one was set (indices, UUIDs or MIG names), else the device index <id> itself.
// Without those variables (plain ctest, gtest discovery, a direct run) nothing changes.
#pragma once
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace ixo::test {

struct GpuMapping {
  bool allocated = false;  // ctest allocated gpus to this process
  std::string visible;     // the CUDA_VISIBLE_DEVICES value to set
  std::string error;       // non-empty: the allocation could not be read
};

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s) {
    if (ch == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

inline bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (ch < '0' || ch > '9') return false;
  return true;
}

// env(name) returns the variable or nullptr.
inline GpuMapping map_ctest_gpus(const std::function<const char*(const char*)>& env) {
  GpuMapping m;
  const char* count_s = env("CTEST_RESOURCE_GROUP_COUNT");
  if (!count_s || !*count_s) return m;
  if (!all_digits(count_s)) {
    m.error = std::string("CTEST_RESOURCE_GROUP_COUNT is not a number: ") + count_s;
    return m;
  }
  std::vector<std::string> inherited;
  const char* cvd = env("CUDA_VISIBLE_DEVICES");
  if (cvd && *cvd) inherited = split(cvd, ',');
  std::vector<std::string> devices;
  const int count = std::atoi(count_s);
  for (int i = 0; i < count; ++i) {
    const std::string var = "CTEST_RESOURCE_GROUP_" + std::to_string(i) + "_GPUS";
    const char* alloc = env(var.c_str());
    if (!alloc || !*alloc) continue;  // a group of another resource type
    for (const std::string& one : split(alloc, ';')) {
      std::string id;
      for (const std::string& field : split(one, ','))
        if (field.rfind("id:", 0) == 0) id = field.substr(3);
      if (id.empty()) {
        m.error = var + " has no id: " + alloc;
        return m;
      }
      if (!inherited.empty()) {
        if (!all_digits(id) || std::stoul(id) >= inherited.size()) {
          m.error = var + " id " + id + " is not a position in CUDA_VISIBLE_DEVICES=" + cvd;
          return m;
        }
        id = inherited[std::stoul(id)];
      }
      devices.push_back(id);
    }
  }
  if (devices.empty()) return m;
  m.allocated = true;
  for (std::size_t i = 0; i < devices.size(); ++i) m.visible += (i ? "," : "") + devices[i];
  return m;
}

}  // namespace ixo::test
