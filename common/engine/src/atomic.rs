//! Byte arrays shared between solver threads.
//!
//! The kernel's threads write values and decrement counters in arrays they share, at positions
//! that only the game's move generator knows in advance. Relaxed atomics make those writes
//! race-free at the price of a plain load on x86 for the common "already resolved" check.

use std::sync::atomic::AtomicU8;

/// Converts a zeroed or filled byte vector into atomics without copying.
pub fn into_atomic(bytes: Vec<u8>) -> Vec<AtomicU8> {
    let mut bytes = std::mem::ManuallyDrop::new(bytes);
    let (ptr, len, cap) = (bytes.as_mut_ptr(), bytes.len(), bytes.capacity());
    // SAFETY: AtomicU8 has the same size, alignment and bit validity as u8 (std docs), so a
    // Vec<u8> allocation is a valid Vec<AtomicU8> allocation of the same length and capacity.
    unsafe { Vec::from_raw_parts(ptr.cast::<AtomicU8>(), len, cap) }
}

/// Converts atomics back into plain bytes without copying, once the threads are done.
pub fn from_atomic(atomics: Vec<AtomicU8>) -> Vec<u8> {
    let mut atomics = std::mem::ManuallyDrop::new(atomics);
    let (ptr, len, cap) = (atomics.as_mut_ptr(), atomics.len(), atomics.capacity());
    // SAFETY: see `into_atomic`; we own the vector, so no other thread can still access it.
    unsafe { Vec::from_raw_parts(ptr.cast::<u8>(), len, cap) }
}
