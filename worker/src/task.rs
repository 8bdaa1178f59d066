//! Running one task: read the finals it depends on, solve the stage, write result shards.

use crate::cache::MemoryCache;
use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use retro_engine::meter::resident_bytes;
use retro_engine::{DiskIo, Side, SliceId, Stage};
use retro_pipeline::encode_stage;
use retro_pipeline::stage::{compute_stage, human_bytes, plan_stage, stage_min_memory, Placement};
use retro_pipeline::steps::{read_message, read_state, write_message, write_state, WrittenFile};
use retro_pipeline::storage::Storage;
use retro_pipeline::{Finals, JobGame, OpenGame, StageCheckpoints};
use retro_proto as pb;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tracing::info;

/// What a running task shows the heartbeat: ply and positions resolved.
pub type Progress = Arc<Mutex<Option<pb::TaskProgress>>>;

/// Where a task may spread: bytes of memory, and the directory of its scratch files.
#[derive(Clone, Copy)]
pub struct TaskRoom<'a> {
    /// Bytes the task may use (out of core if it does not fit in memory).
    pub usable: u64,
    /// Directory of scratch files [default: the job directory's `scratch/`, or for a job in
    /// an object store the system's temporary directory].
    pub scratch: Option<&'a std::path::Path>,
    /// Opens the job's storage.
    pub storages: &'a retro_objects::Opener,
    /// How often the stage kernel saves its state in the job directory (shared file systems
    /// only); `None`: never.
    pub checkpoint_every: Option<std::time::Duration>,
}

/// Solves `task` in `pool` with at most `usable` bytes (out of core if it does not fit in
/// memory, with scratch files in `scratch`, default the job directory's `scratch/`) and writes
/// its shards; returns the completion report.
pub fn run_task(
    task: &pb::Task,
    open_game: OpenGame,
    worker_id: u64,
    pool: &rayon::ThreadPool,
    cache: &Mutex<MemoryCache>,
    progress: &Progress,
    room: TaskRoom,
) -> Result<pb::CompleteTaskRequest> {
    let TaskRoom {
        usable,
        scratch,
        storages,
        checkpoint_every,
    } = room;
    let (game, stages) = task_game(task, open_game)?;
    let game = &*game;
    let stage = task.stage as usize;
    let Some(plan) = plan_stage(game, stage, usable, false) else {
        bail!(
            "{} needs at least {} but this worker may spend {} on a task",
            stages[stage].name,
            human_bytes(stage_min_memory(game, stage)),
            human_bytes(usable)
        );
    };
    let scratch = scratch.map_or_else(
        || match task.storage.is_empty() {
            true => std::path::Path::new(&task.job_dir).join(retro_pipeline::SCRATCH),
            false => std::env::temp_dir().join("retro-scratch"),
        },
        std::path::Path::to_path_buf,
    );
    let storage = storage_of(task, storages)?;
    let storage = &*storage;
    let mut times = pb::TaskTimes::default();

    let clock = Instant::now();
    let block_cache = plan
        .placement
        .pages_inputs()
        .then(|| retro_pipeline::stage::input_cache(game, stage));
    let (finals, bytes) = load_finals(task, game, storage, pool, cache, block_cache.as_ref())?;
    times.bytes_read += bytes;
    for &d in &stages[stage].depends_on {
        for s in &stages[d].slices {
            if finals.0[s.0 as usize].is_none() {
                bail!("the task lists no input for {}", game.slice_name(*s));
            }
        }
    }
    times.read_ms = clock.elapsed().as_millis() as u64;

    // Solve; each slice's shard is written as soon as it is encoded.
    let write_shard =
        |t: &retro_pipeline::EncodedSlice| storage.put(&shard_path(task, &t.record), &t.bytes);
    // Checkpoints go to the job directory, where whichever worker takes the task over after a
    // crash finds them: only for a job on a shared file system (not an object store).
    let keeper = checkpoint_every
        .filter(|_| task.storage.is_empty())
        .map(|every| {
            Arc::new(StageCheckpoints::new(
                std::path::Path::new(&task.job_dir),
                &stages[stage].name,
                u64::from(task.attempt),
                every,
            ))
        });
    let clock = Instant::now();
    let output = pool.install(|| {
        compute_stage(
            game,
            stage,
            &finals,
            task.zstd_level,
            plan.placement,
            &scratch,
            &write_shard,
            keeper.clone(),
            |report| {
                if let Some(p) = progress.lock().expect("progress lock").as_mut() {
                    p.ply = report.ply;
                    p.positions_done += report.resolved;
                }
            },
        )
    })?;
    drop(finals);
    // The shards are written and the report follows: the checkpoints have done their job. (If
    // the report is lost, the task's next attempt solves the stage from its start.)
    if let Some(keeper) = &keeper {
        keeper.remove();
    }
    // A stage resumed from an earlier attempt's checkpoint reports that attempt's wall too.
    times.compute_ms =
        (clock.elapsed() + output.times.earlier_wall - output.encode).as_millis() as u64;

    // Shards (written as they were encoded).
    let shards: Vec<pb::ShardDescriptor> = output
        .tables
        .iter()
        .zip(&output.times.slices)
        .map(|(record, cost)| {
            let mut d = shard_descriptor(task, record);
            d.cost = Some(pb::SliceCost {
                cpu_us: cost.cpu.as_micros() as u64,
                wall_us: cost.wall.as_micros() as u64,
                bytes_read: cost.read,
                bytes_written: cost.written,
                peak_rss: cost.peak_rss,
            });
            d
        })
        .collect();
    times.write_ms = output.encode.as_millis() as u64;
    times.bytes_written = shards.iter().map(|s| s.bytes).sum();
    {
        let mut cache = cache.lock().expect("cache lock");
        for ((slice, values), record) in output.finals.into_iter().zip(&output.tables) {
            debug_assert_eq!(slice, SliceId(record.id));
            cache.keep_finals(task.job_id, slice.0, &record.checksum, Arc::new(values));
        }
    }
    info!(
        job = task.job_id,
        stage = %stages[stage].name,
        attempt = task.attempt,
        read_ms = times.read_ms,
        compute_ms = times.compute_ms,
        write_ms = times.write_ms,
        init_ms = output.times.init.as_millis() as u64,
        out_of_core = matches!(plan.placement, Placement::OutOfCore { .. }),
        "task computed"
    );
    Ok(pb::CompleteTaskRequest {
        worker_id,
        job_id: task.job_id,
        stage: task.stage,
        attempt: task.attempt,
        shards,
        times: Some(times),
        ..Default::default()
    })
}

