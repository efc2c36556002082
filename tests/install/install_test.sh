#!/usr/bin/env bash
# ctest -L install (tests/install/CMakeLists.txt passes the build's tools in the environment:
# CMAKE, CTEST, CXX_COMPILER, CXX_LAUNCHER, GENERATOR, BUILD_TYPE, BUILD_DIR, SOURCE_DIR,
# WORK, DEPS_CACHE, PYTHON, PYTHON_DIR).
#   install_test.sh stage PREFIX MOVED     cmake --install into PREFIX, checks, copy to MOVED
#   install_test.sh consumer PREFIX ON|OFF examples/cpp-consumer with the planted bug ON/OFF
#   install_test.sh package PREFIX         headers compile alone; fixtures found in PREFIX
set -uo pipefail
mode=$1 prefix=$2
fail() { echo "FAIL: $*"; exit 1; }

# Configures and builds the CMake project $1 in $2 against $prefix ($3...: more -D options),
# with this build's dependency packages (DEPS_CACHE) after the prefix.
build_project() {
  local src=$1 bin=$2 paths
  shift 2
  rm -rf "$bin"
  paths=$(cat "$(dirname "$DEPS_CACHE")/prefix-path.txt")
  "$CMAKE" -S "$src" -B "$bin" -G "$GENERATOR" -C "$DEPS_CACHE" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
    -DCMAKE_PREFIX_PATH="$prefix${paths:+;$paths}" \
    -DCMAKE_CXX_COMPILER="$CXX_COMPILER" ${CXX_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER="$CXX_LAUNCHER"} "$@" \
    || fail "configuring $src against $prefix"
  "$CMAKE" --build "$bin" -j2 || fail "building $src against $prefix"
}

case $mode in
stage)
  moved=$3
  rm -rf "$prefix" "$moved"
  "$CMAKE" --install "$BUILD_DIR" --prefix "$prefix" >/dev/null || fail "cmake --install $BUILD_DIR"
  cmakedir=$(dirname "$(find "$prefix" -name IndexerOracleConfig.cmake | head -n 1)")
  for f in IndexerOracleConfig.cmake IndexerOracleConfigVersion.cmake IndexerOracleTargets.cmake; do
    [[ -f $cmakedir/$f ]] || fail "$f not installed"
  done
  [[ -x $prefix/bin/ixo ]] || fail "bin/ixo not installed"
  [[ -f $prefix/include/ixo/oracle.hpp && -f $prefix/include/indexer-oracle/kernels/backend.hpp ]] || fail "headers not installed"
  # Relocatable: no path of this build or its sources in the package files.
  if grep -rnF -e "$BUILD_DIR" -e "$SOURCE_DIR" "$cmakedir"; then
    fail "absolute build/source paths in the installed CMake files (above)"
  fi
  "$prefix/bin/ixo" list >/dev/null || fail "installed ixo does not run"
  if [[ -n ${PYTHON_DIR:-} ]]; then
    where=$(cd / && PYTHONPATH="$prefix/$PYTHON_DIR" "$PYTHON" -c \
      'import indexer_oracle as io; print(io.__file__); assert io.reference(io.generate("verify", seed=1)) is not None') \
      || fail "installed Python package does not import from $prefix/$PYTHON_DIR"
    [[ $where == "$prefix"/* ]] || fail "indexer_oracle imported from $where, not from the install"
  fi
  cp -a "$prefix" "$moved" || fail "copying the install to $moved"
  echo "staged $prefix (moved copy $moved)"
  ;;
consumer)
  bug=$3
  bin=$WORK/consumer-bug-$bug
  build_project "$SOURCE_DIR/examples/cpp-consumer" "$bin" -DTOY_PLANTED_BUG="$bug"
  "$bin/test_reference" || fail "the consumer's reference test (bug $bug)"
  out=$("$bin/test_toy_kernel" 2>&1)
  rc=$?
  echo "$out" | tail -n 60
  if [[ $bug == OFF ]]; then
    [[ $rc == 0 ]] || fail "the fixed toy kernel fails the suite (exit $rc)"
    echo "PASS: the fixed toy kernel passes the whole suite"
  else
    [[ $rc != 0 ]] || fail "the planted bug was NOT caught (test_toy_kernel exit 0)"
    grep -q 'toy-kernel' <<<"$out" || fail "the failure does not name the backend toy-kernel"
    grep -qi 'shrunk' <<<"$out" || fail "no shrunk case in the failure output"
    grep -qi 'replay' <<<"$out" || fail "no replay command in the failure output"
    echo "PASS: the planted bug was caught (exit $rc) with a shrunk case and a replay command"
  fi
  ;;
package)
  bin=$WORK/package-check
  build_project "$SOURCE_DIR/tests/install/package-check" "$bin"
  "$bin/package_check" "$prefix" || fail "package_check against $prefix"
  ;;
*)
  echo "usage: install_test.sh stage|consumer|package PREFIX ..." >&2
  exit 2
  ;;
esac
