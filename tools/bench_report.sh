#!/usr/bin/env bash
# The benchmark report: builds the `bench` preset, runs W1-W6 against the anchors (with mimalloc and D's Phobos when
# installed), counts instructions per op under callgrind, and writes results/<date>.json, performance.md and
# performance.png into build/report/ (ignored by git). --publish writes the committed copies instead
# (benchmarks/results/, docs/); --publish --from-json FILE regenerates the committed page from a committed run
# without running anything. Options: tools/bench_report.py --help.
set -euo pipefail
cd "$(dirname "$0")/.."
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3   # Debian's python3: the script needs only the standard library
exec "$py" tools/bench_report.py "$@"
