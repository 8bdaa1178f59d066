#!/usr/bin/env bash
# Paired, interleaved runs of two builds: prints one line per run (build, mode, seconds, peak RSS KiB).
set -u
OLD=$1; NEW=$2; RUNS=$3; shift 3
for i in $(seq 1 $RUNS); do
  for b in old new; do
    bin=$OLD; [ $b = new ] && bin=$NEW
    for mode in in-process cluster; do
      d=$(mktemp -d /tmp/paired.XXXX)
      flag=""; [ $mode = in-process ] && flag="--in-process"
      /usr/bin/time -f "%e %M" -o $d.time $bin solve $flag "$@" --out $d/out > /dev/null 2>&1
      echo "$i $b $mode $(cat $d.time)"
      rm -rf $d $d.time
    done
  done
done
