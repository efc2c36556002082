// Command-line flags of the GPU benchmarks (CLI11, as `ixo`): an unknown flag or a bad value
// exits 2 naming it (never ignored), --help prints the flags and exits 0.
#pragma once
#include <CLI/CLI.hpp>

namespace ixo_bench {

// -1: parsed, go on; else the exit code (0 after --help, 2 for bad flags).
inline int parse_flags(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
}

}  // namespace ixo_bench
