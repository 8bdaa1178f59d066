//! Stages solved in supersteps: their step tasks, the files that travel between steps, and the
//! barrier between plies.
//!
//! A stage at least `--split-above` positions large is not given to one worker: it is *split*
//! into one step task per slice and ply (see `retro_engine::superstep` for what a step
//! computes). Every step of ply 1 starts at once; the coordinator creates the steps of the
//! next ply when every step of the current one is merged (the barrier), for exactly the slices
//! that were sent messages. When a ply sends none and no exit decrement is dated later, each
//! slice gets a *finish* step (ply 0) that writes its table as a shard, merged like a stage's.
//!
//! Files: a step writes the slice's new state and its messages into its own directory
//! (`retro_pipeline::steps::step_dir`, named by the stage's try and the step's attempt, so never
//! reused); the coordinator records the files of the attempt it
//! accepts (with size and checksum) in the same transaction that marks the step done. A state
//! superseded by a newer one and a message already applied are deleted at the next barrier;
//! the stage's whole directory when it is done.

use crate::core::{JobRuntime, Refusal};
use crate::db::{StepFileRow, TaskRow};
use crate::task_state::TaskState;
use retro_pipeline::storage::check_key;
use retro_proto as pb;
use retro_store::SliceRecord;
use std::collections::{BTreeMap, BTreeSet};

/// Kind of a step file holding a slice's state.
pub const STATE: &str = "state";
/// Kind of a step file holding messages.
pub const MESSAGE: &str = "message";

/// A new pending step task.
pub(crate) fn new_step(job: &JobRuntime, stage: usize, slot: u32, ply: u32) -> TaskRow {
    let slice = job.stages[stage].slices[slot as usize];
    let step = match ply {
        0 => "finish".to_string(),
        p => format!("ply {p}"),
    };
    TaskRow {
        stage,
        step: Some((slot, ply)),
        name: format!("{} {step}", job.game.slice_name(slice)),
        state: TaskState::Pending,
        attempt: 0,
        worker_id: None,
        failures: 0,
        positions: 2 * job.game.slice_len(slice),
    }
}

/// The steps of ply 1 of `stage`: every slice.
pub(crate) fn first_steps(job: &JobRuntime, stage: usize) -> Vec<TaskRow> {
    (0..job.stages[stage].slices.len() as u32)
        .map(|slot| new_step(job, stage, slot, 1))
        .collect()
}

/// What a split stage needs after a merge.
#[derive(Debug, PartialEq)]
pub(crate) enum Next {
    /// Steps of the current ply are still out.
    Wait,
    /// The steps of the next ply (the slices sent messages), and the files no step will read
    /// any more (superseded states, applied messages).
    Steps(Vec<TaskRow>, Vec<String>),
    /// No message is left: every slice's finish step.
    Finish(Vec<TaskRow>),
    /// Every finish step is merged.
    Done,
}

/// Decides what follows the merged steps of `stage`.
pub(crate) fn next(job: &JobRuntime, stage: usize) -> Next {
    let steps: Vec<&TaskRow> = job.steps.values().filter(|t| t.stage == stage).collect();
    if steps.iter().any(|t| t.state != TaskState::Done) {
        return Next::Wait;
    }
    let plies = || steps.iter().filter_map(|t| t.step.map(|(_, p)| p));
    if plies().any(|p| p == 0) {
        return Next::Done;
    }
    let current = plies().max().unwrap_or(0);
    let files: Vec<&StepFileRow> = job.step_files.iter().filter(|f| f.stage == stage).collect();
    // A double step of the current ply applied the messages of its own ply to its slice.
    let stepped: BTreeSet<u32> = steps
        .iter()
        .filter_map(|t| t.step)
        .filter(|&(_, p)| p == current)
        .map(|(slot, _)| slot)
        .collect();
    let applied = |f: &StepFileRow| {
        f.ply < current
            || (f.ply == current && job.game.double_step(current) && stepped.contains(&f.slot))
    };
    let pending_ply = files
        .iter()
        .filter(|f| f.kind == MESSAGE && !applied(f))
        .map(|f| f.ply)
        .min();
    let Some(q) = pending_ply else {
        let n = job.stages[stage].slices.len() as u32;
        return Next::Finish((0..n).map(|slot| new_step(job, stage, slot, 0)).collect());
    };
    let targets: BTreeSet<u32> = files
        .iter()
        .filter(|f| f.kind == MESSAGE && f.ply == q)
        .map(|f| f.slot)
        .collect();
    let tasks = targets
        .into_iter()
        .map(|slot| new_step(job, stage, slot, q + 1))
        .collect();
    // The newest state of each slot stays; messages of plies before q were applied.
    let mut newest: BTreeMap<u32, u32> = BTreeMap::new();
    for f in files.iter().filter(|f| f.kind == STATE) {
        let p = newest.entry(f.slot).or_insert(f.ply);
        *p = (*p).max(f.ply);
    }
    let dead = files
        .iter()
        .filter(|f| match f.kind.as_str() {
            STATE => newest[&f.slot] != f.ply,
            _ => f.ply < q || applied(f),
        })
        .map(|f| f.path.clone())
        .collect();
    Next::Steps(tasks, dead)
}

