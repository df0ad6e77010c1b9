"""Step 3: a whole encoder. Pre-tokenize, merge each piece, and handle special tokens.

:class:`ReferenceEncoding` has the constructor and the methods of ``tiktoken.Encoding`` that
matter for ids (``encode``, ``encode_ordinary``, ``decode``, ``decode_bytes``,
``decode_single_token_bytes``, ``n_vocab``, ``eot_token``, ``special_tokens_set``), in plain
Python. It is the oracle the Rust core is tested against, id for id.

Special tokens (``<|endoftext|>``) are strings that stand for one reserved id. Ordinary text must
not turn into them by accident, or a user could type ``<|endoftext|>`` into a chat and end the
model's document. So, as in tiktoken, ``encode`` raises ``ValueError`` when the text contains a
special token that was not explicitly allowed, and says how to allow it or encode it as text.

>>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
>>> enc = ReferenceEncoding(
...     "toy", pat_str="gpt2", mergeable_ranks=ranks, special_tokens={"<|eot|>": 257}
... )
>>> enc.encode("abc ab<|eot|>", allowed_special={"<|eot|>"})
[256, 99, 32, 256, 257]
>>> enc.encode("ab<|eot|>", disallowed_special=())  # as text: <, |, eot, |, >
[256, 60, 124, 101, 111, 116, 124, 62]
>>> enc.decode([256, 99, 257])
'abc<|eot|>'
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from types import MappingProxyType
from typing import Any, Literal, NoReturn

import regex

from bytepair.patterns import resolve_pattern
from bytepair.reference.merge import encode_piece, unreachable_tokens
from bytepair.reference.pretokenize import compile_pattern, pretokenize

__all__ = ["ReferenceEncoding"]


class ReferenceEncoding:
    """A byte-level BPE encoder in pure Python, with tiktoken's ``Encoding`` API and ids.

    Args:
        name: a label, shown in ``repr`` and in error messages.
        pat_str: the pre-tokenizer regex, or a pattern name such as ``"cl100k"``
            (see :mod:`bytepair.patterns`).
        mergeable_ranks: token bytes -> rank. The rank is the token's id and its merge priority
            (lower merges first). All 256 single bytes must be present; ranks must be distinct.
        special_tokens: special token text -> id; ids must differ from every rank.
        explicit_n_vocab: if given, the total number of tokens, checked as tiktoken does.
        verify_tokens: also check that every token's bytes merge back into that token (about a
            second for o200k; see :func:`~bytepair.reference.merge.unreachable_tokens`).

    Every check raises ``ValueError`` naming what is wrong.

    >>> enc = ReferenceEncoding("b", pat_str="gpt2", mergeable_ranks={b"a": 0}, special_tokens={})
    Traceback (most recent call last):
    ...
    ValueError: 'b': mergeable_ranks lacks 255 of the 256 single-byte tokens, e.g. b'\\x00'
    """

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: Mapping[bytes, int],
        special_tokens: Mapping[str, int],
        explicit_n_vocab: int | None = None,
        verify_tokens: bool = False,
    ) -> None:
        self.name = name
        self._pat_str = resolve_pattern(pat_str)
        compile_pattern(self._pat_str)  # fail now, not at the first encode, if it is not a regex
        self._mergeable_ranks = dict(mergeable_ranks)
        self._special_tokens = dict(special_tokens)
        self._decoder = self._build_decoder()
        self.max_token_value = max(self._decoder)
        if explicit_n_vocab is not None and not (
            len(self._decoder) == explicit_n_vocab == self.max_token_value + 1
        ):
            raise ValueError(
                f"{name!r}: explicit_n_vocab={explicit_n_vocab}, but there are "
                f"{len(self._decoder)} tokens with ids up to {self.max_token_value}"
            )
        if verify_tokens:
            bad = unreachable_tokens(self._mergeable_ranks)
            if bad:
                raise ValueError(
                    f"{name!r}: {len(bad)} token(s) do not merge back from their own bytes, "
                    f"e.g. {bad[0]!r} (rank {self._mergeable_ranks[bad[0]]})"
                )

    def _build_decoder(self) -> dict[int, bytes]:
        """Check the vocabulary and build id -> bytes for every token, special ones included."""
        name = self.name
        ranks = self._mergeable_ranks
        for token, rank in ranks.items():
            if not isinstance(token, bytes) or not isinstance(rank, int) or rank < 0:
                raise ValueError(
                    f"{name!r}: mergeable_ranks maps bytes to ranks >= 0, got {token!r}: {rank!r}"
                )
        # Every text must be encodable, and the merge loop starts from single bytes.
        missing = [bytes([b]) for b in range(256) if bytes([b]) not in ranks]
        if missing:
            raise ValueError(
                f"{name!r}: mergeable_ranks lacks {len(missing)} of the 256 single-byte tokens, "
                f"e.g. {missing[0]!r}"
            )
        decoder: dict[int, bytes] = {}
        for token, rank in ranks.items():
            if rank in decoder:
                raise ValueError(
                    f"{name!r}: rank {rank} is given to two tokens, {decoder[rank]!r} and {token!r}"
                )
            decoder[rank] = token
        for text, token_id in self._special_tokens.items():
            if not isinstance(text, str) or not text:
                raise ValueError(f"{name!r}: special tokens are non-empty str, got {text!r}")
            if not isinstance(token_id, int) or token_id < 0:
                raise ValueError(f"{name!r}: special token {text!r} has invalid id {token_id!r}")
            if token_id in decoder:
                raise ValueError(
                    f"{name!r}: special token {text!r} has id {token_id}, "
                    f"which is already the id of {decoder[token_id]!r}"
                )
            decoder[token_id] = text.encode("utf-8")
        return decoder

    def __repr__(self) -> str:
        return f"<ReferenceEncoding {self.name!r}>"

    # ---- properties ----------------------------------------------------------------------

    @property
    def pat_str(self) -> str:
        """The pre-tokenizer regex (a pattern name given to the constructor is resolved)."""
        return self._pat_str

    @property
    def mergeable_ranks(self) -> Mapping[bytes, int]:
        """A read-only view of token bytes -> rank."""
        return MappingProxyType(self._mergeable_ranks)

    @property
    def special_tokens(self) -> Mapping[str, int]:
        """A read-only view of special token text -> id."""
        return MappingProxyType(self._special_tokens)

    @functools.cached_property
    def special_tokens_set(self) -> frozenset[str]:
        """The texts of the special tokens."""
        return frozenset(self._special_tokens)

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>`` (``KeyError`` if this encoding has none)."""
        return self._special_tokens["<|endoftext|>"]

    @property
    def n_vocab(self) -> int:
        """One more than the largest id (tiktoken's definition: ids may have gaps)."""
        return self.max_token_value + 1

    # ---- encoding ------------------------------------------------------------------------

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text``, treating special-token text as ordinary text.

        >>> enc = ReferenceEncoding(
        ...     "bytes", pat_str="gpt2", mergeable_ranks={bytes([b]): b for b in range(256)},
        ...     special_tokens={"<|x|>": 256})
        >>> enc.encode_ordinary("hi <|x|>")
        [104, 105, 32, 60, 124, 120, 124, 62]
        """
        text = _repair_surrogates(text)
        ranks = self._mergeable_ranks
        ids: list[int] = []
        for piece in pretokenize(text, self._pat_str):
            ids.extend(encode_piece(ranks, piece.encode("utf-8")))
        return ids

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Encode ``text``; special-token text becomes its id only where allowed.

        - ``allowed_special``: the special tokens to encode as their ids (``"all"``: every one).
        - ``disallowed_special``: the texts whose presence raises ``ValueError``. ``"all"`` (the
          default) means every special token not in ``allowed_special``; ``()`` turns the check
          off, and disallowed special text is then encoded as ordinary text.

        >>> ranks = {bytes([b]): b for b in range(256)}
        >>> enc = ReferenceEncoding(
        ...     "bytes", pat_str="gpt2", mergeable_ranks=ranks, special_tokens={"<|x|>": 256})
        >>> enc.encode("a<|x|>", allowed_special="all")
        [97, 256]
        >>> enc.encode("a<|x|>")
        Traceback (most recent call last):
        ...
        ValueError: Encountered text corresponding to disallowed special token '<|x|>'.
        If you want this text to be encoded as a special token, pass it to `allowed_special`, e.g. `allowed_special={'<|x|>', ...}`.
        If you want this text to be encoded as normal text, disable the check for this token by passing `disallowed_special=(enc.special_tokens_set - {'<|x|>'})`.
        To disable this check for all special tokens, pass `disallowed_special=()`.
        <BLANKLINE>
        """  # noqa: E501
        allowed = (
            self.special_tokens_set if allowed_special == "all" else frozenset(allowed_special)
        )
        if disallowed_special == "all":
            disallowed = self.special_tokens_set - allowed
        else:
            disallowed = frozenset(disallowed_special)
        if disallowed:
            found = _special_token_regex(disallowed).search(text)
            if found:
                _raise_disallowed_special_token(found.group())

        allowed &= self.special_tokens_set  # allowing a string that is not special does nothing
        if not allowed:
            return self.encode_ordinary(text)
        # Cut the text at each allowed special token: the text between two of them is encoded
        # on its own (so a regex piece never spans a special token), the token becomes its id.
        text = _repair_surrogates(text)
        ids: list[int] = []
        start = 0
        for found in _special_token_regex(allowed).finditer(text):
            ids.extend(self.encode_ordinary(text[start : found.start()]))
            ids.append(self._special_tokens[found.group()])
            start = found.end()
        ids.extend(self.encode_ordinary(text[start:]))
        return ids

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the token whose text or bytes this is, special tokens included (else KeyError).

        >>> enc = ReferenceEncoding("bytes", pat_str="gpt2",
        ...     mergeable_ranks={bytes([b]): b for b in range(256)}, special_tokens={"<|x|>": 256})
        >>> enc.encode_single_token("a"), enc.encode_single_token(b"<|x|>")
        (97, 256)
        """
        token = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else text_or_bytes
        if token in self._mergeable_ranks:
            return self._mergeable_ranks[token]
        for text, token_id in self._special_tokens.items():
            if text.encode("utf-8") == token:
                return token_id
        raise KeyError(token)

    # ---- decoding ------------------------------------------------------------------------

    def decode_bytes(self, tokens: Sequence[int], /) -> bytes:
        """The bytes of ``tokens`` joined: the exact inverse of encoding (``KeyError`` if unknown).

        >>> enc = ReferenceEncoding("bytes", pat_str="gpt2",
        ...     mergeable_ranks={bytes([b]): b for b in range(256)}, special_tokens={})
        >>> enc.decode_bytes([104, 195])
        b'h\\xc3'
        """
        decoder = self._decoder
        try:
            return b"".join([decoder[token] for token in tokens])
        except KeyError as err:
            raise KeyError(f"token id {err.args[0]!r} is not in {self.name!r}") from None

    def decode(self, tokens: Sequence[int], /, errors: str = "replace") -> str:
        """The text of ``tokens``. Lossy by default: a cut UTF-8 character becomes U+FFFD.

        >>> enc = ReferenceEncoding("bytes", pat_str="gpt2",
        ...     mergeable_ranks={bytes([b]): b for b in range(256)}, special_tokens={})
        >>> enc.decode([104, 195]), enc.decode([104, 195], errors="ignore")
        ('h�', 'h')
        """
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token, special tokens included (``KeyError`` if unknown).

        >>> enc = ReferenceEncoding("bytes", pat_str="gpt2",
        ...     mergeable_ranks={bytes([b]): b for b in range(256)}, special_tokens={"<|x|>": 256})
        >>> enc.decode_single_token_bytes(256)
        b'<|x|>'
        """
        return self._decoder[token]

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token, to see where the boundaries fall.

        >>> enc = ReferenceEncoding("bytes", pat_str="gpt2",
        ...     mergeable_ranks={bytes([b]): b for b in range(256)}, special_tokens={})
        >>> enc.decode_tokens_bytes(enc.encode("hi"))
        [b'h', b'i']
        """
        return [self.decode_single_token_bytes(token) for token in tokens]


def _repair_surrogates(text: str) -> str:
    """Make ``text`` encodable as UTF-8, as tiktoken does.

    A Python str can hold surrogates (U+D800..U+DFFF), which UTF-8 cannot. Round-tripping through
    UTF-16 joins a valid high+low pair into its real character and replaces a lone one by U+FFFD.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


@functools.lru_cache(maxsize=128)
def _special_token_regex(tokens: frozenset[str]) -> Any:
    """A regex matching any of ``tokens`` literally.

    Longest first, then alphabetical: if one special token is a prefix of another, the longer one
    wins. (tiktoken leaves that order to a hash map; no real vocabulary has such a pair.)
    """
    ordered = sorted(tokens, key=lambda token: (-len(token), token))
    return regex.compile("|".join(regex.escape(token) for token in ordered))


def _raise_disallowed_special_token(token: str) -> NoReturn:
    # The same message as tiktoken, word for word: it tells the caller both ways out.
    raise ValueError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )
