#!/usr/bin/env bash
# Regenerates the Phobos replay traces (needs ldc2: apt install ldc). Each line: an op, " => ", Phobos' answer.
set -euo pipefail
cd "$(dirname "$0")"
ldc2 -O -of=/tmp/alloy_phobos_replay replay.d
for spec in "1 3000 40000" "2 3000 300000" "3 3000 1048576"; do
  set -- $spec
  python3 make_trace.py "$1" "$2" 64 >/tmp/alloy_ops
  /tmp/alloy_phobos_replay "$3" </tmp/alloy_ops >/tmp/alloy_answers
  { echo "len $3"; paste -d'|' /tmp/alloy_ops <(head -n -1 /tmp/alloy_answers) | sed 's/|/ => /'; tail -1 /tmp/alloy_answers; } \
    >"trace_$1.txt"
done
