"""The plain values between files and tokenizer models.

Reading a file gives a *parsed* value: what the file says, checked, not yet built into an
encoding (:class:`TiktokenFile`, :class:`Gpt2Files`, :class:`HfComponents`,
:class:`SentencePieceComponents`); a tokenizer model
registered in :mod:`bytepair.formats.builders` builds it. Writing takes a *vocabulary* value
that a model gives of itself (``enc.vocabulary()``): :class:`RankVocabulary` (tiktoken's rank
rule) or :class:`PairVocabulary` (a Hugging Face merge-list pipeline). The heavy parts are
functions, called only by the writers that need them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from bytepair.formats.hf_pipeline import AddedToken

__all__ = [
    "Gpt2Files",
    "HasVocabulary",
    "HfComponents",
    "PairVocabulary",
    "RankVocabulary",
    "SentencePieceComponents",
    "TiktokenFile",
    "Vocabulary",
    "rank_vocabulary",
]

# ---- read from files -------------------------------------------------------------------------


@dataclass(frozen=True)
class TiktokenFile:
    """A ``.tiktoken`` file (base64 token and rank per line; the core parses ``data``) with the
    pattern and special tokens that go with it."""

    data: bytes
    name: str
    pat_str: str
    special_tokens: Mapping[str, int]
    source: str
    """What errors name: the file's path."""


@dataclass(frozen=True)
class Gpt2Files:
    """GPT-2's ``encoder.json`` (parsed) + ``vocab.bpe`` (bytes; the core parses the merges),
    read as tiktoken reads them: ids are ranks."""

    encoder: Mapping[str, int]
    merges_data: bytes
    name: str
    pat_str: str
    special_tokens: Mapping[str, int]
    encoder_source: str
    merges_source: str


@dataclass(frozen=True)
class HfComponents:
    """A Hugging Face tokenizer as components (JSON values, as in ``tokenizer.json``).

    ``added`` holds each added token with the id its file gives it; ``merges`` are pairs of
    vocabulary strings, or ``merges_data`` the bytes of a ``merges.txt``, or both are None and
    ``tables`` (then also ``vocab``) holds the vocabulary and merges the core read. Errors name
    ``source``.
    """

    name: str
    source: str
    vocab: Mapping[str, int]
    merges: Sequence[tuple[str, str]] | None
    merges_data: bytes | None
    options: Mapping[str, Any]
    normalizer: Any
    pre_tokenizer: Any
    post_processor: Any
    decoder: Any
    added: Sequence[tuple[AddedToken, int]]
    tables: Any = None
    """The core's ``ModelTables`` holding ``vocab`` and the merges, when the core read them."""


