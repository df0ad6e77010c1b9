"""The arguments of an encoding's calls, checked and repaired the way tiktoken does.

Shared by every tokenizer model (:mod:`bytepair.encoding`, :mod:`bytepair.hf`).
"""

from __future__ import annotations

import operator
import os
from collections.abc import Mapping, Sequence

__all__ = [
    "DEFAULT_THREADS",
    "ID_LIMIT",
    "MAX_THREADS",
    "batch_texts",
    "check_explicit_n_vocab",
    "check_id_range",
    "checked_threads",
    "disallowed_special_error",
    "repair_surrogates",
    "repaired",
    "utf8_safe",
]

DEFAULT_THREADS = min(8, os.cpu_count() or 1)
"""The threads of a batch call unless told otherwise."""


def disallowed_special_error(token: str) -> ValueError:
    return ValueError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        "If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )


def repair_surrogates(text: str) -> str:
    # Python strings may hold lone surrogates (from JSON, Windows paths, ...), which have no UTF-8
    # form. Like tiktoken, pair up what can be paired and replace the rest with U+FFFD.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def check_explicit_n_vocab(
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


ID_LIMIT = 1 << 28
"""Ids (ranks and special-token ids) run from 0 to ``ID_LIMIT - 1``, the core's bound."""


def check_id_range(ranks: Mapping[bytes, int], specials: Mapping[str, int]) -> None:
    """``ValueError`` naming the token whose rank or special id is outside 0..ID_LIMIT - 1.

    Checked here because the core's conversion of a negative or huge int is an
    ``OverflowError``, which says neither what nor where. Ids that are no ints are left to the
    core, whose ``TypeError`` says so.
    """
    for what, table in (("rank", ranks), ("special token id", specials)):
        try:
            if not table or (min(table.values()) >= 0 and max(table.values()) < ID_LIMIT):
                continue
        except TypeError:
            pass  # values that do not compare: look at each one
        for token, raw in table.items():
            try:
                value = operator.index(raw)
            except TypeError:
                continue
            if not 0 <= value < ID_LIMIT:
                raise ValueError(
                    f"invalid vocabulary: the {what} of {token!r} is {value}, "
                    f"{'negative' if value < 0 else 'too large'} (ids must be 0 to {ID_LIMIT - 1})"
                )


def batch_texts(text: Sequence[str]) -> list[str]:
    """The texts of a batch call; one str is a TypeError, not a batch of its characters.

    The items are not checked here: the core reports an item that is no str or holds a lone
    surrogate, and the caller then retries with :func:`repaired`. (Checking first would mean a
    UTF-8 copy of every text in Python, a large share of a threaded batch's time.)
    """
    if isinstance(text, str | bytes):
        raise TypeError(
            f"expected a list of str, got {type(text).__name__}; "
            "for one text use encode(), encode_ordinary() or count()"
        )
    return list(text)


def repaired(texts: list[str]) -> list[str]:
    """``texts`` with lone surrogates replaced as tiktoken does; TypeError for an item that is
    no str."""
    return [utf8_safe(t) for t in texts]


# More threads than this is a mistake (each is an OS thread), not a speed-up.
MAX_THREADS = 256


def checked_threads(num_threads: int, n_items: int) -> int:
    """``num_threads`` checked, and never more than there are items."""
    if not isinstance(num_threads, int) or isinstance(num_threads, bool):
        raise TypeError(f"num_threads must be an int, got {type(num_threads).__name__}")
    if not 1 <= num_threads <= MAX_THREADS:
        raise ValueError(f"num_threads must be between 1 and {MAX_THREADS}, got {num_threads}")
    return max(1, min(num_threads, n_items))


def utf8_safe(text: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"expected a str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return repair_surrogates(text)
    return text
