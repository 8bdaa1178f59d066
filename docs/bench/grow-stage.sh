#!/usr/bin/env bash
# One stage of a paired benchmark: a copy of a solved job directory grown by one brown count.
#   [KEEP=DIR | IN_PLACE=1] [SAMPLES=FILE] grow-stage.sh BIN GAME FROM_DIR K [solve flags...]
# e.g. grow-stage.sh ./retro musashi33 /work/b33k9 10   (FROM_DIR solved up to K-1 browns)
# Prints one line: build, wall s, peak RSS KiB, CPU share, the stage's log fields, the md5
# of the stage's tables (compare builds byte for byte) and, for musashi33, whether the stage's
# row of the solve's counts.csv equals docs/board33-counts.csv's. Run builds alternately for
# pairs (docs/bench/pair-stage.sh). KEEP: grow the copy there and keep it (the next stage's
# FROM_DIR); IN_PLACE=1: grow FROM_DIR itself, no copy (when the disk cannot hold a second copy
# of the inputs beside the stage's scratch); SAMPLES: write sample-process.sh's lines (RSS,
# filesystem use, CPU ticks) there.
set -u
BIN=$1; GAME=$2; FROM=$3; K=$4; shift 4
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${IN_PLACE:-}" ]; then
  out=${FROM%/}; d=""
elif [ -n "${KEEP:-}" ]; then
  out=$KEEP; d=""; rm -rf "$out"; cp -r "$FROM" "$out"
else
  d=$(mktemp -d "${TMPDIR:-/tmp}/grow-stage.XXXX"); out=$d/out; cp -r "$FROM" "$out"
fi
flags=""; "$BIN" solve --help | grep -q no-checkpoints && flags="--no-checkpoints"
/usr/bin/time -f "%e %M %P" -o "$out.time" "$BIN" solve --game "$GAME" --in-process --threads 2 \
    --max-browns "$K" $flags "$@" --out "$out" > "$out.log" 2>&1 &
timer=$!
if [ -n "${SAMPLES:-}" ]; then
  sleep 1; "$here/sample-process.sh" "$(pgrep -P $timer)" "$out" > "$SAMPLES"
fi
wait $timer
line=$(grep "stage finished stage=browns=$K " "$out/retro.log" | grep -o " compute_ms=.*out_of_core=[a-z]*")
build=$(grep "stage finished stage=browns=$K " "$out/retro.log" | grep -o " build_ms=[0-9]*")
md5=$(cd "$out" && ls browns$(printf %02d "$K")-*.tbl | sort | xargs md5sum | md5sum | cut -c1-32)
counts=""
if [ "$GAME" = musashi33 ]; then
  row=$(sed -n "$((K + 1))p" "$out/counts.csv")
  counts=" counts_row_equal=no"
  [ "$row" = "$(sed -n "$((K + 1))p" "$here/../board33-counts.csv")" ] && counts=" counts_row_equal=yes"
fi
echo "$(basename "$BIN") $(cat "$out.time")$line$build md5=$md5$counts"
rm -f "$out.time" "$out.log"
if [ -n "$d" ]; then rm -rf "$d"; fi
