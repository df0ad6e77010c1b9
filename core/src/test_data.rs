//! Where tests find the shared data (real vocabularies and corpora).

use std::path::{Path, PathBuf};

/// The shared data folder: `BYTEPAIR_SHARED`, else `../shared` beside the workspace. `None`
/// (the test is skipped, with a message) when it is missing, unless `BYTEPAIR_REQUIRE_SHARED`
/// is set, which makes a missing folder a failure: CI must not pass by skipping.
pub(crate) fn shared() -> Option<PathBuf> {
    let path = std::env::var_os("BYTEPAIR_SHARED").map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared")),
        PathBuf::from,
    );
    if path.join("corpus").is_dir() {
        return Some(path);
    }
    let required =
        std::env::var("BYTEPAIR_REQUIRE_SHARED").is_ok_and(|v| !v.is_empty() && v != "0");
    assert!(
        !required,
        "shared data not found at {} (set BYTEPAIR_SHARED)",
        path.display()
    );
    eprintln!(
        "skipped: shared data not found at {} (set BYTEPAIR_SHARED)",
        path.display()
    );
    None
}

/// Every file of the shared corpus, sorted.
pub(crate) fn corpus_files(shared: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(shared.join("corpus")).unwrap() {
        let dir = dir.unwrap().path();
        if dir.is_dir() {
            for file in std::fs::read_dir(&dir).unwrap() {
                files.push(file.unwrap().path());
            }
        }
    }
    files.sort();
    files
}

/// `len` bytes drawn from `alphabet` by a fixed linear congruential generator: the same text for
/// the same seed on every machine.
pub(crate) fn random_text(seed: &mut u64, len: usize, alphabet: &[u8]) -> Vec<u8> {
    (0..len)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            alphabet[(*seed >> 33) as usize % alphabet.len()]
        })
        .collect()
}
