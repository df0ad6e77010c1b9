"""What an encoding read from Hugging Face files does around the core, for each text.

This module and :mod:`bytepair.hf.encoding` are the only places that call the core's Hugging
Face entry points (``PairEncoder``: ``encode``, ``encode_normalized``, ``encode_batch``,
``split_added``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bytepair import _core
from bytepair.formats.hf_pipeline import AddedToken, Normalizer

__all__ = ["HfPipeline"]


@dataclass
class HfPipeline:
    """The normalizer, added tokens and post-processor of a Hugging Face tokenizer, run around
    the core.

    ``config`` keeps the components as loaded (without the model's vocabulary and merges), so
    the tokenizer can be written back as it was.
    """

    normalizer: Normalizer | None
    prefix: list[int]
    suffix: list[int]
    added: list[AddedToken]
    special_contents: frozenset[str]
    config: dict[str, Any] = field(default_factory=dict)

    def encode(
        self,
        core: _core.PairEncoder,
        text: str,
        allowed: _core.SpecialSet | None,
        disallowed: _core.SpecialSet | None,
        add_special_tokens: bool,
    ) -> list[int]:
        """The ids of ``text``: added tokens (the non-special ones, and the special ones of
        ``allowed``), the normalizer between them, the core, then the post-processor's ids if
        asked. ``_core.DisallowedSpecial`` if ``text`` spells a token of ``disallowed``."""
        if self.normalizer is None:
            ids = core.encode(text, allowed, disallowed)
        else:
            ids = []
            normalize = self.normalizer
            for part in core.split_added(text, allowed, disallowed):
                if isinstance(part, int):
                    ids.append(part)
                else:
                    ids.extend(core.encode_normalized(normalize(part), allowed))
        if add_special_tokens and (self.prefix or self.suffix):
            return [*self.prefix, *ids, *self.suffix]
        return ids

    @property
    def needs_python(self) -> bool:
        """Whether encoding needs Python between the core's steps (a normalizer)."""
        return self.normalizer is not None

    def encode_batch(
        self,
        core: _core.PairEncoder,
        texts: list[str],
        num_threads: int,
        allowed: _core.SpecialSet | None,
        disallowed: _core.SpecialSet | None,
        add_special_tokens: bool,
    ) -> list[list[int]]:
        """:meth:`encode` for many texts: on ``num_threads`` threads of the core, unless the
        normalizer needs Python between the core's steps."""
        if self.needs_python:
            return [self.encode(core, t, allowed, disallowed, add_special_tokens) for t in texts]
        batch = core.encode_batch(texts, num_threads, allowed, disallowed)
        if add_special_tokens and (self.prefix or self.suffix):
            return [[*self.prefix, *ids, *self.suffix] for ids in batch]
        return batch
