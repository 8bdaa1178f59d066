#!/usr/bin/env bash
# One BOARD33 stage grown by two builds in turn from the same tables, nothing else running.
#   pair-stage.sh K FROM KEEP OUT OLD NEW
# FROM: a job directory solved up to K-1 browns by OLD (the issue's build cannot read the
# tables later builds write; later builds read both formats). OLD grows a copy of FROM kept
# as KEEP, which is the next stage's FROM; NEW grows a temporary copy. Appends grow-stage.sh's
# line for each build to OUT; OUT.old.samples / OUT.new.samples hold sample-process.sh's lines
# for disk peaks and CPU. Positions per CPU-second: the stage's slots / (wall s x CPU share).
# IN_PLACE=1 (KEEP ignored, may be -): NEW first, from a temporary copy beside FROM, then OLD
# grows FROM itself — for a stage whose old-build scratch leaves no room for a second copy of
# the inputs (BOARD33 stage 15: the issue's build's inputs ≈ 7.8 GB, its scratch ≈ 67 GB).
set -u
K=$1; FROM=$2; KEEP=$3; OUT=$4; OLD=$5; NEW=$6
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${IN_PLACE:-}" ]; then
  TMPDIR=$(dirname "$FROM") SAMPLES=$OUT.new.samples "$here/grow-stage.sh" "$NEW" musashi33 \
      "$FROM" "$K" --memory-budget 20GiB >> "$OUT"
  IN_PLACE=1 SAMPLES=$OUT.old.samples "$here/grow-stage.sh" "$OLD" musashi33 "$FROM" "$K" \
      --memory-budget 20GiB >> "$OUT"
  exit
fi
KEEP=$KEEP SAMPLES=$OUT.old.samples "$here/grow-stage.sh" "$OLD" musashi33 "$FROM" "$K" \
    --memory-budget 20GiB >> "$OUT"
TMPDIR=$(dirname "$KEEP") SAMPLES=$OUT.new.samples "$here/grow-stage.sh" "$NEW" musashi33 \
    "$FROM" "$K" --memory-budget 20GiB >> "$OUT"
