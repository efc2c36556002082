# Sourced by the ncu scripts of bench/gpu (profile-ncu.sh, ncu-source.sh) after they set
# `out` and `need` (the benchmark targets they run): the build folder B (the default preset's
# binaryDir, where ci/gpu-check.sh builds; BUILD_DIR overrides), those targets built when
# missing, the Debian libraries of .deps on LD_LIBRARY_PATH, and ncu_bin (returns 1 without ncu).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="${BUILD_DIR:-$root/build}"
missing=0
for t in $need; do [[ -x "$B/bench/gpu/$t" ]] || missing=1; done
if [[ $missing == 1 ]]; then STAGES=build TARGETS="$need" bash "$root/ci/gpu-check.sh" "$out/build" || return 1; fi
export LD_LIBRARY_PATH="/tmp/ixo-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ncu_bin="$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)"
[[ -n "$ncu_bin" ]] || { echo "no ncu on this machine" >&2; return 1; }
