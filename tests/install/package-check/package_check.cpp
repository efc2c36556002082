// install.package: run against an installed prefix that was moved after `cmake --install`.
// The fixtures must come from that prefix (not from the source tree or the first prefix).
#include <cstdio>
#include <string>

#include "ixo/fixture.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: package_check PREFIX\n");
    return 2;
  }
  const std::string prefix = argv[1], root = ixo::fixtures_root();
  std::printf("fixtures root: %s\n", root.c_str());
  if (root.rfind(prefix + "/", 0) != 0) {
    std::printf("FAIL: fixtures root is not inside %s\n", prefix.c_str());
    return 1;
  }
  const auto files = ixo::list_fixtures();
  int canonical = 0;
  for (const auto& f : files) canonical += f.regression ? 0 : 1;
  if (canonical == 0) {
    std::printf("FAIL: no canonical fixtures under %s\n", root.c_str());
    return 1;
  }
  const ixo::Fixture x = ixo::load_fixture(files.front());
  std::printf("PASS: %zu fixtures (%d canonical) in the moved install; %s has %lld rows\n", files.size(), canonical,
              x.file.name.c_str(), static_cast<long long>(x.c.R));
  return 0;
}
