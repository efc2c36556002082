#!/usr/bin/env bash
# Installs the Debian packages the project builds with (idempotent: apt-get runs only
# when something is missing). Run as root on Debian 12. IXO_HIP=1 also installs hipcc
# for the HIP compile gate.
set -euo pipefail
pkgs=(cmake g++ make libeigen3-dev librapidcheck-dev libgtest-dev libgmock-dev libbenchmark-dev libomp-dev
      nlohmann-json3-dev libcli11-dev libfmt-dev python3-numpy
      python3-dev python3-pybind11 pybind11-dev python3-pytest python3-matplotlib  # python/ (label python)
      clang libclang-rt-dev  # clang + libFuzzer/sanitizer runtimes: tests/fuzz_input (label fuzz-input)
      clang-format)          # ci/format-check.sh (ctest format.clang_format)
[ "${IXO_HIP:-0}" = 1 ] && pkgs+=(hipcc libamdhip64-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
