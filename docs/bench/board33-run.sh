#!/usr/bin/env bash
# The whole BOARD33, then every check issue 17 asks of the result.
#   board33-run.sh BIN OUT LOGS              # sitting 1: a run from nothing
#   SITTING=2 board33-run.sh BIN OUT LOGS    # a later sitting: the same job, resumed
# BIN: a release `retro`; OUT: the job directory (sitting 1: must not exist, the figure is for a
# run from nothing; a later sitting: the directory an earlier sitting left when it was cut);
# LOGS: where each sitting's solve output and `time -v` go (sitting 1: solve.log, solve.err;
# sitting N: solve-N.log, solve-N.err), the 10-second samples of every sitting
# (samples.csv: sitting,unix_seconds,rss_kib,job_disk_mib,cpu_ticks) and the checks' outputs.
# Start sitting 1 in the first minutes of a session whose machine is fast (the README's main
# command in about 5 s), with nothing else running, e.g.
#   setsid docs/bench/board33-run.sh target/release/retro /work/b33 /work/b33-logs &
# (Anything run beside it from another shell takes a core from it, `nice` or not: the kernel
# shares the CPU between sessions' autogroups first. Run `echo 19 > /proc/self/autogroup` in
# that shell first.)
# A sitting cut (the session's end kills it) is continued by the next sitting with the same
# arguments: the solve resumes from the job's last checkpoint (at most --checkpoint-minutes of
# work lost). The sitting that finishes the job runs the checks and appends them to
# LOGS/summary.txt (MAX_BROWNS=K: a rehearsal up to K browns, whose counts then differ from the
# published table's full rows). The plot afterwards:
#   docs/bench/plot-board33.py --log LOGS/solve*.err --samples LOGS/samples.csv --out PNG
set -u
BIN=$1; OUT=$2; LOGS=$3
SITTING=${SITTING:-1}
here=$(cd "$(dirname "$0")" && pwd)
published=$here/../board33-counts.csv
if [ "$SITTING" = 1 ]; then
  if [ -e "$OUT" ]; then
    echo "board33-run.sh: $OUT exists; sitting 1 needs a directory of its own (SITTING=N resumes it)" >&2
    exit 2
  fi
  suffix=
else
  if [ ! -d "$OUT" ]; then
    echo "board33-run.sh: sitting $SITTING resumes $OUT, which does not exist" >&2
    exit 2
  fi
  suffix=-$SITTING
fi
[ -f "$published" ] || { echo "board33-run.sh: $published missing" >&2; exit 2; }
mkdir -p "$LOGS" "$(dirname "$OUT")"
summary=$LOGS/summary.txt
samples=$LOGS/samples.csv
used_now=$(df -B1M --output=used "$(dirname "$OUT")" | tail -1)
# The job's disk is the filesystem's use less what was there without the job: its scratch lives
# in unlinked files that `du` cannot see. A later sitting subtracts the job's kept files too.
kept=0
[ -d "$OUT" ] && kept=$(du -sm "$OUT" | cut -f1)
baseline=$((used_now - kept))
{
  echo "sitting $SITTING"
  echo "build: $("$BIN" --version 2>/dev/null || echo "$BIN")"
  echo "machine: $(lscpu | grep 'Model name' | sed 's/  */ /g'), $(nproc) cores"
  echo "filesystem used before: $used_now MiB (the job's kept files: $kept MiB)"
  echo "start: $(date -u +%FT%TZ)"
} >> "$summary"
/usr/bin/time -v "$BIN" solve --game musashi33 --in-process --threads 2 \
  --memory-budget 20GiB --checkpoint-minutes 10 ${MAX_BROWNS:+--max-browns "$MAX_BROWNS"} \
  --out "$OUT" \
  > "$LOGS/solve$suffix.log" 2> "$LOGS/solve$suffix.err" &
timer=$!
[ -s "$samples" ] || echo "sitting,unix_seconds,rss_kib,job_disk_mib,cpu_ticks" > "$samples"
sleep 1
solver=$(pgrep -P $timer)
# (A shell loop, not awk: Debian's mawk reads a pipe in blocks, so its lines would reach the
# file only every quarter of an hour, or at the end.)
[ -n "$solver" ] && "$here/sample-process.sh" "$solver" "$(dirname "$OUT")" |
  while read -r t rss used cpu; do
    echo "$SITTING,$t,$rss,$((used - baseline)),$cpu"
  done >> "$samples" &
wait $timer
rc=$?
{
  echo "end: $(date -u +%FT%TZ) (exit $rc)"
  grep -E "Elapsed|Maximum resident|User time|System time" "$LOGS/solve$suffix.err"
  echo "job disk at most this sitting (samples): $(awk -F, -v s="$SITTING" '$1 == s && $4 > m {m = $4} END {print m + 0}' "$samples") MiB"
  tail -1 "$LOGS/solve$suffix.log"
} >> "$summary"
[ "$rc" = 0 ] || exit "$rc"
{
  # Summed by the shell: mawk prints a sum this large in exponent form.
  tables=$(( $(stat -c %s "$OUT"/*.tbl | paste -sd+) ))
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
