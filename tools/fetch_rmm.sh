#!/usr/bin/env bash
# Fetches RAPIDS RMM's C++ headers and librmm.so (PyPI's librmm-cu13 wheel, with rapids-logger) into .deps/rmm/
# (ignored by git), for the RMM rows of the device benchmark (benchmarks/device). Optional: the benchmark builds
# without them. After this, configure the bench preset again; it finds .deps/rmm by itself.
#   tools/fetch_rmm.sh [version]      (default: the newest 26.x wheel)
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-}
dest=.deps/rmm
grep -qx '/.deps/' .git/info/exclude 2>/dev/null || echo '/.deps/' >> .git/info/exclude
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
spec="librmm-cu13${version:+==$version}"
python3 -m pip download --quiet --no-deps -d "$tmp" "$spec" rapids-logger
rm -rf "$dest" && mkdir -p "$dest"
for w in "$tmp"/*.whl; do python3 -m zipfile -e "$w" "$tmp/unpacked"; done
# The wheels keep headers and libraries under librmm/ and rapids_logger/ (lib64 or lib).
for pkg in librmm rapids_logger; do
  [ -d "$tmp/unpacked/$pkg/include" ] && cp -r "$tmp/unpacked/$pkg/include/." "$dest/include/" 2>/dev/null ||
    { mkdir -p "$dest/include" && cp -r "$tmp/unpacked/$pkg/include/." "$dest/include/"; }
  for l in lib64 lib; do
    [ -d "$tmp/unpacked/$pkg/$l" ] && mkdir -p "$dest/lib" && cp -a "$tmp/unpacked/$pkg/$l/." "$dest/lib/"
  done
done
cat "$tmp/unpacked/librmm/VERSION" > "$dest/VERSION" 2>/dev/null || true
echo "RMM $(cat "$dest/VERSION" 2>/dev/null) in $dest: $(ls "$dest/lib" | tr '\n' ' ')"
