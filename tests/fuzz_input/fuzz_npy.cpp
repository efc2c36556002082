// libFuzzer target: the .npy parser (issue 10). Every input must either parse into a
// consistent array or throw ixo::InputError naming the field and the source; anything else
// (a crash, a sanitizer report, another exception, a huge allocation) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "ixo/error.hpp"
#include "ixo/npy.hpp"

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_npy: %s\n", what);
  std::abort();
}

// Scratch files live in /dev/shm when there is one (a disk-backed /tmp costs 10x the speed).
std::string scratch_root() {
  std::error_code ec;
  return std::filesystem::is_directory("/dev/shm", ec) ? "/dev/shm" : std::filesystem::temp_directory_path().string();
}

// Never destroyed, so the atexit clean-up can still read it.
const std::string& scratch_file() {
  static const std::string* p = [] {
    auto* s = new std::string(scratch_root() + "/ixo-fuzz-npy-" + std::to_string(::getpid()) + ".npy");
    std::atexit([] { std::remove(scratch_file().c_str()); });
    return s;
  }();
  return *p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ixo::NpyArray a;
  try {
    a = ixo::parse_npy(data, size, "fuzz.npy", "fuzz");
  } catch (const ixo::InputError& e) {
    if (e.field() != "fuzz" || std::string(e.what()).find("'fuzz.npy'") == std::string::npos)
      finding("an InputError that does not name the field and the file");
    return 0;
  }
  // Accepted: the array is self-consistent and survives a write/read round trip.
  const std::int64_t n = a.numel();
  if (a.item_size() <= 0 || n < 0 ||
      static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(a.item_size()) != a.data.size())
    finding("accepted an array whose data size does not match its shape");
  // Normalised: '|' for 1-byte items, else '<', the kind, then the item size in bytes (1, 2,
  // 4, 8 or 16: numpy's '<f16' long double and '<c16' complex128 parse, and the case loader
  // rejects them by field name).
  const std::string size_digits = std::to_string(a.item_size());
  if (a.descr.size() != 2 + size_digits.size() || a.descr[0] != (a.item_size() == 1 ? '|' : '<') ||
      std::string("biufc").find(a.descr[1]) == std::string::npos ||
      a.descr.compare(2, std::string::npos, size_digits) != 0)
    finding("accepted a non-normalised descr");
  ixo::write_npy(scratch_file(), a.descr, a.shape, a.data.data(), a.data.size());
  const ixo::NpyArray b = ixo::read_npy(scratch_file(), "fuzz");
  if (b.descr != a.descr || b.shape != a.shape || b.data != a.data) finding("write/read round trip changed the array");
  return 0;
}
