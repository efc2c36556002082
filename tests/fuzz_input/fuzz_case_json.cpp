// libFuzzer target: case.json parsing and case validation (issue 10).
//
// The input is case.json text, optionally followed by case-directory files, each introduced
// by a line "--ixo-file <name>\n" (name: q, k_cache, req_to_token, slot_ids, seq_lens,
// topk_idx, scores). Without files, a parsed config is validated against a small fixed
// case in memory and must survive a config_to_json round trip. With files, they are
// written to a scratch case directory over the fixed case's own files and the whole
// load_case (+ load_observed when topk_idx is given) path runs. Every outcome must be
// success or ixo::InputError; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>
#include <unistd.h>

#include "ixo/case.hpp"
#include "ixo/case_io.hpp"
#include "ixo/error.hpp"

namespace fs = std::filesystem;

namespace {

// IXO_FUZZ_VERBOSE=1: say what each input gave (run the binary on single files to see why a
// corpus entry is refused).
bool verbose() {
  static const bool v = std::getenv("IXO_FUZZ_VERBOSE") != nullptr;
  return v;
}

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_case_json: %s\n", what);
  std::abort();
}

// R=4 rows (2 requests x 2 draft rows), Hq=2, Hk=1, D=8, S=40 slots, a 2 x 24 table.
ixo::Case fixed_case(const ixo::Config& cfg) {
  ixo::Case c;
  c.cfg = cfg;
  c.R = 4;
  c.Hq = 2;
  c.Hk = 1;
  c.D = 8;
  c.S = 40;
  c.rows = 2;
  c.width = 24;
  c.q.resize(static_cast<std::size_t>(c.R * c.Hq * c.D));
  for (std::size_t i = 0; i < c.q.size(); ++i) c.q[i] = static_cast<std::uint16_t>(0x3f80 + (i * 37) % 256);
  c.k_cache.resize(static_cast<std::size_t>(c.S * c.Hk * c.D * ixo::element_bytes(cfg.k_dtype)));
  for (std::size_t i = 0; i < c.k_cache.size(); ++i) c.k_cache[i] = static_cast<std::uint8_t>((i * 91) % 251);
  c.req_to_token.resize(static_cast<std::size_t>(c.rows * c.width));
  for (std::size_t i = 0; i < c.req_to_token.size(); ++i)
    c.req_to_token[i] = static_cast<std::int32_t>((i * 7) % 40) - 20;
  c.slot_ids = {1, 1, 0, 0};
  c.seq_lens = {17, 18, 5, 6};
  return c;
}

// Scratch files live in /dev/shm when there is one (a disk-backed /tmp costs 10x the speed).
std::string scratch_root() {
  std::error_code ec;
  return std::filesystem::is_directory("/dev/shm", ec) ? "/dev/shm" : std::filesystem::temp_directory_path().string();
}

// Never destroyed, so the atexit clean-up can still read it.
const std::string& scratch_dir() {
  static const std::string* d = [] {
    auto* p = new std::string(scratch_root() + "/ixo-fuzz-case-" + std::to_string(::getpid()));
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch_dir(), ec);
    });
    return p;
  }();
  return *d;
}

bool same(const ixo::Config& a, const ixo::Config& b) {
  return a.block_size == b.block_size && a.topk == b.topk && a.init_blocks == b.init_blocks &&
         a.local_blocks == b.local_blocks && a.score_type == b.score_type && a.sm_scale == b.sm_scale &&
         a.q_scale == b.q_scale && a.k_scale == b.k_scale && a.k_dtype == b.k_dtype &&
         a.packed_queries == b.packed_queries;
}

