"""Type stubs for the compiled module ``bytepair._core`` (checked with ``mypy.stubtest``)."""

from collections.abc import Callable
from os import PathLike
from typing import Any, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "CoreEncoding",
    "DefaultCalls",
    "DisallowedSpecial",
    "PieceCounter",
    "SpecialSet",
    "byte_map_table",
    "parse_tiktoken",
    "pipeline_split",
    "scanner_for",
    "split",
]

class DisallowedSpecial(ValueError):
    """Text spells a special token that the call disallowed; ``args[0]`` is the token."""

@final
class SpecialSet:
    """Special tokens of one ``CoreEncoding``, compiled for ``allowed`` and ``disallowed``."""

@final
class DefaultCalls:
    """``Encoding.encode`` and ``Encoding.count`` of one encoding, compiled for the default
    special-token arguments; any other call goes to the Python method given."""

    def __new__(
        cls,
        core: CoreEncoding,
        allowed: SpecialSet | None,
        disallowed: SpecialSet | None,
        encode_method: Callable[..., Any],
        count_method: Callable[..., Any],
    ) -> DefaultCalls: ...
    def encode(self, text: str, *args: Any, **kwargs: Any) -> Any: ...
    def count(self, text: str, *args: Any, **kwargs: Any) -> Any: ...

@final
class CoreEncoding:
    def __new__(
        cls, mergeable_ranks: dict[bytes, int], special_tokens: dict[str, int], pattern: str
    ) -> CoreEncoding: ...
    @staticmethod
    def from_tiktoken(
        data: bytes, special_tokens: dict[str, int], pattern: str
    ) -> CoreEncoding: ...
    def mergeable_ranks(self) -> dict[bytes, int]: ...
    @property
    def scanner(self) -> str | None: ...
    @property
    def id_bound(self) -> int: ...
    def encode_ordinary(self, text: str) -> list[int]: ...
    def special_set(self, names: list[str]) -> SpecialSet: ...
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
    def find_special(self, text: str, names: list[str]) -> tuple[int, int, str] | None: ...
    def encode_bytes(self, data: bytes) -> list[int]: ...
    def encode_single_token(self, token: bytes) -> int: ...
    def decode_bytes(self, ids: list[int]) -> bytes: ...
    def decode_single_token_bytes(self, id: int) -> bytes: ...
    def decode_tokens_bytes(self, ids: list[int]) -> list[bytes]: ...
    def token_byte_values(self) -> list[bytes]: ...
    # Hugging Face files (bindings/src/formats.rs describes the stage and added-token tuples).
    @staticmethod
    def from_hf(
        vocab: dict[str, int],
        stages: list[tuple[str, str | None, str, bool]],
        added: list[tuple[str, str, int, bool, bool, bool, bool, bool]],
        merges: list[tuple[str, str]] | None = None,
        merges_data: bytes | None = None,
        ignore_merges: bool = False,
        unknown: tuple[int, bool] | None = None,
    ) -> CoreEncoding: ...
    @staticmethod
    def from_gpt2(
        encoder: dict[str, int],
        merges_data: bytes,
        pattern: str,
        special_tokens: dict[str, int] | None = None,
    ) -> tuple[CoreEncoding, dict[str, int]]: ...
    @property
    def is_pair_mode(self) -> bool: ...
    def encode_hf(
        self,
        text: str,
        allowed: SpecialSet | None = None,
        disallowed: SpecialSet | None = None,
        first_pass: bool = True,
    ) -> list[int]: ...
    def encode_hf_batch(
        self,
        texts: list[str],
        num_threads: int,
        allowed: SpecialSet | None = None,
        disallowed: SpecialSet | None = None,
    ) -> list[list[int]]: ...
    def split_added(
        self, text: str, allowed: SpecialSet | None = None, disallowed: SpecialSet | None = None
    ) -> list[str | int]: ...
    def to_tiktoken(self) -> bytes: ...
    def rank_equivalence(self) -> str | None: ...
    def derive_merges(self) -> list[tuple[int, tuple[bytes, bytes] | None]]: ...
    def pair_merges(self) -> list[tuple[int, int, int]] | None: ...
    def pair_vocab(self) -> list[tuple[int, bytes, bool]] | None: ...

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
def byte_map_table() -> list[str]: ...
def split(pattern: str, text: str, use_regex: bool = False) -> list[str]: ...
def scanner_for(pattern: str) -> str | None: ...
def pipeline_split(stages: list[tuple[str, str | None, str, bool]], text: str) -> list[bytes]: ...