@dataclass(frozen=True)
class SentencePieceComponents:
    """A SentencePiece BPE model as a ``.model`` file or a SentencePiece-style ``tokenizer.json``
    says it: the arguments of ``_core.SentencePieceEncoder`` (:meth:`encoder_options`, with
    :attr:`pieces`) and what goes around them.

    ``merges`` is None for a ``.model`` (sentencepiece joins by score) and the merge list as id
    pairs for a ``tokenizer.json``. ``original`` holds a ``.model`` file's bytes, so that saving
    it again is lossless.
    """

    name: str
    source: str
    """What errors name: the file's path."""
    source_format: Literal["sentencepiece-model", "tokenizer-json"]
    model_type: str
    """sentencepiece's ``TrainerSpec.model_type`` (``"BPE"``; a ``tokenizer.json`` is BPE)."""
    pieces: Sequence[tuple[str, float, int]]
    """``(piece, score, type)`` per id (types as sentencepiece numbers them, 1 to 6)."""
    merges: Sequence[tuple[int, int]] | None
    byte_fallback: bool
    unk_id: int | None
    prepend: Literal["always", "always_unless_present", "first", "never"]
    remove_extra_whitespaces: bool
    escape_whitespaces: bool
    treat_whitespace_as_suffix: bool
    replacement: str
    split_on_replacement: bool
    precompiled_charsmap: bytes | None
    fuse_unk: bool
    ignore_merges: bool
    decoder: Literal["sentencepiece", "hf"]
    unk_surface: str
    special_tokens: Mapping[str, int]
    """The control pieces (``.model``) or special added tokens (``tokenizer.json``)."""
    bos_id: int | None
    eos_id: int | None
    pad_id: int | None
    add_bos: bool
    """Whether ``encode`` puts ``bos_id`` first by default (a ``tokenizer.json``'s
    post-processor; sentencepiece's ``encode`` adds nothing unless asked)."""
    add_eos: bool
    original: bytes | None = None
    """A ``.model`` file's bytes, written back by a save as ``sentencepiece``."""
    spec: Mapping[str, Any] | None = None
    """A ``tokenizer.json`` as read (settings it was read without set to null), written back
    by a save as ``hf``."""

    def rank_problem(self) -> str:
        """Why tiktoken's rank rule would give other ids: always, for this model."""
        return (
            "it is a SentencePiece model (pieces merged by score, or a merge list over "
            "characters with byte fallback), not byte-level ranks; save it as 'hf' or "
            "'sentencepiece'"
        )

    def encoder_options(self) -> dict[str, Any]:
        """The keyword arguments of ``_core.SentencePieceEncoder`` (and of
        ``bytepair.reference.sentencepiece.SentencePieceReference``) after :attr:`pieces`."""
        return {
            "merges": None if self.merges is None else list(self.merges),
            "byte_fallback": self.byte_fallback,
            "unk_id": self.unk_id,
            "prepend": self.prepend,
            "remove_extra_whitespaces": self.remove_extra_whitespaces,
            "escape_whitespaces": self.escape_whitespaces,
            "treat_whitespace_as_suffix": self.treat_whitespace_as_suffix,
            "replacement": self.replacement,
            "split_on_replacement": self.split_on_replacement,
            "precompiled_charsmap": self.precompiled_charsmap,
            "fuse_unk": self.fuse_unk,
            "ignore_merges": self.ignore_merges,
            "decoder": self.decoder,
            "unk_surface": self.unk_surface,
            "special_tokens": dict(self.special_tokens),
        }


# ---- given by a model, to write --------------------------------------------------------------


@dataclass(frozen=True)
class RankVocabulary:
    """An encoding as tiktoken's rank rule sees it: ids are ranks."""

    name: str
    pat_str: str
    special_tokens: Mapping[str, int]
    ranks: Callable[[], Mapping[bytes, int]]
    """The ordinary tokens' bytes and ranks."""
    derived_merges: Callable[[], list[tuple[int, tuple[bytes, bytes] | None]]]
    """Each token and the merge tiktoken's rule makes it with (None for single bytes)."""
    tiktoken_file: Callable[[], bytes]
    """The ``.tiktoken`` file of the ranks."""


@dataclass(frozen=True)
class PairVocabulary:
    """An encoding read from Hugging Face files: its components and merge list."""

    name: str
    components: Mapping[str, Any]
    """As loaded: ``normalizer``, ``pre_tokenizer``, ``post_processor``, ``decoder``,
    ``added_tokens`` and the BPE ``model_options``."""
    vocab: Callable[[], list[tuple[int, bytes, bool]]]
    """Each id, its bytes, and whether its string is spelt in the byte-level alphabet."""
    merges: Callable[[], list[tuple[int, int, int]]]
    """The merges in priority order: left id, right id, merged id."""
    as_ranks: RankVocabulary
    """The same ids as ranks, valid only where :attr:`rank_problem` gives None."""
    rank_problem: Callable[[], str | None]
    """Why tiktoken's rank rule would give other ids, or None if it gives the same."""


Vocabulary = RankVocabulary | PairVocabulary | SentencePieceComponents


class HasVocabulary(Protocol):
    """What the writers take: an encoding of any model (``bytepair.Encoding`` is one)."""

    @property
    def name(self) -> str: ...

    def vocabulary(self) -> Vocabulary: ...


def rank_vocabulary(enc: HasVocabulary, what: str) -> RankVocabulary:
    """``enc`` as ranks, for a format that holds only ranks (``what`` names it in the error)."""
    vocabulary = enc.vocabulary()
    if isinstance(vocabulary, RankVocabulary):
        return vocabulary
    problem = vocabulary.rank_problem()
    if problem is not None or isinstance(vocabulary, SentencePieceComponents):
        raise ValueError(f"{enc.name} cannot be written {what}: {problem}")
    return vocabulary.as_ranks
