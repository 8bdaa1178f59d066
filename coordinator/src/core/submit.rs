//! A client's new job: checking the request before anything is planned.
//!
//! Every field of a `SubmitRequest` is checked here (the game, the board file, the brown
//! limit, the zstd level) and refused as `InvalidArgument` with a message for the person who
//! sent it; only a valid request reaches [`Core::create_job`].

use super::{Core, Refusal};
use retro_musashi::Musashi;
use retro_pipeline::definition::MUSASHI;
use retro_proto as pb;

impl Core {
    /// A new job from a client.
    pub fn submit(&mut self, req: &pb::SubmitRequest) -> Result<(u64, String), Refusal> {
        if req.game != MUSASHI {
            return Err(Refusal::InvalidArgument(format!(
                "unknown game '{}' (known: {MUSASHI})",
                req.game
            )));
        }
        let board = retro_musashi::Board::from_text(&req.board_file)
            .map_err(|e| Refusal::InvalidArgument(format!("board file: {e:#}")))?;
        let max = (req.max_browns > 0).then_some(req.max_browns as usize);
        if let Some(k) = max {
            if k >= board.len() {
                return Err(Refusal::InvalidArgument(format!(
                    "max_browns {k}: {} has {} points",
                    board.name,
                    board.len()
                )));
            }
        }
        if !(1..=19).contains(&req.zstd_level) {
            return Err(Refusal::InvalidArgument(format!(
                "zstd_level {} is not in 1..=19",
                req.zstd_level
            )));
        }
        let game = Musashi::new(board, max);
        let id = self.create_job(&game, req.zstd_level, None)?;
        Ok((id, self.jobs[&id].row.dir.clone()))
    }
}
