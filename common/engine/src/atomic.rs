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
//!
//! An array larger than memory is instead a *file-backed* shared map of an unlinked scratch
//! file ([`ByteArray::file_backed`]): the operating system pages it between disk and memory,
//! and [`ByteArray::release`] drops its pages from the process (they stay in the page cache,
//! dirty ones are written back), which is how the out-of-core kernel bounds its resident set.

use crate::spare_maps;
use memmap2::{Advice, MmapMut, UncheckedAdvice};
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8};

/// A scratch file of an out-of-core solve could not be created, sized, written or mapped: the
/// operation and the scratch directory (the files themselves are unlinked at once, so they have
/// no name of their own), then the cause, once.
#[derive(Debug, thiserror::Error)]
#[error("cannot {op} {}: {error}", path.display())]
pub struct ScratchError {
    /// What was being done ("create a scratch file in").
    pub op: String,
    /// The scratch directory.
    pub path: PathBuf,
    /// The I/O error (in the message, not a separate link of the error chain).
    pub error: std::io::Error,
}

impl ScratchError {
    /// `op` on a scratch file in `dir` failed with `error`.
    pub fn new(op: impl Into<String>, dir: &Path, error: std::io::Error) -> ScratchError {
        ScratchError {
            op: op.into(),
            path: dir.to_path_buf(),
            error,
        }
    }

    /// The kind of the underlying I/O error.
    pub fn kind(&self) -> std::io::ErrorKind {
        self.error.kind()
    }
}

/// A zero-initialised byte array, in anonymous huge-page memory or in a scratch file.
pub struct ByteArray {
    map: Option<MmapMut>,
    /// The array's length: its map may be longer (one kept from an earlier array, see
    /// [`crate::spare_maps`]).
    len: usize,
    /// Whether the map is a shared map of a file (its pages may be released).
    file_backed: bool,
}

impl ByteArray {
    /// `len` zero bytes.
    ///
    /// # Panics
    /// If the operating system refuses the mapping (out of address space).
    pub fn zeroed(len: usize) -> ByteArray {
        if len == 0 {
            return ByteArray {
                map: None,
                len,
                file_backed: false,
            };
        }
        if let Some(mut map) = spare_maps::take(len) {
            map[..len].fill(0);
            return ByteArray {
                map: Some(map),
                len,
                file_backed: false,
            };
        }
        let map = MmapMut::map_anon(len).expect("anonymous memory map for a value array");
        // Huge pages are an optimisation; a kernel without them still works.
        let _ = map.advise(Advice::HugePage);
        ByteArray {
            map: Some(map),
            len,
            file_backed: false,
        }
    }

    /// `len` zero bytes in a new scratch file in `dir`, mapped shared. The file is unlinked at
    /// once (it lives as long as the map), so a killed process leaves nothing behind.
    pub fn file_backed(dir: &Path, len: usize) -> Result<ByteArray, ScratchError> {
        if len == 0 {
            return Ok(ByteArray::zeroed(0));
        }
        let file = tempfile::tempfile_in(dir)
            .map_err(|e| ScratchError::new("create a scratch file in", dir, e))?;
        file.set_len(len as u64).map_err(|e| {
            ScratchError::new(format!("size a scratch file to {len} bytes in"), dir, e)
        })?;
        reserve_disk(&file, len as u64).map_err(|e| {
            ScratchError::new(format!("reserve {len} bytes of scratch space in"), dir, e)
        })?;
        // SAFETY: the file is unlinked and private to this process; nothing else can change
        // its length or contents behind the map.
        let map = unsafe { MmapMut::map_mut(&file) }
            .map_err(|e| ScratchError::new("map a scratch file in", dir, e))?;
        Ok(ByteArray {
            map: Some(map),
            len,
            file_backed: true,
        })
    }

    /// Whether the array lives in a scratch file (see [`ByteArray::release`]).
    pub fn is_file_backed(&self) -> bool {
        self.file_backed
    }

    /// Drops the array's pages from this process's resident set; the contents are kept (in the
    /// page cache or on disk). A no-op for arrays in anonymous memory, whose pages are the
    /// only copy.
    pub fn release(&self) {
        if let (true, Some(map)) = (self.file_backed, &self.map) {
            // SAFETY: on a shared file mapping MADV_DONTNEED only unmaps pages; their contents
            // (dirty ones included) stay in the page cache and are read back on the next touch.
            // Failing to release is harmless: the pages just stay resident.
            let _ = unsafe { map.unchecked_advise(UncheckedAdvice::DontNeed) };
        }
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
        // SAFETY: AtomicU64 has the size and bit validity of u64.
        unsafe { self.atomic_view::<AtomicU64>() }
    }

    /// The bytes as 64-bit words (a bitmap). The length must be a multiple of 8.
    pub fn words(&self) -> &[u64] {
        let bytes: &[u8] = self;
        let len = view_len::<u64>(bytes);
        if len == 0 {
            // An empty array's pointer need not be aligned for words.
            return &[];
        }
        // SAFETY: u64 has a valid value for every bit pattern; `view_len` checked the length
        // and the alignment; the `&self` borrow keeps the bytes unchanged.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<u64>(), len) }
    }

