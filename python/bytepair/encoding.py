"""The tiktoken-compatible :class:`Encoding`: policy in Python, the work in Rust.

This class owns what users see: special-token rules and their error messages, ``errors=`` on
decode, the repair of strings with lone surrogates, numpy output. The compiled encoder
(``bytepair._core.RankEncoder``) does the pre-tokenizing, merging and decoding with the GIL
released, so one ``Encoding`` can be shared by many threads. ``encode``, ``count`` and
``encode_ordinary`` are compiled methods of the base class ``bytepair._core.EncodingBase``.

``Encoding`` is the rank model (tiktoken's rule: ids are merge ranks). Other models subclass it
and override the encode methods (the Hugging Face pipeline: :class:`bytepair.hf.HfEncoding`);
nothing here branches on the model. Each model registers the file values it builds with
:mod:`bytepair.formats.builders` (this one in :mod:`bytepair._rank`), so the loaders below
reach every model without importing it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from bytepair import _core, formats
from bytepair._arguments import (
    DEFAULT_THREADS,
    batch_texts,
    check_explicit_n_vocab,
    check_id_range,
    checked_threads,
    disallowed_special_error,
    repair_surrogates,
    repaired,
    utf8_safe,
)
from bytepair._chat_api import ChatApi
from bytepair._offsets_api import OffsetsApi
from bytepair._optional import require
from bytepair._tiktoken_api import TiktokenApi
from bytepair.decoding import Decoding
from bytepair.decoding import StreamDecoder as StreamDecoder  # re-exported: its old home
from bytepair.formats import SaveFormat
from bytepair.formats.gpt2 import load_gpt2_files
from bytepair.formats.hf_files import load_hf_files
from bytepair.formats.hf_json import load_tokenizer_json
from bytepair.formats.tiktoken_file import with_line_numbers
from bytepair.formats.values import RankVocabulary, Vocabulary
from bytepair.patterns import resolve_pattern
from bytepair.specials import ALLOWED_DEFAULT, DISALLOWED_DEFAULT, SpecialTokenRules

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np
    import numpy.typing as npt

    from bytepair.hub import TokenizerConfig


_T = TypeVar("_T")
_R = TypeVar("_R")
# A core call given the text (or texts) and the resolved allowed and disallowed sets.
_CoreCall = Callable[[_T, _core.SpecialSet | None, _core.SpecialSet | None], _R]


class Encoding(Decoding, TiktokenApi, ChatApi, OffsetsApi, _core.EncodingBase):
    """A byte-level BPE encoding with tiktoken's interface and ids.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
    >>> enc = Encoding("toy", pat_str=r"\\S+|\\s+", mergeable_ranks=ranks,
    ...                special_tokens={"<|end|>": 258})
    >>> enc.encode("abc ab")
    [257, 32, 256]
    >>> enc.encode("abc<|end|>", allowed_special="all")
    [257, 258]
    >>> enc.decode([257, 32, 256])
    'abc ab'

    The examples of the methods use ``byte_encoding``, the 256 single bytes as tokens with GPT-2's
    pattern and ``<s>`` = 256 as its special token::

        byte_encoding = Encoding("bytes", pat_str=GPT2,
                                 mergeable_ranks={bytes([b]): b for b in range(256)},
                                 special_tokens={"<s>": 256})
    """

    tokenizer_config: TokenizerConfig | None = None
    """The settings of the Hub repository the encoding came from (:meth:`from_pretrained`), or
    None."""

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: Mapping[bytes, int],
        special_tokens: Mapping[str, int],
        explicit_n_vocab: int | None = None,
    ) -> None:
        pat_str = resolve_pattern(pat_str)  # a name, or a regex (a name-like typo raises)
        ranks = dict(mergeable_ranks)
        specials = dict(special_tokens)
        if explicit_n_vocab is not None:
            check_explicit_n_vocab(explicit_n_vocab, ranks, specials)
        try:
            check_id_range(ranks, specials)
            core = _core.RankEncoder(ranks, specials, pat_str)
        except ValueError as e:
            raise ValueError(f"cannot build encoding {name!r}: {e}") from None
        self._init_from_core(name, pat_str, core, specials, ranks)

    def _init_from_core(
        self,
        name: str,
        pat_str: str,
        core: _core.Encoder,
        special_tokens: dict[str, int],
        mergeable_ranks: dict[bytes, int] | None = None,
    ) -> None:
        self.name = name
        self._pat_str = pat_str
        self._core = core
        self._special_tokens = special_tokens
        self._ranks_cache = mergeable_ranks
        self.max_token_value = core.id_bound - 1
        self._special_set = frozenset(special_tokens)
        self._special_rules = SpecialTokenRules(core, special_tokens)
        self._install_compiled_calls()

    def _install_compiled_calls(self) -> None:
        """Say what the compiled ``encode_ordinary``, ``encode`` and ``count`` (methods of
        ``_core.EncodingBase``) may answer themselves, with no Python frame: the core's
        ``encode_ordinary`` is all of encode_ordinary (lone surrogates included), and ``encode``
        and ``count`` with default arguments are one core call each. Any other call goes to the
        ``_general`` method here; a subclass that overrides a method is not affected.
        """
        allowed, disallowed, searched_in_python = self._special_rules.default
        # What `encode` and `count` with default arguments pass straight to the core (None when
        # Python must look for strings in the text itself).
        self._core_defaults = None if searched_in_python else (allowed, disallowed)
        self._set_compiled_calls(self._core, ordinary=True, default_specials=self._core_defaults)

    @classmethod
    def from_tiktoken_file(
        cls,
        path: str | os.PathLike[str],
        *,
        pat_str: str,
        special_tokens: Mapping[str, int] | None = None,
        name: str | None = None,
    ) -> Encoding:
        """Build from a ``.tiktoken`` file (base64 token and rank per line), parsed in Rust.

        ``pat_str`` accepts a pattern name (``"cl100k"``) or a regex.
        """
        path = os.fspath(path)
        with open(path, "rb") as f:
            data = f.read()
        stem = os.path.basename(path).rsplit(".", 1)[0]
        return cls._from_tiktoken_bytes(
            data,
            name=name or stem,
            pat_str=resolve_pattern(pat_str),
            special_tokens=dict(special_tokens or {}),
            source=path,
        )

    @classmethod
    def _from_core(
        cls, name: str, pat_str: str, core: _core.Encoder, special_tokens: Mapping[str, int]
    ) -> Encoding:
        self = cls.__new__(cls)
        self._init_from_core(name, pat_str, core, dict(special_tokens))
        return self

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        pat_str: str | None = None,
        special_tokens: Mapping[str, int] | None = None,
        **options: Any,
    ) -> Encoding:
        """Read a vocabulary in any supported format, recognised by content: tiktoken (also
        Llama 3's ``tokenizer.model``), GPT-2 ``encoder.json`` + ``vocab.bpe``, Hugging Face
        ``vocab.json`` + ``merges.txt`` (a folder or either file of the pair), ``tokenizer.json``,
        Mistral's ``tekken.json`` (``mistral_common``'s ids).

        ``pat_str`` and ``special_tokens`` are for formats that do not hold them; the known
        tiktoken files (by sha256), ``tokenizer.json`` and ``tekken.json`` need neither.
        ``options`` go to :meth:`from_hf_files` for ``vocab.json`` + ``merges.txt``
        (``normalizer=``, ``pre_tokenizer=``, ``ignore_merges=``). See :mod:`bytepair.formats`
        for how each format is read and how special tokens behave.

        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "bytes.tiktoken"
        >>> _ = byte_encoding.save(path, format="tiktoken")
        >>> Encoding.from_file(path, pat_str=r"\\S+|\\s+").encode("hi")
        [104, 105]
        """
        return _loaded(
            formats.load(path, pat_str=pat_str, special_tokens=special_tokens, **options)
        )

    @classmethod
    def from_gpt2_files(
        cls,
        encoder_json: str | os.PathLike[str],
        vocab_bpe: str | os.PathLike[str],
        *,
        pat_str: str | None = None,
        special_tokens: Mapping[str, int] | None = None,
    ) -> Encoding:
        """Read GPT-2's ``encoder.json`` + ``vocab.bpe`` as tiktoken does (ids are ranks).

        ``pat_str`` defaults to GPT-2's; the entries no merge makes (``<|endoftext|>``) are special
        tokens, with ``special_tokens`` added. See :mod:`bytepair.formats.gpt2`.

        >>> import tempfile, pathlib
        >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> from bytepair.patterns import GPT2
        >>> encoder, merges = Encoding("t", pat_str=GPT2, mergeable_ranks=ranks,
        ...                            special_tokens={"<e>": 257}).save(folder, format="gpt2")
        >>> enc = Encoding.from_gpt2_files(encoder, merges)
        >>> enc.encode("ab<e>", allowed_special="all"), enc.special_tokens_set
        ([256, 257], {'<e>'})
        """
        return _loaded(
            load_gpt2_files(encoder_json, vocab_bpe, pat_str=pat_str, special_tokens=special_tokens)
        )

    @classmethod
    def from_hf_files(
        cls,
        vocab_json: str | os.PathLike[str],
        merges_txt: str | os.PathLike[str],
        *,
        pat_str: str | None = None,
        special_tokens: Mapping[str, int] | None = None,
        **options: Any,
    ) -> Encoding:
        """Read Hugging Face ``vocab.json`` + ``merges.txt`` as ``tokenizers`` does (pair merges).

        The files hold no pre-tokenizer: give ``pat_str`` (a pattern name or regex) or
        ``pre_tokenizer=`` (a ``tokenizer.json`` object) unless the vocabulary is known by hash;
        ``normalizer=`` takes a name or an object. See :mod:`bytepair.formats.hf_files`.

        >>> import json, tempfile, pathlib
        >>> from bytepair.bytes_unicode import encode_bytes
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> vocab = {encode_bytes(bytes([b])): b for b in range(256)} | {"ab": 256, "<e>": 257}
        >>> _ = (folder / "vocab.json").write_text(json.dumps(vocab))
        >>> _ = (folder / "merges.txt").write_text("#version: 0.2\\na b\\n")
        >>> vocab_json, merges_txt = folder / "vocab.json", folder / "merges.txt"
        >>> enc = Encoding.from_hf_files(vocab_json, merges_txt, pat_str="gpt2")
        >>> enc.encode("abab<e>", allowed_special="all")  # <e> is no merge's result: special
        [256, 256, 257]
        """
        return _loaded(
            load_hf_files(
                vocab_json, merges_txt, pat_str=pat_str, special_tokens=special_tokens, **options
            )
        )

    @classmethod
    def from_tokenizer_json(
        cls, path: str | os.PathLike[str], *, ignore_settings: Collection[str] = ()
    ) -> Encoding:
        """Read a Hugging Face ``tokenizer.json`` of a byte-level BPE model; ids equal
        ``tokenizers.Tokenizer.from_file(path).encode(text).ids`` with
        ``allowed_special="all"`` (``padding``/``truncation`` set in the file are an error unless
        ``ignore_settings`` names them). By default its special added tokens follow tiktoken's rules
        (text that spells one raises ``ValueError``; see :meth:`encode`). See
        :mod:`bytepair.formats.hf_json` for what is supported (anything else is a ``ValueError``
        naming the component).

        >>> import tempfile, pathlib
        >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
        >>> from bytepair.patterns import GPT2
        >>> enc = Encoding("t", pat_str=GPT2, mergeable_ranks=ranks, special_tokens={"<e>": 257})
        >>> (path,) = enc.save(pathlib.Path(tempfile.mkdtemp()), format="hf")
        >>> hf = Encoding.from_tokenizer_json(path)
        >>> hf.encode("ab<e>", allowed_special="all"), hf.encode("ab<e>", disallowed_special=())
        ([256, 257], [256, 60, 101, 62])
        """
        return _loaded(load_tokenizer_json(path, ignore_settings=ignore_settings))

    @classmethod
    def from_pretrained(
        cls,
        repo_id: str,
        revision: str | None = None,
        *,
        local_files_only: bool = False,
        cache_dir: str | os.PathLike[str] | None = None,
        token: str | bool | None = None,
    ) -> Encoding:
        """The tokenizer of a Hugging Face Hub model (``"Qwen/Qwen2.5-0.5B-Instruct"``), through
        ``huggingface_hub`` (``pip install 'bytepair[hub]'``), its cache and its revisions.

        ``local_files_only=True`` or ``HF_HUB_OFFLINE=1`` read the cache only: a model not there
        is an ``OSError`` saying so. The settings are in :attr:`tokenizer_config` (its chat
        template is :meth:`encode_chat`'s ``template="model"``); ``add_bos_token`` and
        ``add_eos_token``, where set, decide what ``add_special_tokens=True`` adds, as in
        transformers. See :mod:`bytepair.hub` for the files read.
        """
        from bytepair import hub

        enc, config = hub.load_pretrained(
            repo_id,
            revision,
            local_files_only=local_files_only,
            cache_dir=cache_dir,
            token=token,
        )
        loaded = _loaded(enc)
        loaded._use_tokenizer_config(config)
        return loaded

    def _use_tokenizer_config(self, config: TokenizerConfig) -> None:
        """Keep a Hub repository's settings. A rank encoding adds no tokens of its own, so
        ``add_bos_token``/``add_eos_token`` change nothing here (see the Hugging Face model)."""
        self.tokenizer_config = config

    def save(self, path: str | os.PathLike[str], format: SaveFormat = "tiktoken") -> list[Path]:
        """Write this encoding as ``"tiktoken"`` (a ``.tiktoken`` file), ``"hf"`` (a
        ``tokenizer.json`` that ``tokenizers`` reads with identical ids) or ``"gpt2"``
        (``encoder.json`` + ``vocab.bpe`` in the folder ``path``). Files are written atomically;
        the paths written are returned. See :func:`bytepair.formats.save`.

        >>> import tempfile, pathlib
        >>> [p.name for p in byte_encoding.save(pathlib.Path(tempfile.mkdtemp()), format="hf")]
        ['tokenizer.json']
        """
        return formats.save(self, path, format=format)

    def vocabulary(self) -> Vocabulary:
        """This encoding as the file formats see it (see :mod:`bytepair.formats.values`): for
        this model, tiktoken's ranks."""
        return self._rank_vocabulary()

    def _rank_vocabulary(self) -> RankVocabulary:
        core = self._core
        return RankVocabulary(
            name=self.name,
            pat_str=self._pat_str,
            special_tokens=self._special_tokens,
            ranks=lambda: self._mergeable_ranks,
            derived_merges=core.derive_merges,
            tiktoken_file=core.to_tiktoken,
        )

    def to_tiktoken(self) -> Any:
        """The same encoding as a ``tiktoken.Encoding`` (needs tiktoken installed).

        Only encodings merged by tiktoken's rank rule convert exactly (``.tiktoken`` files,
        trained ones, GPT-2 files); an encoding read from a Hugging Face file that merges by pair
        priority raises ``ValueError`` rather than give a tokenizer with different ids.

        >>> byte_encoding.to_tiktoken().encode("hi")
        [104, 105]
        """
        tiktoken = require("tiktoken", "to_tiktoken()")
        return tiktoken.Encoding(
            self.name,
            pat_str=self._pat_str,
            mergeable_ranks=self._mergeable_ranks,
            special_tokens=self._special_tokens,
        )

    def to_hf(self) -> Any:
        """The same encoding as a Hugging Face ``tokenizers.Tokenizer`` (needs tokenizers).

        Built from the ``tokenizer.json`` that :meth:`save` writes, so its ids are ours.

        >>> byte_encoding.to_hf().encode("hi").ids
        [104, 105]
        """
        tokenizers = require("tokenizers", "to_hf()")
        with tempfile.TemporaryDirectory(prefix="bytepair-") as folder:
            (written,) = self.save(folder, format="hf")
            return tokenizers.Tokenizer.from_file(str(written))

    def to_transformers(self, **kwargs: Any) -> Any:
        """The same tokenizer as a transformers ``PreTrainedTokenizerFast`` (needs
        ``transformers`` and ``tokenizers``; torch is not needed).

        Built on :meth:`to_hf`, so its ids are ours. An encoding from :meth:`from_pretrained`
        brings its special tokens (``bos_token``, ``eos_token``, ...), ``model_max_length`` and
        chat templates; ``kwargs`` go to ``PreTrainedTokenizerFast`` and win. The way back:
        ``tok.save_pretrained(folder)`` and ``Encoding.from_file(folder / "tokenizer.json")``,
        with ``template=tok.chat_template, variables=tok.special_tokens_map`` for
        :meth:`encode_chat`.
        """
        from bytepair import hub

        return hub.transformers_tokenizer(self.to_hf(), self.tokenizer_config, **kwargs)

    @classmethod
    def _from_tiktoken_bytes(
        cls,
        data: bytes,
        *,
        name: str,
        pat_str: str,
        special_tokens: dict[str, int],
        source: str,
    ) -> Encoding:
        try:
            check_id_range({}, special_tokens)
            core = _core.RankEncoder.from_tiktoken(data, special_tokens, pat_str)
        except ValueError as e:
            raise ValueError(f"{source}: {with_line_numbers(data, str(e))}") from None
        self = cls.__new__(cls)
        self._init_from_core(name, pat_str, core, dict(special_tokens))
        return self

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        # Built on first use: an encoding loaded from a file never needs the Python dict unless
        # someone asks for it (tiktoken code often reads this private attribute).
        if self._ranks_cache is None:
            self._ranks_cache = self._core.mergeable_ranks()
        return self._ranks_cache

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # ---- encoding -------------------------------------------------------------------------

    # encode_ordinary, encode and count are the compiled methods of _core.EncodingBase (their
    # documentation is there): each answers the call with default arguments itself and passes
    # every other call to its _general method here.

    def _encode_ordinary_general(self, text: str) -> list[int]:
        """:meth:`encode_ordinary` where the compiled method does not answer it."""
        return self._core.encode_ordinary(text)

    # Every encode and count with special-token arguments goes through _special_rules (what
    # the arguments mean) and _run or _run_batch (one core call that checks and encodes).

    def _run(
        self,
        call: _CoreCall[str, _R],
        text: str,
        allowed_special: Literal["all"] | Collection[str],
        disallowed_special: Literal["all"] | Collection[str],
    ) -> _R:
        """``call`` on one text with the special-token arguments resolved, lone surrogates
        repaired and a disallowed special token in the text reported."""
        # Unpacked once rather than read field by field (each read is a lookup).
        allowed, disallowed, searched_in_python = self._special_rules.resolve(
            allowed_special, disallowed_special
        )
        if searched_in_python:
            text = utf8_safe(text)
            self._special_rules.check_in_python(text, searched_in_python)
        try:
            # Most texts are valid UTF-8: the core says when one is not (UnicodeEncodeError), so
            # the common case pays for no extra pass over the text.
            try:
                return call(text, allowed, disallowed)
            except UnicodeEncodeError:
                return call(repair_surrogates(text), allowed, disallowed)
        except _core.DisallowedSpecial as e:
            raise disallowed_special_error(str(e.args[0])) from None

    def _run_batch(
        self,
        call: _CoreCall[list[str], _R],
        texts: list[str],
        allowed_special: Literal["all"] | Collection[str],
        disallowed_special: Literal["all"] | Collection[str],
        *,
        repair_first: bool = False,
    ) -> _R:
        """``_run`` for the texts of a batch (see :func:`batch_texts`). ``repair_first``: for a
        ``call`` that may run Python code on the texts, which must get them repaired."""
        specials = self._special_rules.resolve(allowed_special, disallowed_special)
        # Python looks at the texts itself for these: check and repair them first.
        if specials.searched_in_python or repair_first:
            texts = repaired(texts)
            for text in texts if specials.searched_in_python else ():
                self._special_rules.check_in_python(text, specials.searched_in_python)
        try:
            try:
                return call(texts, specials.allowed, specials.disallowed)
            except (UnicodeEncodeError, TypeError):
                # As in encode_ordinary_batch: repair, or raise the item's own TypeError.
                return call(repaired(texts), specials.allowed, specials.disallowed)
        except _core.DisallowedSpecial as e:
            raise disallowed_special_error(str(e.args[0])) from None

    def _encode_general(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = ALLOWED_DEFAULT,
        disallowed_special: Literal["all"] | Collection[str] = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> list[int]:
        """:meth:`encode` where the compiled method does not answer it."""
        return self._run(self._core.encode, text, allowed_special, disallowed_special)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = ALLOWED_DEFAULT,
        disallowed_special: Literal["all"] | Collection[str] = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> npt.NDArray[np.uint32]:
        """Encode to a numpy ``uint32`` array (numpy is imported only here); the same ids and
        special-token rules as ``encode``, without making a Python int per id.

        >>> byte_encoding.encode_to_numpy("hi").tolist()
        [104, 105]
        """
        defaults = self._core_defaults
        if (
            defaults is not None
            and allowed_special is ALLOWED_DEFAULT
            and disallowed_special is DISALLOWED_DEFAULT
        ):
            # As in `encode`: the common call in one step, `_run` only to repair or word errors
            # (the detour through `_run` is a noticeable share of a short text's time).
            try:
                return self._core.encode_to_numpy(text, defaults[0], defaults[1])
            except (UnicodeEncodeError, _core.DisallowedSpecial):
                pass
        return self._run(self._core.encode_to_numpy, text, allowed_special, disallowed_special)

    def encode_ordinary_batch(
        self, text: Sequence[str], *, num_threads: int = DEFAULT_THREADS
    ) -> list[list[int]]:
        """Encode many texts on ``num_threads`` threads (the GIL is released)."""
        texts = batch_texts(text)
        num_threads = checked_threads(num_threads, len(texts))
        try:
            return self._core.encode_ordinary_batch(texts, num_threads)
        except (UnicodeEncodeError, TypeError):
            # A lone surrogate (repaired, as tiktoken does) or an item that is no str (its error).
            return self._core.encode_ordinary_batch(repaired(texts), num_threads)

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = DEFAULT_THREADS,
        allowed_special: Literal["all"] | Collection[str] = ALLOWED_DEFAULT,
        disallowed_special: Literal["all"] | Collection[str] = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> list[list[int]]:
        """Encode many texts on ``num_threads`` threads, with :meth:`encode`'s special rules."""
        texts = batch_texts(text)
        num_threads = checked_threads(num_threads, len(texts))
        core = self._core
        return self._run_batch(
            lambda ts, allowed, disallowed: core.encode_batch(ts, num_threads, allowed, disallowed),
            texts,
            allowed_special,
            disallowed_special,
        )

    def _count_general(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = ALLOWED_DEFAULT,
        disallowed_special: Literal["all"] | Collection[str] = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> int:
        """:meth:`count` where the compiled method does not answer it."""
        return self._run(self._core.count, text, allowed_special, disallowed_special)

    def count_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = DEFAULT_THREADS,
        allowed_special: Literal["all"] | Collection[str] = ALLOWED_DEFAULT,
        disallowed_special: Literal["all"] | Collection[str] = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> list[int]:
        """Token counts of many texts, on ``num_threads`` threads."""
        texts = batch_texts(text)
        num_threads = checked_threads(num_threads, len(texts))
        core = self._core
        return self._run_batch(
            lambda ts, allowed, disallowed: core.count_batch(ts, num_threads, allowed, disallowed),
            texts,
            allowed_special,
            disallowed_special,
        )

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of a single token given as text or bytes; ``KeyError`` if it is no token.

        >>> byte_encoding.encode_single_token("<s>"), byte_encoding.encode_single_token(b"a")
        (256, 97)
        """
        if isinstance(text_or_bytes, str):
            if text_or_bytes in self._special_tokens:
                return self._special_tokens[text_or_bytes]
            text_or_bytes = text_or_bytes.encode("utf-8")
        if not isinstance(text_or_bytes, bytes | bytearray | memoryview):
            raise TypeError(f"expected str or bytes, got {type(text_or_bytes).__name__}")
        return self._core.encode_single_token(bytes(text_or_bytes))

    def with_special_tokens(
        self, special_tokens: Mapping[str, int], *, name: str | None = None
    ) -> Encoding:
        """A copy of this encoding with more special tokens (same ranks and pattern), e.g. the
        ChatML tokens that ``cl100k_base`` lacks:
        ``enc.with_special_tokens({"<|im_start|>": 100264, "<|im_end|>": 100265})``.
        """
        extra = dict(special_tokens)
        for token, id_ in extra.items():
            if self._special_tokens.get(token, id_) != id_:
                raise ValueError(
                    f"{token!r} is already a special token with id {self._special_tokens[token]}"
                )
        return Encoding(
            name or self.name,
            pat_str=self._pat_str,
            mergeable_ranks=self._mergeable_ranks,
            special_tokens={**self._special_tokens, **extra},
        )

    @property
    def n_vocab(self) -> int:
        """One more than the highest id (tiktoken's definition)."""
        return self.max_token_value + 1

    @property
    def pat_str(self) -> str:
        """The pre-tokenizer pattern."""
        return self._pat_str

    @property
    def scanner(self) -> str | None:
        """The hand-written scanner used for the pattern, or None for the general regex engine."""
        return self._core.scanner

    # ---- pickling ------------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "pat_str": self._pat_str,
            "mergeable_ranks": self._mergeable_ranks,
            "special_tokens": self._special_tokens,
            "tokenizer_config": self.tokenizer_config,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(  # type: ignore[misc]
            state["name"],
            pat_str=state["pat_str"],
            mergeable_ranks=state["mergeable_ranks"],
            special_tokens=state["special_tokens"],
        )
        if state.get("tokenizer_config") is not None:
            self.tokenizer_config = state["tokenizer_config"]


def _loaded(enc: object) -> Encoding:
    """``enc``, which a loader built, as the encoding it is."""
    if not isinstance(enc, Encoding):
        raise TypeError(f"expected an Encoding, the loader built a {type(enc).__name__}")
    return enc