void run_config_only(const std::string& text) {
  ixo::Config cfg;
  try {
    cfg = ixo::parse_config_json(text);
  } catch (const ixo::InputError& e) {
    if (verbose()) std::fprintf(stderr, "InputError: %s\n", e.what());
    return;
  }
  ixo::Config back;
  try {
    back = ixo::parse_config_json(ixo::config_to_json(cfg));
  } catch (const ixo::InputError&) {
    finding("config_to_json wrote a case.json that parse_config_json refuses");
  }
  if (!same(cfg, back)) finding("config_to_json / parse_config_json round trip changed the config");
  try {
    ixo::validate(fixed_case(cfg));
    if (verbose()) std::fprintf(stderr, "config parsed and validated\n");
  } catch (const ixo::InputError& e) {
    if (verbose()) std::fprintf(stderr, "InputError (validate): %s\n", e.what());
  }
}

// The fixed case's files, written once; each run rewrites only what the last run changed.
struct ScratchCase {
  std::string dir = scratch_dir();
  std::vector<std::string> touched;  // file names the last run overwrote
  ScratchCase() {
    std::error_code ec;
    fs::remove_all(dir, ec);
    ixo::Config base;
    base.block_size = 4;
    base.topk = 2;
    base.init_blocks = 1;
    base.local_blocks = 1;
    ixo::save_case(fixed_case(base), dir);
    for (const char* n : {"q", "k_cache", "req_to_token", "slot_ids", "seq_lens"}) {
      std::ifstream in(fs::path(dir) / (std::string(n) + ".npy"), std::ios::binary);
      base_bytes.emplace_back(n, std::string(std::istreambuf_iterator<char>(in), {}));
    }
  }
  void write(const std::string& name, const std::string& bytes) {
    std::ofstream(fs::path(dir) / (name + ".npy"), std::ios::binary | std::ios::trunc) << bytes;
    touched.push_back(name);
  }
  void restore() {
    for (const auto& name : touched) {
      bool restored = false;
      for (const auto& [n, bytes] : base_bytes)
        if (n == name) {
          std::ofstream(fs::path(dir) / (name + ".npy"), std::ios::binary | std::ios::trunc) << bytes;
          restored = true;
        }
      if (!restored) fs::remove(fs::path(dir) / (name + ".npy"));
    }
    touched.clear();
  }
  std::vector<std::pair<std::string, std::string>> base_bytes;
};

void run_directory(const std::string& text, std::size_t files_at) {
  static ScratchCase scratch;
  scratch.restore();
  const std::string& dir = scratch.dir;
  std::ofstream(fs::path(dir) / "case.json", std::ios::binary | std::ios::trunc) << text.substr(0, files_at);
  bool have_topk = false, have_scores = false;
  const std::string tag = "--ixo-file ";
  std::size_t p = files_at;
  while (p < text.size()) {
    const std::size_t name_at = p + tag.size(), eol = text.find('\n', name_at);
    if (eol == std::string::npos) break;
    const std::string name = text.substr(name_at, eol - name_at);
    std::size_t next = text.find("\n" + tag, eol + 1);
    const std::size_t end = next == std::string::npos ? text.size() : next;
    static const char* known[] = {"q", "k_cache", "req_to_token", "slot_ids", "seq_lens", "topk_idx", "scores"};
    for (const char* k : known)
      if (name == k) {
        scratch.write(name, text.substr(eol + 1, end - eol - 1));
        have_topk |= name == "topk_idx";
        have_scores |= name == "scores";
      }
    p = next == std::string::npos ? text.size() : next + 1;
  }
  try {
    const ixo::Case c = ixo::load_case(dir);
    if (have_topk)
      (void)ixo::load_observed(c, (fs::path(dir) / "topk_idx.npy").string(),
                               have_scores ? (fs::path(dir) / "scores.npy").string() : "");
    if (verbose()) std::fprintf(stderr, "case directory loaded%s\n", have_topk ? " (with outputs)" : "");
  } catch (const ixo::InputError& e) {
    if (verbose()) std::fprintf(stderr, "InputError: %s\n", e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::size_t files_at = text.rfind("--ixo-file ", 0) == 0 ? 0 : text.find("\n--ixo-file ");
  if (files_at == std::string::npos)
    run_config_only(text);
  else
    run_directory(text, files_at == 0 ? 0 : files_at + 1);
  return 0;
}
