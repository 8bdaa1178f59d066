#!/usr/bin/env bash
# Interleaved BOARD25 rounds of several builds, nothing else running:
#   pair25.sh OUT ROUNDS BIN...
# Appends one line per run to OUT: round, build, wall s, user s, system s, peak RSS KiB and the
# md5 of all the run's tables (compare builds byte for byte); "done" at the end. Ratios are
# read per round (the machine's speed drifts by a quarter within minutes). EMBEDDED=1 runs the
# README's main command instead (an embedded coordinator with local workers, not --in-process).
set -u
flags="--in-process --threads 2"
[ -n "${EMBEDDED:-}" ] && flags=""
OUT=$1; N=$2; shift 2
for i in $(seq 1 "$N"); do
  for bin in "$@"; do
    d=$(mktemp -d "${TMPDIR:-/tmp}/pair25.XXXX")
    # shellcheck disable=SC2086 # $flags is a list of words
    /usr/bin/time -f "%e %U %S %M" -o "$d/time" "$bin" solve $flags --out "$d/out" \
        > /dev/null 2>&1
    md5=$(cd "$d/out" && cat $(ls *.tbl | sort) | md5sum | cut -c1-8)
    echo "$i $(basename "$bin") $(cat "$d/time") $md5" >> "$OUT"
    rm -rf "$d"
  done
done
echo done >> "$OUT"
