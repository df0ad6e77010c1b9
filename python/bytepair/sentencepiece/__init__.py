"""The SentencePiece model: pieces with scores merged as ``sentencepiece`` merges them (a
``.model`` file), or a merge list with byte fallback as ``tokenizers`` runs the same model's
``tokenizer.json``; both after SentencePiece's whitespace rules, not a byte-level alphabet.

Importing it registers its builder, so the loaders of :mod:`bytepair.formats` build
:class:`SentencePieceEncoding` values for these files.
"""

from bytepair.sentencepiece.encoding import SentencePieceEncoding as SentencePieceEncoding
from bytepair.sentencepiece.encoding import (
    build_sentencepiece_encoding as build_sentencepiece_encoding,
)

__all__ = ["SentencePieceEncoding", "build_sentencepiece_encoding"]
