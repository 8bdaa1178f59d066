#!/usr/bin/env bash
# Interleaved BOARD25 runs of several builds, each reduced to the sums over its stages of the
# kernel's phases (the `stage finished` log lines, ms):
#   phases25.sh ROUNDS BIN...
# Stages run side by side, so the sums are thread-time, not wall time; compare a phase across
# builds run by run (the machine drifts).
set -u
N=$1; shift
for r in $(seq 1 "$N"); do
  for bin in "$@"; do
    d=$(mktemp -d "${TMPDIR:-/tmp}/phases25.XXXX")
    RETRO_LOG=info "$bin" solve --in-process --threads 2 --out "$d/out" > /dev/null 2> "$d/err"
    python3 - "$d/err" "$(basename "$bin")" <<'PY'
import re, sys
total = {}
for line in open(sys.argv[1]):
    if "stage finished" in line:
        for key, ms in re.findall(r"(\w+)_ms=(\d+)", line):
            total[key] = total.get(key, 0) + int(ms)
print(sys.argv[2], " ".join(f"{k}={total.get(k, 0)}" for k in
      ("init", "claim_plies", "count_plies", "write", "compute")))
PY
    rm -rf "$d"
  done
done
