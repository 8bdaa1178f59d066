#!/usr/bin/env bash
# The whole BOARD33 in one sitting, then every check issue 17 asks of the result.
#   board33-run.sh BIN OUT LOGS
# BIN: a release `retro`; OUT: the job directory (must not exist: the figure is for a run from
# nothing); LOGS: where the solve's output and `time -v` (solve.log, solve.err), the 10-second
# samples (samples.txt: unix_seconds rss_kib filesystem_used_mib cpu_ticks) and the checks'
# outputs go. Start it in the first minutes of a session whose machine is fast (the README's
# main command in about 5 s), with nothing else running, e.g.
#   setsid docs/bench/board33-run.sh target/release/retro /work/b33 /work/b33-logs &
# It ends with a summary in LOGS/summary.txt (MAX_BROWNS=K: a rehearsal up to K browns, whose
# counts then differ from the published table's full rows). The plot afterwards:
#   docs/bench/plot-board33.py --log LOGS/solve.err --samples LOGS/samples.txt --out PNG
set -u
BIN=$1; OUT=$2; LOGS=$3
here=$(cd "$(dirname "$0")" && pwd)
published=$here/../board33-counts.csv
if [ -e "$OUT" ]; then
  echo "board33-run.sh: $OUT exists; the run needs a directory of its own" >&2
  exit 2
fi
[ -f "$published" ] || { echo "board33-run.sh: $published missing" >&2; exit 2; }
mkdir -p "$LOGS" "$(dirname "$OUT")"
summary=$LOGS/summary.txt
{
  echo "build: $("$BIN" --version 2>/dev/null || echo "$BIN")"
  echo "machine: $(lscpu | grep 'Model name' | sed 's/  */ /g'), $(nproc) cores"
  echo "filesystem used before: $(df -B1M --output=used "$(dirname "$OUT")" | tail -1) MiB"
  echo "start: $(date -u +%FT%TZ)"
} > "$summary"
/usr/bin/time -v "$BIN" solve --game musashi33 --in-process --threads 2 \
  --memory-budget 20GiB --checkpoint-minutes 10 ${MAX_BROWNS:+--max-browns "$MAX_BROWNS"} \
  --out "$OUT" \
  > "$LOGS/solve.log" 2> "$LOGS/solve.err" &
timer=$!
: > "$LOGS/samples.txt"
sleep 1
solver=$(pgrep -P $timer)
[ -n "$solver" ] && "$here/sample-process.sh" "$solver" "$(dirname "$OUT")" > "$LOGS/samples.txt" &
wait $timer
rc=$?
{
  echo "end: $(date -u +%FT%TZ) (exit $rc)"
  grep -E "Elapsed|Maximum resident|User time|System time" "$LOGS/solve.err"
  echo "filesystem used at most (samples): $(sort -k3 -n "$LOGS/samples.txt" | tail -1 | cut -d' ' -f3) MiB"
  tail -1 "$LOGS/solve.log"
} >> "$summary"
[ "$rc" = 0 ] || exit "$rc"
{
  tables=$(stat -c %s "$OUT"/*.tbl | awk '{s += $1} END {print s}')
  echo "tables: $(ls "$OUT"/*.tbl | wc -l) files, $tables bytes"
  if cmp -s "$OUT/counts.csv" "$published"; then
    echo "the solve's counts.csv: identical to $published"
  else
    echo "the solve's counts.csv: DIFFERS from $published"
  fi
  /usr/bin/time -f "counts: %e s" "$BIN" counts --tables "$OUT" > "$LOGS/counts.csv" 2> "$LOGS/counts.err"
  tail -1 "$LOGS/counts.err"
  if cmp -s "$LOGS/counts.csv" "$published"; then
    echo "retro counts: identical to $published"
  else
    echo "retro counts: DIFFERS from $published"
  fi
  /usr/bin/time -f "verify: %e s" "$BIN" verify --tables "$OUT" --counts "$published" \
    --recurrence 300 > "$LOGS/verify.txt" 2>&1
  echo "verify (exit $?): $(grep -v '^verify: ' "$LOGS/verify.txt" | tail -2 | tr '\n' ' ')"
  grep '^verify: ' "$LOGS/verify.txt"
  # Last: `retro extremes` reads every value of every table (tens of minutes on the full board).
  "$BIN" extremes --out "$OUT" --limit 10 > "$LOGS/extremes.md" 2>&1
  awk '/^## Longest brown win with brown to move/{p=1} p&&/^$/{exit} p' "$LOGS/extremes.md" |
    grep -v http
} >> "$summary" 2>&1
cat "$summary"
