//! Where a stage's wall time goes, step by step, and how many cores were busy in each step.
//!
//! A stage's threads idle where its work narrows: a barrier at the end of a parallel step, a
//! serial sort, a checkpoint written on fewer threads than the pool has. A sampling profile
//! cannot show that directly (a sleeping thread takes no samples). Here each step of the kernel
//! is timed twice, by the wall clock and by the process's CPU clock (every thread together):
//! their ratio is the cores the step kept busy, and `threads × wall − cpu` is the core time it
//! left idle. The clocks are read a few times per ply, which costs nothing measurable.
//!
//! The process's CPU clock counts every thread of the process: where two stages run at once
//! (the in-process driver does that for small stages) their steps share it, and the figures
//! are those of the process, not of one stage.

use std::fmt;
use std::time::{Duration, Instant};

/// One step of the frontier kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The initial sweep: every position's first value, counters and scheduled exits.
    Sweep,
    /// Sealing a ply's lists before it: sorting in-memory frontiers, mapping spilled ones.
    Seal,
    /// Pushing a frontier's keys to their predecessors (un-moves).
    Pushes,
    /// Applying the exits scheduled for the ply.
    Exits,
    /// Claims marked bit-parallel, a slot at a time.
    BulkClaims,
    /// Marking a frontier in bitmaps for the pulls (compact arrays).
    Bitmaps,
    /// Open positions checking their successors (pull plies).
    Pulls,
    /// Dropping a batch's pages and lists out of core; the new frontier's collection.
    Paging,
    /// Recording a ply's frontier in the value log (compact arrays).
    ValueLog,
    /// Writing a checkpoint.
    Checkpoint,
    /// Marking the positions left open as draws.
    Draws,
    /// Building the value tables from the value log (compact arrays).
    Build,
}

impl Step {
    /// Every step, in the order a stage runs them.
    pub const ALL: [Step; 12] = [
        Step::Sweep,
        Step::Seal,
        Step::Pushes,
        Step::Exits,
        Step::BulkClaims,
        Step::Bitmaps,
        Step::Pulls,
        Step::Paging,
        Step::ValueLog,
        Step::Checkpoint,
        Step::Draws,
        Step::Build,
    ];

    /// The step's name in logs.
    pub fn name(self) -> &'static str {
        match self {
            Step::Sweep => "sweep",
            Step::Seal => "seal",
            Step::Pushes => "pushes",
            Step::Exits => "exits",
            Step::BulkClaims => "bulk_claims",
            Step::Bitmaps => "bitmaps",
            Step::Pulls => "pulls",
            Step::Paging => "paging",
            Step::ValueLog => "value_log",
            Step::Checkpoint => "checkpoint",
            Step::Draws => "draws",
            Step::Build => "build",
        }
    }
}

/// The wall time and the process's CPU time each step took, summed over a stage.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepTimes {
    wall: [Duration; Step::ALL.len()],
    cpu: [Duration; Step::ALL.len()],
}

impl StepTimes {
    /// The wall time of `step`.
    pub fn wall(&self, step: Step) -> Duration {
        self.wall[step as usize]
    }

    /// The CPU time of every thread of the process during `step`.
    pub fn cpu(&self, step: Step) -> Duration {
        self.cpu[step as usize]
    }

    /// Adds the times of `other` (another run of the same stage).
    pub fn add(&mut self, other: &StepTimes) {
        for i in 0..Step::ALL.len() {
            self.wall[i] += other.wall[i];
            self.cpu[i] += other.cpu[i];
        }
    }

    /// A line for the logs: each step that took time, with its wall seconds, the cores it
    /// kept busy on average and the core-seconds it left idle of `threads`.
    pub fn summary(&self, threads: usize) -> StepSummary<'_> {
        StepSummary {
            times: self,
            threads,
        }
    }
}

/// [`StepTimes::summary`]: `step wall_s/cores/idle_core_s` for each step that took time.
pub struct StepSummary<'a> {
    times: &'a StepTimes,
    threads: usize,
}

