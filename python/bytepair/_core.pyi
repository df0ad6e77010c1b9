"""Type stubs for the compiled module ``bytepair._core`` (checked with ``mypy.stubtest``)."""

from collections.abc import Callable, Collection, Iterator
from os import PathLike
from typing import Any, Literal, final

import numpy as np
import numpy.typing as npt
from typing_extensions import Self, disjoint_base

from bytepair.formats.hf_pipeline import Stage

__all__ = [
    "CPYTHON_INTERNALS",
    "NAMED_PATTERNS",
    "AddedToken",
    "DisallowedSpecial",
    "Encoder",
    "EncodingBase",
    "ModelTables",
    "PairEncoder",
    "PieceCounter",
    "RankEncoder",
    "SentencePieceEncoder",
    "SpecialSet",
    "byte_map_table",
    "parse_sentencepiece_model",
    "parse_tiktoken",
    "pipeline_split",
    "scanner_for",
    "split",
    "split_model_tables",
    "write_sentencepiece_model",
]

CPYTHON_INTERNALS: bool
"""Whether this build has the paths that rely on CPython's object layout (``cpython/``)."""

NAMED_PATTERNS: dict[str, str]
"""The well-known pre-tokenizer patterns by name, as the core's scanners recognise them."""

class DisallowedSpecial(ValueError):
    """Text spells a special token that the call disallowed; ``args[0]`` is the token."""

@final
class SpecialSet:
    """Special tokens of one encoder, compiled for ``allowed`` and ``disallowed``."""

@disjoint_base
class Encoder:
    """A compiled encoder: the methods every tokenizer model's encoder shares."""

    def special_set(self, names: list[str]) -> SpecialSet: ...
    def find_special(self, text: str, names: list[str]) -> tuple[int, int, str] | None: ...
    def encode_ordinary(self, text: str) -> list[int]: ...
    def encode(
        self, text: str, allowed: SpecialSet | None = None, disallowed: SpecialSet | None = None
    ) -> list[int]: ...
    def encode_to_numpy(
        self, text: str, allowed: SpecialSet | None = None, disallowed: SpecialSet | None = None
    ) -> npt.NDArray[np.uint32]: ...
    def count_ordinary(self, text: str) -> int: ...
    def count(
        self, text: str, allowed: SpecialSet | None = None, disallowed: SpecialSet | None = None
    ) -> int: ...
    def encode_ordinary_batch(self, texts: list[str], num_threads: int) -> list[list[int]]: ...
    def encode_batch(
        self,
        texts: list[str],
        num_threads: int,
        allowed: SpecialSet | None = None,
        disallowed: SpecialSet | None = None,
    ) -> list[list[int]]: ...
    def count_batch(
        self,
        texts: list[str],
        num_threads: int,
        allowed: SpecialSet | None = None,
        disallowed: SpecialSet | None = None,
    ) -> list[int]: ...
    def encode_bytes(self, data: bytes) -> list[int]: ...
    def encode_single_token(self, token: bytes) -> int: ...
    def decode_bytes(self, ids: list[int]) -> bytes: ...
    def decode_single_token_bytes(self, id: int) -> bytes: ...
    def decode_tokens_bytes(self, ids: list[int]) -> list[bytes]: ...
    def token_byte_values(self) -> list[bytes]: ...
    def mergeable_ranks(self) -> dict[bytes, int]: ...
    @property
    def scanner(self) -> str | None: ...
    @property
    def id_bound(self) -> int: ...
    def rank_equivalence(self) -> str | None: ...
    def to_tiktoken(self) -> bytes: ...
    def derive_merges(self) -> list[tuple[int, tuple[bytes, bytes] | None]]: ...

@final
class RankEncoder(Encoder):
    """tiktoken's model: ranks are ids, the lowest-ranked pair merges first."""

    def __new__(
        cls, mergeable_ranks: dict[bytes, int], special_tokens: dict[str, int], pattern: str
    ) -> RankEncoder: ...
    @staticmethod
    def from_tiktoken(data: bytes, special_tokens: dict[str, int], pattern: str) -> RankEncoder: ...
    @staticmethod
    def from_gpt2(
        encoder: dict[str, int],
        merges_data: bytes,
        pattern: str,
        special_tokens: dict[str, int] | None = None,
    ) -> tuple[RankEncoder, dict[str, int]]: ...

