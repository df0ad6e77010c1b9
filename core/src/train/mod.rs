//! Training byte-level BPE from a corpus (see the trainer issue). Placeholder module so that the
//! folder layout shows the pipeline from the start.
