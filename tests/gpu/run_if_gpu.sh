#!/usr/bin/env bash
# Runs a GPU program only when a CUDA device is present; otherwise exits 77, which ctest
# reports as skipped (SKIP_RETURN_CODE 77), never as passed.
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "SKIP: no CUDA device (nvidia-smi -L lists none)"
  exit 77
fi
exec "$@"
