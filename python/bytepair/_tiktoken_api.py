"""tiktoken's less common ``Encoding`` methods, with tiktoken's ids: bytes in, unstable tails.

Real code written for tiktoken calls these (its tests, Llama 3's reference tokenizer, prompt
tooling): :meth:`~TiktokenApi.encode_bytes` (tiktoken's ``_encode_bytes``),
``encode_with_unstable``, ``_encode_single_piece`` and ``_encode_only_native_bpe``. Each follows
tiktoken's own algorithm step by step (``src/py.rs`` and ``src/lib.rs`` of tiktoken), built from
the compiled encoder's whole-text calls and, where tiktoken merges bytes that are not one piece
of text, the textbook merge of :mod:`bytepair.reference.merge` (exact, in Python).

They follow tiktoken's rank rule, so an encoding that runs a Hugging Face pipeline (another
pre-tokenizer, pair merges) sets ``_follows_tiktoken_rules = False`` and they raise there.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection
from typing import TYPE_CHECKING, Literal

from bytepair import _core
from bytepair._whitespace import is_rust_whitespace
from bytepair.reference.merge import LONG_PIECE, merge_piece, merge_piece_heap

if TYPE_CHECKING:
    from bytepair.specials import SpecialTokenRules

    # Type checkers see the compiled encode calls these methods build on; at run time they come
    # from the class this is mixed into (and the API reference documents them there).
    _CompiledCalls = _core.EncodingBase
else:
    _CompiledCalls = object

__all__ = ["TiktokenApi"]

_ALL_SPACE = frozenset(b" \n\t")


class TiktokenApi(_CompiledCalls):
    """The tiktoken methods beyond encode and decode; mixed into :class:`bytepair.Encoding`."""

    _follows_tiktoken_rules = True

    if TYPE_CHECKING:
        _core: _core.Encoder
        _pat_str: str
        _special_tokens: dict[str, int]
        _special_rules: SpecialTokenRules

        @property
        def _mergeable_ranks(self) -> dict[bytes, int]: ...

    def _check_rank_rule(self, method: str) -> None:
        if not self._follows_tiktoken_rules:
            raise ValueError(
                f"{method} follows tiktoken's rank rule and pattern; "
                f"{getattr(self, 'name', 'this encoding')!r} runs a Hugging Face pipeline"
            )

    # ---- single pieces --------------------------------------------------------------------

    def _byte_pair_encode(self, piece: bytes) -> list[int]:
        """tiktoken's ``byte_pair_encode``: the rank merge of ``piece``, no whole-piece lookup."""
        ranks = self._mergeable_ranks
        if len(piece) <= 1:
            return [ranks[piece]] if piece else []
        parts = (
            merge_piece(ranks, piece)
            if len(piece) <= LONG_PIECE
            else merge_piece_heap(ranks, piece)
        )
        return [ranks[part] for part in parts]

    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        """Encode text or bytes as one piece, without the pattern; never a special token.

        >>> from bytepair.patterns import GPT2
        >>> from bytepair import Encoding
        >>> ranks = {bytes([b]): b for b in range(256)} | {b"a b": 256, b"a ": 257}
        >>> enc = Encoding("t", pat_str=GPT2, mergeable_ranks=ranks, special_tokens={})
        >>> enc._encode_single_piece("a b"), enc.encode("a b")
        ([256], [97, 32, 98])
        """
        self._check_rank_rule("_encode_single_piece")
        piece = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else text_or_bytes
        piece = bytes(piece)
        rank = self._mergeable_ranks.get(piece)
        if rank is not None:
            return [rank]
        try:
            text = piece.decode("utf-8")
        except UnicodeDecodeError:
            return self._byte_pair_encode(piece)
        # Where the pattern keeps the text whole, the compiled merge of that one piece is it.
        if _core.split(self._pat_str, text) == [text]:
            return self.encode_ordinary(text)
        return self._byte_pair_encode(piece)

    def _encode_only_native_bpe(self, text: str) -> list[int]:
        """Split ``text`` with the ``regex`` module in Python, then merge each piece (tiktoken's
        check of its own splitter); the same ids as :meth:`encode_ordinary`."""
        self._check_rank_rule("_encode_only_native_bpe")
        import regex

        ids: list[int] = []
        for piece in regex.findall(self._pat_str, text):
            ids.extend(self._encode_single_piece(piece.encode("utf-8")))
        return ids

    # ---- the last piece of a text ---------------------------------------------------------

    def _last_piece_token_len(self, tokens: list[int], tail: bytes) -> int:
        """How many tokens at the end of ``tokens`` came from the last piece of ``tail`` (the
        text after the last special token), widened over whitespace tokens as tiktoken does
        (``_increase_last_piece_token_len``: splits such as ``\\s*[\\r\\n]+`` can vanish)."""
        if not tail:
            return 0
        last = _core.split(self._pat_str, tail.decode("utf-8"))[-1].encode("utf-8")
        n, covered = 0, 0
        while covered < len(last):
            n += 1
            covered += len(self._core.decode_single_token_bytes(tokens[-n]))

        def all_space(token: int) -> bool:
            if token in self._special_ids_set:
                return False
            return set(self._core.decode_single_token_bytes(token)) <= _ALL_SPACE

        if all_space(tokens[-n]):
            while n < len(tokens) and all_space(tokens[-n - 1]):
                n += 1
        return n

    @property
    def _special_ids_set(self) -> frozenset[int]:
        return frozenset(self._special_tokens.values())

    def encode_bytes(self, data: bytes) -> list[int]:
        """Encode bytes that need not be UTF-8, with tiktoken's ids (its ``_encode_bytes``).

        Valid UTF-8 is :meth:`encode_ordinary`. Otherwise the text before the first invalid byte
        is encoded, and its last piece (widened over whitespace tokens) is merged together with
        all the bytes from the invalid one on, as one piece: the tokens a model sees for text
        cut inside a character.

        >>> from bytepair.patterns import GPT2
        >>> from bytepair import Encoding
        >>> ranks = {bytes([b]): b for b in range(256)} | {b"i\\xff": 256, b"hi": 257}
        >>> enc = Encoding("t", pat_str=GPT2, mergeable_ranks=ranks, special_tokens={})
        >>> enc.encode_bytes(b"hi"), enc.encode_bytes(b"hi\\xff")
        ([257], [104, 256])
        """
        self._check_rank_rule("encode_bytes")
        data = bytes(data)
        try:
            return self.encode_ordinary(data.decode("utf-8"))
        except UnicodeDecodeError as e:
            valid_up_to = e.start
        prefix = data[:valid_up_to]
        tokens = self.encode_ordinary(prefix.decode("utf-8"))
        n = self._last_piece_token_len(tokens, prefix)
        unstable = self._core.decode_bytes(tokens[len(tokens) - n :]) + data[valid_up_to:]
        del tokens[len(tokens) - n :]
        rank = self._mergeable_ranks.get(unstable)
        tokens.extend([rank] if rank is not None else self._byte_pair_encode(unstable))
        return tokens

    def _encode_bytes(self, data: bytes) -> list[int]:
        """tiktoken's name for :meth:`encode_bytes`."""
        return self.encode_bytes(data)

    # ---- unstable tails -------------------------------------------------------------------

    @property
    def _sorted_token_bytes(self) -> list[bytes]:
        cached: list[bytes] | None = self.__dict__.get("_sorted_token_bytes_cache")
        if cached is None:
            cached = sorted(self._mergeable_ranks)
            self.__dict__["_sorted_token_bytes_cache"] = cached
        return cached

    def _tokens_starting_with(self, prefix: bytes) -> list[bytes]:
        tokens = self._sorted_token_bytes
        i = bisect.bisect_left(tokens, prefix)
        found = []
        while i < len(tokens) and tokens[i].startswith(prefix):
            found.append(tokens[i])
            i += 1
        return found

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """The stable tokens of ``text`` and the token sequences a continuation could start
        with (tiktoken's experimental API, same results; completions in no set order).

        The stable tokens decode to a prefix of ``text``; each completion, appended to them,
        decodes to something that starts with ``text``.
        """
        self._check_rank_rule("encode_with_unstable")
        tokens = self.encode(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        specials = self._special_ids_set
        start = len(tokens)
        while start > 0 and tokens[start - 1] not in specials:
            start -= 1
        n = self._last_piece_token_len(tokens, self._core.decode_bytes(tokens[start:]))
        if n == 0:
            return tokens, []
        unstable = self._core.decode_bytes(tokens[len(tokens) - n :])
        del tokens[len(tokens) - n :]
        return tokens, [list(c) for c in self._completions(unstable)]

    def _completions(self, unstable: bytes) -> set[tuple[int, ...]]:
        """tiktoken's ``_encode_unstable_native`` after the stable tokens are cut off."""
        ranks = self._mergeable_ranks
        whole = self._tokens_starting_with(unstable)
        completions: set[tuple[int, ...]] = {(ranks[t],) for t in whole}
        for i in range(1, len(unstable)):
            prefix, suffix = unstable[:i], unstable[i:]
            for token in self._tokens_starting_with(suffix):
                possibility = prefix + token
                try:
                    encoded = self.encode_ordinary(possibility.decode("utf-8"))
                except UnicodeDecodeError:
                    encoded = self._byte_pair_encode(possibility)
                seq: list[int] = []
                length = 0
                for t in encoded:
                    seq.append(t)
                    length += len(self._core.decode_single_token_bytes(t))
                    if length >= len(unstable):
                        break
                completions.add(tuple(seq))
        # A split can appear before trailing whitespace once more text follows ("\n\n" + "0").
        if len(unstable) > 1:
            size = _last_char_size(unstable)
            if size and len(unstable) > size and is_rust_whitespace(unstable[-size:].decode()):
                completions.add(
                    tuple(
                        self._byte_pair_encode(unstable[:-size])
                        + self._byte_pair_encode(unstable[-size:])
                    )
                )
        return completions


def _last_char_size(data: bytes) -> int:
    """The length of the UTF-8 character that ends ``data``, or 0 if it ends in invalid bytes."""
    for size in range(1, min(4, len(data)) + 1):
        try:
            if len(data[-size:].decode("utf-8")) == 1:
                return size
        except UnicodeDecodeError:
            continue
    return 0
