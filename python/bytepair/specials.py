"""tiktoken's rules for special tokens in text, for one encoding.

By default any text that spells a special token is an error; ``allowed_special`` lets some be
recognised, ``disallowed_special`` says which are errors (tiktoken's arguments and messages).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal, NamedTuple

from bytepair import _core
from bytepair._arguments import disallowed_special_error

__all__ = ["ALLOWED_DEFAULT", "DISALLOWED_DEFAULT", "ResolvedSpecials", "SpecialTokenRules"]

ALLOWED_DEFAULT: frozenset[str] = frozenset()
DISALLOWED_DEFAULT: Literal["all"] = "all"


class ResolvedSpecials(NamedTuple):
    """``allowed_special`` and ``disallowed_special`` resolved for one encoding."""

    allowed: _core.SpecialSet | None
    """The special tokens recognised in text (None: none)."""
    disallowed: _core.SpecialSet | None
    """The special tokens the core rejects in text (None: none)."""
    searched_in_python: tuple[str, ...]
    """Set instead of ``disallowed`` when some disallowed string is no special token of the
    encoding (tiktoken rejects those too): then Python searches for all of them, so that the
    error names the first in the text."""


class SpecialTokenRules:
    """tiktoken's special-token rules for one encoding: what ``allowed_special`` and
    ``disallowed_special`` mean, compiled for the core once per distinct pair of arguments."""

    def __init__(self, core: _core.Encoder, special_tokens: Collection[str]) -> None:
        self._core = core
        self._special_set = frozenset(special_tokens)
        self._special_list = sorted(self._special_set)
        # Resolving the special-token arguments costs more than counting a short text: resolve
        # each distinct (hashable) pair once. Races between threads only compute an entry twice.
        self._specials_cache: dict[tuple[Any, Any], ResolvedSpecials] = {}
        self.default = self._resolve_specials(ALLOWED_DEFAULT, DISALLOWED_DEFAULT)
        """What the default arguments mean."""

    def resolve(
        self,
        allowed_special: Literal["all"] | Collection[str],
        disallowed_special: Literal["all"] | Collection[str],
    ) -> ResolvedSpecials:
        if allowed_special is ALLOWED_DEFAULT and disallowed_special is DISALLOWED_DEFAULT:
            return self.default
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
    ) -> ResolvedSpecials:
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
            return ResolvedSpecials(allowed_set, None, tuple(disallowed))
        return ResolvedSpecials(
            allowed_set, core.special_set(disallowed) if disallowed else None, ()
        )

    def check_in_python(self, text: str, disallowed: tuple[str, ...]) -> None:
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
            raise disallowed_special_error(first[1])
