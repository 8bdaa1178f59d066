#!/usr/bin/env bash
# One stage of a paired benchmark: a copy of a solved job directory grown by one brown count.
#   grow-stage.sh BIN GAME FROM_DIR K [solve flags...]
# e.g. grow-stage.sh ./retro musashi33 /work/b33k9 10   (FROM_DIR solved up to K-1 browns)
# Prints one line: build, wall s, peak RSS KiB, CPU share, the stage's log fields, and the md5
# of the stage's tables (compare builds byte for byte). Run builds alternately for pairs.
set -u
BIN=$1; GAME=$2; FROM=$3; K=$4; shift 4
d=$(mktemp -d "${TMPDIR:-/tmp}/grow-stage.XXXX"); cp -r "$FROM" "$d/out"
flags=""; "$BIN" solve --help | grep -q no-checkpoints && flags="--no-checkpoints"
/usr/bin/time -f "%e %M %P" -o "$d/time" "$BIN" solve --game "$GAME" --in-process --threads 2 \
    --max-browns "$K" $flags "$@" --out "$d/out" > "$d/log" 2>&1
line=$(grep "stage finished stage=browns=$K " "$d/out/retro.log" | grep -o " compute_ms=.*out_of_core=[a-z]*")
md5=$(cd "$d/out" && ls browns$(printf %02d "$K")-*.tbl | sort | xargs md5sum | md5sum | cut -c1-32)
echo "$(basename "$BIN") $(cat "$d/time")$line md5=$md5"
rm -rf "$d"
