//! From result shards to final tables.
//!
//! A worker writes one shard per slice of its task into `shards/stageNN-attemptA/` of the job
//! directory and reports their descriptors. The coordinator accepts a report only from the
//! current attempt (fencing, in `core/completion.rs`), then checks every shard against its descriptor (size
//! and XXH3 of the whole file), then moves the shards to their final table names (atomic
//! renames) and records them in the database, from which the manifest is rewritten. A shard
//! nobody reported, or reported by a fenced attempt, is never read. When the last task is
//! merged, the count table is written from the recorded histograms.

use crate::core::{JobRuntime, Refusal};
use crate::db::TaskRow;
use crate::task_state::TaskState;
use anyhow::{Context, Result};
use retro_engine::SliceId;
use retro_pipeline::storage::check_key;
use retro_pipeline::{job_dir, COUNTS_FILE};
use retro_proto as pb;
use retro_store::manifest::MANIFEST;
use retro_store::SliceRecord;
use std::collections::BTreeMap;
use tracing::warn;

/// Where attempt `attempt` of stage `stage` writes its shards, relative to the job directory.
pub fn shard_dir(stage: usize, attempt: u32) -> String {
    format!("shards/stage{stage:02}-attempt{attempt}")
}

/// Where the current attempt of `task` writes its results: the shard directory of a stage,
/// the step directory of a step (in the current try of its stage, the stage task's attempt).
pub(crate) fn output_dir(job: &JobRuntime, task: &TaskRow) -> String {
    match task.step {
        Some((slot, ply)) => {
            let try_ = job.tasks[task.stage].attempt;
            retro_pipeline::steps::step_dir(task.stage, try_, slot, ply, task.attempt)
        }
        None => shard_dir(task.stage, task.attempt),
    }
}

/// The task message for a worker: what to solve, and the final tables it reads.
pub(crate) fn task_message(job: &JobRuntime, task: &TaskRow, records: &[SliceRecord]) -> pb::Task {
    let deps = &job.stages[task.stage].depends_on;
    let inputs = records
        .iter()
        .filter(|r| deps.contains(&r.stage))
        .map(pb::ShardDescriptor::from)
        .collect();
    pb::Task {
        job_id: job.row.id,
        stage: task.stage as u32,
        attempt: task.attempt,
        game: job.row.game.clone(),
        definition_json: job.row.definition.to_string(),
        zstd_level: job.row.level,
        job_dir: job.dir.display().to_string(),
        shard_dir: shard_dir(task.stage, task.attempt),
        inputs,
        step: None,
        step_inputs: Vec::new(),
        storage: job.row.storage.clone(),
    }
}

/// Checks a completion's shards against the task and against the files; returns the manifest
/// records they will become. Malformed descriptors are `InvalidArgument`; shards that do not
/// match their descriptor (truncated, flipped, missing) are `DataLoss`.
pub(crate) fn verify_shards(
    job: &JobRuntime,
    task: &TaskRow,
    req: &pb::CompleteTaskRequest,
) -> Result<Vec<SliceRecord>, Refusal> {
    let stage = &job.stages[task.stage];
    // A stage's task writes every slice; a finish step its own.
    let slices = match task.step {
        Some((slot, _)) => vec![stage.slices[slot as usize]],
        None => stage.slices.clone(),
    };
    let dir = output_dir(job, task);
    let bad = |m: String| Refusal::InvalidArgument(format!("malformed shard descriptor: {m}"));
    if req.shards.len() != slices.len() {
        return Err(bad(format!(
            "{} has {} slices, the report lists {} shards",
            task.name,
            slices.len(),
            req.shards.len()
        )));
    }
    let mut records = Vec::with_capacity(req.shards.len());
    let mut seen = BTreeMap::new();
    for d in &req.shards {
        let slice = SliceId(d.slice_id);
        if !slices.contains(&slice) || seen.insert(d.slice_id, ()).is_some() {
            return Err(bad(format!(
                "slice {} is not in {} or is listed twice",
                d.slice_id, task.name
            )));
        }
        check_key(&d.path).map_err(|e| bad(e.to_string()))?;
        if !d.path.starts_with(&format!("{dir}/")) {
            return Err(bad(format!("shard {} is not under {dir}/", d.path)));
        }
        let positions = job.game.slice_len(slice);
        if d.positions != positions || d.histograms.len() != 2 {
            return Err(bad(format!(
                "shard {} claims {} positions and {} histograms; {} has {positions} and 2",
                d.path,
                d.positions,
                d.histograms.len(),
                job.game.slice_name(slice)
            )));
        }
        let mut histograms = Vec::new();
        for h in &d.histograms {
            let mut map = BTreeMap::new();
            for (&v, &n) in &h.counts {
                let v = u8::try_from(v).map_err(|_| bad(format!("value {v} out of range")))?;
                map.insert(v, n);
            }
            if map.values().sum::<u64>() > positions {
                return Err(bad(format!(
                    "histogram of {} exceeds its positions",
                    d.path
                )));
            }
            histograms.push(map);
        }
        check_reported_file(job, "shard", &d.path, d.bytes, &d.checksum)?;
        records.push(SliceRecord {
            id: d.slice_id,
            stage: task.stage,
            name: job.game.slice_name(slice),
            file: job.game.table_file_name(slice),
            positions,
            bytes: d.bytes,
            checksum: d.checksum.clone(),
            histograms,
        });
    }
    records.sort_by_key(|r| r.id);
    Ok(records)
}

