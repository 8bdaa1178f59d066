//! Durable storage for solved tables.
//!
//! * [`atomic_file`]: every file is written to a temporary name, fsynced, renamed and its
//!   directory fsynced, so a crash leaves either the old file or the new one, never a mix.
//! * [`table`]: one file per slice, holding value arrays (one per side to move) cut into
//!   independently zstd-compressed blocks, with a block index for random access and checksums
//!   that readers verify.
//! * [`block_cache`]: a bounded cache of decompressed blocks shared by many tables and
//!   threads (a server's).
//! * [`section_reader`]: one section of a table read value by value through such a cache,
//!   with a lock-free per-thread front (a stage's sweep over the values of lower stages).
//! * [`checked_json`]: JSON records carrying a checksum of their own body.
//! * [`manifest`]: the JSON record of an output directory: what was solved and which files,
//!   sizes and checksums make it up.

#![warn(missing_docs)]

pub mod atomic_file;
pub mod block_cache;
pub mod checked_json;
pub mod manifest;
pub mod section_reader;
pub mod table;

pub use atomic_file::write_atomic;
pub use block_cache::BlockCache;
pub use manifest::{Manifest, SliceRecord};
pub use section_reader::SectionReader;
pub use table::{Section, SliceTable, TableWriter};

use std::path::PathBuf;

/// A storage failure, always naming the file concerned.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The operating system refused an operation. (The OS error is part of the message, not
    /// a separate link of the error chain, so that a chain printed with `{:#}` says it once.)
    #[error("cannot {op} {path}: {error}")]
    Io {
        /// What was being done: "write", "open", "map", "rename", "sync".
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// What the OS said.
        error: std::io::Error,
    },
    /// A section's values were asked for, but the table does not store them: they are
    /// derived from another section ([`table::Section::Derived`]) by the reader.
    #[error("{path}: section '{section}' is not stored (its values are derived from the other section's)")]
    NotStored {
        /// The file.
        path: PathBuf,
        /// The section's name.
        section: String,
    },
    /// A file exists but its content is damaged or not what it should be.
    #[error("{path}: damaged: {what}")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
}

impl StoreError {
    pub(crate) fn io(
        op: &'static str,
        path: impl Into<PathBuf>,
        error: std::io::Error,
    ) -> StoreError {
        StoreError::Io {
            op,
            path: path.into(),
            error,
        }
    }

    pub(crate) fn damaged(path: impl Into<PathBuf>, what: impl Into<String>) -> StoreError {
        StoreError::Damaged {
            path: path.into(),
            what: what.into(),
        }
    }
}

/// The 64-bit checksum used by every file format here (XXH3).
pub fn checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}
