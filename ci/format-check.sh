#!/usr/bin/env bash
# The C++ sources follow .clang-format (issue 24 item 4: Google-based, 120 columns):
# clang-format --dry-run --Werror over every tracked .cpp/.hpp/.cu/.cuh/.inl/.hip file.
# Usage: ci/format-check.sh [CLANG_FORMAT]   (fix: the same files with clang-format -i)
set -euo pipefail
cd "$(dirname "$0")/.."
cf="${1:-$(command -v clang-format || command -v clang-format-14)}"
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.inl' '*.hip')
else
  mapfile -t files < <(find reference kernels properties fixtures suite tools tests bench python examples \
                         -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.inl' -o -name '*.hip' \))
fi
[ "${#files[@]}" -gt 100 ] || { echo "format check: only ${#files[@]} files found: nothing judged"; exit 1; }
"$cf" --dry-run --Werror "${files[@]}"
long=$(awk 'length > 120 {print FILENAME ":" FNR}' "${files[@]}")
[ -z "$long" ] || { echo "lines over 120 columns:"; echo "$long"; exit 1; }
echo "format check: ${#files[@]} files follow .clang-format, no line over 120 columns"
