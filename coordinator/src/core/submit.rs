//! A client's new job: checking the request before anything is planned.
//!
//! Every field of a `SubmitRequest` is checked here (the game and its definition, through the
//! registry the coordinator was given; the zstd level) and refused as `InvalidArgument` with a
//! message for the person who sent it; only a valid request reaches [`Core::create_job`].

use super::{Core, Refusal};
use crate::job_state::JobState;
use retro_proto as pb;

impl Core {
    /// A new job from a client.
    pub fn submit(&mut self, req: &pb::SubmitRequest) -> Result<(u64, String), Refusal> {
        // Before anything is created, in the database or on disk.
        self.check_owner()?;
        let definition: serde_json::Value = serde_json::from_str(&req.definition_json)
            .map_err(|e| Refusal::InvalidArgument(format!("definition_json: {e}")))?;
        let game = (self.config.open_game)(&req.game, &definition)
            .map_err(|e| Refusal::InvalidArgument(retro_pipeline::process::error_text(&e)))?;
        if !(1..=19).contains(&req.zstd_level) {
            return Err(Refusal::InvalidArgument(format!(
                "zstd_level {} is not in 1..=19",
                req.zstd_level
            )));
        }
        let storage = retro_objects::check_location(&req.storage)
            .map_err(|e| Refusal::InvalidArgument(format!("storage: {e:#}")))?;
        if let Some(other) = self.jobs.values().find(|j| {
            !storage.is_empty() && j.row.storage == storage && j.row.state == JobState::Running
        }) {
            return Err(Refusal::FailedPrecondition(format!(
                "{storage} holds the tables of job {}, still running; choose another prefix",
                other.row.id
            )));
        }
        if !storage.is_empty() {
            // Reached now, so that a wrong endpoint, bucket or credentials is the submitter's
            // error and not a job failing later.
            self.storages
                .open(&storage, std::path::Path::new("."))
                .and_then(|s| s.children(""))
                .map_err(|e| {
                    Refusal::FailedPrecondition(format!("storage: cannot reach it: {e:#}"))
                })?;
        }
        let id = self.create_job(game, req.zstd_level, None, &storage)?;
        Ok((id, self.jobs[&id].row.dir.clone()))
    }
}
