#!/usr/bin/env python3
"""Draws docs/board33-run.png: the full BOARD33 solve, stage by stage and over time.

Inputs (written by the run and its sampler, nothing edited):
  --log LOG [LOG ...]   the job's logs, one per sitting in order (a solve's stderr): one
                        `stage finished` line per stage (slots, compute_ms); a stage finished
                        again in a later sitting counts as that sitting says
  --samples CSV         `sitting,unix_seconds,rss_kib,job_disk_mib,cpu_ticks`, one row every
                        10 s of each sampled sitting (docs/bench/sample-process.sh samples the
                        process and the filesystem; job_disk_mib is the filesystem's use minus
                        what is not the job's, see docs/out-of-core.md)
  --out PNG             where to draw

Top: throughput of every stage (slots per wall second, and per CPU second of the two threads)
against its brown count, with the stage's size. Bottom: resident memory and the job's disk use
over each sampled sitting. Needs matplotlib (`pip install matplotlib`); not part of the tests.
"""

import argparse
import csv
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STAGE = re.compile(r"stage finished stage=browns=(\d+) slots=(\d+) compute_ms=(\d+)")


def stages(logs):
    """The last `stage finished` line of each brown count: (browns, slots, seconds)."""
    found = {}
    for log in logs:
        with open(log) as f:
            for line in f:
                m = STAGE.search(line)
                if m:
                    found[int(m[1])] = (int(m[2]), int(m[3]) / 1000.0)
    return [(k, *found[k]) for k in sorted(found)]


def samples(path):
    """Rows of the samples CSV, by sitting."""
    sittings = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            sittings.setdefault(row["sitting"], []).append(row)
    return sittings


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--log", required=True, nargs="+")
    p.add_argument("--samples")
    p.add_argument("--out", required=True)
    a = p.parse_args()

    per_stage = stages(a.log)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 8))
    ks = [k for k, _, _ in per_stage]
    rate = [slots / s / 1e6 if s > 0 else 0 for _, slots, s in per_stage]
    top.bar(ks, rate, color="tab:blue", label="M slots per wall second (2 threads)")
    top.set_xlabel("brown pieces (stage)")
    top.set_ylabel("M slots / s")
    size = top.twinx()
    size.plot(ks, [slots / 1e9 for _, slots, _ in per_stage], "k.-", label="stage size")
    size.set_ylabel("stage size (G slots)")
    top.set_title("BOARD33, every stage: throughput and size")
    lines = top.get_legend_handles_labels()
    more = size.get_legend_handles_labels()
    top.legend(lines[0] + more[0], lines[1] + more[1], loc="upper left")

    offset = 0.0
    for sitting, rows in (samples(a.samples) if a.samples else {}).items():
        t0 = int(rows[0]["unix_seconds"])
        hours = [offset + (int(r["unix_seconds"]) - t0) / 3600 for r in rows]
        bottom.plot(hours, [int(r["rss_kib"]) / 2**20 for r in rows], label=f"RSS, sitting {sitting}")
        job = [int(r["job_disk_mib"]) / 1024 for r in rows]
        bottom.plot(hours, job, "--", label=f"job directory + scratch, sitting {sitting}")
        offset = hours[-1] + 0.05
    bottom.axhline(20, color="grey", lw=0.8)
    bottom.set_xlabel("hours (sittings sampled, back to back)")
    bottom.set_ylabel("GiB")
    bottom.set_title("resident memory (budget 20 GiB) and the job's disk use")
    bottom.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
