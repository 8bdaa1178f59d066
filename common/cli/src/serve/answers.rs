//! Recent probe answers, kept whole: a bounded cache of the JSON the probe API sent, by
//! directory and position.
//!
//! A probe with every move and the principal variation to the end reads a few hundred values
//! and writes a few kilobytes of JSON (BOARD25: about 50 µs). The viewer asks for the same
//! positions again and again (every undo, redo, shared link and replay), and a served table
//! never changes while it is served, so an answer once made is the answer. Bounded by bytes
//! (`quick_cache`, weighted by the answer's length); errors are never kept.

use axum::body::Bytes;
use quick_cache::sync::Cache;
use quick_cache::Weighter;

/// `(directory number, position in its game's notation)`.
type Key = (usize, String);

/// Weighs an answer by its bytes and its key's.
#[derive(Clone, Copy)]
struct Size;

impl Weighter<Key, Bytes> for Size {
    fn weight(&self, key: &Key, answer: &Bytes) -> u64 {
        (answer.len() + key.1.len()) as u64
    }
}

/// The answers cache; with a budget of 0 bytes it keeps nothing.
pub struct Answers {
    cache: Option<Cache<Key, Bytes, Size>>,
    capacity: u64,
}

impl Answers {
    /// A cache of at most `bytes` of answers (0: none kept).
    pub fn new(bytes: u64) -> Answers {
        // About 4 KiB per BOARD25 answer: the estimate only sizes the table.
        let cache = (bytes > 0)
            .then(|| Cache::with_weighter(((bytes / 4096) as usize).max(16), bytes, Size));
        Answers {
            cache,
            capacity: bytes,
        }
    }

    /// The answer for `position` of directory `dir`, made by `make` when not kept (and then
    /// kept, if it is not an error).
    pub fn get_or_make<E>(
        &self,
        dir: usize,
        position: &str,
        make: impl FnOnce() -> Result<Bytes, E>,
    ) -> Result<Bytes, E> {
        match &self.cache {
            Some(cache) => cache.get_or_insert_with(&(dir, position.to_string()), make),
            None => make(),
        }
    }

    /// Forgets every answer (a benchmark's cold start).
    pub fn clear(&self) {
        if let Some(cache) = &self.cache {
            cache.clear();
        }
    }

    /// Answers kept now.
    pub fn len(&self) -> usize {
        self.cache.as_ref().map_or(0, |c| c.len())
    }

    /// Bytes kept now.
    pub fn bytes(&self) -> u64 {
        self.cache.as_ref().map_or(0, |c| c.weight())
    }

    /// The byte budget.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn an_answer_is_made_once_and_errors_are_not_kept() {
        let answers = Answers::new(1 << 20);
        let made = Cell::new(0);
        let make = || {
            made.set(made.get() + 1);
            Ok::<_, ()>(Bytes::from("{\"value\":32}"))
        };
        assert_eq!(answers.get_or_make(0, "p", make).unwrap(), "{\"value\":32}");
        assert_eq!(answers.get_or_make(0, "p", make).unwrap(), "{\"value\":32}");
        assert_eq!(made.get(), 1);
        // Another directory's same position is another answer.
        answers.get_or_make(1, "p", make).unwrap();
        assert_eq!(made.get(), 2);
        assert!(answers
            .get_or_make(0, "q", || Err::<Bytes, _>("bad"))
            .is_err());
        assert_eq!(answers.len(), 2);
        answers.clear();
        answers.get_or_make(0, "p", make).unwrap();
        assert_eq!(made.get(), 3);
    }

    #[test]
    fn a_budget_of_zero_keeps_nothing() {
        let answers = Answers::new(0);
        let made = Cell::new(0);
        for _ in 0..3 {
            answers
                .get_or_make(0, "p", || {
                    made.set(made.get() + 1);
                    Ok::<_, ()>(Bytes::from("x"))
                })
                .unwrap();
        }
        assert_eq!((made.get(), answers.len(), answers.bytes()), (3, 0, 0));
    }
}
