#!/usr/bin/env bash
# tools/format.sh --check: list the C++ files that .clang-format would change, with the number of changed lines;
# exit 1 if any. tools/format.sh FILE...: format those files in place (new files, or files you own outright; for
# existing code prefer formatting only the lines you change: git clang-format-14).
# Uses clang-format-14 (Debian 12), else clang-format; CLANG_FORMAT=... picks another.
set -euo pipefail
cd "$(dirname "$0")/.."
cf=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
if [[ -z $cf ]]; then
  echo "format.sh: clang-format not found (apt-get install clang-format-14)" >&2
  exit 2
fi
if [[ ${1:-} != --check ]]; then
  if [[ $# -eq 0 ]]; then
    echo "usage: tools/format.sh --check [PATH...] | tools/format.sh FILE..." >&2
    exit 2
  fi
  exec "$cf" -i --style=file "$@"
fi
shift
roots=("$@")
[[ ${#roots[@]} -eq 0 ]] && roots=(include building_blocks tests benchmarks examples tools)
files=$(git ls-files -- "${roots[@]}" | grep -E '\.(hpp|cpp|h|c|cu|cuh)$' || true)
bad=0
lines=0
for f in $files; do
  n=$("$cf" --style=file "$f" | diff "$f" - | grep -c '^<' || true)
  if [[ $n -ne 0 ]]; then
    printf '%6d  %s\n' "$n" "$f"
    bad=$((bad + 1))
    lines=$((lines + n))
  fi
done
if [[ $bad -ne 0 ]]; then
  echo "format.sh: $bad files differ from .clang-format ($lines lines would change)"
  exit 1
fi
echo "format.sh: every file matches .clang-format"
