//! Large byte arrays shared between solver threads.
//!
//! The kernel's threads write values and decrement counters at positions that only the game's
//! move generator knows, so accesses are random over arrays of many megabytes. Two things make
//! that fast and safe:
//!
//! * the arrays are anonymous memory maps advised to use transparent huge pages, so random
//!   accesses do not miss the TLB on every touch;
//! * threads see them as relaxed atomics, which cost a plain load/store on x86 and make the
//!   concurrent "set if unresolved" and "decrement counter" race-free.

use memmap2::{Advice, MmapMut};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, AtomicU8};

/// A zero-initialised, huge-page-backed byte array.
pub struct ByteArray {
    map: Option<MmapMut>,
}

impl ByteArray {
    /// `len` zero bytes.
    ///
    /// # Panics
    /// If the operating system refuses the mapping (out of address space).
    pub fn zeroed(len: usize) -> ByteArray {
        if len == 0 {
            return ByteArray { map: None };
        }
        let map = MmapMut::map_anon(len).expect("anonymous memory map for a value array");
        // Huge pages are an optimisation; a kernel without them still works.
        let _ = map.advise(Advice::HugePage);
        ByteArray { map: Some(map) }
    }

    /// A copy of `bytes`.
    pub fn from_slice(bytes: &[u8]) -> ByteArray {
        let mut array = ByteArray::zeroed(bytes.len());
        array.copy_from_slice(bytes);
        array
    }

    /// The bytes as 64-bit relaxed atomics (bitmaps), for concurrent updates. The length must
    /// be a multiple of 8.
    pub fn atomic_words(&self) -> &[AtomicU64] {
        let bytes: &[u8] = self;
        assert!(
            bytes.len().is_multiple_of(8),
            "word array length must be a multiple of 8"
        );
        if bytes.is_empty() {
            return &[];
        }
        assert!(
            (bytes.as_ptr() as usize).is_multiple_of(8),
            "memory maps are page-aligned"
        );
        // SAFETY: AtomicU64 has the size and bit validity of u64; the map is page-aligned (so
        // 8-aligned, checked above) and the length is a multiple of 8; no `&mut` can exist
        // while `self` is borrowed.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<AtomicU64>(), bytes.len() / 8) }
    }

    /// The bytes as relaxed atomics, for concurrent updates.
    pub fn atomics(&self) -> &[AtomicU8] {
        let bytes: &[u8] = self;
        // SAFETY: AtomicU8 has the same size, alignment and bit validity as u8 (std docs), and
        // while the returned slice lives no `&mut` to the bytes can exist (we borrow `self`).
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<AtomicU8>(), bytes.len()) }
    }
}

impl Deref for ByteArray {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}

impl DerefMut for ByteArray {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.map.as_deref_mut().unwrap_or(&mut [])
    }
}

impl std::fmt::Debug for ByteArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ByteArray({} bytes)", self.len())
    }
}

impl PartialEq for ByteArray {
    fn eq(&self, other: &ByteArray) -> bool {
        self[..] == other[..]
    }
}

impl Eq for ByteArray {}
