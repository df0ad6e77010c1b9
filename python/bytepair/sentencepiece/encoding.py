"""The SentencePiece model: an :class:`~bytepair.Encoding` over pieces with scores, as the
``sentencepiece`` library runs a ``.model`` file, or over a merge list with byte fallback, as
``tokenizers`` runs the same model's ``tokenizer.json``.

:func:`build_sentencepiece_encoding` builds one from
:class:`~bytepair.formats.values.SentencePieceComponents`; it is registered for them, so
:func:`bytepair.formats.load` and ``Encoding.from_file`` make these for both files.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from bytepair import _core
from bytepair._arguments import DEFAULT_THREADS, batch_texts, checked_threads
from bytepair.decoding import unknown_id
from bytepair.encoding import Encoding, _CoreCall
from bytepair.formats.builders import register_builder
from bytepair.formats.common import template_post_processor
from bytepair.formats.values import SentencePieceComponents
from bytepair.sentencepiece.offsets import SentencePieceAlignment
from bytepair.specials import ALLOWED_DEFAULT, DISALLOWED_DEFAULT

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from bytepair.hub import TokenizerConfig

__all__ = ["SentencePieceEncoding", "build_sentencepiece_encoding"]

_Specials = Literal["all"] | Collection[str]


class SentencePieceEncoding(Encoding):
    """An encoding read from a SentencePiece ``.model`` (Llama 1 and 2, Mistral 7B, Gemma, ...)
    or from the same model's ``tokenizer.json``: tiktoken's interface, the ids of the file's own
    library (``sentencepiece`` for a ``.model``, ``tokenizers`` for a ``tokenizer.json``).

    The control pieces (``<s>``, ``</s>``, ...) are its special tokens, under tiktoken's rules
    (see :meth:`Encoding.encode`): ``encode_ordinary`` reads ``"<s>"`` in a text as ordinary
    text, as ``sentencepiece``'s ``encode`` does. ``encode`` adds the beginning and end tokens
    the file asks for (a ``tokenizer.json``'s post-processor; a ``.model`` asks for none, as
    ``SentencePieceProcessor.encode`` adds none) unless ``add_special_tokens=False``.
    """

    _core: _core.SentencePieceEncoder
    _components: SentencePieceComponents
    _follows_tiktoken_rules = False  # pieces with scores, or pair merges over characters

    @classmethod
    def _from_components(cls, c: SentencePieceComponents) -> SentencePieceEncoding:
        options = c.encoder_options()
        try:
            core = _core.SentencePieceEncoder(list(c.pieces), **options)
        except ValueError as err:
            raise ValueError(f"{c.source}: {err}") from None
        self = cls.__new__(cls)
        self._components = c
        self._init_from_core(c.name, "", core, dict(c.special_tokens))
        return self

    def _install_compiled_calls(self) -> None:
        # encode_ordinary is always the core's; encode and count only when the file adds no
        # beginning or end token (otherwise _encode_general and _count_general add them).
        super()._install_compiled_calls()
        if self._components.add_bos or self._components.add_eos:
            self._core_defaults = None
            self._set_compiled_calls(self._core, ordinary=True, default_specials=None)

    def __repr__(self) -> str:
        return f"<SentencePieceEncoding {self.name!r}>"

    # ---- what the file says --------------------------------------------------------------

    @property
    def bos_id(self) -> int | None:
        """The id of the beginning-of-text piece (``<s>``), or None."""
        return self._components.bos_id

    @property
    def eos_id(self) -> int | None:
        """The id of the end-of-text piece (``</s>``), or None."""
        return self._components.eos_id

    @property
    def unk_id(self) -> int | None:
        """The id of the unknown piece (``<unk>``), or None."""
        return self._components.unk_id

    @property
    def pad_id(self) -> int | None:
        """The id of the padding piece, or None."""
        return self._components.pad_id

    @property
    def eot_token(self) -> int:
        """The id of the end-of-text piece (``</s>``); ``KeyError`` if the model has none."""
        eos = self._components.eos_id
        if eos is None:
            raise KeyError(f"{self.name!r} has no end-of-text piece")
        return eos

    def id_to_piece(self, token: int) -> str:
        """The piece of ``token`` as the file spells it (``▁the``, ``<0x0A>``, ``<s>``)."""
        try:
            return self._core.id_to_piece(token)
        except (OverflowError, ValueError):
            raise KeyError(f"token id {token} is not in the vocabulary") from None

    def piece_to_id(self, piece: str) -> int | None:
        """The id of a piece spelled as the file spells it, or None."""
        return self._core.piece_to_id(piece)

    # ---- encoding: the file's beginning and end tokens around the core's ids ----------------

    def _ends(self, add_special_tokens: bool) -> tuple[list[int], list[int]]:
        c = self._components
        if not add_special_tokens:
            return [], []
        head = [c.bos_id] if c.add_bos and c.bos_id is not None else []
        tail = [c.eos_id] if c.add_eos and c.eos_id is not None else []
        return head, tail

    def _encode_general(
        self,
        text: str,
        *,
        allowed_special: _Specials = ALLOWED_DEFAULT,
        disallowed_special: _Specials = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> list[int]:
        ids = self._run(self._core.encode, text, allowed_special, disallowed_special)
        head, tail = self._ends(add_special_tokens)
        return [*head, *ids, *tail] if head or tail else ids

    def _offsets_call(
        self, add_special_tokens: bool
    ) -> _CoreCall[str, tuple[list[int], list[tuple[int, int]]]]:
        # Built on first use: most encodings never ask for offsets.
        alignment = self.__dict__.get("_alignment")
        if alignment is None or alignment.c is not self._components:
            alignment = self.__dict__["_alignment"] = SentencePieceAlignment(
                self._components, self._core
            )
        head, tail = self._ends(add_special_tokens)
        core = self._core

        def call(
            text: str, allowed: _core.SpecialSet | None, disallowed: _core.SpecialSet | None
        ) -> tuple[list[int], list[tuple[int, int]]]:
            ids = core.encode(text, allowed, disallowed)
            spans = alignment.spans(text, ids)
            ends = [(0, 0)]
            return [*head, *ids, *tail], ends * len(head) + spans + ends * len(tail)

        return call

    def _count_general(
        self,
        text: str,
        *,
        allowed_special: _Specials = ALLOWED_DEFAULT,
        disallowed_special: _Specials = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> int:
        n = self._run(self._core.count, text, allowed_special, disallowed_special)
        head, tail = self._ends(add_special_tokens)
        return n + len(head) + len(tail)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: _Specials = ALLOWED_DEFAULT,
        disallowed_special: _Specials = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> npt.NDArray[np.uint32]:
        import numpy as np

        # The core fills the array: no Python int per id, no list on the way.
        ids = self._run(self._core.encode_to_numpy, text, allowed_special, disallowed_special)
        head, tail = self._ends(add_special_tokens)
        if not head and not tail:
            return ids
        return np.concatenate(
            (np.asarray(head, dtype=np.uint32), ids, np.asarray(tail, dtype=np.uint32))
        )

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = DEFAULT_THREADS,
        allowed_special: _Specials = ALLOWED_DEFAULT,
        disallowed_special: _Specials = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> list[list[int]]:
        texts = batch_texts(text)
        num_threads = checked_threads(num_threads, len(texts))
        core = self._core

        def call(
            ts: list[str], allowed: _core.SpecialSet | None, disallowed: _core.SpecialSet | None
        ) -> list[list[int]]:
            return core.encode_batch(ts, num_threads, allowed, disallowed)

        batch = self._run_batch(call, texts, allowed_special, disallowed_special)
        head, tail = self._ends(add_special_tokens)
        return [[*head, *ids, *tail] for ids in batch] if head or tail else batch

    def count_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = DEFAULT_THREADS,
        allowed_special: _Specials = ALLOWED_DEFAULT,
        disallowed_special: _Specials = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> list[int]:
        counts = super().count_batch(
            text,
            num_threads=num_threads,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
        )
        head, tail = self._ends(add_special_tokens)
        extra = len(head) + len(tail)
        return [n + extra for n in counts] if extra else counts

    # ---- decoding: the file's own library's rules ----------------------------------------

    def decode(
        self, tokens: Sequence[int], errors: str = "replace", *, skip_special_tokens: bool = False
    ) -> str:
        """Decode as the file's own library does: ``▁`` as a space, the dummy prefix's space
        dropped, byte pieces as their bytes. Special tokens: as their text for a
        ``tokenizer.json`` (``tokenizers``' ``decode(ids, skip_special_tokens=False)``) unless
        ``skip_special_tokens``; as nothing for a ``.model``, as ``sentencepiece`` decodes
        control pieces. Bytes that are not valid UTF-8 become U+FFFD by that library's rule
        (``sentencepiece``: one per byte; ``tokenizers``: one per byte token of an invalid
        run); ``errors="strict"`` raises ``UnicodeDecodeError`` instead. No other ``errors``
        value is offered: the libraries have none.
        """
        tokens = list(tokens)
        if errors not in ("replace", "strict"):
            raise ValueError(
                f"errors={errors!r}: a SentencePiece model decodes with its library's rule "
                "('replace') or 'strict'"
            )
        try:
            if errors == "strict":
                self._core.decode_bytes(tokens).decode("utf-8")
            return self._core.decode(tokens, keep_special=not skip_special_tokens)
        except OverflowError:
            raise unknown_id(tokens) from None

    # ---- what other models would lose ------------------------------------------------------

    def with_special_tokens(
        self, special_tokens: Mapping[str, int], *, name: str | None = None
    ) -> Encoding:
        raise ValueError(
            f"{self.name!r} is a SentencePiece model, whose pieces and scores a copy made from "
            "ranks would lose"
        )

    def to_tiktoken(self) -> Any:
        raise ValueError(
            f"{self.name!r} is a SentencePiece model (it merges by piece score or by a merge "
            "list over characters); tiktoken's rank rule would give other ids. Use to_hf()."
        )

    def vocabulary(self) -> SentencePieceComponents:
        """This encoding as the file formats see it: the model's components."""
        return self._components

    # ---- a Hub repository's settings ------------------------------------------------------

    def _use_tokenizer_config(self, config: TokenizerConfig) -> None:
        """Keep the settings and do what transformers' Llama tokenizer does with them:

        - ``legacy: false`` beside a ``.model`` with sentencepiece's dummy prefix: the space is
          put before the text only, and not where the text starts with one, as
          ``LlamaConverter`` (``legacy=False``) writes the ``tokenizer.json``
          (``prepend_scheme: "first"``);
        - ``add_bos_token``/``add_eos_token``, where either is set: ``encode`` adds
          ``bos_token``/``eos_token`` as asked (a flag left unset counts as false), and a
          ``tokenizer.json`` written from it has that post-processor.
        """
        c = self._components
        changes: dict[str, Any] = {}
        legacy_false = config.legacy is False and c.source_format == "sentencepiece-model"
        if legacy_false and c.prepend == "always":
            changes["prepend"] = "first"
        if config.add_bos_token is not None or config.add_eos_token is not None:
            bos = self._config_token(config, config.bos_token, config.add_bos_token)
            eos = self._config_token(config, config.eos_token, config.add_eos_token)
            changes.update(add_bos=bos is not None, add_eos=eos is not None)
            if bos is not None:
                changes["bos_id"] = bos[1]
            if eos is not None:
                changes["eos_id"] = eos[1]
            if c.spec is not None:
                post_processor = template_post_processor(bos, eos)
                changes["spec"] = {**c.spec, "post_processor": post_processor}
        if changes:
            self._become(build_sentencepiece_encoding(dataclasses.replace(c, **changes)))
        self.tokenizer_config = config

    def _become(self, built: SentencePieceEncoding) -> None:
        # The compiled calls live in the compiled base, not in __dict__: point them at the
        # new core too.
        self.__dict__.update(built.__dict__)
        self._install_compiled_calls()

    def _config_token(
        self, config: TokenizerConfig, text: str | None, wanted: bool | None
    ) -> tuple[str, int] | None:
        if not wanted or text is None:
            return None
        token = self._components.special_tokens.get(text, self.piece_to_id(text))
        if token is None:
            raise ValueError(
                f"{config.repo_id}: tokenizer_config.json adds {text!r}, which the "
                "vocabulary does not have"
            )
        return text, token

    # ---- pickling: as its components (the Hub settings already in them) -------------------

    def __getstate__(self) -> dict[str, Any]:
        return {"components": self._components, "tokenizer_config": self.tokenizer_config}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._become(build_sentencepiece_encoding(state["components"]))
        if state.get("tokenizer_config") is not None:
            self.tokenizer_config = state["tokenizer_config"]


def build_sentencepiece_encoding(c: SentencePieceComponents) -> SentencePieceEncoding:
    """Build an encoding from SentencePiece components (errors name ``c.source``)."""
    return SentencePieceEncoding._from_components(c)


register_builder(SentencePieceComponents, build_sentencepiece_encoding)