/// The game of `task` and its stages; fails if the task names a stage the game lacks.
fn task_game(task: &pb::Task, open_game: OpenGame) -> Result<(Arc<dyn JobGame>, Vec<Stage>)> {
    let definition: serde_json::Value =
        serde_json::from_str(&task.definition_json).context("task definition is not JSON")?;
    let game = open_game(&task.game, &definition)?;
    let stages = game.stages();
    if task.stage as usize >= stages.len() {
        bail!("the game has no stage {}", task.stage);
    }
    Ok((game, stages))
}

/// The storage of `task`'s job: its directory, or the object store it names.
fn storage_of(
    task: &pb::Task,
    storages: &retro_objects::Opener,
) -> Result<std::sync::Arc<dyn Storage>> {
    storages.open(&task.storage, std::path::Path::new(&task.job_dir))
}

/// Where `task` writes the shard of a slice: its shard directory, the table's name.
fn shard_path(task: &pb::Task, record: &retro_store::SliceRecord) -> String {
    format!("{}/{}", task.shard_dir, record.file)
}

/// The descriptor a completion reports for the shard `task` wrote of `record`.
fn shard_descriptor(task: &pb::Task, record: &retro_store::SliceRecord) -> pb::ShardDescriptor {
    let mut d = pb::ShardDescriptor::from(record);
    d.path = shard_path(task, record);
    d
}

/// The final values a task reads (`task.inputs`): from the cache, else decompressed from their
/// tables (every block checksum-verified) and cached. With `through` (a stage too large to hold
/// its inputs) every input is read block by block from its table through that cache, and not
/// kept. Returns them with the bytes read from storage.
fn load_finals(
    task: &pb::Task,
    game: &dyn JobGame,
    storage: &dyn Storage,
    pool: &rayon::ThreadPool,
    cache: &Mutex<MemoryCache>,
    through: Option<&Arc<retro_store::BlockCache>>,
) -> Result<(Finals, u64)> {
    let mut finals = Finals::empty(game.slice_count());
    let read = game.reads_sections();
    let mut missing = Vec::new();
    {
        let mut cache = cache.lock().expect("cache lock");
        for d in &task.inputs {
            if d.slice_id as usize >= game.slice_count() {
                bail!("input slice {} does not exist", d.slice_id);
            }
            match cache.finals(task.job_id, d.slice_id, &d.checksum) {
                Some(v) if through.is_none() => finals.0[d.slice_id as usize] = Some(v),
                _ => missing.push(d),
            }
        }
    }
    let loaded: Vec<_> = pool.install(|| {
        missing
            .par_iter()
            .map(|d| -> Result<_> {
                let values = storage
                    .open_table(&d.path)
                    .and_then(|t| Finals::values_of(t, read, through))
                    .with_context(|| format!("cannot read input {}", storage.describe(&d.path)))?;
                Ok((d, Arc::new(values)))
            })
            .collect::<Result<_>>()
    })?;
    let mut bytes = 0;
    for (d, values) in loaded {
        bytes += d.bytes;
        finals.0[d.slice_id as usize] = Some(values.clone());
        if through.is_none() {
            cache.lock().expect("cache lock").keep_finals(
                task.job_id,
                d.slice_id,
                &d.checksum,
                values,
            );
        }
    }
    Ok((finals, bytes))
}

