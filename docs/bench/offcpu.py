#!/usr/bin/env python3
"""Where a solve's threads sleep or wait, by call chain: an off-CPU profile from scheduler events.

    perf record -e sched:sched_switch -a --call-graph dwarf,16384 -o off.data -- sleep 20
    perf script -i off.data -F comm,tid,time,trace,ip,sym > off.txt
    offcpu.py off.txt $(ls /proc/PID/task | paste -sd,) [DEPTH]

Each `sched_switch` that takes one of the solver's threads (the comma-separated thread ids)
off a CPU carries the thread's call chain; the next switch that puts the same thread back on a
CPU ends that stretch. The stretches are summed per state (`S` asleep — a lock, a condition, an
idle pool thread; `D` waiting on the disk; `R` runnable but preempted) and per call chain: the
first kernel function that names the wait, then the innermost DEPTH (default 3) frames of the
solver's own code. Recorded system-wide (`-a`) because a thread's switch back on happens in
another task's context. A sampling profile (`perf record -F`) cannot show this: a sleeping
thread takes no samples. Used in docs/benchmarks.md (forty-second session: the plies' lock).
"""

import collections
import re
import sys

HEADER = re.compile(
    r"^\s*(.+?)\s+(\d+)\s+([\d.]+): prev_comm=.* prev_pid=(\d+) .*prev_state=(\S+)"
    r" ==> next_comm=.* next_pid=(\d+)"
)
WAITS = ("folio_wait", "io_schedule", "rwsem", "mutex", "futex_wait", "filemap", "do_fault",
         "handle_mm", "__lock", "down_")


def read(path):
    """The switches: (time, thread switched out, its state, thread switched in, chain)."""
    events, current = [], None
    for line in open(path):
        if line.strip() and not line[0].isspace():
            m = HEADER.match(line)
            current = None
            if m:
                current = [float(m[3]), int(m[4]), m[5], int(m[6]), []]
                events.append(current)
        elif line.strip() and current is not None:
            current[4].append(line.strip().split(None, 1)[-1])
    return events


def signature(chain, depth):
    """The kernel function that names the wait, and the solver's innermost frames."""
    frames = []
    for frame in chain:
        if "retro" not in frame:
            continue
        frame = frame.replace("{{closure}}", "C").replace(" (inlined)", "")
        if not frames or frames[-1] != frame:
            frames.append(frame)
        if len(frames) >= depth:
            break
    kernel = [f for f in chain if f.startswith(WAITS)]
    return (kernel[0] if kernel else "") + " | " + " < ".join(frames)


def main():
    path, tids = sys.argv[1], {int(t) for t in sys.argv[2].split(",")}
    depth = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    events = read(path)
    if not events:
        sys.exit(f"offcpu.py: no sched_switch events in {path}")
    off, total, count, by_state = {}, collections.Counter(), collections.Counter(), collections.Counter()
    for time, prev, state, nxt, chain in events:
        if prev in tids:
            off[prev] = (time, state, signature(chain, depth))
        if nxt in tids and nxt in off:
            start, state_out, sig = off.pop(nxt)
            total[(state_out, sig)] += time - start
            count[(state_out, sig)] += 1
            by_state[state_out] += time - start
    span = events[-1][0] - events[0][0]
    states = ", ".join(f"{s} {v:.2f}" for s, v in by_state.most_common())
    print(f"{span:.1f} s recorded; thread-seconds off the CPU by state: {states}")
    print(f"{'thread-s':>8} {'threads':>7} {'times':>7}  state, wait | innermost frames")
    for key, seconds in total.most_common(25):
        print(f"{seconds:8.2f} {seconds / span:7.3f} {count[key]:7d}  {key[0]} {key[1][:300]}")


if __name__ == "__main__":
    main()
