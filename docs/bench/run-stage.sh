#!/usr/bin/env bash
# Times one BOARD33 stage on its own: solves stage STAGE with BIN from the finished lower stages
# of a full job directory SRC (hard-linked into OUT by the stage_job example), samples memory
# and disk every 10 s (sample-process.sh), stops once the stage is logged as finished, prints
# its log line, peak RSS and the samples' peaks, and compares its tables with SRC's.
# Usage: [BUDGET=20GiB] [THREADS=2] run-stage.sh BIN SRC STAGE OUT (BUDGET: the memory budget; a
# small one puts a stage out of core: BUDGET=3300MiB for browns=10, the least the job's largest
# stage accepts. THREADS=1 for two builds run side by side, one core each: their ratio is
# steadier than that of runs one after the other while the machine's speed drifts)
set -u
bin=$1 src=$2 stage=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
cargo run -q --release -p retro-store --example stage_job -- "$src" "$out" "$stage" || exit 1
/usr/bin/time -v "$bin" solve --game musashi33 --in-process --threads "${THREADS:-2}" \
  --memory-budget "${BUDGET:-20GiB}" --checkpoint-minutes 10 --out "$out" \
  >"$out.out" 2>"$out.time" &
timer=$!
sleep 1
solver=$(pgrep -P $timer)
bash "$here/sample-process.sh" "$solver" "$out" >"$out.samples" &
while kill -0 $timer 2>/dev/null; do
  if grep -q "stage finished stage=browns=$stage " "$out/retro.log" 2>/dev/null; then
    kill "$solver"
    break
  fi
  sleep 2
done
wait $timer
grep "stage finished stage=browns=$stage " "$out/retro.log"
grep "Maximum resident" "$out.time"
echo "samples (unix_seconds rss_kib filesystem_used_mib cpu_ticks): first, most disk, most RSS"
head -1 "$out.samples"
sort -k3 -n "$out.samples" | tail -1
sort -k2 -n "$out.samples" | tail -1
for f in "$out"/browns$(printf %02d "$stage")-*.tbl; do
  cmp -s "$f" "$src/$(basename "$f")" || echo "DIFFERS: $f"
done
echo "tables compared with $src"
