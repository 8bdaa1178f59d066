//! Uneven parallel work, taken largest piece first.
//!
//! When a few pieces of work are far larger than the rest (a checkpoint's lists, the groups of
//! a ply's value log), rayon's splitting can leave a large piece for last, and the job then
//! ends on one thread while the others idle. Taking the pieces one per task, the largest
//! first, lets the small ones fill the other threads' time at the end.

use rayon::prelude::*;

/// The indices of `sizes`, largest size first (ties in index order), as a parallel iterator of
/// one index per task.
pub fn largest_first(sizes: &[usize]) -> impl IndexedParallelIterator<Item = usize> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    order.into_par_iter().with_max_len(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_come_largest_first_each_once() {
        let order: Vec<usize> = largest_first(&[3, 9, 1, 9, 0]).collect();
        assert_eq!(order, [1, 3, 0, 2, 4]);
        assert_eq!(largest_first(&[]).count(), 0);
    }
}
