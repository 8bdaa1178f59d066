#!/usr/bin/env bash
# Times a stage's first checkpoint: for each round and each BIN, solves stage STAGE of BOARD33
# from the finished lower stages of the job directory SRC (hard-linked by the stage_job example),
# with --checkpoint-minutes 0 so that the first checkpoint always comes after ply 1, stops the
# solve once it is saved, and prints its log figures and the md5 of its list files (the same keys
# coded the same way give the same md5 whatever the build).
# Usage: [MINUTES=M] first-checkpoint.sh SRC STAGE ROUNDS BIN...   (TMPDIR: where the job goes)
# MINUTES: the checkpoint interval instead of 0, to time the first checkpoint where a build's
# rule puts it (with 10: cf2d206's ten minutes in, later builds' right after a long sweep);
# the page cache is then dropped before each solve, and each line adds the sweep's time (the
# checkpoint's init_ms) and the wall seconds from the start to the checkpoint saved.
set -u
src=$1 stage=$2 rounds=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
out=${TMPDIR:-/tmp}/first-checkpoint
for r in $(seq "$rounds"); do
  for bin in "$@"; do
    rm -rf "$out"
    (cd "$here/../.." && cargo run -q --release -p retro-store --example stage_job -- "$src" "$out" "$stage" >/dev/null) || exit 1
    [ -n "${MINUTES:-}" ] && { sync; echo 3 > /proc/sys/vm/drop_caches; }
    start=$(date +%s)
    "$bin" solve --game musashi33 --in-process --threads 2 --memory-budget 20GiB \
      --checkpoint-minutes "${MINUTES:-0}" --out "$out" >/dev/null 2>&1 &
    pid=$!
    until grep -q "checkpoint saved" "$out/retro.log" 2>/dev/null; do
      kill -0 $pid 2>/dev/null || { echo "$bin stopped before a checkpoint"; exit 1; }
      sleep 1
    done
    kill $pid; wait $pid 2>/dev/null
    line=$(grep "checkpoint saved" "$out/retro.log" | sed -E 's/.*ply=([0-9]+) seconds="([0-9.]+)" arrays_seconds="([0-9.]+)" list_keys=([0-9]+).*bytes=([0-9]+).*/ply=\1 s=\2 arrays=\3 keys=\4 bytes=\5/')
    lists=$(cat "$out"/checkpoints/browns="$stage"/a0-ply-*/list-*.table | md5sum | cut -c1-8)
    wall=$(($(date +%s) - start))
    init=$(grep -ho '"init_ms": *[0-9]*' "$out"/checkpoints/browns="$stage"/a0-ply-*/state.json | grep -o '[0-9]*$')
    echo "round $r $(basename "$bin") $line lists_md5=$lists init_ms=$init wall_s=$wall"
  done
done
rm -rf "$out"
