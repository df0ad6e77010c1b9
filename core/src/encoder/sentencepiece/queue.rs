//! The priority queue of a long chunk's candidate joins, smallest key first.
//!
//! A binary heap of every candidate costs a cache-missing sift per pop on long chunks. Most
//! candidates arrive in order: the first ones are sorted once and read in sequence, and each later
//! one is appended to a sorted run it extends (joins move left to right, so a run of one
//! character feeds one run per piece length). Only what extends no run goes to the heap. The
//! smallest of the heads is the smallest of all, so the order is the heap's.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// `(key, size, id)`: compared by `key` alone, which names the join (its priority and left
/// symbol), so entries of equal keys are equal.
pub(super) type Candidate = (u64, u32, u32);

/// How many sorted runs later candidates may extend.
const RUNS: usize = 2;
/// While the heap is this small its sifts are cheap, and runs would only add checks.
const SMALL_HEAP: usize = 128;

/// A sorted vector read from the front.
#[derive(Default)]
struct Run {
    items: Vec<Candidate>,
    next: usize,
}

impl Run {
    fn head(&self) -> Option<u64> {
        self.items.get(self.next).map(|c| c.0)
    }

    fn clear(&mut self) {
        self.items.clear();
        self.next = 0;
    }
}

#[derive(Default)]
pub(super) struct CandidateQueue {
    initial: Run,
    runs: [Run; RUNS],
    heap: BinaryHeap<Reverse<Candidate>>,
}

impl CandidateQueue {
    /// Start over with `first` (in any order) as the candidates.
    pub(super) fn reset(&mut self, first: impl Iterator<Item = Candidate>) {
        self.initial.clear();
        self.initial.items.extend(first);
        self.initial.items.sort_unstable_by_key(|c| c.0);
        for run in &mut self.runs {
            run.clear();
        }
        self.heap.clear();
    }

    pub(super) fn push(&mut self, c: Candidate) {
        if self.heap.len() < SMALL_HEAP {
            self.heap.push(Reverse(c));
            return;
        }
        // The run whose last key is the largest not above `c`'s keeps the others free for
        // smaller keys; an exhausted run starts afresh.
        let mut best: Option<(usize, u64)> = None;
        for (i, run) in self.runs.iter_mut().enumerate() {
            if run.next == run.items.len() {
                run.clear();
            }
            let last = run.items.last().map_or(0, |l| l.0);
            if last <= c.0 && best.is_none_or(|(_, b)| last > b) {
                best = Some((i, last));
            }
        }
        match best {
            Some((i, _)) => self.runs[i].items.push(c),
            None => self.heap.push(Reverse(c)),
        }
    }

    pub(super) fn pop(&mut self) -> Option<Candidate> {
        // 0: the initial run, 1..=RUNS: the runs, RUNS + 1: the heap.
        let mut from = usize::MAX;
        let mut key = u64::MAX;
        if let Some(k) = self.initial.head() {
            (from, key) = (0, k);
        }
        for (i, run) in self.runs.iter().enumerate() {
            if let Some(k) = run.head().filter(|&k| k < key || from == usize::MAX) {
                (from, key) = (i + 1, k);
            }
        }
        if let Some(Reverse(c)) = self.heap.peek() {
            if c.0 < key || from == usize::MAX {
                return self.heap.pop().map(|Reverse(c)| c);
            }
        }
        let run = match from {
            0 => &mut self.initial,
            usize::MAX => return None,
            i => &mut self.runs[i - 1],
        };
        run.next += 1;
        Some(run.items[run.next - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator, so the test needs no dependency.
    fn lcg(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *state >> 33
    }

    /// A push near the smallest key, mostly rising, as joins make them, to both queues.
    fn push(queue: &mut CandidateQueue, heap: &mut BinaryHeap<Reverse<Candidate>>, rng: &mut u64) {
        let base = heap.peek().map_or(0, |Reverse(c)| c.0);
        let key = (base + lcg(rng) % 50).saturating_sub(10);
        queue.push((key, 0, 0));
        heap.push(Reverse((key, 0, 0)));
    }

    #[test]
    fn pops_in_the_order_of_one_heap() {
        let mut ran_through_runs = 0;
        for seed in 0..200u64 {
            let mut rng = seed;
            let spread = 1 + lcg(&mut rng) % 1000;
            let first: Vec<Candidate> = (0..lcg(&mut rng) % 600)
                .map(|_| (lcg(&mut rng) % spread, 0, 0))
                .collect();
            let mut queue = CandidateQueue::default();
            queue.reset(first.iter().copied());
            let mut heap: BinaryHeap<Reverse<Candidate>> =
                first.iter().copied().map(Reverse).collect();
            // A burst that fills the heap past `SMALL_HEAP`, then fewer pushes than pops.
            for _ in 0..lcg(&mut rng) % 800 {
                push(&mut queue, &mut heap, &mut rng);
            }
            ran_through_runs += usize::from(queue.runs.iter().any(|r| !r.items.is_empty()));
            loop {
                if lcg(&mut rng) % 2 == 0 {
                    push(&mut queue, &mut heap, &mut rng);
                }
                let (a, b) = (queue.pop(), heap.pop().map(|Reverse(c)| c));
                assert_eq!(a.map(|c| c.0), b.map(|c| c.0), "seed {seed}");
                if b.is_none() {
                    break;
                }
            }
        }
        assert!(
            ran_through_runs > 50,
            "only {ran_through_runs} seeds used the runs"
        );
    }

    #[test]
    fn keys_out_of_order_go_to_the_heap() {
        let mut queue = CandidateQueue::default();
        queue.reset([(5, 0, 0), (1, 0, 0)].into_iter());
        // Past the small heap, rising keys extend the two runs and the rest go to the heap.
        for key in 1000..1000 + SMALL_HEAP as u64 {
            queue.push((key, 0, 0));
        }
        for key in [10, 20, 3, 30, 2, 4] {
            queue.push((key, 0, 0));
        }
        // 10, 20, 30 in one run, 3, 4 in the other; 2 extends neither.
        assert_eq!(queue.runs[0].items.len() + queue.runs[1].items.len(), 5);
        assert_eq!(queue.heap.len(), SMALL_HEAP + 1);
        let order: Vec<u64> = std::iter::from_fn(|| queue.pop()).map(|c| c.0).collect();
        let mut expected = vec![1, 2, 3, 4, 5, 10, 20, 30];
        expected.extend(1000..1000 + SMALL_HEAP as u64);
        assert_eq!(order, expected);
    }
}
