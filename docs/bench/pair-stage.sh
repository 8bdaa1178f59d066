#!/usr/bin/env bash
# One BOARD33 stage grown by two builds in turn from the same tables, nothing else running.
#   pair-stage.sh K FROM KEEP OUT OLD NEW
# FROM: a job directory solved up to K-1 browns by OLD (the issue's build cannot read the
# tables later builds write; later builds read both formats). OLD grows a copy of FROM kept
# as KEEP, which is the next stage's FROM; NEW grows a temporary copy beside it. Appends one
# line per build to OUT: build, wall s, peak RSS KiB, CPU share, the stage's log fields, the
# md5 of the stage's tables (differs between formats by design) and whether the stage's row of
# the solve's counts.csv equals docs/board33-counts.csv's. OUT.old.samples / OUT.new.samples
# hold sample-process.sh's lines (RSS, filesystem use, CPU ticks) for disk peaks and CPU.
# Positions per CPU-second: the stage's slots / (wall s x CPU share).
set -u
K=$1; FROM=$2; KEEP=$3; OUT=$4; OLD=$5; NEW=$6
here=$(cd "$(dirname "$0")" && pwd)
ref=$(sed -n "$((K + 1))p" "$here/../board33-counts.csv")
for b in old new; do
  bin=$OLD; d=$KEEP
  if [ $b = new ]; then bin=$NEW; d=$(mktemp -d "$(dirname "$KEEP")/pair.XXXX")/out; fi
  rm -rf "$d"; cp -r "$FROM" "$d"
  /usr/bin/time -f "%e %M %P" -o "$OUT.$b.time" "$bin" solve --game musashi33 --in-process \
      --threads 2 --max-browns "$K" --memory-budget 20GiB --out "$d" > "$OUT.$b.log" 2>&1 &
  timer=$!; sleep 1
  "$here/sample-process.sh" "$(pgrep -P $timer)" "$d" > "$OUT.$b.samples"
  wait $timer
  line=$(grep "stage finished stage=browns=$K " "$d/retro.log" | grep -o " compute_ms=.*out_of_core=[a-z]*")
  md5=$(cd "$d" && ls browns$(printf %02d "$K")-*.tbl | sort | xargs md5sum | md5sum | cut -c1-32)
  same=no; [ "$(sed -n "$((K + 1))p" "$d/counts.csv")" = "$ref" ] && same=yes
  echo "$(basename "$bin") $(cat "$OUT.$b.time")$line md5=$md5 counts_row_equal=$same" >> "$OUT"
  [ $b = new ] && rm -rf "$(dirname "$d")"
done
