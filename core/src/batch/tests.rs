use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

const THREADS: [usize; 4] = [1, 2, 3, 8];

/// The runs cover `0..texts` in order, with no gap and no overlap.
fn assert_tiles(chunks: &[std::ops::Range<usize>], texts: usize) {
    let mut next = 0;
    for c in chunks {
        assert_eq!(c.start, next, "{chunks:?}");
        assert!(c.end > c.start, "{chunks:?}");
        next = c.end;
    }
    assert_eq!(next, texts, "{chunks:?}");
}

#[test]
fn chunks_tile_the_batch() {
    for threads in THREADS {
        for texts in [0, 1, 2, 3, 7, 100, 1000, 5000, 100_000] {
            let chunks = batch_chunks(texts, threads);
            assert_tiles(&chunks, texts);
            if texts >= threads * 4 && threads > 1 {
                // Enough runs for every thread to have some, shrinking toward the end.
                assert!(chunks.len() >= threads, "{threads} {texts} {chunks:?}");
                let first = chunks[0].len();
                let last = chunks[chunks.len() - 1].len();
                assert!(last <= first, "{chunks:?}");
            }
        }
    }
    assert!(batch_chunks(0, 4).is_empty());
    assert_eq!(
        batch_chunks(10, 0),
        batch_chunks(10, 1),
        "0 threads act as one"
    );
}

#[test]
fn claims_hand_out_each_run_once_in_order() {
    let chunks = batch_chunks(1000, 3);
    let claims = ChunkClaims::new(&chunks);
    let mut seen = Vec::new();
    while let Some((k, range)) = claims.claim() {
        assert_eq!(range, chunks[k]);
        seen.push(k);
    }
    assert_eq!(seen, (0..chunks.len()).collect::<Vec<_>>());
    assert_eq!(claims.claim(), None);
}

#[test]
fn every_text_is_processed_exactly_once() {
    for threads in THREADS {
        for texts in [0, 1, 2, 5, 64, 3001] {
            let chunks = batch_chunks(texts, threads);
            let counts: Vec<AtomicUsize> = (0..texts).map(|_| AtomicUsize::new(0)).collect();
            let results = on_threads(threads, &chunks, |range| {
                for i in range.clone() {
                    counts[i].fetch_add(1, Ordering::Relaxed);
                }
                range.collect::<Vec<_>>()
            })
            .unwrap_or_default();
            assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 1));
            // Results come back in the order of the runs, whatever thread ran them.
            let flat: Vec<usize> = results.into_iter().flatten().collect();
            assert_eq!(flat, (0..texts).collect::<Vec<_>>(), "{threads} threads");
        }
    }
}

#[test]
fn more_threads_than_texts() {
    let chunks = batch_chunks(3, 8);
    assert_tiles(&chunks, 3);
    let out = on_threads(8, &chunks, |range| range.len()).unwrap_or_default();
    assert_eq!(out.iter().sum::<usize>(), 3);
}

#[test]
fn empty_batch_runs_nothing() {
    for threads in THREADS {
        let ran = AtomicUsize::new(0);
        let out = on_threads(threads, &[], |_| ran.fetch_add(1, Ordering::Relaxed));
        assert_eq!(out, Ok(Vec::new()));
        assert_eq!(ran.load(Ordering::Relaxed), 0);
    }
}

#[test]
fn the_first_error_in_order_wins() {
    for threads in THREADS {
        let chunks: Vec<_> = (0..50).map(|i| i..i + 1).collect();
        // Runs 7, 20 and 41 fail; later runs finish first on some threads, but the error is
        // always that of run 7.
        let runs = on_threads(threads, &chunks, |range| {
            if [7, 20, 41].contains(&range.start) {
                Err(range.start)
            } else {
                Ok(vec![range.start])
            }
        })
        .unwrap_or_default();
        assert_eq!(first_error(runs), Err(7), "{threads} threads");
    }
    let mut first = FirstError::default();
    for k in [9, 3, 5, 3] {
        first.keep(k, k * 10);
    }
    assert_eq!(first.into_result(), Err(30));
    assert_eq!(FirstError::<u8>::default().into_result(), Ok(()));
    let fine: Vec<Result<Vec<u8>, ()>> = vec![Ok(vec![1, 2]), Ok(vec![]), Ok(vec![3])];
    assert_eq!(first_error(fine), Ok(vec![1, 2, 3]));
}

#[test]
fn pools_are_kept_by_size() {
    // A size no other test uses, so that tests running at once cannot race this one.
    let a = pool(5).unwrap_or_else(|e| panic!("{e}"));
    let b = pool(5).unwrap_or_else(|e| panic!("{e}"));
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    assert_eq!(a.current_num_threads(), 5);
    assert_eq!(pool(0).map(|p| p.current_num_threads()), Ok(1));
}

#[test]
fn workers_wait_for_texts_and_are_unblocked() {
    let texts = std::sync::OnceLock::<Vec<u8>>::new();
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| wait_for_texts(&texts).len());
        std::thread::sleep(std::time::Duration::from_millis(5));
        let _ = texts.set(vec![1, 2, 3]);
        assert_eq!(waiter.join().ok(), Some(3));
    });
    // A reader that never publishes still frees the waiters, with an empty batch.
    let unread = std::sync::OnceLock::<Vec<u8>>::new();
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| wait_for_texts(&unread).len());
        drop(Unblock(&unread));
        assert_eq!(waiter.join().ok(), Some(0));
    });
}

#[test]
fn scratch_buffers_come_empty_and_huge_ones_are_not_kept() {
    with_id_buffer(|ids| ids.extend([1, 2, 3]));
    assert_eq!(with_id_buffer(|ids| ids.len()), 0);
    with_id_buffer(|ids| ids.resize((1 << 20) + 1, 0));
    assert!(with_id_buffer(|ids| ids.capacity()) <= 1 << 20);
    // Nested use of the same buffer gets a fresh one instead of a panic.
    let inner = with_id_buffer(|outer| {
        outer.push(9);
        with_id_buffer(|inner| {
            inner.push(1);
            inner.len()
        })
    });
    assert_eq!(inner, 1);
}
