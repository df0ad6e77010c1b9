"""Step 7: SentencePiece BPE models (Llama 2, Mistral), run as sentencepiece and ``tokenizers`` do.

These models do not start from bytes. The text is *normalized* first: each space becomes the
visible replacement character ``▁`` (U+2581) and a "dummy prefix" ``▁`` goes in front, so that
"world" and "hello world" both contain ``▁world``. Then characters are joined into pieces
(:mod:`~bytepair.reference.sentencepiece_merge`), and a character that is in no piece becomes its
UTF-8 bytes as the byte pieces ``<0x00>`` ... ``<0xFF>`` ("byte fallback").

The same model comes in two flavours, and :class:`SentencePieceReference` mirrors both:

- a ``.model`` file, run by sentencepiece (``merges=None``): joins by piece score
  (``bpe_model.cc``), normalizes as ``normalizer.cc`` does and decodes as
  ``SentencePieceProcessor::Decode``;
- a ``tokenizer.json``, run by ``tokenizers`` (``merges`` a list of id pairs): joins by merge
  rank, prepends as the ``Metaspace`` pre-tokenizer or the ``Prepend`` normalizer does, and
  decodes with the ``Replace``, ``ByteFallback``, ``Fuse`` and ``Strip`` decoders.

The dummy prefix (``prepend``) is where the two differ most:

- ``"always"``: every segment (the text, or each part between allowed special tokens) gets it,
  even one that starts with a space: sentencepiece's ``add_dummy_prefix`` and the ``Prepend``
  normalizer (" hello" is ``▁▁hello``);
- ``"always_unless_present"``: every segment that does not already start with ``▁`` after
  spaces are replaced: ``Metaspace(prepend_scheme="always")`` (" hello" is ``▁hello``);
- ``"first"``: the same, but only for the segment at the start of the text:
  ``Metaspace(prepend_scheme="first")``, Llama 2's ``tokenizer.json``;
- ``"never"``.

Special tokens (``<s>``) are ordinary text unless a call allows them, as sentencepiece's
``encode`` treats ``"<s>"``; :meth:`SentencePieceReference.encode` splits the text at the allowed
ones and encodes each part on its own.

>>> pieces = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("▁", -3.0, 1), ("h", -4.0, 1),
...           ("i", -4.0, 1), ("▁h", -1.0, 1), ("▁hi", -2.0, 1)]
>>> pieces += [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
>>> ref = SentencePieceReference(pieces, byte_fallback=True, unk_id=0, prepend="always",
...     remove_extra_whitespaces=False, escape_whitespaces=True,
...     treat_whitespace_as_suffix=False, special_tokens={"<s>": 1})
>>> [ref.id_to_piece(i) for i in ref.encode_ordinary("hi ih")]
['▁hi', '▁', 'i', 'h']
>>> ref.encode("<s>hi", allowed={"<s>"}), ref.encode_ordinary("é")
([1, 6], [2, 202, 176])
>>> ref.decode([1, 6, 2, 202, 176]), ref.decode_bytes([6, 202])
('hi é', b' hi\\xc3')
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Literal

from bytepair.reference.encoder import _repair_surrogates, _special_token_regex
from bytepair.reference.sentencepiece_merge import merge_by_rank, merge_by_score

__all__ = ["SentencePieceReference"]

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

Prepend = Literal["always", "always_unless_present", "first", "never"]
_PREPEND = ("always", "always_unless_present", "first", "never")

# tokenizers' ByteFallback decoder reads a byte from any token spelt <0xHH> (Rust's
# u8::from_str_radix also takes a leading "+").
_BYTE_TOKEN = re.compile(r"<0x(\+[0-9A-Fa-f]|[0-9A-Fa-f]{2})>")


class SentencePieceReference:
    """A SentencePiece BPE model in pure Python, with the ids of sentencepiece or ``tokenizers``.

    The arguments are those of ``_core.SentencePieceEncoder``:

    Args:
        pieces: ``(piece, score, type)`` per id; type is sentencepiece's (1 normal, 2 unknown,
            3 control, 4 user-defined, 5 unused, 6 byte).
        merges: ``None`` to join by score (sentencepiece), or ``(left id, right id)`` pairs in
            priority order (``tokenizers``).
        byte_fallback: characters in no piece become byte pieces ``<0xHH>``.
        unk_id: the unknown piece (``None``: ``tokenizers`` without ``unk_token`` drops them).
        prepend: the dummy prefix rule (see the module docstring).
        remove_extra_whitespaces, escape_whitespaces, treat_whitespace_as_suffix: sentencepiece's
            normalizer settings (strip and collapse spaces; spaces as ``replacement``; the
            dummy prefix at the end instead).
        replacement: the character spaces become (``▁``).
        split_on_replacement: cut the text before each ``replacement`` and merge each part on
            its own (``Metaspace(split=True)``).
        precompiled_charsmap: sentencepiece's Unicode normalization rules; only an empty one is
            supported.
        fuse_unk, ignore_merges: ``tokenizers``' BPE options (merge-list models only).
        decoder: ``"sentencepiece"`` or ``"hf"`` (see :meth:`decode`).
        unk_surface: the text of the unknown piece in :meth:`decode_bytes` (and in
            sentencepiece's decode).
        special_tokens: text -> id of the tokens :meth:`encode` may recognise in text.
    """

    def __init__(
        self,
        pieces: Sequence[tuple[str, float, int]],
        *,
        merges: Sequence[tuple[int, int]] | None = None,
        byte_fallback: bool,
        unk_id: int | None,
        prepend: Prepend,
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
        special_tokens: Mapping[str, int],
    ) -> None:
        if precompiled_charsmap:
            raise ValueError(
                "precompiled_charsmap: sentencepiece's Unicode normalization rules are not "
                "supported (only models whose normalizer is 'identity')"
            )
        if prepend not in _PREPEND:
            raise ValueError(f"prepend: expected one of {_PREPEND}, got {prepend!r}")
        if decoder not in ("sentencepiece", "hf"):
            raise ValueError(f"decoder: expected 'sentencepiece' or 'hf', got {decoder!r}")
        if len(replacement) != 1:
            raise ValueError(f"replacement: expected one character, got {replacement!r}")
        if merges is not None and (remove_extra_whitespaces or treat_whitespace_as_suffix):
            raise ValueError(
                "remove_extra_whitespaces and treat_whitespace_as_suffix are sentencepiece "
                "settings; a merge-list model has neither"
            )
        self._pieces = [_check_piece(i, p) for i, p in enumerate(pieces)]
        if not self._pieces:
            raise ValueError("pieces: empty")
        self._piece_id: dict[str, int] = {}
        for i, (text, _, _) in enumerate(self._pieces):
            other = self._piece_id.setdefault(text, i)
            if other != i:
                raise ValueError(f"pieces[{i}]: {text!r} is also pieces[{other}]")
        self._types = [kind for _, _, kind in self._pieces]
        n = len(self._pieces)
        if unk_id is not None and not 0 <= unk_id < n:
            raise ValueError(f"unk_id: {unk_id} is not an id (0 to {n - 1})")
        if merges is None and (unk_id is None or self._types[unk_id] != UNKNOWN):
            raise ValueError(f"unk_id: {unk_id} is not a piece of type 2 (unknown)")
        self._byte_id = {}
        for i, (text, _, kind) in enumerate(self._pieces):
            if kind == BYTE:
                if not re.fullmatch(r"<0x[0-9A-F]{2}>", text):
                    raise ValueError(f"pieces[{i}]: byte piece {text!r} is not <0xHH>")
                self._byte_id[int(text[3:5], 16)] = i
        if byte_fallback and len(self._byte_id) != 256 and merges is None:
            raise ValueError(f"byte_fallback: only {len(self._byte_id)} of the 256 byte pieces")
        self._special_tokens = dict(special_tokens)
        self._special_ids = set(self._special_tokens.values())
        for text, token_id in self._special_tokens.items():
            if not text or not isinstance(token_id, int) or not 0 <= token_id < n:
                raise ValueError(f"special_tokens: {text!r} -> {token_id!r} is not a piece id")
        self._merges: dict[tuple[int, int], tuple[int, int]] | None = None
        if merges is not None:
            self._merges = {}
            for rank, (left, right) in enumerate(merges):
                if not (0 <= left < n and 0 <= right < n):
                    raise ValueError(f"merges[{rank}]: ({left}, {right}) is not a pair of ids")
                joined = self._pieces[left][0] + self._pieces[right][0]
                if joined not in self._piece_id:
                    raise ValueError(f"merges[{rank}]: {joined!r} is not a piece")
                # A repeated pair keeps its last rank, as tokenizers' HashMap::collect does.
                self._merges[(left, right)] = (rank, self._piece_id[joined])
        self._mergeable = {
            text: i
            for i, (text, _, kind) in enumerate(self._pieces)
            if kind in (NORMAL, USER_DEFINED, UNUSED)
        }
        # User-defined pieces by their first character, longest first: the longest one that
        # matches is one unit (sentencepiece's PrefixMatcher).
        self._user_defined: dict[str, list[str]] = {}
        for text, _, kind in sorted(self._pieces, key=lambda p: -len(p[0])):
            if kind == USER_DEFINED:
                self._user_defined.setdefault(text[0], []).append(text)
        self._unused = {i for i, kind in enumerate(self._types) if kind == UNUSED}
        self._scores = [score for _, score, _ in self._pieces]
        self.byte_fallback = byte_fallback
        self.unk_id = unk_id
        self.prepend = prepend
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        self.replacement = replacement
        self.split_on_replacement = split_on_replacement
        self.fuse_unk = fuse_unk
        self.ignore_merges = ignore_merges
        self.decoder = decoder
        self.unk_surface = unk_surface

    # ---- the vocabulary ------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        """The number of pieces (ids are 0 to ``n_vocab - 1``)."""
        return len(self._pieces)

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special token text -> id (a copy)."""
        return dict(self._special_tokens)

    def pieces(self) -> list[tuple[str, float, int]]:
        """``(piece, score, type)`` per id."""
        return list(self._pieces)

    def id_to_piece(self, token_id: int) -> str:
        """The piece of ``token_id`` (``▁`` spelt as is)."""
        return self._pieces[self._check_id(token_id)][0]

    def piece_to_id(self, piece: str) -> int | None:
        """The id of ``piece``, or None."""
        return self._piece_id.get(piece)

    def _check_id(self, token_id: int) -> int:
        if not 0 <= token_id < len(self._pieces):
            raise ValueError(f"token id {token_id} is not in 0..{len(self._pieces) - 1}")
        return token_id

    # ---- normalizing ---------------------------------------------------------------------

    def _units(self, text: str) -> list[tuple[str, bool]]:
        """``text`` cut into user-defined pieces (longest first) and single characters, each
        with whether it is a user-defined piece (never joined with its neighbours)."""
        units = []
        at = 0
        while at < len(text):
            candidates = self._user_defined.get(text[at], ())
            found = next((u for u in candidates if text.startswith(u, at)), None)
            units.append((found or text[at], found is not None))
            at += len(found or text[at])
        return units

    def normalize(self, text: str, *, at_start: bool = True) -> str:
        """``text`` as the merge step sees it (``normalizer.cc``'s ``Normalize``, plus the
        ``Metaspace`` prefix rules); ``at_start``: whether it begins the whole text."""
        space = self.replacement if self.escape_whitespaces else " "
        units = [unit for unit, _ in self._units(text)]
        if self.remove_extra_whitespaces:
            while units and units[0] == " ":
                units.pop(0)
        if not units:
            return ""
        out: list[str] = []
        unconditional = self.prepend == "always"
        if unconditional and not self.treat_whitespace_as_suffix:
            out.append(space)
        previous_space = self.remove_extra_whitespaces
        for unit in units:
            if previous_space:
                unit = unit.lstrip(" ")  # a run of spaces counts once
            if unit:
                out.append(unit.replace(" ", space) if self.escape_whitespaces else unit)
                previous_space = unit.endswith(" ")
            if not self.remove_extra_whitespaces:
                previous_space = False
        normalized = "".join(out)
        if self.remove_extra_whitespaces:
            while normalized.endswith(space):
                normalized = normalized[: -len(space)]
        if unconditional and self.treat_whitespace_as_suffix:
            normalized += space
        elif (
            self.prepend == "always_unless_present" or (self.prepend == "first" and at_start)
        ) and not normalized.startswith(self.replacement):
            # Metaspace: only where the text does not start with the replacement already.
            normalized = self.replacement + normalized if normalized else ""
        return normalized

    # ---- encoding ------------------------------------------------------------------------

    def encode_ordinary(self, text: str, *, at_start: bool = True) -> list[int]:
        """The ids of ``text``, special-token text included as ordinary text."""
        normalized = self.normalize(_repair_surrogates(text), at_start=at_start)
        ids: list[int] = []
        for word in self._words(normalized):
            ids.extend(self._encode_word(word))
        return ids

    def _words(self, normalized: str) -> list[str]:
        if not self.split_on_replacement:
            return [normalized] if normalized else []
        # Metaspace's split: each replacement character starts a new word.
        r = self.replacement
        return [w for w in re.split(f"(?={re.escape(r)})", normalized) if w]

    def _encode_word(self, word: str) -> list[int]:
        if self._merges is not None:
            return merge_by_rank(
                word,
                self._piece_id,
                self._merges,
                byte_fallback=self.byte_fallback,
                unk_id=self.unk_id,
                fuse_unk=self.fuse_unk,
                ignore_merges=self.ignore_merges,
            )
        ids: list[int] = []
        previous_unknown = False
        merged = merge_by_score(self._units(word), self._mergeable, self._scores, self._unused)
        for piece in merged:
            # PieceToId: reserved pieces (control, unknown, byte) first, then the others.
            found = self._piece_id.get(piece)
            token_id = found if found is not None else self.unk_id
            assert token_id is not None  # a score model always has one (checked at construction)
            unknown = self._types[token_id] == UNKNOWN
            if unknown and self.byte_fallback:
                ids.extend(self._byte_id.get(b, token_id) for b in piece.encode("utf-8"))
            elif not (unknown and previous_unknown):  # a run of unknowns is one <unk>
                ids.append(token_id)
            previous_unknown = unknown
        return ids

    def encode(
        self, text: str, allowed: AbstractSet[str] | Literal["all"] = frozenset()
    ) -> list[int]:
        """The ids of ``text``, the ``allowed`` special tokens recognised in it.

        The text between two special tokens is encoded on its own; ``prepend="first"`` gives the
        dummy prefix only to the part at the start of the text, the other rules to every part.
        """
        specials = set(self._special_tokens) if allowed == "all" else set(allowed)
        specials &= set(self._special_tokens)
        if not specials:
            return self.encode_ordinary(text)
        text = _repair_surrogates(text)
        ids: list[int] = []
        start = 0
        for found in _special_token_regex(frozenset(specials)).finditer(text):
            ids.extend(self.encode_ordinary(text[start : found.start()], at_start=start == 0))
            ids.append(self._special_tokens[found.group()])
            start = found.end()
        ids.extend(self.encode_ordinary(text[start:], at_start=start == 0))
        return ids

    # ---- decoding ------------------------------------------------------------------------

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one id in the text: ``▁`` as a space, a byte piece as its byte, control
        pieces and special tokens as nothing, the unknown piece as ``unk_surface``."""
        text, _, kind = self._pieces[self._check_id(token_id)]
        if kind == BYTE:
            return bytes([int(text[3:5], 16)])
        if kind == CONTROL or token_id in self._special_ids:
            return b""
        if kind == UNKNOWN:
            return self.unk_surface.encode("utf-8")
        return text.replace(self.replacement, " ").encode("utf-8")

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes of ``ids`` joined (no leading space is dropped)."""
        return b"".join(self.token_bytes(i) for i in ids)

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids``, as sentencepiece's ``decode`` (``decoder="sentencepiece"``) or
        ``tokenizers``' ``decode`` (``"hf"``) gives it: the dummy prefix's space is dropped, and
        byte pieces that are not UTF-8 become U+FFFD (one per byte, or one per byte piece of a
        run that fails as a whole)."""
        for i in ids:
            self._check_id(i)
        if self.decoder == "hf":
            return self._decode_hf(ids)
        return self._decode_sentencepiece(ids)

    def _decode_sentencepiece(self, ids: Sequence[int]) -> str:
        # SentencePieceProcessor::Decode: a run of byte pieces becomes text character by
        # character; the first piece that starts the text loses its leading replacement.
        strip_leading = self.prepend != "never" or self.remove_extra_whitespaces
        text: list[str] = []
        run: list[int] = []
        expect_leading = True  # no text yet, and no leading replacement dropped yet
        dropped = has_text = False
        for token_id in [*ids, -1]:
            piece, _, kind = self._pieces[token_id] if token_id >= 0 else ("", 0.0, 0)
            if kind == BYTE:
                run.append(int(piece[3:5], 16))
                continue
            if run:
                text.append(_decode_bytes_sentencepiece(bytes(run)))
                has_text = True
                run = []
            if token_id < 0:
                break
            if dropped or has_text:
                expect_leading = False
            dropped = False
            if kind == CONTROL:
                continue
            if kind == UNKNOWN:
                piece = self.unk_surface
            elif expect_leading and strip_leading and piece.startswith(self.replacement):
                piece = piece[1:]
                # With remove_extra_whitespaces every leading replacement goes.
                dropped = not self.remove_extra_whitespaces
            decoded = piece if kind == UNKNOWN else piece.replace(self.replacement, " ")
            text.append(decoded)
            has_text = has_text or bool(decoded)
        return "".join(text)

    def _decode_hf(self, ids: Sequence[int]) -> str:
        # tokenizers: skip special tokens, then the decoders Replace(▁ -> " "), ByteFallback,
        # Fuse, and Strip(" ", 1, 0) when a dummy prefix is added.
        special = self._special_ids
        tokens = [
            (self.unk_surface if self._types[i] == UNKNOWN else self._pieces[i][0]).replace(
                self.replacement, " "
            )
            for i in ids
            if i not in special
        ]
        out: list[str] = []
        run: list[int] = []
        for token in [*tokens, None]:
            match = _BYTE_TOKEN.fullmatch(token) if token is not None else None
            if match:
                run.append(int(match.group(1), 16))
                continue
            if run:
                try:
                    out.append(bytes(run).decode("utf-8"))
                except UnicodeDecodeError:
                    out.append("\ufffd" * len(run))
                run = []
            if token is not None:
                out.append(token)
        text = "".join(out)
        if self.prepend != "never" and text.startswith(" "):
            text = text[1:]
        return text


def _check_piece(index: int, piece: object) -> tuple[str, float, int]:
    if not (isinstance(piece, tuple | list) and len(piece) == 3):
        raise ValueError(f"pieces[{index}]: expected (piece, score, type), got {piece!r}")
    text, score, kind = piece
    if not isinstance(text, str) or not text:
        raise ValueError(f"pieces[{index}]: the piece must be a non-empty str, got {text!r}")
    if not isinstance(score, int | float) or math.isnan(score):
        raise ValueError(f"pieces[{index}]: the score must be a number, got {score!r}")
    if kind not in (NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE):
        raise ValueError(f"pieces[{index}]: unknown type {kind!r} (1 to 6)")
    return text, float(score), kind


def _decode_bytes_sentencepiece(data: bytes) -> str:
    """Bytes to text one character at a time; each byte that starts no valid character is one
    U+FFFD (sentencepiece's ``IsValidDecodeUTF8``, not Python's ``errors="replace"``, which
    replaces a cut character's bytes together)."""
    out = []
    at = 0
    while at < len(data):
        lead = data[at]
        size = 1 if lead < 0x80 else 2 if lead >> 5 == 6 else 3 if lead >> 4 == 14 else 4
        try:
            out.append(data[at : at + size].decode("utf-8"))
            at += size
        except UnicodeDecodeError:
            out.append("\ufffd")
            at += 1
    return "".join(out)
