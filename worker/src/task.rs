//! Running one task: read the finals it depends on, solve the stage, write result shards.

use crate::cache::FinalsCache;
use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use retro_engine::{Game, SliceId};
use retro_pipeline::stage::{compute_stage, human_bytes, plan_stage, stage_min_memory, Placement};
use retro_pipeline::storage::Storage;
use retro_pipeline::{game_from_definition, Finals, LocalStorage};
use retro_proto as pb;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tracing::info;

/// What a running task shows the heartbeat: ply and positions resolved.
pub type Progress = Arc<Mutex<Option<pb::TaskProgress>>>;

/// Solves `task` in `pool` with at most `usable` bytes (out of core if it does not fit in
/// memory, with scratch files in `scratch`, default the job directory's `scratch/`) and writes
/// its shards; returns the completion report.
pub fn run_task(
    task: &pb::Task,
    worker_id: u64,
    pool: &rayon::ThreadPool,
    cache: &Mutex<FinalsCache>,
    progress: &Progress,
    usable: u64,
    scratch: Option<&std::path::Path>,
) -> Result<pb::CompleteTaskRequest> {
    let definition: serde_json::Value =
        serde_json::from_str(&task.definition_json).context("task definition is not JSON")?;
    let game = game_from_definition(&task.game, &definition)?;
    let stages = game.stages();
    let stage = task.stage as usize;
    if stage >= stages.len() {
        bail!("the game has no stage {stage}");
    }
    let Some(plan) = plan_stage(&game, stage, usable, false) else {
        bail!(
            "{} needs at least {} but this worker may spend {} on a task",
            stages[stage].name,
            human_bytes(stage_min_memory(&game, stage)),
            human_bytes(usable)
        );
    };
    let scratch = scratch.map_or_else(
        || std::path::Path::new(&task.job_dir).join(retro_pipeline::SCRATCH),
        std::path::Path::to_path_buf,
    );
    let storage = LocalStorage::new(&task.job_dir);
    let mut times = pb::TaskTimes::default();

    // Inputs: from the cache, else decompressed from their tables (blocks checksum-verified).
    let clock = Instant::now();
    let mut finals = Finals::empty(game.slice_count());
    let mut missing = Vec::new();
    {
        let mut cache = cache.lock().expect("cache lock");
        for d in &task.inputs {
            if d.slice_id as usize >= game.slice_count() {
                bail!("input slice {} does not exist", d.slice_id);
            }
            match cache.get(&(task.job_id, d.slice_id, d.checksum.clone())) {
                Some(v) => finals.0[d.slice_id as usize] = Some(v),
                None => missing.push(d),
            }
        }
    }
    // A stage too large to hold its inputs reads every one into a scratch file and pages it
    // (and does not cache it).
    let paged = plan.placement.pages_inputs();
    if paged {
        std::fs::create_dir_all(&scratch)
            .with_context(|| format!("cannot create {}", scratch.display()))?;
        finals = Finals::empty(game.slice_count());
        missing = task.inputs.iter().collect();
    }
    let loaded: Vec<_> = pool.install(|| {
        missing
            .par_iter()
            .map(|d| -> Result<_> {
                let values = storage
                    .open_table(&d.path)
                    .and_then(|t| Finals::values_of(&t, paged.then_some(scratch.as_path())))
                    .with_context(|| format!("cannot read input {}", storage.describe(&d.path)))?;
                Ok((d, Arc::new(values)))
            })
            .collect::<Result<_>>()
    })?;
    for (d, values) in loaded {
        times.bytes_read += d.bytes;
        finals.0[d.slice_id as usize] = Some(values.clone());
        if !paged {
            cache
                .lock()
                .expect("cache lock")
                .insert((task.job_id, d.slice_id, d.checksum.clone()), values);
        }
    }
    for &d in &stages[stage].depends_on {
        for s in &stages[d].slices {
            if finals.0[s.0 as usize].is_none() {
                bail!("the task lists no input for {}", game.slice_name(*s));
            }
        }
    }
    times.read_ms = clock.elapsed().as_millis() as u64;

    // Solve; each slice's shard is written as soon as it is encoded.
    let shard_path =
        |record: &retro_store::SliceRecord| format!("{}/{}", task.shard_dir, record.file);
    let write_shard =
        |t: &retro_pipeline::EncodedSlice| storage.put(&shard_path(&t.record), &t.bytes);
    let clock = Instant::now();
    let output = pool.install(|| {
        compute_stage(
            &game,
            stage,
            &finals,
            task.zstd_level,
            plan.placement,
            &scratch,
            &write_shard,
            |report| {
                if let Some(p) = progress.lock().expect("progress lock").as_mut() {
                    p.ply = report.ply;
                    p.positions_done += report.resolved;
                }
            },
        )
    })?;
    drop(finals);
    times.compute_ms = (clock.elapsed() - output.encode).as_millis() as u64;

    // Shards (written as they were encoded).
    let shards: Vec<pb::ShardDescriptor> = output
        .tables
        .iter()
        .zip(&output.times.slices)
        .map(|(record, cost)| {
            let mut d = retro_coordinator::merge::descriptor(record);
            d.path = shard_path(record);
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
            cache.insert(
                (task.job_id, slice.0, record.checksum.clone()),
                Arc::new(values),
            );
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
    })
}