/// The message files step (`slot`, `ply`) of `stage` applies: those of the ply before, and a
/// double step's also of its own ply (its exits). None for the first step and the finish.
fn incoming(
    job: &JobRuntime,
    stage: usize,
    slot: u32,
    ply: u32,
) -> impl Iterator<Item = &StepFileRow> {
    let double = job.game.double_step(ply);
    job.step_files.iter().filter(move |f| {
        f.stage == stage
            && f.kind == MESSAGE
            && f.slot == slot
            && ply >= 2
            && (f.ply == ply - 1 || (double && f.ply == ply))
    })
}

/// The task message of a step: its slice's latest state and the messages addressed to it by
/// the previous ply; for ply 1, the final tables of the stages it reads (`records`, which the
/// caller reads only for ply 1).
pub(crate) fn step_message(job: &JobRuntime, task: &TaskRow, records: &[SliceRecord]) -> pb::Task {
    let (slot, ply) = task.step.expect("a step task");
    let mut message = crate::merge::task_message(job, task, records);
    message.shard_dir = crate::merge::output_dir(job, task);
    message.step = Some(pb::Step { slot, ply });
    let state = job
        .step_files
        .iter()
        .filter(|f| f.stage == task.stage && f.kind == STATE && f.slot == slot)
        .max_by_key(|f| f.ply);
    let messages = incoming(job, task.stage, slot, ply);
    message.step_inputs = state
        .into_iter()
        .filter(|_| ply != 1)
        .chain(messages)
        .map(|f| pb::StepFile {
            path: f.path.clone(),
            bytes: f.bytes,
            checksum: f.checksum.clone(),
            kind: f.kind.clone(),
            slot: f.slot,
            ply: f.ply,
            keys: f.keys,
        })
        .collect();
    message
}

/// Checks the files a step (of ply 1 or more) reports against the task and against storage;
/// returns the rows to record. Malformed reports are `InvalidArgument`, files that do not
/// match their description `DataLoss`.
pub(crate) fn verify_outputs(
    job: &JobRuntime,
    task: &TaskRow,
    req: &pb::CompleteTaskRequest,
) -> Result<Vec<StepFileRow>, Refusal> {
    let (slot, ply) = task.step.expect("a step task");
    let dir = crate::merge::output_dir(job, task);
    let n = job.stages[task.stage].slices.len() as u32;
    let bad = |m: String| {
        Refusal::InvalidArgument(format!("malformed step report for {}: {m}", task.name))
    };
    // A double step's messages are of the ply after its own.
    let sends = ply + u32::from(job.game.double_step(ply));
    let mut rows = Vec::new();
    let mut seen = BTreeSet::new();
    for f in &req.step_outputs {
        check_key(&f.path).map_err(|e| bad(e.to_string()))?;
        if !f.path.starts_with(&format!("{dir}/")) {
            return Err(bad(format!("{} is not under {dir}/", f.path)));
        }
        let ok = match f.kind.as_str() {
            STATE => f.slot == slot && f.ply == ply,
            // Messages of the ply it sends to any slice; exits (ply 1 only) to itself, dated
            // later.
            MESSAGE => {
                f.slot < n
                    && f.keys > 0
                    && (f.ply == sends || (ply == 1 && f.ply > sends && f.slot == slot))
            }
            _ => false,
        };
        if !ok || !seen.insert((f.kind.clone(), f.slot, f.ply)) {
            return Err(bad(format!(
                "{} file {} (slot {}, ply {}, {} keys) does not belong to this step or is listed twice",
                f.kind, f.path, f.slot, f.ply, f.keys
            )));
        }
        crate::merge::check_reported_file(job, "step file", &f.path, f.bytes, &f.checksum)?;
        rows.push(StepFileRow {
            stage: task.stage,
            path: f.path.clone(),
            kind: f.kind.clone(),
            slot: f.slot,
            ply: f.ply,
            bytes: f.bytes,
            checksum: f.checksum.clone(),
            keys: f.keys,
        });
    }
    if !seen.contains(&(STATE.to_string(), slot, ply)) {
        return Err(bad("no state file".into()));
    }
    Ok(rows)
}

/// Step directories nobody will read: not the directory of a running step's attempt, and
/// holding no recorded file. Relative to the job directory.
pub(crate) fn dead_step_dirs(job: &JobRuntime) -> Vec<String> {
    let mut live: BTreeSet<String> = job
        .steps
        .values()
        .filter(|t| t.state == TaskState::Running)
        .map(|t| crate::merge::output_dir(job, t))
        .collect();
    for f in &job.step_files {
        if let Some((dir, _)) = f.path.rsplit_once('/') {
            live.insert(dir.to_string());
        }
    }
    let mut dead = Vec::new();
    for stage_name in job.storage.children("steps").into_iter().flatten() {
        let steps = job.storage.children(&format!("steps/{stage_name}"));
        for step in steps.into_iter().flatten() {
            let rel = format!("steps/{stage_name}/{step}");
            if !live.contains(&rel) {
                dead.push(rel);
            }
        }
    }
    dead
}
