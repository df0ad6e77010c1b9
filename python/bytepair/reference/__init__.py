"""A pure-Python byte-level BPE tokenizer: the readable reference and the oracle for the Rust core.

Read the modules in this order; each adds one idea.

1. :mod:`~bytepair.reference.protocol`: what a tokenizer is (text -> ids -> bytes).
2. :mod:`~bytepair.reference.pretokenize`: cut text into pieces with a regex.
3. :mod:`~bytepair.reference.merge`: merge one piece's bytes into tokens, lowest rank first.
4. :mod:`~bytepair.reference.encoder`: a full encoder with special tokens (tiktoken's API).
5. :mod:`~bytepair.reference.load`: read real vocabularies (tiktoken and GPT-2 files).
6. :mod:`~bytepair.reference.train`: learn the merges from text.
7. :mod:`~bytepair.reference.sentencepiece`: SentencePiece BPE models (Llama 2, Mistral), with
   their merge rules in :mod:`~bytepair.reference.sentencepiece_merge` and their ``.model`` files
   read by :mod:`~bytepair.reference.sentencepiece_proto`.

It gives the same ids as tiktoken for GPT-2, r50k, p50k, cl100k and o200k, and trains the same
merges as rustbpe; the tests check both on real text. It is written to be read, not to be fast
(it is orders of magnitude slower than the compiled encoder); use :class:`bytepair.Encoding`
for work.

>>> from bytepair.reference import ReferenceEncoding, train
>>> enc = train(["low lower lowest", "new newer newest"] * 10, vocab_size=270, pattern="gpt2")
>>> ids = enc.encode("low newer, slower")
>>> [enc.decode_single_token_bytes(i) for i in ids]
[b'low', b' newer', b',', b' ', b's', b'lo', b'wer']
>>> enc.decode(ids)
'low newer, slower'
"""

from __future__ import annotations

from bytepair.reference.encoder import ReferenceEncoding as ReferenceEncoding
from bytepair.reference.load import load_gpt2_files as load_gpt2_files
from bytepair.reference.load import load_tiktoken_bpe as load_tiktoken_bpe
from bytepair.reference.merge import encode_piece as encode_piece
from bytepair.reference.merge import merge_piece as merge_piece
from bytepair.reference.merge import merge_piece_heap as merge_piece_heap
from bytepair.reference.merge import unreachable_tokens as unreachable_tokens
from bytepair.reference.pretokenize import pretokenize as pretokenize
from bytepair.reference.protocol import Tokenizer as Tokenizer
from bytepair.reference.sentencepiece import SentencePieceReference as SentencePieceReference
from bytepair.reference.train import count_pieces as count_pieces
from bytepair.reference.train import merges_to_ranks as merges_to_ranks
from bytepair.reference.train import train as train
from bytepair.reference.train import train_from_counts as train_from_counts

__all__ = [
    "ReferenceEncoding",
    "SentencePieceReference",
    "Tokenizer",
    "count_pieces",
    "encode_piece",
    "load_gpt2_files",
    "load_tiktoken_bpe",
    "merge_piece",
    "merge_piece_heap",
    "merges_to_ranks",
    "pretokenize",
    "train",
    "train_from_counts",
    "unreachable_tokens",
]