@final
class AddedToken:
    """An added token of a Hugging Face tokenizer, as ``PairEncoder`` takes it."""

    def __new__(
        cls,
        content: str,
        id: int,
        *,
        special: bool,
        pattern: str | None = None,
        single_word: bool = False,
        lstrip: bool = False,
        rstrip: bool = False,
        normalized: bool = False,
    ) -> AddedToken: ...

@final
class PairEncoder(Encoder):
    """The Hugging Face model: merges in a merge list's order, after added tokens and a
    pre-tokenizer pipeline (``bindings/src/formats.rs`` describes the stage tuples)."""

    def __new__(
        cls,
        vocab: dict[str, int] | None,
        stages: list[Stage],
        added: list[AddedToken],
        merges: list[tuple[str, str]] | None = None,
        merges_data: bytes | None = None,
        ignore_merges: bool = False,
        unknown: tuple[int, bool] | None = None,
        byte_fallback: bool = False,
        tables: ModelTables | None = None,
    ) -> PairEncoder: ...
    def encode_normalized(self, text: str, allowed: SpecialSet | None = None) -> list[int]: ...
    def split_added(
        self, text: str, allowed: SpecialSet | None = None, disallowed: SpecialSet | None = None
    ) -> list[str | int]: ...
    def pair_merges(self) -> list[tuple[int, int, int]]: ...
    def pair_vocab(self) -> list[tuple[int, bytes, bool]]: ...

@final
class ModelTables:
    """``model.vocab`` (a read-only mapping of token -> id) and ``model.merges`` of a
    ``tokenizer.json``, held in Rust (``split_model_tables``)."""

    def __len__(self) -> int: ...
    def __contains__(self, key: object, /) -> bool: ...
    def __getitem__(self, key: str, /) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def get(self, token: str, default: Any = None) -> Any: ...
    @property
    def merge_count(self) -> int: ...

@final
class SentencePieceEncoder(Encoder):
    """SentencePiece's BPE model: merges by piece score (``merges=None``, sentencepiece) or by
    a merge list of id pairs (Hugging Face), after its own whitespace normalization. Pieces are
    ``(piece, score, type)`` with sentencepiece's types (1 NORMAL, 2 UNKNOWN, 3 CONTROL,
    4 USER_DEFINED, 5 UNUSED, 6 BYTE); the id is the index."""

    def __new__(
        cls,
        pieces: list[tuple[str, float, int]],
        *,
        merges: list[tuple[int, int]] | None = None,
        byte_fallback: bool,
        unk_id: int | None,
        prepend: Literal["always", "always_unless_present", "first", "never"],
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool,
        replacement: str = "\u2581",
        split_on_replacement: bool = False,
        precompiled_charsmap: bytes | None = None,
        fuse_unk: bool = False,
        ignore_merges: bool = False,
        decoder: Literal["sentencepiece", "hf"] = "sentencepiece",
        unk_surface: str = " \u2047 ",
        special_tokens: dict[str, int],
    ) -> SentencePieceEncoder: ...
    def decode(self, ids: list[int], keep_special: bool = False) -> str: ...
    def id_to_piece(self, id: int) -> str: ...
    def piece_to_id(self, piece: str) -> int | None: ...
    def pieces(self) -> list[tuple[str, float, int]]: ...

