#!/usr/bin/env bash
# Interleaved rounds of one stage grown by two builds (grow-stage.sh), alternating which
# goes first: odd rounds OLD then NEW, even rounds NEW then OLD.
#   pair-rounds.sh OLD NEW ROUNDS FROM K [solve flags...]
# e.g. pair-rounds.sh ./retro-old ./retro-new 3 /work/b33k9 10 --memory-budget 3GiB
# (FROM solved up to K-1 browns). One grow-stage.sh line per run, prefixed by its round.
set -u
OLD=$1; NEW=$2; ROUNDS=$3; FROM=$4; K=$5; shift 5
here=$(cd "$(dirname "$0")" && pwd)
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order="$OLD $NEW"; else order="$NEW $OLD"; fi
  for bin in $order; do
    echo "round $r $("$here/grow-stage.sh" "$bin" musashi33 "$FROM" "$K" "$@")"
  done
done