/// Re-reads a file a worker reported (a shard or a step file, `what`) and checks it against
/// the size and XXH3 checksum it reported: `DataLoss`, naming the file, if it does not match
/// or cannot be read.
pub(crate) fn check_reported_file(
    job: &JobRuntime,
    what: &str,
    path: &str,
    bytes: u64,
    checksum: &str,
) -> Result<(), Refusal> {
    let (sum, len) = job
        .storage
        .checksum(path)
        .map_err(|e| Refusal::DataLoss(format!("{what} {}: {e:#}", job.storage.describe(path))))?;
    if format!("{sum:016x}") != checksum || len != bytes {
        return Err(Refusal::DataLoss(format!(
            "{what} {} is damaged: {len} bytes with checksum {sum:016x}, reported {bytes} bytes with {checksum}",
            job.storage.describe(path),
        )));
    }
    Ok(())
}

/// Moves verified shards to their final table names (each an atomic rename) and removes the
/// attempt's shard directory.
pub(crate) fn promote(
    job: &JobRuntime,
    task: &TaskRow,
    req: &pb::CompleteTaskRequest,
) -> Result<()> {
    for d in &req.shards {
        let file = job.game.table_file_name(SliceId(d.slice_id));
        job.storage.promote(&d.path, &file)?;
    }
    job.storage.remove_prefix(&output_dir(job, task))
}

/// Shard directories of attempts that are not running any more: nobody will report them.
pub(crate) fn remove_dead_shards(job: &JobRuntime) -> Result<()> {
    for name in job.storage.children("shards")? {
        let live = job.tasks.iter().any(|t| {
            t.state == TaskState::Running
                && name == shard_dir(t.stage, t.attempt)["shards/".len()..]
        });
        if !live {
            job.storage.remove_prefix(&format!("shards/{name}"))?;
        }
    }
    Ok(())
}

/// Stages with a merged table that is missing or does not match its checksum, with the reason
/// (naming the file).
pub(crate) fn damaged_stages(job: &JobRuntime, records: &[SliceRecord]) -> Vec<(usize, String)> {
    let mut damaged: BTreeMap<usize, String> = BTreeMap::new();
    let mut present = vec![false; job.game.slice_count()];
    for r in records {
        match job.storage.checksum(&r.file) {
            Ok((sum, _)) if format!("{sum:016x}") == r.checksum => present[r.id as usize] = true,
            Ok(_) => {
                damaged.entry(r.stage).or_insert(format!(
                    "{}: damaged (checksum mismatch)",
                    job.storage.describe(&r.file)
                ));
            }
            Err(e) => {
                damaged.entry(r.stage).or_insert(format!("{e:#}"));
            }
        }
    }
    for t in &job.tasks {
        if t.state == TaskState::Done && !damaged.contains_key(&t.stage) {
            if let Some(s) = job.stages[t.stage]
                .slices
                .iter()
                .find(|s| !present[s.0 as usize])
            {
                damaged.insert(
                    t.stage,
                    format!(
                        "{}: no record of {}",
                        job.dir.display(),
                        job.game.slice_name(*s)
                    ),
                );
            }
        }
    }
    damaged
        .into_iter()
        .filter(|(s, _)| job.tasks[*s].state == TaskState::Done)
        .collect()
}

/// The last step of a job: count table, complete manifest, no shards left. A job whose tables
/// are in an object store also gets both files there, so that the bucket alone describes the
/// job; the job directory keeps them too (readers open the tables through its manifest).
pub(crate) fn finalize(job: &JobRuntime, records: Vec<SliceRecord>) -> Result<()> {
    let mut manifest = job_dir::fresh_manifest(&*job.game, &job.row.storage);
    manifest.slices = records;
    manifest.complete = true;
    let table = job.game.count_table(&manifest)?;
    retro_store::write_atomic(&job.dir.join(COUNTS_FILE), table.as_bytes())?;
    manifest.save(&job.dir)?;
    if !job.row.storage.is_empty() {
        job.storage.put(COUNTS_FILE, table.as_bytes())?;
        let path = job.dir.join(MANIFEST);
        let bytes =
            std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        job.storage.put(MANIFEST, &bytes)?;
    }
    for dir in ["shards", "steps"] {
        if let Err(e) = job.storage.remove_prefix(dir) {
            warn!("cannot remove the {dir} directory: {e:#}");
        }
    }
    Ok(())
}
