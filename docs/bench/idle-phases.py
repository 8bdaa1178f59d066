#!/usr/bin/env python3
"""Where a two-thread solve idles, by kernel phase, from a perf profile with call graphs.

    perf record -F 49 --call-graph dwarf,8192 -p PID -o perf.data      # the solver's own PID
    perf script -i perf.data -F tid,time,ip,sym > perf.txt
    idle-phases.py perf.txt 49 1.0 [THREADS]

Samples are binned by time (third argument: bin seconds); a bin short of THREADS (default 2)
threads' worth of samples at the sampling rate is idle for the difference, and that idle time
is charged to the phases whose samples the bin does hold: what ran while a thread waited. A
sample's phase is the first kernel function on its call chain that names one (rayon worker
threads' chains often stop short of `solve_stage_into`, so a chain is searched for the phase's
own functions). Prints, per phase, its share of the samples, its share of the idle time and
the idle core-seconds. Used in docs/benchmarks.md ("where the threads idle", thirtieth session).
"""
import collections
import sys

# (substring of a function name, phase), first match on the chain wins.
PHASES = [
    ("checkpoint", "checkpoint"),
    ("build_from_log", "build"),
    ("claim_in_bulk", "bulk claims"),
    ("BulkSlot", "bulk claims"),
    ("pull_ply", "pulls"),
    ("frontier_bitmaps", "frontier bitmaps"),
    ("seal_sorting", "frontier sort"),
    ("merge_sorted", "frontier sort"),
    ("kernel::expand", "pushes"),
    ("for_each_target_of", "pushes"),
    ("Sweep", "initial sweep"),
    ("ValueLog", "value log"),
    ("finish_section", "draws"),
    ("Frontier::seal", "frontier seal"),
    ("Sink::", "list appends"),
]


def read(path):
    samples, current = [], None
    with open(path) as f:
        for line in f:
            if line[:1].isdigit():
                fields = line.split()
                current = (float(fields[1].rstrip(":")), [])
                samples.append(current)
            elif line.strip() and current is not None:
                current[1].append(line.strip().split(None, 1)[-1])
    return samples


def phase(chain):
    for function in chain:
        for needle, name in PHASES:
            if needle in function:
                return name
    return "other: " + (chain[0][:50] if chain else "?")


def main():
    path, hz, width = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    samples = read(path)
    bins = collections.defaultdict(list)
    counts = collections.Counter()
    for time, chain in samples:
        name = phase(chain)
        counts[name] += 1
        bins[int(time / width)].append(name)
    full = hz * width * threads
    idle_of = collections.Counter()
    idle = 0.0
    for names in bins.values():
        missing = max(0.0, full - len(names))
        idle += missing
        for name in names:
            idle_of[name] += missing / len(names)
    print(f"idle {idle / (full * len(bins)):.3f} of {threads} threads over {len(bins)} bins "
          f"of {width} s; {len(samples)} samples")
    print(f"{'phase':<56} {'samples':>8} {'idle':>7} {'idle core-s':>12}")
    for name, n in counts.most_common(25):
        print(f"{name:<56} {100 * n / len(samples):7.1f}% {100 * idle_of[name] / idle:6.1f}% "
              f"{idle_of[name] / hz:12.1f}")


if __name__ == "__main__":
    main()
