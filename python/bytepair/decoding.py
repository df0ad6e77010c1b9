"""Ids back to bytes and text: the decoding half of an encoding, the same for every model.

:class:`Decoding` is the base of :class:`bytepair.Encoding`; :class:`StreamDecoder` decodes one
id at a time.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Sequence

from bytepair import _core
from bytepair._arguments import DEFAULT_THREADS

__all__ = ["Decoding", "StreamDecoder", "unknown_id"]


class Decoding:
    """Decoding and the vocabulary's special tokens, given the compiled encoder ``_core`` and
    ``_special_tokens`` (set by the encoding)."""

    _core: _core.Encoder
    _special_tokens: dict[str, int]

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of ``tokens``; ``KeyError`` names the first id that is no token."""
        tokens = list(tokens)
        try:
            return self._core.decode_bytes(tokens)
        except OverflowError:
            raise unknown_id(tokens) from None

    def decode(
        self, tokens: Sequence[int], errors: str = "replace", *, skip_special_tokens: bool = False
    ) -> str:
        """Decode ``tokens`` to text; invalid UTF-8 is handled by ``errors`` (as bytes.decode).

        ``skip_special_tokens=True`` leaves special tokens out, as ``tokenizers``' ``decode`` does
        by default.

        >>> enc = byte_encoding  # the 256 single bytes, and <s> = 256 (see Encoding)
        >>> enc.decode([0xC3, 0xA9]), enc.decode([0xC3])
        ('é', '�')
        >>> enc.decode([256, 104]), enc.decode([256, 104], skip_special_tokens=True)
        ('<s>h', 'h')
        """
        if skip_special_tokens:
            special = self._special_ids
            tokens = [t for t in tokens if t not in special]
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token."""
        try:
            return self._core.decode_single_token_bytes(token)
        except OverflowError:
            raise unknown_id([token]) from None

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token, in order."""
        tokens = list(tokens)
        try:
            return self._core.decode_tokens_bytes(tokens)
        except OverflowError:
            raise unknown_id(tokens) from None

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """Decode, and give the character offset where each token starts (tiktoken's rule: a
        token that starts inside a character is placed at that character).

        >>> enc = byte_encoding  # the 256 single bytes, and <s> = 256 (see Encoding)
        >>> enc.decode_with_offsets([104, 0xC3, 0xA9, 105])
        ('héi', [0, 1, 1, 2])
        """
        token_bytes = self.decode_tokens_bytes(tokens)
        text_len = 0
        offsets = []
        for token in token_bytes:
            # A token starting with a continuation byte belongs to the character begun before it.
            offsets.append(max(0, text_len - (0x80 <= token[0] < 0xC0)))
            text_len += sum(1 for c in token if not 0x80 <= c < 0xC0)
        text = b"".join(token_bytes).decode("utf-8", errors="strict")
        return text, offsets

    def decode_batch(
        self,
        batch: Sequence[Sequence[int]],
        *,
        errors: str = "replace",
        num_threads: int = DEFAULT_THREADS,
    ) -> list[str]:
        """Decode many token lists."""
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(
        self, batch: Sequence[Sequence[int]], *, num_threads: int = DEFAULT_THREADS
    ) -> list[bytes]:
        """The bytes of many token lists."""
        return [self.decode_bytes(tokens) for tokens in batch]

    def stream_decoder(self, errors: str = "replace") -> StreamDecoder:
        """A decoder fed one id at a time that yields text as soon as characters are whole.

        >>> enc = byte_encoding  # the 256 single bytes, and <s> = 256 (see Encoding)
        >>> d = enc.stream_decoder()
        >>> [d.feed(t) for t in [104, 0xC3, 0xA9]], d.flush()
        (['h', '', 'é'], '')
        """
        return StreamDecoder(self, errors=errors)

    # ---- the vocabulary -------------------------------------------------------------------

    def token_byte_values(self) -> list[bytes]:
        """Every ordinary token's bytes, sorted bytewise (as tiktoken returns them)."""
        return self._core.token_byte_values()

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>`` (``KeyError`` if this encoding has none)."""
        return self._special_tokens["<|endoftext|>"]

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens' texts."""
        return set(self._special_tokens)

    def is_special_token(self, token: int) -> bool:
        """Whether id ``token`` is a special token."""
        return token in self._special_ids

    @property
    def _special_ids(self) -> frozenset[int]:
        return frozenset(self._special_tokens.values())


def unknown_id(tokens: Iterable[object]) -> KeyError:
    """The error for ids too large for the core to read (it reads 64-bit ids)."""
    for token in tokens:
        if isinstance(token, int) and not -(2**63) <= token < 2**63:
            return KeyError(f"token id {token} is not in the vocabulary")
    return KeyError("a token id is not in the vocabulary")


class StreamDecoder:
    """Turns ids into text incrementally, never splitting a UTF-8 character.

    Bytes of a character cut across tokens are held back until the character is complete;
    :meth:`flush` returns what remains (decoded with ``errors``) and :attr:`pending` shows it.
    """

    def __init__(self, encoding: Decoding, errors: str = "replace") -> None:
        self._encoding = encoding
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors=errors)

    def feed(self, token: int) -> str:
        """Add one id; return the text completed by it (possibly empty)."""
        return self._decoder.decode(self._encoding.decode_single_token_bytes(token))

    def feed_many(self, tokens: Iterable[int]) -> str:
        """Add several ids; return the text they complete."""
        return self._decoder.decode(self._encoding.decode_bytes(list(tokens)))

    @property
    def pending(self) -> bytes:
        """The bytes held back because they do not yet form a whole character."""
        return self._decoder.getstate()[0]

    def flush(self) -> str:
        """Return the held-back bytes as text (decoded with ``errors``) and reset."""
        text = self._decoder.decode(b"", final=True)
        self._decoder.reset()
        return text