@disjoint_base
class EncodingBase:
    """The compiled base class of ``bytepair.Encoding``: ``encode``, ``count`` and
    ``encode_ordinary`` answer the call with default arguments in one compiled call and pass any
    other to the subclass's ``_encode_general``, ``_count_general`` or
    ``_encode_ordinary_general``."""

    def __new__(cls, *_args: Any, **_kwargs: Any) -> Self: ...
    def _set_compiled_calls(
        self,
        encoder: Encoder,
        *,
        ordinary: bool,
        default_specials: tuple[SpecialSet | None, SpecialSet | None] | None,
    ) -> None: ...
    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = ...,
        disallowed_special: Literal["all"] | Collection[str] = ...,
        add_special_tokens: bool = ...,
    ) -> list[int]:
        """Encode `text`; special tokens follow tiktoken's rules.

        By default any text that spells a special token raises ``ValueError`` (it may be an
        injection attempt); allow it with ``allowed_special={...}`` or ``"all"``, or encode it
        as plain text with ``disallowed_special=()``.

        >>> ranks = {bytes([b]): b for b in range(256)}
        >>> enc = Encoding("t", pat_str=r".", mergeable_ranks=ranks, special_tokens={"<s>": 256})
        >>> enc.encode("a<s>", allowed_special={"<s>"})
        [97, 256]
        >>> enc.encode("a<s>", disallowed_special=())
        [97, 60, 115, 62]

        An encoding read from Hugging Face files follows the same rules for its special added
        tokens (``allowed_special="all"`` gives the ids of ``tokenizers.Tokenizer.encode``); its
        non-special added tokens are vocabulary, recognised always. Its post-processor adds the
        model's tokens (``<s>`` ... ``</s>``) unless ``add_special_tokens=False``; this does
        nothing for tiktoken files, which have no post-processor.

        (The call with default arguments runs compiled; any other goes to ``_encode_general``.)
        """
    def count(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = ...,
        disallowed_special: Literal["all"] | Collection[str] = ...,
        add_special_tokens: bool = ...,
    ) -> int:
        """The number of tokens :meth:`encode` would return, without building the list.

        >>> enc = Encoding("b", pat_str=r".", mergeable_ranks={bytes([b]): b for b in range(256)},
        ...                special_tokens={})
        >>> enc.count("héllo")
        6

        (The call with default arguments runs compiled; any other goes to ``_count_general``.)
        """
    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text`` ignoring special tokens (special-looking text is ordinary text).

        >>> ranks = {bytes([b]): b for b in range(256)}
        >>> enc = Encoding("bytes", pat_str=r".", mergeable_ranks=ranks, special_tokens={})
        >>> enc.encode_ordinary("hi")
        [104, 105]

        For an encoding read from Hugging Face files, "ordinary" means what ``tokenizers`` does
        with ``encode_special_tokens = True`` and ``add_special_tokens=False``: special added
        tokens are text, non-special added tokens (part of the vocabulary) are still recognised.

        (Runs compiled where the encoder does all of it; otherwise ``_encode_ordinary_general``.)
        """

@final
class PieceCounter:
    """Counts of unique pieces and the merge loop over them (``bindings/src/train.rs``)."""

    def __new__(cls, pattern: str) -> PieceCounter: ...
    @property
    def pattern(self) -> str: ...
    @property
    def total(self) -> int: ...
    def __len__(self) -> int: ...
    def add_text(
        self, text: str, num_threads: int, progress: Callable[[int], object] | None = None
    ) -> None: ...
    def add_texts(
        self, texts: list[str], num_threads: int, progress: Callable[[int], object] | None = None
    ) -> None: ...
    def add_file(
        self,
        path: str | PathLike[str],
        num_threads: int,
        progress: Callable[[int], object] | None = None,
    ) -> None: ...
    def add_counts(self, items: list[tuple[bytes, int]]) -> None: ...
    def merge_counts(self, other: PieceCounter) -> None: ...
    def serialize_counts(self) -> bytes: ...
    def add_serialized_counts(self, data: bytes) -> None: ...
    def items(self) -> list[tuple[bytes, int]]: ...
    def train(
        self,
        vocab_size: int,
        min_frequency: int = 0,
        tie_break: str = "bytepair",
        num_threads: int | None = None,
        progress: Callable[[int], object] | None = None,
        consume: bool = False,
    ) -> list[tuple[int, int]]: ...

def parse_tiktoken(data: bytes) -> dict[bytes, int]: ...
def parse_sentencepiece_model(data: bytes) -> dict[str, Any]: ...
def write_sentencepiece_model(model: dict[str, Any]) -> bytes: ...
def byte_map_table() -> list[str]: ...
def split(pattern: str, text: str, use_regex: bool = False) -> list[str]: ...
def scanner_for(pattern: str) -> str | None: ...
def pipeline_split(stages: list[Stage], text: str) -> list[bytes]: ...
def split_model_tables(data: bytes) -> tuple[bytes, ModelTables] | None: ...