    /// The bytes as 64-bit words, for one owner's updates (a bitmap filled by one thread).
    /// The length must be a multiple of 8.
    pub fn words_mut(&mut self) -> &mut [u64] {
        let bytes: &mut [u8] = self;
        let len = view_len::<u64>(bytes);
        if len == 0 {
            return &mut [];
        }
        // SAFETY: as in `words`; the `&mut self` borrow is exclusive.
        unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<u64>(), len) }
    }

    /// The bytes as 32-bit relaxed atomics (counts and offsets), for concurrent updates. The
    /// length must be a multiple of 4.
    pub fn atomic_u32s(&self) -> &[AtomicU32] {
        // SAFETY: AtomicU32 has the size and bit validity of u32.
        unsafe { self.atomic_view::<AtomicU32>() }
    }

    /// The bytes as a slice of `A`, checked for length and alignment.
    ///
    /// # Safety
    /// `A` must be an atomic integer type: every bit pattern of its size valid, and shared
    /// references allowed to write (interior mutability).
    unsafe fn atomic_view<A>(&self) -> &[A] {
        let bytes: &[u8] = self;
        let len = view_len::<A>(bytes);
        if len == 0 {
            return &[];
        }
        // SAFETY: the caller's type has a valid value for every bit pattern; `view_len` checked
        // the length and the alignment; no `&mut` can exist while `self` is borrowed.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<A>(), len) }
    }

    /// The bytes as relaxed atomics, for concurrent updates.
    pub fn atomics(&self) -> &[AtomicU8] {
        let bytes: &[u8] = self;
        // SAFETY: AtomicU8 has the same size, alignment and bit validity as u8 (std docs), and
        // while the returned slice lives no `&mut` to the bytes can exist (we borrow `self`).
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<AtomicU8>(), bytes.len()) }
    }
}

/// The number of `A`s in `bytes`, checking that they can be viewed as a slice of `A`: a whole
/// number of them, and (unless empty, when the pointer may be dangling) aligned for `A`
/// (memory maps are page-aligned).
fn view_len<A>(bytes: &[u8]) -> usize {
    let width = std::mem::size_of::<A>();
    assert!(
        bytes.len().is_multiple_of(width),
        "array length must be a multiple of {width}"
    );
    assert!(
        bytes.is_empty() || (bytes.as_ptr() as usize).is_multiple_of(std::mem::align_of::<A>()),
        "memory maps are page-aligned"
    );
    bytes.len() / width
}

impl Deref for ByteArray {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.map.as_deref().map_or(&[], |map| &map[..self.len])
    }
}

impl DerefMut for ByteArray {
    fn deref_mut(&mut self) -> &mut [u8] {
        let len = self.len;
        self.map
            .as_deref_mut()
            .map_or(&mut [], |map| &mut map[..len])
    }
}

impl Drop for ByteArray {
    /// An anonymous array's map is offered for later arrays ([`crate::spare_maps`]).
    fn drop(&mut self) {
        if let (false, Some(map)) = (self.file_backed, self.map.take()) {
            spare_maps::give(map);
        }
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

/// Reserves the disk blocks of `file`'s first `len` bytes, so that a full disk is an error here
/// rather than a fault (SIGBUS) later, when a page of the map is written back. Where the file
/// system cannot reserve, the file stays sparse.
///
/// More than the file system has free fails at once, before any block is reserved: ext4
/// reserves block by block and gives them back only once it runs out, so a reservation past
/// the free space filled the disk for a moment, and whatever else wrote meanwhile (another
/// stage's lists, another test) failed for lack of space.
fn reserve_disk(file: &std::fs::File, len: u64) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let mut stats = std::mem::MaybeUninit::<libc::statvfs>::uninit();
        // SAFETY: fstatvfs fills the struct it is given for the open file it is given.
        if unsafe { libc::fstatvfs(file.as_raw_fd(), stats.as_mut_ptr()) } == 0 {
            // SAFETY: filled by the successful call above.
            let stats = unsafe { stats.assume_init() };
            // The fields' types vary between platforms (u64 on x86-64 glibc).
            #[allow(clippy::unnecessary_cast)]
            let free = (stats.f_bavail as u64).saturating_mul(stats.f_frsize as u64);
            if len > free {
                return Err(std::io::Error::from_raw_os_error(libc::ENOSPC));
            }
        }
        // SAFETY: fallocate only allocates blocks of the open file it is given.
        let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len as libc::off_t) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EOPNOTSUPP) {
                return Err(e);
            }
        }
    }
    let _ = (file, len);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_in_a_kept_map_is_zero_and_as_long_as_asked() {
        crate::spare_maps::keep_spare_maps(64 << 20);
        for round in 0..3 {
            let mut used = ByteArray::zeroed(3 << 20);
            used.fill(0xA5);
            drop(used);
            // Other tests may take or keep maps meanwhile: whichever map this gets, it must
            // read as a new array.
            let len = (2 << 20) + 8 * round;
            let array = ByteArray::zeroed(len);
            assert_eq!(array.len(), len);
            assert!(array.iter().all(|&b| b == 0));
            assert_eq!(array.words().len(), len / 8);
        }
    }

    #[test]
    fn a_scratch_array_larger_than_the_disk_is_a_clear_error_not_a_fault() {
        let dir = tempfile::tempdir().unwrap();
        // 8 TiB: a valid file size, but no test machine has that much free disk.
        match ByteArray::file_backed(dir.path(), 1 << 43) {
            Err(e) => {
                let text = e.to_string();
                let wanted = format!(
                    "cannot reserve {} bytes of scratch space in {}: ",
                    1u64 << 43,
                    dir.path().display()
                );
                assert!(text.starts_with(&wanted), "{text}");
            }
            Ok(_) => panic!("8 TiB of scratch space reserved"),
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let small = ByteArray::file_backed(dir.path(), 1 << 20).unwrap();
        assert!(small.is_file_backed());
    }
}