impl fmt::Display for StepSummary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for step in Step::ALL {
            let wall = self.times.wall(step).as_secs_f64();
            if wall < 0.05 {
                continue;
            }
            let cpu = self.times.cpu(step).as_secs_f64();
            let idle = (self.threads as f64 * wall - cpu).max(0.0);
            if !first {
                f.write_str(" ")?;
            }
            first = false;
            write!(f, "{}={wall:.1}s/{:.2}/{idle:.1}", step.name(), cpu / wall)?;
        }
        Ok(())
    }
}

/// A stopwatch for consecutive steps: each [`lap`](StepClock::lap) charges the time since the
/// last one to a step.
pub(crate) struct StepClock {
    wall: Instant,
    cpu: Duration,
    /// The CPU clock read: the process's (every thread), or in tests the calling thread's.
    cpu_clock: fn() -> Duration,
}

impl StepClock {
    /// Starts timing now, CPU time being that of every thread of the process.
    pub(crate) fn start() -> StepClock {
        StepClock::with_cpu_clock(process_cpu)
    }

    /// Starts timing now with `cpu_clock` as the CPU clock.
    fn with_cpu_clock(cpu_clock: fn() -> Duration) -> StepClock {
        StepClock {
            wall: Instant::now(),
            cpu: cpu_clock(),
            cpu_clock,
        }
    }

    /// Charges the time since the start or the last lap to `step`.
    pub(crate) fn lap(&mut self, times: &mut StepTimes, step: Step) {
        let now = StepClock::with_cpu_clock(self.cpu_clock);
        times.wall[step as usize] += now.wall - self.wall;
        times.cpu[step as usize] += now.cpu.saturating_sub(self.cpu);
        *self = now;
    }
}

/// The CPU time of every thread of this process so far (zero where unknown).
fn process_cpu() -> Duration {
    cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// The CPU time of the clock `id` (zero where unknown).
fn cpu_clock(id: libc::clockid_t) -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the valid pointer it is given.
    let ok = unsafe { libc::clock_gettime(id, &mut t) } == 0;
    if ok {
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    } else {
        Duration::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CPU time of the calling thread: the tests run beside others in one process, whose
    /// CPU time would count in the process's clock.
    fn thread_cpu() -> Duration {
        cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID)
    }

    /// Keeps this thread busy for at least `d` of its CPU time.
    fn busy(d: Duration) {
        let start = thread_cpu();
        let mut x = 0u64;
        while thread_cpu() - start < d {
            x = std::hint::black_box(x + 1);
        }
    }

    #[test]
    fn a_lap_charges_its_step_with_wall_and_cpu_time() {
        let mut times = StepTimes::default();
        let mut clock = StepClock::with_cpu_clock(thread_cpu);
        busy(Duration::from_millis(60));
        clock.lap(&mut times, Step::Pushes);
        std::thread::sleep(Duration::from_millis(60));
        clock.lap(&mut times, Step::Checkpoint);
        // Busy: one thread's CPU time cannot run ahead of the wall clock.
        assert!(times.cpu(Step::Pushes) >= Duration::from_millis(60));
        assert!(times.wall(Step::Pushes) >= times.cpu(Step::Pushes));
        // Asleep: wall time passes, almost no CPU time.
        assert!(times.wall(Step::Checkpoint) >= Duration::from_millis(60));
        assert!(times.cpu(Step::Checkpoint) < Duration::from_millis(30));
        // The process's clock is read where the kernel times its steps.
        assert!(process_cpu() >= thread_cpu());
        assert_eq!(times.wall(Step::Sweep), Duration::ZERO);
        let line = times.summary(2).to_string();
        assert!(line.starts_with("pushes="), "{line}");
        assert!(line.contains(" checkpoint="), "{line}");
        assert!(!line.contains("sweep"), "{line}");
        let mut twice = times.clone();
        twice.add(&times);
        assert_eq!(twice.wall(Step::Pushes), 2 * times.wall(Step::Pushes));
    }
}
