"""The Hugging Face pipeline model: an :class:`~bytepair.Encoding` whose text goes through a
normalizer, added tokens, a pre-tokenizer of stages, pair merges and a post-processor, as
``tokenizers`` runs them (see :mod:`bytepair.formats.hf_pipeline` for the components).

:func:`build_hf_encoding` builds one from the components a file holds; it is registered for
:class:`~bytepair.formats.values.HfComponents`, so :func:`bytepair.formats.load` and the
``Encoding.from_*`` loaders make these for Hugging Face files.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any, Literal

from bytepair import _core, patterns
from bytepair._arguments import DEFAULT_THREADS, batch_texts, checked_threads
from bytepair._core import PairEncoder
from bytepair.encoding import Encoding, _CoreCall
from bytepair.formats.builders import register_builder
from bytepair.formats.common import template_post_processor
from bytepair.formats.hf_json import parse_tokenizer_json, tokenizer_json
from bytepair.formats.hf_pipeline import (
    Stage,
    assign_added_ids,
    check_byte_level,
    check_decoder,
    normalizer_of,
    post_processor_of,
    stages_of,
)
from bytepair.formats.values import HfComponents, PairVocabulary
from bytepair.hf.offsets import HfOffsets
from bytepair.hf.pipeline import HfPipeline
from bytepair.specials import ALLOWED_DEFAULT, DISALLOWED_DEFAULT

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    import numpy.typing as npt

    from bytepair.hub import TokenizerConfig

__all__ = ["HfEncoding", "build_hf_encoding"]

_Specials = Literal["all"] | Collection[str]


class HfEncoding(Encoding):
    """An encoding read from Hugging Face files (``tokenizer.json``, ``vocab.json`` +
    ``merges.txt``): tiktoken's interface, ``tokenizers``' ids.

    Its special added tokens follow tiktoken's rules (see :meth:`Encoding.encode`); its
    non-special added tokens are vocabulary, recognised always; its post-processor adds the
    model's tokens (``<s>`` ... ``</s>``) unless ``add_special_tokens=False``. "Ordinary" means
    what ``tokenizers`` does with ``encode_special_tokens = True`` and
    ``add_special_tokens=False``.
    """

    _pipeline: HfPipeline
    _core: PairEncoder
    _follows_tiktoken_rules = False  # another pre-tokenizer, pair merges

    @classmethod
    def _from_pipeline(
        cls,
        name: str,
        pat_str: str,
        core: PairEncoder,
        special_tokens: dict[str, int],
        pipeline: HfPipeline,
    ) -> HfEncoding:
        self = cls.__new__(cls)
        self._pipeline = pipeline
        self._init_from_core(name, pat_str, core, dict(special_tokens))
        return self

    def _install_compiled_calls(self) -> None:
        # The pipeline runs around every core call: no call may skip it.
        self._core_defaults = None

    def _call(self, add_special_tokens: bool) -> _CoreCall[str, list[int]]:
        pipeline, core = self._pipeline, self._core
        return lambda text, allowed, disallowed: pipeline.encode(
            core, text, allowed, disallowed, add_special_tokens
        )

    def _batch_call(
        self, num_threads: int, add_special_tokens: bool
    ) -> _CoreCall[list[str], list[list[int]]]:
        pipeline, core = self._pipeline, self._core
        return lambda texts, allowed, disallowed: pipeline.encode_batch(
            core, texts, num_threads, allowed, disallowed, add_special_tokens
        )

    # ---- encoding: the pipeline around each core call ---------------------------------------

    def encode_ordinary(self, text: str) -> list[int]:
        return self._run(self._call(False), text, (), ())

    def encode(
        self,
        text: str,
        *,
        allowed_special: _Specials = ALLOWED_DEFAULT,
        disallowed_special: _Specials = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> list[int]:
        call = self._call(add_special_tokens)
        return self._run(call, text, allowed_special, disallowed_special)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: _Specials = ALLOWED_DEFAULT,
        disallowed_special: _Specials = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> npt.NDArray[np.uint32]:
        import numpy as np

        call = self._call(add_special_tokens)
        ids = self._run(call, text, allowed_special, disallowed_special)
        return np.array(ids, dtype=np.uint32)

    def count(
        self,
        text: str,
        *,
        allowed_special: _Specials = ALLOWED_DEFAULT,
        disallowed_special: _Specials = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> int:
        call = self._call(add_special_tokens)
        return len(self._run(call, text, allowed_special, disallowed_special))

    def encode_ordinary_batch(
        self, text: Sequence[str], *, num_threads: int = DEFAULT_THREADS
    ) -> list[list[int]]:
        texts = batch_texts(text)
        call = self._batch_call(checked_threads(num_threads, len(texts)), False)
        return self._run_batch(call, texts, (), (), repair_first=True)

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
        call = self._batch_call(checked_threads(num_threads, len(texts)), add_special_tokens)
        return self._run_batch(call, texts, allowed_special, disallowed_special, repair_first=True)

    def count_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = DEFAULT_THREADS,
        allowed_special: _Specials = ALLOWED_DEFAULT,
        disallowed_special: _Specials = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> list[int]:
        texts = batch_texts(text)
        call = self._batch_call(checked_threads(num_threads, len(texts)), add_special_tokens)
        batch = self._run_batch(call, texts, allowed_special, disallowed_special, repair_first=True)
        return [len(ids) for ids in batch]

    def _offsets_call(
        self, add_special_tokens: bool
    ) -> _CoreCall[str, tuple[list[int], list[tuple[int, int]]]]:
        # Built on first use: most encodings never need the aligned normalizer.
        offsets: HfOffsets | None = self.__dict__.get("_hf_offsets")
        if (
            offsets is None
            or offsets.pipeline is not self._pipeline
            or offsets.core is not self._core
        ):
            offsets = self.__dict__["_hf_offsets"] = HfOffsets(self._pipeline, self._core)
        return lambda text, allowed, disallowed: offsets.encode(
            text, allowed, disallowed, add_special_tokens
        )

    def _special_strips(self) -> dict[str, tuple[bool, bool]]:
        """The special added tokens that take the whitespace beside them (``lstrip``,
        ``rstrip``), for chat prompts built part by part (:mod:`bytepair.chat.structural`)."""
        return {
            t.content: (t.lstrip, t.rstrip)
            for t in self._pipeline.added
            if t.special and (t.lstrip or t.rstrip)
        }

    # ---- a Hub repository's settings ------------------------------------------------------

    def _use_tokenizer_config(self, config: TokenizerConfig) -> None:
        """Keep the settings; where the config sets ``add_bos_token`` or ``add_eos_token``, the
        post-processor becomes ``[bos] $A [eos]`` with the tokens it asks for, as transformers'
        ``update_post_processor`` makes it (a flag it leaves unset counts as false)."""
        super()._use_tokenizer_config(config)
        if config.add_bos_token is None and config.add_eos_token is None:
            return
        by_content = {t.content: t.id for t in self._pipeline.added}

        def token(text: str | None, wanted: bool | None) -> tuple[str, int] | None:
            if not wanted or text is None:
                return None
            if text in by_content:
                return text, by_content[text]
            try:
                return text, self.encode_single_token(text)
            except KeyError:
                raise ValueError(
                    f"{config.repo_id}: tokenizer_config.json adds {text!r}, which the "
                    "vocabulary does not have"
                ) from None

        bos = token(config.bos_token, config.add_bos_token)
        eos = token(config.eos_token, config.add_eos_token)
        post_processor = template_post_processor(bos, eos)
        self._pipeline.prefix = [bos[1]] if bos is not None else []
        self._pipeline.suffix = [eos[1]] if eos is not None else []
        self._pipeline.config["post_processor"] = post_processor

    # ---- what a copy made from ranks would lose --------------------------------------------

    def with_special_tokens(
        self, special_tokens: Mapping[str, int], *, name: str | None = None
    ) -> Encoding:
        raise ValueError(
            f"{self.name!r} was read from Hugging Face files, whose merges and added tokens a "
            "copy made from ranks would lose: add the tokens to its tokenizer.json instead"
        )

    def to_tiktoken(self) -> Any:
        raise ValueError(
            f"{self.name!r} merges by pair priority (a Hugging Face file); tiktoken's rank "
            "rule would give different ids. Use to_hf() instead."
        )

    def vocabulary(self) -> PairVocabulary:
        core = self._core
        return PairVocabulary(
            name=self.name,
            components=self._pipeline.config,
            vocab=core.pair_vocab,
            merges=core.pair_merges,
            as_ranks=self._rank_vocabulary(),
            rank_problem=self._rank_problem,
        )

    def _rank_problem(self) -> str | None:
        """Why tiktoken's rank rule would give other ids (see
        :func:`bytepair.formats.hf_json.tiktoken_compatibility`), or None."""
        hf = self._pipeline
        if hf.normalizer is not None:
            return "it has a normalizer"
        if hf.prefix or hf.suffix:
            return "its post-processor adds tokens"
        plain = [t.content for t in hf.added if not t.special]
        if plain:
            return f"it has non-special added tokens (e.g. {plain[0]!r})"
        if any(t.single_word or t.lstrip or t.rstrip for t in hf.added):
            return "an added token has single_word, lstrip or rstrip set"
        stages = stages_of(hf.config["pre_tokenizer"], "pre_tokenizer")
        split, byte_level = (stages[0], stages[-1]) if len(stages) == 2 else (None, None)
        shapes_ok = stages == [Stage("byte_level", patterns.GPT2_ORIGINAL)] or (
            split is not None
            and split.kind == "regex"
            and (split.behavior, split.invert) in (("removed", True), ("isolated", False))
            and byte_level == Stage("byte_level")
            and (split.behavior == "removed" or split.pattern in patterns.PATTERNS.values())
        )
        if not shapes_ok:
            return "its pre-tokenizer is not a single pattern"
        return self._core.rank_equivalence()

    # ---- pickling: as its tokenizer.json ---------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        # The tokenizer.json carries the post-processor a Hub config's add_bos_token made.
        return {
            "name": self.name,
            "tokenizer_json": tokenizer_json(self),
            "tokenizer_config": self.tokenizer_config,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        name = state["name"]
        parsed = parse_tokenizer_json(name, data=state["tokenizer_json"], name=name)
        self.__dict__.update(build_hf_encoding(parsed).__dict__)
        self._install_compiled_calls()  # they live in the compiled base, not in __dict__
        if state.get("tokenizer_config") is not None:
            self.tokenizer_config = state["tokenizer_config"]


def build_hf_encoding(c: HfComponents) -> HfEncoding:
    """Build an encoding from Hugging Face components.

    ``tokenizers`` recomputes the ids of added tokens; a difference from the file's id is
    warned about, as ``tokenizers`` does. Errors name ``c.source``.
    """
    source, added, options = c.source, c.added, c.options
    # The core's tables stand in for the vocabulary dict when it read them.
    plain = None if c.tables is not None else dict(c.vocab)
    vocab: Mapping[str, int] = c.vocab if plain is None else plain
    normalizer, pre_tokenizer = c.normalizer, c.pre_tokenizer
    post_processor, decoder = c.post_processor, c.decoder
    try:
        normalize = normalizer_of(normalizer, "normalizer")
        stages = stages_of(pre_tokenizer, "pre_tokenizer")
        check_byte_level(stages, "pre_tokenizer")
        check_decoder(decoder, "decoder")
        tokens, specials = assign_added_ids([t for t, _ in added], vocab)
        first_id: dict[str, int] = {}
        for t in tokens:
            first_id.setdefault(t.content, t.id)
        for token, file_id in added:
            given = first_id.get(token.content, file_id)
            if given != file_id:
                warnings.warn(
                    f"{source}: added token {token.content!r} has id {file_id} in the file, but "
                    f"tokenizers gives it id {given}; using {given}",
                    stacklevel=4,
                )
        by_content = {t.content: t.id for t in tokens}
        prefix, suffix = post_processor_of(
            post_processor, "post_processor", lambda t: by_content.get(t, vocab.get(t))
        )
    except ValueError as err:
        raise ValueError(f"{source}: {err}") from None

    core_added = [
        _core.AddedToken(
            t.content,
            t.id,
            special=t.special,
            pattern=normalize(t.content) if (t.normalized and normalize is not None) else None,
            single_word=t.single_word,
            lstrip=t.lstrip,
            rstrip=t.rstrip,
            normalized=t.normalized,
        )
        for t in tokens
    ]
    unk = options.get("unk_token")
    unknown = (vocab[unk], bool(options.get("fuse_unk"))) if isinstance(unk, str) else None
    try:
        core = _core.PairEncoder(
            plain,
            stages,
            core_added,
            merges=None if c.merges is None else list(c.merges),
            merges_data=c.merges_data,
            ignore_merges=bool(options.get("ignore_merges")),
            unknown=unknown,
            byte_fallback=bool(options.get("byte_fallback")),
            tables=c.tables,
        )
    except ValueError as err:
        raise ValueError(f"{source}: {err}") from None

    special_tokens = {t.content: t.id for t in tokens if t.content in specials}
    # The order tokenizers writes them in: by id.
    written = sorted({t.id: t for t in tokens}.values(), key=lambda t: t.id)
    pipeline = HfPipeline(
        normalizer=normalize,
        prefix=prefix,
        suffix=suffix,
        added=tokens,
        special_contents=frozenset(specials),
        config={
            "normalizer": copy.deepcopy(normalizer),
            "pre_tokenizer": copy.deepcopy(pre_tokenizer),
            "post_processor": copy.deepcopy(post_processor),
            "decoder": copy.deepcopy(decoder),
            "added_tokens": [t.to_json() for t in written],
            "model_options": dict(options),
        },
    )
    regexes = (s.pattern for s in stages if s.kind in ("regex", "byte_level") and s.pattern)
    pat_str = next(regexes, "")
    return HfEncoding._from_pipeline(c.name, pat_str, core, special_tokens, pipeline)


register_builder(HfComponents, build_hf_encoding)
