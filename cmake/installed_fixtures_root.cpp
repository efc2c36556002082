// Installed as <prefix>/share/indexer-oracle/installed_fixtures_root.cpp and compiled into
// every target that links IndexerOracle::fixtures from an install (its INTERFACE_SOURCES):
// points ixo::fixtures_root() at that install's fixtures, wherever the prefix lives now
// (IXO_INSTALLED_FIXTURES_DIR is set from the package's location when you configure).
#include <string>

namespace ixo {
void set_fixtures_root(const std::string& dir);  // ixo/fixture.hpp
}

namespace {
[[maybe_unused]] const bool ixo_installed_fixtures_registered =
    (ixo::set_fixtures_root(IXO_INSTALLED_FIXTURES_DIR), true);
}  // namespace
