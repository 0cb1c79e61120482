//! The bounded "best N" selection every ranked consumer shares.
//!
//! A ranked answer (glob by mtime, fuzzy find by score) must not hold every
//! match in memory to return a hundred of them: a min-heap of at most
//! `limit` ranks keeps the best seen so far in O(`limit`) memory, and each
//! offer costs O(log `limit`) only when it displaces the weakest keeper.

use std::{cmp::Reverse, collections::BinaryHeap};

/// The `limit` greatest ranks offered so far.
pub(crate) struct TopN<T: Ord> {
    limit: usize,
    /// Min-heap: the top is the weakest keeper, the one to displace.
    heap: BinaryHeap<Reverse<T>>,
}

/// Heap slots reserved up front: enough for any ordinary `max_results`
/// without growing, without letting a huge limit reserve huge memory.
const INITIAL_CAPACITY: usize = 4096;

impl<T: Ord> TopN<T> {
    pub(crate) fn new(limit: usize) -> TopN<T> {
        TopN {
            limit,
            heap: BinaryHeap::with_capacity(limit.min(INITIAL_CAPACITY)),
        }
    }

    /// `true` when `rank` would be kept if offered now.
    pub(crate) fn admits(&self, rank: &T) -> bool {
        self.heap.len() < self.limit || self.heap.peek().is_some_and(|weakest| *rank > weakest.0)
    }

    pub(crate) fn offer(&mut self, rank: T) {
        if !self.admits(&rank) {
            return;
        }
        if self.heap.len() == self.limit {
            self.heap.pop();
        }
        self.heap.push(Reverse(rank));
    }

    /// The kept ranks, greatest first.
    pub(crate) fn into_sorted(self) -> Vec<T> {
        // Ascending `Reverse(rank)` is descending rank.
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|Reverse(rank)| rank)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_greatest_in_order() {
        type Case = (usize, &'static [u32], &'static [u32]);
        let table: &[Case] = &[
            (0, &[1, 2], &[]),
            (1, &[1, 3, 2], &[3]),
            (2, &[1, 3, 2, 3], &[3, 3]),
            (5, &[4, 1, 9], &[9, 4, 1]),
        ];
        for &(limit, offers, expected) in table {
            let mut top = TopN::new(limit);
            offers.iter().for_each(|&r| top.offer(r));
            assert_eq!(top.into_sorted(), expected, "limit {limit} {offers:?}");
        }
    }

    #[test]
    fn admits_only_what_would_be_kept() {
        let mut top = TopN::new(2);
        assert!(top.admits(&0));
        top.offer(5);
        top.offer(7);
        assert!(!top.admits(&5), "ties with the weakest are not kept");
        assert!(top.admits(&6));
    }
}