/// A step's input written by an earlier step is damaged or missing: the coordinator must
/// solve the stage again (reported with `input_damaged`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StepInputDamaged(pub String);

/// Runs one step of a stage solved in supersteps (`task.step`): the first step initialises
/// the slice from the final values it reads; a later one applies the messages addressed to
/// the slice to its stored state; each writes the slice's new state and the messages it sends
/// into `task.shard_dir`. The finish step (ply 0) writes the slice's table as a shard.
pub fn run_step(
    task: &pb::Task,
    open_game: OpenGame,
    worker_id: u64,
    pool: &rayon::ThreadPool,
    cache: &Mutex<MemoryCache>,
    storages: &retro_objects::Opener,
    progress: &Progress,
) -> Result<pb::CompleteTaskRequest> {
    let step = task.step.context("not a step task")?;
    let (game, stages) = task_game(task, open_game)?;
    let game = &*game;
    let stage = &stages[task.stage as usize];
    let Some(&slice) = stage.slices.get(step.slot as usize) else {
        bail!("{} has no slot {}", stage.name, step.slot);
    };
    let len = game.state_len(stage, slice)?;
    let storage = storage_of(task, storages)?;
    let storage = &*storage;
    let mut times = pb::TaskTimes::default();
    let io_start = DiskIo::now();
    let wall = Instant::now();

    // Inputs: the final values (first step), or the slice's state and its messages.
    let clock = Instant::now();
    let damaged = |e: anyhow::Error| anyhow::Error::new(StepInputDamaged(format!("{e:#}")));
    let input = |kind: &'static str| task.step_inputs.iter().filter(move |f| f.kind == kind);
    let (finals, state, incoming) = match step.ply {
        1 => {
            let (finals, bytes) = load_finals(task, game, storage, pool, cache, None)?;
            times.bytes_read += bytes;
            (Some(finals), None, Vec::new())
        }
        _ => {
            let f = input("state").next().context("the task names no state")?;
            // The state this worker wrote at the slice's previous step, else its file.
            let kept =
                cache
                    .lock()
                    .expect("cache lock")
                    .take_state(task.job_id, &f.path, &f.checksum);
            let state = match kept {
                Some(state) => state,
                None => {
                    times.bytes_read += f.bytes;
                    read_state(storage, &f.path, f.bytes, &f.checksum, len).map_err(damaged)?
                }
            };
            let incoming = pool.install(|| {
                input("message")
                    .collect::<Vec<_>>()
                    .par_iter()
                    .map(|f| {
                        read_message(storage, &f.path, f.bytes, &f.checksum).map(|k| (f.ply, k))
                    })
                    .collect::<Result<Vec<(u32, [Vec<u64>; 2])>>>()
            });
            times.bytes_read += input("message").map(|f| f.bytes).sum::<u64>();
            (None, Some(state), incoming.map_err(damaged)?)
        }
    };
    times.read_ms = clock.elapsed().as_millis() as u64;

    // Compute.
    let clock = Instant::now();
    let stage_name = &stage.name;
    let (state, output, shards, cpu) = match (finals, state) {
        (Some(finals), _) => {
            let (state, out) = pool.install(|| game.first_step(stage, step.slot, &finals))?;
            let cpu = out.cpu;
            (Some(state), Some(out), Vec::new(), cpu)
        }
        (None, Some(state)) if step.ply == 0 => {
            let solved = game.finish(stage, step.slot, state)?;
            times.compute_ms = clock.elapsed().as_millis() as u64;
            let clock = Instant::now();
            let write = |t: &retro_pipeline::EncodedSlice| {
                storage.put(&shard_path(task, &t.record), &t.bytes)
            };
            let records = pool.install(|| {
                encode_stage(
                    game,
                    task.stage as usize,
                    &[solved],
                    task.zstd_level,
                    &write,
                )
            })?;
            times.write_ms = clock.elapsed().as_millis() as u64;
            let shards = records.iter().map(|r| shard_descriptor(task, r)).collect();
            (None, None, shards, clock.elapsed())
        }
        (None, Some(state)) => {
            // Messages of the ply before; a double step's also of its own (its exits).
            let sent = |ply: u32| -> Vec<(Side, &[u64])> {
                incoming
                    .iter()
                    .filter(|(p, _)| *p == ply)
                    .flat_map(|(_, keys)| Side::BOTH.map(|side| (side, &keys[side.index()][..])))
                    .filter(|(_, keys)| !keys.is_empty())
                    .collect()
            };
            if let Some((p, _)) = incoming
                .iter()
                .find(|(p, _)| *p + 1 != step.ply && *p != step.ply)
            {
                bail!(
                    "step {} of {} was handed a message of ply {p}",
                    step.ply,
                    stage.name
                );
            }
            let (before, dated) = (sent(step.ply - 1), sent(step.ply));
            let out =
                pool.install(|| game.step(stage, step.slot, step.ply, &state, &before, &dated))?;
            let cpu = out.cpu;
            (Some(state), Some(out), Vec::new(), cpu)
        }
        (None, None) => unreachable!("a step has finals or a state"),
    };
    if step.ply != 0 {
        times.compute_ms = clock.elapsed().as_millis() as u64;
    }

    // Outputs: the new state and the messages.
    let mut outputs = Vec::new();
    let mut resolved = 0;
    // Of the writes, the state's share (the rest: the messages).
    let mut state_write_ms = 0;
    if let (Some(state), Some(out)) = (state, output) {
        let clock = Instant::now();
        resolved = out.resolved;
        let label = format!("{} after ply {}", game.slice_name(slice), step.ply);
        let f = write_state(storage, &task.shard_dir, &label, &state)?;
        cache
            .lock()
            .expect("cache lock")
            .keep_state(task.job_id, &f.path, &f.checksum, state);
        state_write_ms = clock.elapsed().as_millis() as u64;
        outputs.push(step_file(f, "state", step.slot, step.ply, 0));
        let written: Vec<pb::StepFile> = pool.install(|| {
            out.messages
                .par_iter()
                .map(|m| {
                    write_message(storage, &task.shard_dir, m.ply, m.to, &m.keys)
                        .map(|f| step_file(f, "message", m.to, m.ply, m.len() as u64))
                })
                .collect::<Result<_>>()
        })?;
        outputs.extend(written);
        times.write_ms = clock.elapsed().as_millis() as u64;
    }
    times.bytes_written = outputs.iter().map(|f| f.bytes).sum::<u64>()
        + shards
            .iter()
            .map(|s: &pb::ShardDescriptor| s.bytes)
            .sum::<u64>();
    if let Some(p) = progress.lock().expect("progress lock").as_mut() {
        p.ply = step.ply;
        p.positions_done = resolved;
    }
    let io = DiskIo::now().since(io_start);
    let cost = pb::SliceCost {
        cpu_us: cpu.as_micros() as u64,
        wall_us: wall.elapsed().as_micros() as u64,
        bytes_read: io.read,
        bytes_written: io.written,
        peak_rss: resident_bytes(),
    };
    info!(
        job = task.job_id,
        stage = %stage_name,
        slot = step.slot,
        ply = step.ply,
        attempt = task.attempt,
        resolved,
        files = outputs.len(),
        read_ms = times.read_ms,
        compute_ms = times.compute_ms,
        write_ms = times.write_ms,
        state_write_ms,
        bytes_written = times.bytes_written,
        "step computed"
    );
    Ok(pb::CompleteTaskRequest {
        worker_id,
        job_id: task.job_id,
        stage: task.stage,
        attempt: task.attempt,
        shards,
        times: Some(times),
        step: Some(step),
        step_outputs: outputs,
        step_resolved: resolved,
        step_cost: Some(cost),
    })
}

/// A written step file as reported to the coordinator.
fn step_file(f: WrittenFile, kind: &str, slot: u32, ply: u32, keys: u64) -> pb::StepFile {
    pb::StepFile {
        path: f.path,
        bytes: f.bytes,
        checksum: f.checksum,
        kind: kind.into(),
        slot,
        ply,
        keys,
    }
}
