//! Whether a sowing ends, decided exactly: a deterministic state machine is run from a start
//! state until a step says it has ended, or until it is known to cycle for ever.
//!
//! Sowing games (the relay-sowing mancala, Bao la kujifunza) play one move as a sequence of
//! steps (lift a hole and sow it, capture and sow the captured stones). The state between two
//! steps (the board, the hole, the direction, the phase) has finitely many values, because a
//! move does not create stones; so a move either ends or enters a cycle of states and sows for
//! ever. [`run`] tells which with Brent's cycle detection: exact (no step cap), memory for two
//! states, and each state computed at most about three times.
//!
//! The rule for such moves in a game ([`EndlessRule`]: cut off, or illegal) is shared too.
//!
//! The step function must be deterministic: the same state always leads to the same next state
//! and the same [`Flow`]. A state after which the machine has ended is never stepped again.

#![warn(missing_docs)]

mod endless;

pub use endless::EndlessRule;

/// What one step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// The machine has ended: the state now holds the end.
    Ended,
    /// The machine goes on from the state it now holds.
    GoesOn,
}

/// How a run from a start state turned out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Run<S> {
    /// It ended.
    Ends {
        /// The state left by the last step.
        state: S,
        /// How many steps were taken, the last included (at least 1).
        steps: u64,
    },
    /// It never ends: from `entry` on, the states repeat with period `cycle`.
    Cycles {
        /// The first state of the run that lies on the cycle (the start itself when the run
        /// starts on the cycle).
        entry: S,
        /// Steps from the start to `entry` (0 when the start lies on the cycle).
        lead_in: u64,
        /// Steps in one turn of the cycle: the least `c >= 1` after which `entry` comes back.
        cycle: u64,
    },
}

/// Runs `step` from `start` until it ends or cycles.
///
/// `step` advances a state in place by one step and says whether the machine has ended; it
/// must be deterministic (see the crate documentation).
pub fn run<S, F>(start: &S, mut step: F) -> Run<S>
where
    S: Clone + Eq,
    F: FnMut(&mut S) -> Flow,
{
    // Brent: the hare walks the sequence, the tortoise waits at powers of two. When the hare
    // meets the tortoise, `lambda` steps separate them: the cycle's length.
    let mut tortoise = start.clone();
    let mut hare = start.clone();
    let (mut power, mut lambda) = (1u64, 0u64);
    let mut steps = 0u64;
    loop {
        let flow = step(&mut hare);
        steps += 1;
        lambda += 1;
        if flow == Flow::Ended {
            return Run::Ends { state: hare, steps };
        }
        if hare == tortoise {
            break;
        }
        if lambda == power {
            tortoise = hare.clone();
            power *= 2;
            lambda = 0;
        }
    }
    // The entry is the first state `mu` with state(mu) == state(mu + lambda): walk two
    // states `lambda` apart from the start until they meet. None of these steps can end: every
    // state of the run up to the meeting has been stepped already without ending.
    let mut behind = start.clone();
    let mut ahead = start.clone();
    for _ in 0..lambda {
        step(&mut ahead);
    }
    let mut lead_in = 0;
    while behind != ahead {
        step(&mut behind);
        step(&mut ahead);
        lead_in += 1;
    }
    Run::Cycles {
        entry: behind,
        lead_in,
        cycle: lambda,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine on numbers: `x -> next[x]`, ending on reaching `end`.
    fn table_run(next: &[usize], end: usize, start: usize) -> Run<usize> {
        run(&start, |x: &mut usize| {
            *x = next[*x];
            if *x == end {
                Flow::Ended
            } else {
                Flow::GoesOn
            }
        })
    }

    /// The same question answered by remembering every state (the obvious, memory-hungry way).
    fn naive(next: &[usize], end: usize, start: usize) -> Run<usize> {
        let mut seen = vec![None; next.len()];
        let mut x = start;
        let mut t = 0u64;
        loop {
            if let Some(first) = seen[x] {
                return Run::Cycles {
                    entry: x,
                    lead_in: first,
                    cycle: t - first,
                };
            }
            seen[x] = Some(t);
            x = next[x];
            t += 1;
            if x == end {
                return Run::Ends { state: x, steps: t };
            }
        }
    }

    #[test]
    fn a_run_that_ends_reports_its_steps() {
        // 0 -> 1 -> 2 -> 3 (end).
        assert_eq!(
            table_run(&[1, 2, 3, 3], 3, 0),
            Run::Ends { state: 3, steps: 3 }
        );
    }

    #[test]
    fn a_run_that_cycles_reports_entry_lead_in_and_cycle() {
        // 0 -> 1 -> 2 -> 3 -> 4 -> 2: lead-in 2 (states 0, 1), entry 2, cycle 3 (2, 3, 4).
        assert_eq!(
            table_run(&[1, 2, 3, 4, 2, 5], 5, 0),
            Run::Cycles {
                entry: 2,
                lead_in: 2,
                cycle: 3
            }
        );
        // Starting on the cycle: no lead-in. A fixed point is a cycle of length 1.
        assert_eq!(
            table_run(&[1, 2, 0, 3], 3, 1),
            Run::Cycles {
                entry: 1,
                lead_in: 0,
                cycle: 3
            }
        );
        assert_eq!(
            table_run(&[0, 3, 2, 3], 3, 0),
            Run::Cycles {
                entry: 0,
                lead_in: 0,
                cycle: 1
            }
        );
    }

    #[test]
    fn every_function_on_a_small_set_agrees_with_remembering_every_state() {
        // Pseudo-random functions on 1..=40 states, the last state being the end.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next_random = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..3000 {
            let size = 1 + (next_random() % 40) as usize;
            let next: Vec<usize> = (0..size)
                .map(|_| (next_random() % size as u64) as usize)
                .collect();
            let end = size - 1;
            for start in 0..size {
                assert_eq!(
                    table_run(&next, end, start),
                    naive(&next, end, start),
                    "{next:?} from {start}"
                );
            }
        }
    }
}
