"""The tiktoken-compatible :class:`Encoding`: policy in Python, the work in Rust.

This class owns what users see: special-token rules and their error messages, ``errors=`` on
decode, the repair of strings with lone surrogates, numpy output. The compiled encoder
(``bytepair._core.RankEncoder`` or ``PairEncoder``) does the pre-tokenizing, merging and
decoding with the GIL released, so one ``Encoding`` can be shared by many threads.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar

from bytepair import _core

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np
    import numpy.typing as npt

    from bytepair.chat import ChatTemplate, SpecialMatch
    from bytepair.formats import SaveFormat
    from bytepair.formats.hf_pipeline import HfPipeline

_DEFAULT_THREADS = min(8, os.cpu_count() or 1)


def _disallowed_special_error(token: str) -> ValueError:
    return ValueError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        "If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )


def _repair_surrogates(text: str) -> str:
    # Python strings may hold lone surrogates (from JSON, Windows paths, ...), which have no UTF-8
    # form. Like tiktoken, pair up what can be paired and replace the rest with U+FFFD.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


_ALLOWED_DEFAULT: frozenset[str] = frozenset()
_DISALLOWED_DEFAULT: Literal["all"] = "all"

_T = TypeVar("_T")
_R = TypeVar("_R")
# A core call given the text (or texts) and the resolved allowed and disallowed sets.
_CoreCall = Callable[[_T, _core.SpecialSet | None, _core.SpecialSet | None], _R]


class _Specials(NamedTuple):
    """``allowed_special`` and ``disallowed_special`` resolved for one encoding."""

    allowed: _core.SpecialSet | None
    """The special tokens recognised in text (None: none)."""
    disallowed: _core.SpecialSet | None
    """The special tokens the core rejects in text (None: none)."""
    refused_in_python: tuple[str, ...]
    """Set instead of ``disallowed`` when some disallowed string is no special token of the
    encoding (tiktoken rejects those too): then Python searches for all of them, so that the
    error names the first in the text."""


class Encoding(_core.EncodingBase):
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
    """

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: Mapping[bytes, int],
        special_tokens: Mapping[str, int],
        explicit_n_vocab: int | None = None,
    ) -> None:
        ranks = dict(mergeable_ranks)
        specials = dict(special_tokens)
        if explicit_n_vocab is not None:
            _check_explicit_n_vocab(explicit_n_vocab, ranks, specials)
        try:
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
        *,
        hf: HfPipeline | None = None,
    ) -> None:
        self.name = name
        # Set for encodings read from Hugging Face files: normalizer, added tokens,
        # post-processor (bytepair.formats.hf_pipeline).
        self._hf = hf
        self._pat_str = pat_str
        self._core = core
        self._special_tokens = special_tokens
        self._ranks_cache = mergeable_ranks
        self.max_token_value = core.id_bound - 1
        self._special_set = frozenset(special_tokens)
        self._special_list = sorted(self._special_set)
        # Resolving the special-token arguments costs more than counting a short text: resolve
        # each distinct (hashable) pair once. Races between threads only compute an entry twice.
        self._specials_cache: dict[tuple[Any, Any], _Specials] = {}
        self._default_specials = self._resolve_specials(_ALLOWED_DEFAULT, _DISALLOWED_DEFAULT)
        # What `encode` and `count` with default arguments pass straight to the core (None when
        # they need more: a Hugging Face pipeline, or strings Python must look for itself).
        allowed, disallowed, refused_in_python = self._default_specials
        defaults = None if hf is not None or refused_in_python else (allowed, disallowed)
        self._core_defaults = defaults
        # encode, count and encode_ordinary are compiled methods (_core.EncodingBase) that answer
        # the call with default arguments in one step, with no Python frame, and pass any other
        # call to the _general method here. encode_ordinary is all the core's (lone surrogates
        # included) unless a Hugging Face pipeline runs Python around it.
        self._set_compiled_calls(core, ordinary=hf is None, default_specials=defaults)

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
        from bytepair.patterns import resolve_pattern

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
        cls,
        name: str,
        pat_str: str,
        core: _core.Encoder,
        special_tokens: Mapping[str, int],
        *,
        hf: HfPipeline | None = None,
    ) -> Encoding:
        self = cls.__new__(cls)
        self._init_from_core(name, pat_str, core, dict(special_tokens), hf=hf)
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
        ``vocab.json`` + ``merges.txt`` (a folder or either file of the pair), ``tokenizer.json``.

        ``pat_str`` and ``special_tokens`` are for formats that do not hold them; the known
        tiktoken files (by sha256) and ``tokenizer.json`` need neither. ``options`` go to
        :meth:`from_hf_files` for ``vocab.json`` + ``merges.txt`` (``normalizer=``,
        ``pre_tokenizer=``, ``ignore_merges=``). See :mod:`bytepair.formats` for how each format
        is read and how special tokens behave.

        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "bytes.tiktoken"
        >>> enc = Encoding("b", pat_str=r"\\S+|\\s+",
        ...                mergeable_ranks={bytes([b]): b for b in range(256)}, special_tokens={})
        >>> _ = enc.save(path, format="tiktoken")
        >>> Encoding.from_file(path, pat_str=r"\\S+|\\s+").encode("hi")
        [104, 105]
        """
        from bytepair.formats import load

        return load(path, pat_str=pat_str, special_tokens=special_tokens, **options)

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
        from bytepair.formats.gpt2 import load_gpt2_files

        return load_gpt2_files(
            encoder_json, vocab_bpe, pat_str=pat_str, special_tokens=special_tokens
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

        The pre-tokenizer is ``ByteLevel`` (GPT-2's) unless ``pat_str`` (a pattern name or regex)
        or ``pre_tokenizer=`` (a ``tokenizer.json`` object) says otherwise; ``normalizer=`` takes a
        name such as ``"NFC"`` or an object. See :func:`bytepair.formats.gpt2.load_hf_files`.

        >>> import json, tempfile, pathlib
        >>> from bytepair.bytes_unicode import encode_bytes
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> vocab = {encode_bytes(bytes([b])): b for b in range(256)} | {"ab": 256, "<e>": 257}
        >>> _ = (folder / "vocab.json").write_text(json.dumps(vocab))
        >>> _ = (folder / "merges.txt").write_text("#version: 0.2\\na b\\n")
        >>> enc = Encoding.from_hf_files(folder / "vocab.json", folder / "merges.txt")
        >>> enc.encode("abab<e>", allowed_special="all")  # <e> is no merge's result: special
        [256, 256, 257]
        """
        from bytepair.formats.gpt2 import load_hf_files

        return load_hf_files(
            vocab_json, merges_txt, pat_str=pat_str, special_tokens=special_tokens, **options
        )

    @classmethod
    def from_tokenizer_json(cls, path: str | os.PathLike[str]) -> Encoding:
        """Read a Hugging Face ``tokenizer.json`` of a byte-level BPE model; ids equal
        ``tokenizers.Tokenizer.from_file(path).encode(text).ids`` with
        ``allowed_special="all"``. By default its special added tokens follow tiktoken's rules
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
        from bytepair.formats.hf_json import load_tokenizer_json

        return load_tokenizer_json(path)

    def save(self, path: str | os.PathLike[str], format: SaveFormat = "tiktoken") -> list[Path]:
        """Write this encoding as ``"tiktoken"`` (a ``.tiktoken`` file), ``"hf"`` (a
        ``tokenizer.json`` that ``tokenizers`` reads with identical ids) or ``"gpt2"``
        (``encoder.json`` + ``vocab.bpe`` in the folder ``path``). Files are written atomically;
        the paths written are returned. See :func:`bytepair.formats.save`.

        >>> import tempfile, pathlib
        >>> from bytepair.patterns import GPT2
        >>> enc = Encoding("b", pat_str=GPT2,
        ...                mergeable_ranks={bytes([b]): b for b in range(256)}, special_tokens={})
        >>> [p.name for p in enc.save(pathlib.Path(tempfile.mkdtemp()), format="hf")]
        ['tokenizer.json']
        """
        from bytepair.formats import save

        return save(self, path, format=format)

    def to_tiktoken(self) -> Any:
        """The same encoding as a ``tiktoken.Encoding`` (needs tiktoken installed).

        Only encodings merged by tiktoken's rank rule convert exactly (``.tiktoken`` files,
        trained ones, GPT-2 files); an encoding read from a Hugging Face file that merges by pair
        priority raises ``ValueError`` rather than give a tokenizer with different ids.

        >>> enc = Encoding("b", pat_str=r"\\S+|\\s+",
        ...                mergeable_ranks={bytes([b]): b for b in range(256)}, special_tokens={})
        >>> enc.to_tiktoken().encode("hi")
        [104, 105]
        """
        try:
            import tiktoken
        except ImportError:
            raise ImportError("to_tiktoken() needs tiktoken: pip install tiktoken") from None
        if not isinstance(self._core, _core.RankEncoder):
            raise ValueError(
                f"{self.name!r} merges by pair priority (a Hugging Face file); tiktoken's rank "
                "rule would give different ids. Use to_hf() instead."
            )
        return tiktoken.Encoding(
            self.name,
            pat_str=self._pat_str,
            mergeable_ranks=self._mergeable_ranks,
            special_tokens=self._special_tokens,
        )

    def to_hf(self) -> Any:
        """The same encoding as a Hugging Face ``tokenizers.Tokenizer`` (needs tokenizers).

        Built from the ``tokenizer.json`` that :meth:`save` writes, so its ids are ours.

        >>> enc = Encoding("b", pat_str=r"\\S+|\\s+",
        ...                mergeable_ranks={bytes([b]): b for b in range(256)}, special_tokens={})
        >>> enc.to_hf().encode("hi").ids
        [104, 105]
        """
        try:
            import tokenizers
        except ImportError:
            raise ImportError("to_hf() needs tokenizers: pip install tokenizers") from None
        import tempfile

        with tempfile.TemporaryDirectory(prefix="bytepair-") as folder:
            (written,) = self.save(folder, format="hf")
            return tokenizers.Tokenizer.from_file(str(written))

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
            core = _core.RankEncoder.from_tiktoken(data, special_tokens, pat_str)
        except ValueError as e:
            raise ValueError(f"{source}: {e}") from None
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
    # documentation is there): each answers the call with default arguments itself where the
    # core can, and passes every other call to its _general method below.

    def _encode_ordinary_general(self, text: str) -> list[int]:
        """:meth:`encode_ordinary` where the compiled method does not answer it."""
        if self._hf is not None:
            return self._run(self._hf_call(False), text, (), ())
        return self._core.encode_ordinary(text)

    # Every encode and count with special-token arguments goes through _specials (what the
    # arguments mean) and _run or _run_batch (one core call that checks and encodes).

    def _specials(
        self,
        allowed_special: Literal["all"] | Collection[str],
        disallowed_special: Literal["all"] | Collection[str],
    ) -> _Specials:
        if allowed_special is _ALLOWED_DEFAULT and disallowed_special is _DISALLOWED_DEFAULT:
            return self._default_specials
        cache = self._specials_cache
        given = (allowed_special, disallowed_special)
        try:
            return cache[given]
        except (KeyError, TypeError):  # TypeError: an unhashable argument, such as a set
            pass
        # As frozensets (tiktoken's own view of these arguments), so that a set given on every
        # call finds its entry; the key is what gets resolved, in case an argument is an iterator.
        # A falsy value (None too, which tiktoken tolerates for disallowed_special) means none.
        key = (
            allowed_special
            if isinstance(allowed_special, str)
            else frozenset(allowed_special or ()),
            disallowed_special
            if isinstance(disallowed_special, str)
            else frozenset(disallowed_special or ()),
        )
        specials = cache.get(key)
        if specials is None:
            specials = self._resolve_specials(*key)
        if len(cache) < 32:
            cache[key] = specials
            # The arguments as given too, when they are values (such as "all" and ()): the
            # next call with them skips building the frozensets.
            if all(type(v) in (str, tuple, frozenset) for v in given):
                cache[given] = specials
        return specials

    def _resolve_specials(
        self,
        allowed_special: Literal["all"] | Collection[str],
        disallowed_special: Literal["all"] | Collection[str],
    ) -> _Specials:
        """What the arguments mean for this encoding, compiled for the core."""
        for what, value in (
            ("allowed_special", allowed_special),
            ("disallowed_special", disallowed_special),
        ):
            if isinstance(value, str) and value != "all":
                raise TypeError(
                    f"{what} must be 'all' or a collection of token texts, not the str "
                    f"{value!r}; did you mean {what}={{{value!r}}}?"
                )
        if allowed_special == "all":
            allowed = self._special_list
        elif not allowed_special:
            allowed = []
        else:
            allowed = [t for t in allowed_special if t in self._special_set]
        if disallowed_special == "all":
            allowed_names = set(allowed)
            disallowed = [t for t in self._special_list if t not in allowed_names]
        elif not disallowed_special:
            disallowed = []
        else:
            # Like tiktoken, a disallowed string need not be one of this encoding's specials:
            # the caller asked for that text to be rejected, so it is.
            disallowed = list(disallowed_special)
        core = self._core
        allowed_set = core.special_set(allowed) if allowed else None
        if any(t not in self._special_set for t in disallowed):
            return _Specials(allowed_set, None, tuple(disallowed))
        return _Specials(allowed_set, core.special_set(disallowed) if disallowed else None, ())

    def _refuse_in_python(self, text: str, disallowed: tuple[str, ...]) -> None:
        """Raise for the first of ``disallowed`` (special tokens or not) in ``text``."""
        known = [t for t in disallowed if t in self._special_set]
        found = self._core.find_special(text, known) if known else None
        first = (found[0], found[2]) if found is not None else None
        for other in disallowed:
            if other and other not in self._special_set:
                at = text.find(other)
                if at >= 0:
                    at = len(text[:at].encode("utf-8"))
                    if first is None or at < first[0]:
                        first = (at, other)
        if first is not None:
            raise _disallowed_special_error(first[1])

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
        allowed, disallowed, refused_in_python = self._specials(allowed_special, disallowed_special)
        if refused_in_python:
            text = _utf8_safe(text)
            self._refuse_in_python(text, refused_in_python)
        try:
            # Most texts are valid UTF-8: the core says when one is not (UnicodeEncodeError), so
            # the common case pays for no extra pass over the text.
            try:
                return call(text, allowed, disallowed)
            except UnicodeEncodeError:
                return call(_repair_surrogates(text), allowed, disallowed)
        except _core.DisallowedSpecial as e:
            raise _disallowed_special_error(str(e.args[0])) from None

    def _run_batch(
        self,
        call: _CoreCall[list[str], _R],
        texts: list[str],
        allowed_special: Literal["all"] | Collection[str],
        disallowed_special: Literal["all"] | Collection[str],
    ) -> _R:
        """``_run`` for the texts of a batch (see :func:`_texts`)."""
        specials = self._specials(allowed_special, disallowed_special)
        # Python looks at the texts itself for these (a Hugging Face pipeline may run Python
        # code on them): check and repair them first.
        if specials.refused_in_python or self._hf is not None:
            texts = _repaired(texts)
            for text in texts if specials.refused_in_python else ():
                self._refuse_in_python(text, specials.refused_in_python)
        try:
            try:
                return call(texts, specials.allowed, specials.disallowed)
            except (UnicodeEncodeError, TypeError):
                # As in encode_ordinary_batch: repair, or raise the item's own TypeError.
                return call(_repaired(texts), specials.allowed, specials.disallowed)
        except _core.DisallowedSpecial as e:
            raise _disallowed_special_error(str(e.args[0])) from None

    def _hf_call(self, add_special_tokens: bool) -> _CoreCall[str, list[int]]:
        hf, core = self._hf, self._core
        assert hf is not None and isinstance(core, _core.PairEncoder)
        return lambda text, allowed, disallowed: hf.encode(
            core, text, allowed, disallowed, add_special_tokens
        )

    def _hf_batch_call(
        self, num_threads: int, add_special_tokens: bool
    ) -> _CoreCall[list[str], list[list[int]]]:
        hf, core = self._hf, self._core
        assert hf is not None and isinstance(core, _core.PairEncoder)

        def call(
            texts: list[str], allowed: _core.SpecialSet | None, disallowed: _core.SpecialSet | None
        ) -> list[list[int]]:
            if hf.needs_python:
                return [hf.encode(core, t, allowed, disallowed, add_special_tokens) for t in texts]
            batch = core.encode_batch(texts, num_threads, allowed, disallowed)
            if add_special_tokens and (hf.prefix or hf.suffix):
                return [[*hf.prefix, *ids, *hf.suffix] for ids in batch]
            return batch

        return call

    def _encode_general(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = _ALLOWED_DEFAULT,
        disallowed_special: Literal["all"] | Collection[str] = _DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> list[int]:
        """:meth:`encode` where the compiled method does not answer it."""
        if self._hf is not None:
            call = self._hf_call(add_special_tokens)
            return self._run(call, text, allowed_special, disallowed_special)
        return self._run(self._core.encode, text, allowed_special, disallowed_special)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = _ALLOWED_DEFAULT,
        disallowed_special: Literal["all"] | Collection[str] = _DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> npt.NDArray[np.uint32]:
        """Encode to a numpy ``uint32`` array (numpy is imported only here); the same ids and
        special-token rules as ``encode``, without making a Python int per id.

        >>> ranks = {bytes([b]): b for b in range(256)}
        >>> enc = Encoding("bytes", pat_str=r".", mergeable_ranks=ranks, special_tokens={})
        >>> enc.encode_to_numpy("hi").tolist()
        [104, 105]
        """
        defaults = self._core_defaults
        if (
            defaults is not None
            and allowed_special is _ALLOWED_DEFAULT
            and disallowed_special is _DISALLOWED_DEFAULT
        ):
            # As in `encode`: the common call in one step, `_run` only to repair or word errors
            # (going through `_run` costs ~0.2 us more per call, a tenth of a paragraph's).
            try:
                return self._core.encode_to_numpy(text, defaults[0], defaults[1])
            except (UnicodeEncodeError, _core.DisallowedSpecial):
                pass
        if self._hf is not None:
            import numpy as np

            call = self._hf_call(add_special_tokens)
            ids = self._run(call, text, allowed_special, disallowed_special)
            return np.array(ids, dtype=np.uint32)
        return self._run(self._core.encode_to_numpy, text, allowed_special, disallowed_special)

    def encode_ordinary_batch(
        self, text: Sequence[str], *, num_threads: int = _DEFAULT_THREADS
    ) -> list[list[int]]:
        """Encode many texts on ``num_threads`` threads (the GIL is released)."""
        texts = _texts(text)
        num_threads = _threads(num_threads, len(texts))
        if self._hf is not None:
            return self._run_batch(self._hf_batch_call(num_threads, False), texts, (), ())
        try:
            return self._core.encode_ordinary_batch(texts, num_threads)
        except (UnicodeEncodeError, TypeError):
            # A lone surrogate (repaired, as tiktoken does) or an item that is no str (its error).
            return self._core.encode_ordinary_batch(_repaired(texts), num_threads)

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = _DEFAULT_THREADS,
        allowed_special: Literal["all"] | Collection[str] = _ALLOWED_DEFAULT,
        disallowed_special: Literal["all"] | Collection[str] = _DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> list[list[int]]:
        """Encode many texts on ``num_threads`` threads, with :meth:`encode`'s special rules."""
        texts = _texts(text)
        num_threads = _threads(num_threads, len(texts))
        if self._hf is not None:
            call = self._hf_batch_call(num_threads, add_special_tokens)
            return self._run_batch(call, texts, allowed_special, disallowed_special)
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
        allowed_special: Literal["all"] | Collection[str] = _ALLOWED_DEFAULT,
        disallowed_special: Literal["all"] | Collection[str] = _DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> int:
        """:meth:`count` where the compiled method does not answer it."""
        if self._hf is not None:
            call = self._hf_call(add_special_tokens)
            return len(self._run(call, text, allowed_special, disallowed_special))
        return self._run(self._core.count, text, allowed_special, disallowed_special)

    def count_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = _DEFAULT_THREADS,
        allowed_special: Literal["all"] | Collection[str] = _ALLOWED_DEFAULT,
        disallowed_special: Literal["all"] | Collection[str] = _DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> list[int]:
        """Token counts of many texts, on ``num_threads`` threads."""
        texts = _texts(text)
        num_threads = _threads(num_threads, len(texts))
        if self._hf is not None:
            call = self._hf_batch_call(num_threads, add_special_tokens)
            batch = self._run_batch(call, texts, allowed_special, disallowed_special)
            return [len(ids) for ids in batch]
        core = self._core
        return self._run_batch(
            lambda ts, allowed, disallowed: core.count_batch(ts, num_threads, allowed, disallowed),
            texts,
            allowed_special,
            disallowed_special,
        )

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of a single token given as text or bytes; ``KeyError`` if it is no token.

        >>> enc = Encoding("b", pat_str=r".", mergeable_ranks={bytes([b]): b for b in range(256)},
        ...                special_tokens={"<s>": 256})
        >>> enc.encode_single_token("<s>"), enc.encode_single_token(b"a")
        (256, 97)
        """
        if isinstance(text_or_bytes, str):
            if text_or_bytes in self._special_tokens:
                return self._special_tokens[text_or_bytes]
            text_or_bytes = text_or_bytes.encode("utf-8")
        if not isinstance(text_or_bytes, bytes | bytearray | memoryview):
            raise TypeError(f"expected str or bytes, got {type(text_or_bytes).__name__}")
        return self._core.encode_single_token(bytes(text_or_bytes))

    # ---- chat prompts and untrusted text (bytepair.chat) ----------------------------------

    def encode_chat(
        self,
        messages: Sequence[Mapping[str, str]],
        template: str | ChatTemplate = "chatml",
        *,
        add_generation_prompt: bool = False,
    ) -> list[int]:
        """Encode a chat: control tokens from the template as ids, every message's content as
        ordinary text, so no message can produce a control token (prompt injection).

        ``messages`` is a list of ``{"role": ..., "content": ...}``; ``template`` is
        ``"chatml"``, ``"llama3"`` or a :class:`bytepair.chat.ChatTemplate`. Wrong types are a
        ``TypeError``, unknown roles or keys a ``ValueError``; so is a template whose special
        tokens this encoding lacks (the message shows how to add them with
        :meth:`with_special_tokens`).
        """
        from bytepair import chat

        return chat.encode_chat(
            self, messages, template, add_generation_prompt=add_generation_prompt
        )

    def find_special(self, text: str, *, names: Iterable[str] | None = None) -> list[SpecialMatch]:
        """Where ``text`` spells or imitates a control token: this encoding's special tokens and
        the well-known ones of other chat formats (or ``names``). Near misses count: case,
        zero-width characters inside, full-width brackets; see :func:`bytepair.chat.find_special`.
        """
        from bytepair import chat

        wanted = self._special_set | set(chat.KNOWN_CONTROL_TOKENS) if names is None else names
        return chat.find_special(text, wanted, specials=self._special_set)

    def sanitize(
        self, text: str, *, names: Iterable[str] | None = None, replacement: str | None = None
    ) -> str:
        """``text`` with every :meth:`find_special` match neutralised (by default its brackets
        become HTML character references: ``&lt;|im_end|&gt;``), for prompts built as strings.
        """
        from bytepair import chat

        wanted = self._special_set | set(chat.KNOWN_CONTROL_TOKENS) if names is None else names
        return chat.sanitize(text, wanted, replacement=replacement, specials=self._special_set)

    def with_special_tokens(
        self, special_tokens: Mapping[str, int], *, name: str | None = None
    ) -> Encoding:
        """A copy of this encoding with more special tokens (same ranks and pattern), e.g. the
        ChatML tokens that ``cl100k_base`` lacks:
        ``enc.with_special_tokens({"<|im_start|>": 100264, "<|im_end|>": 100265})``.
        """
        if self._hf is not None or not isinstance(self._core, _core.RankEncoder):
            raise ValueError(
                f"{self.name!r} was read from Hugging Face files, whose merges and added tokens a "
                "copy made from ranks would lose: add the tokens to its tokenizer.json instead"
            )
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

    # ---- decoding -------------------------------------------------------------------------

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of ``tokens``; ``KeyError`` names the first id that is no token."""
        tokens = list(tokens)
        try:
            return self._core.decode_bytes(tokens)
        except OverflowError:
            raise _unknown_id(tokens) from None

    def decode(
        self, tokens: Sequence[int], errors: str = "replace", *, skip_special_tokens: bool = False
    ) -> str:
        """Decode ``tokens`` to text; invalid UTF-8 is handled by ``errors`` (as bytes.decode).

        ``skip_special_tokens=True`` leaves special tokens out, as ``tokenizers``' ``decode`` does
        by default.

        >>> enc = Encoding("b", pat_str=r".", mergeable_ranks={bytes([b]): b for b in range(256)},
        ...                special_tokens={"<s>": 256})
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
            raise _unknown_id([token]) from None

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token, in order."""
        tokens = list(tokens)
        try:
            return self._core.decode_tokens_bytes(tokens)
        except OverflowError:
            raise _unknown_id(tokens) from None

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """Decode, and give the character offset where each token starts (tiktoken's rule: a
        token that starts inside a character is placed at that character).

        >>> enc = Encoding("b", pat_str=r".", mergeable_ranks={bytes([b]): b for b in range(256)},
        ...                special_tokens={})
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
        num_threads: int = _DEFAULT_THREADS,
    ) -> list[str]:
        """Decode many token lists."""
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(
        self, batch: Sequence[Sequence[int]], *, num_threads: int = _DEFAULT_THREADS
    ) -> list[bytes]:
        """The bytes of many token lists."""
        return [self.decode_bytes(tokens) for tokens in batch]

    def stream_decoder(self, errors: str = "replace") -> StreamDecoder:
        """A decoder fed one id at a time that yields text as soon as characters are whole.

        >>> enc = Encoding("b", pat_str=r".", mergeable_ranks={bytes([b]): b for b in range(256)},
        ...                special_tokens={})
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
        if self._hf is not None:
            from bytepair.formats.hf_json import tokenizer_json

            return {"name": self.name, "tokenizer_json": tokenizer_json(self)}
        return {
            "name": self.name,
            "pat_str": self._pat_str,
            "mergeable_ranks": self._mergeable_ranks,
            "special_tokens": self._special_tokens,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        if "tokenizer_json" in state:
            from bytepair.formats.hf_json import load_tokenizer_json

            other = load_tokenizer_json(
                state["name"], data=state["tokenizer_json"], name=state["name"]
            )
            self.__dict__.update(other.__dict__)
            return
        self.__init__(  # type: ignore[misc]
            state["name"],
            pat_str=state["pat_str"],
            mergeable_ranks=state["mergeable_ranks"],
            special_tokens=state["special_tokens"],
        )


def _check_explicit_n_vocab(
    explicit_n_vocab: int, ranks: dict[bytes, int], specials: dict[str, int]
) -> None:
    n_given = len(ranks) + len(specials)
    if n_given != explicit_n_vocab:
        raise ValueError(
            f"explicit_n_vocab={explicit_n_vocab} but the encoding has {n_given} tokens "
            f"({len(ranks)} ordinary + {len(specials)} special)"
        )
    highest = max([*ranks.values(), *specials.values()], default=-1)
    if highest != explicit_n_vocab - 1:
        raise ValueError(
            f"explicit_n_vocab={explicit_n_vocab} but the highest id is {highest}: "
            f"ids must run from 0 to {explicit_n_vocab - 1}"
        )


def _texts(text: Sequence[str]) -> list[str]:
    """The texts of a batch call; one str is a TypeError, not a batch of its characters.

    The items are not checked here: the core reports an item that is no str or holds a lone
    surrogate, and the caller then retries with :func:`_repaired`. (Checking first meant a
    UTF-8 copy of every text in Python, a tenth of the time of a two-thread batch.)
    """
    if isinstance(text, str | bytes):
        raise TypeError(
            f"expected a list of str, got {type(text).__name__}; "
            "for one text use encode(), encode_ordinary() or count()"
        )
    return list(text)


def _repaired(texts: list[str]) -> list[str]:
    """``texts`` with lone surrogates replaced as tiktoken does; TypeError for an item that is
    no str."""
    return [_utf8_safe(t) for t in texts]


# More threads than this is a mistake (each is an OS thread), not a speed-up.
_MAX_THREADS = 256


def _threads(num_threads: int, n_items: int) -> int:
    """``num_threads`` checked, and never more than there are items."""
    if not isinstance(num_threads, int) or isinstance(num_threads, bool):
        raise TypeError(f"num_threads must be an int, got {type(num_threads).__name__}")
    if not 1 <= num_threads <= _MAX_THREADS:
        raise ValueError(f"num_threads must be between 1 and {_MAX_THREADS}, got {num_threads}")
    return max(1, min(num_threads, n_items))


def _unknown_id(tokens: Iterable[object]) -> KeyError:
    """The error for ids too large for the core to read (it reads 64-bit ids)."""
    for token in tokens:
        if isinstance(token, int) and not -(2**63) <= token < 2**63:
            return KeyError(f"token id {token} is not in the vocabulary")
    return KeyError("a token id is not in the vocabulary")


def _utf8_safe(text: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"expected a str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _repair_surrogates(text)
    return text


class StreamDecoder:
    """Turns ids into text incrementally, never splitting a UTF-8 character.

    Bytes of a character cut across tokens are held back until the character is complete;
    :meth:`flush` returns what remains (decoded with ``errors``) and :attr:`pending` shows it.
    """

    def __init__(self, encoding: Encoding, errors: str = "replace") -> None:
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
