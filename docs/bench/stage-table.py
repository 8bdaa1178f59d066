#!/usr/bin/env python3
"""Prints the per-stage table of a solve (Markdown), as docs/benchmarks.md shows the full board.

Usage: stage-table.py JOB/retro.log

Reads the job's log (every sitting appends to it): each `stage finished` line gives a row
(slots, compute and phase seconds, throughput, scratch traffic) in the order the stages
finished, and the `checkpoint saved` lines of a stage go in its last column as
`ply: seconds (list keys, lists linked)`.
"""

import re
import sys
from collections import defaultdict


def field(name, line):
    """The number logged as `name=...` (quoted or not) in `line`, or 0."""
    m = re.search(name + r'="?([0-9.]+)', line)
    return float(m[1]) if m else 0.0


def main():
    checkpoints = defaultdict(list)
    rows = []
    for line in open(sys.argv[1]):
        if "checkpoint saved" in line:
            k = int(re.search(r"browns=(\d+)", line)[1])
            checkpoints[k].append(
                f"{int(field('ply', line))}: {field('seconds', line):.1f} s "
                f"({field('list_keys', line):.3g}, {int(field('linked_lists', line))})"
            )
        elif "stage finished" in line:
            rows.append(line)
    print(
        "| browns | slots | finished (UTC) | compute s | inputs / init / claim / count / build s "
        "| M slots / s | scratch read / written GB "
        "| checkpoints: ply: s (list keys, lists linked) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for line in rows:
        k = int(re.search(r"browns=(\d+)", line)[1])
        seconds = [field(f"{p}_ms", line) / 1000 for p in ("inputs", "init", "claim_plies", "count_plies", "build")]
        compute = field("compute_ms", line) / 1000
        slots = field("slots", line)
        rate = slots / compute / 1e6 if compute else 0.0
        read, written = field("disk_read_mb", line) / 1000, field("disk_written_mb", line) / 1000
        print(
            f"| {k} | {slots:.3g} | {line[11:19]} | {compute:,.1f} | "
            f"{' / '.join(f'{s:.1f}' for s in seconds)} | {rate:.1f} | {read:.1f} / {written:.1f} | "
            f"{'; '.join(checkpoints[k])} |"
        )


if __name__ == "__main__":
    main()
