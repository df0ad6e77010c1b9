"""Known encodings by name, loaded from local files first, downloaded only when asked.

Where a vocabulary file is looked for, in order:

1. ``vocab_dir`` passed to :func:`get_encoding`, then each folder of ``BYTEPAIR_VOCAB_DIR``
   (``os.pathsep``-separated): a file named as upstream names it (``cl100k_base.tiktoken``),
   directly inside or in a sub-folder named after the encoding (the layout of a folder of
   vocabularies such as ``shared/vocab``);
2. the cache, ``BYTEPAIR_CACHE_DIR`` (default ``~/.cache/bytepair``), by the same names;
3. a download from the upstream URL (unless ``download=False`` or ``BYTEPAIR_OFFLINE=1``),
   verified against the pinned sha256 and written to the cache atomically; without network the
   error says exactly which file to put where.

Every file is checked against its sha256 before use, wherever it came from, so a truncated or
tampered file is an error, never a silently different tokenizer. Nothing touches the network at
import time.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bytepair import patterns
from bytepair.encoding import Encoding

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

_OPENAI = "https://openaipublic.blob.core.windows.net/encodings/"


@dataclass(frozen=True)
class VocabFile:
    """A vocabulary file: its upstream name, where it can be downloaded, and its sha256."""

    filename: str
    sha256: str
    url: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class EncodingSpec:
    """How to build a known encoding."""

    name: str
    file: VocabFile
    pat_str: str
    special_tokens: dict[str, int] = field(default_factory=dict)
    explicit_n_vocab: int | None = None
    folder: str | None = None


R50K_FILE = VocabFile(
    "r50k_base.tiktoken",
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    _OPENAI + "r50k_base.tiktoken",
)
P50K_FILE = VocabFile(
    "p50k_base.tiktoken",
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    _OPENAI + "p50k_base.tiktoken",
)
CL100K_FILE = VocabFile(
    "cl100k_base.tiktoken",
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    _OPENAI + "cl100k_base.tiktoken",
)
O200K_FILE = VocabFile(
    "o200k_base.tiktoken",
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    _OPENAI + "o200k_base.tiktoken",
)
# Meta publishes this file behind a licence click-through, so there is no download URL.
LLAMA3_FILE = VocabFile(
    "tokenizer.model",
    "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
    None,
    aliases=("llama3.tiktoken",),
)


def _llama3_specials() -> dict[str, int]:
    named = [
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "<|reserved_special_token_0|>",
        "<|reserved_special_token_1|>",
        "<|finetune_right_pad_id|>",
        "<|step_id|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eom_id|>",
        "<|eot_id|>",
        "<|python_tag|>",
        "<|image|>",
    ]
    reserved = [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(named))]
    return {token: 128000 + i for i, token in enumerate(named + reserved)}


def _harmony_specials() -> dict[str, int]:
    named = {
        "<|startoftext|>": 199998,
        ENDOFTEXT: 199999,
        "<|return|>": 200002,
        "<|constrain|>": 200003,
        "<|channel|>": 200005,
        "<|start|>": 200006,
        "<|end|>": 200007,
        "<|message|>": 200008,
        "<|call|>": 200012,
        ENDOFPROMPT: 200018,
    }
    taken = set(named.values())
    reserved = {f"<|reserved_{i}|>": i for i in range(200000, 201088) if i not in taken}
    return named | reserved


ENCODINGS: dict[str, EncodingSpec] = {
    # GPT-2's own files (encoder.json + vocab.bpe) hold exactly r50k_base's ranks.
    "gpt2": EncodingSpec(
        "gpt2", R50K_FILE, patterns.GPT2, {ENDOFTEXT: 50256}, 50257, folder="r50k_base"
    ),
    "r50k_base": EncodingSpec("r50k_base", R50K_FILE, patterns.GPT2, {ENDOFTEXT: 50256}, 50257),
    "p50k_base": EncodingSpec("p50k_base", P50K_FILE, patterns.GPT2, {ENDOFTEXT: 50256}, 50281),
    "p50k_edit": EncodingSpec(
        "p50k_edit",
        P50K_FILE,
        patterns.GPT2,
        {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
        folder="p50k_base",
    ),
    "cl100k_base": EncodingSpec(
        "cl100k_base",
        CL100K_FILE,
        patterns.CL100K,
        {
            ENDOFTEXT: 100257,
            FIM_PREFIX: 100258,
            FIM_MIDDLE: 100259,
            FIM_SUFFIX: 100260,
            ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": EncodingSpec(
        "o200k_base", O200K_FILE, patterns.O200K, {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}
    ),
    "o200k_harmony": EncodingSpec(
        "o200k_harmony", O200K_FILE, patterns.O200K, _harmony_specials(), folder="o200k_base"
    ),
    "llama3": EncodingSpec("llama3", LLAMA3_FILE, patterns.LLAMA3, _llama3_specials()),
}

MODEL_TO_ENCODING: dict[str, str] = {
    # chat and reasoning models
    "gpt-5": "o200k_base",
    "gpt-4.5": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4o": "o200k_base",
    "chatgpt-4o-latest": "o200k_base",
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4-mini": "o200k_base",
    "gpt-oss-20b": "o200k_harmony",
    "gpt-oss-120b": "o200k_harmony",
    "gpt-4": "cl100k_base",
    "gpt-3.5-turbo": "cl100k_base",
    "gpt-3.5": "cl100k_base",
    "gpt-35-turbo": "cl100k_base",
    # base and embedding models
    "davinci-002": "cl100k_base",
    "babbage-002": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base",
    "text-embedding-3-small": "cl100k_base",
    "text-embedding-3-large": "cl100k_base",
    # legacy
    "text-davinci-003": "p50k_base",
    "text-davinci-002": "p50k_base",
    "text-davinci-001": "r50k_base",
    "text-curie-001": "r50k_base",
    "text-babbage-001": "r50k_base",
    "text-ada-001": "r50k_base",
    "davinci": "r50k_base",
    "curie": "r50k_base",
    "babbage": "r50k_base",
    "ada": "r50k_base",
    "code-davinci-002": "p50k_base",
    "code-davinci-001": "p50k_base",
    "code-cushman-002": "p50k_base",
    "code-cushman-001": "p50k_base",
    "davinci-codex": "p50k_base",
    "cushman-codex": "p50k_base",
    "text-davinci-edit-001": "p50k_edit",
    "code-davinci-edit-001": "p50k_edit",
    "gpt2": "gpt2",
    "gpt-2": "gpt2",
    # open-weight models whose tokenizer is one of ours
    "llama-3": "llama3",
    "llama-3.1": "llama3",
    "llama-3.2": "llama3",
    "llama-3.3": "llama3",
}

MODEL_PREFIX_TO_ENCODING: dict[str, str] = {
    "gpt-5": "o200k_base",
    "gpt-4.5-": "o200k_base",
    "gpt-4.1-": "o200k_base",
    "gpt-4o-": "o200k_base",
    "chatgpt-4o-": "o200k_base",
    "o1-": "o200k_base",
    "o3-": "o200k_base",
    "o4-mini-": "o200k_base",
    "gpt-oss-": "o200k_harmony",
    "gpt-4-": "cl100k_base",
    "gpt-3.5-turbo-": "cl100k_base",
    "gpt-35-turbo-": "cl100k_base",
    "ft:gpt-4o": "o200k_base",
    "ft:gpt-4.1": "o200k_base",
    "ft:gpt-4": "cl100k_base",
    "ft:gpt-3.5-turbo": "cl100k_base",
    "ft:davinci-002": "cl100k_base",
    "ft:babbage-002": "cl100k_base",
    "llama-3": "llama3",
    "meta-llama/llama-3": "llama3",
    "meta-llama/meta-llama-3": "llama3",
}

_cache: dict[str, Encoding] = {}
_lock = threading.Lock()


def list_encoding_names() -> list[str]:
    """The names :func:`get_encoding` knows.

    >>> "cl100k_base" in list_encoding_names()
    True
    """
    return sorted(ENCODINGS)


def cache_dir() -> Path:
    """The download cache: ``BYTEPAIR_CACHE_DIR`` or ``~/.cache/bytepair``."""
    configured = os.environ.get("BYTEPAIR_CACHE_DIR")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "bytepair"


def _search_dirs(vocab_dir: str | os.PathLike[str] | None) -> Iterator[Path]:
    if vocab_dir is not None:
        yield Path(vocab_dir)
    for entry in os.environ.get("BYTEPAIR_VOCAB_DIR", "").split(os.pathsep):
        if entry:
            yield Path(entry)
    yield cache_dir()


def _candidates(spec: EncodingSpec, directory: Path) -> Iterator[Path]:
    names = (spec.file.filename, *spec.file.aliases)
    folders = [spec.name, spec.folder or spec.name, spec.file.filename.split(".")[0]]
    for name in names:
        yield directory / name
        for folder in dict.fromkeys(folders):
            yield directory / folder / name


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def find_vocab_file(
    name: str, *, vocab_dir: str | os.PathLike[str] | None = None, download: bool | None = None
) -> tuple[Path, bytes]:
    """Locate (or, if allowed, download) the vocabulary file of encoding ``name``.

    Returns the path and the verified contents.
    """
    spec = _spec(name)
    tried: list[str] = []
    for directory in _search_dirs(vocab_dir):
        for path in _candidates(spec, directory):
            if not path.is_file():
                continue
            data = path.read_bytes()
            if _sha256(data) != spec.file.sha256:
                raise ValueError(
                    f"{path}: sha256 {_sha256(data)} does not match the expected "
                    f"{spec.file.sha256} for {name!r}; the file is corrupt or a different "
                    "vocabulary: delete or replace it"
                )
            return path, data
        tried.append(str(directory))
    if download is None:
        download = os.environ.get("BYTEPAIR_OFFLINE", "") in ("", "0")
    if download and spec.file.url:
        try:
            return _download(spec.file)
        except OSError as e:
            raise FileNotFoundError(
                f"no {spec.file.filename} for encoding {name!r} in {', '.join(tried)}, and "
                f"downloading {spec.file.url} failed ({e}): put that file into "
                f"{cache_dir()} (or set BYTEPAIR_VOCAB_DIR to a folder that has it)"
            ) from None
    how = f"download it from {spec.file.url} " if spec.file.url else "obtain it from its publisher "
    raise FileNotFoundError(
        f"no {spec.file.filename} for encoding {name!r} in {', '.join(tried)}: {how}"
        f"into one of those folders, set BYTEPAIR_VOCAB_DIR to a folder that has it"
        + (" (downloads are off: BYTEPAIR_OFFLINE=1 or download=False)" if spec.file.url else "")
    )


def _download(file: VocabFile) -> tuple[Path, bytes]:
    import urllib.request

    assert file.url is not None
    with urllib.request.urlopen(file.url, timeout=60) as response:
        data = response.read()
    if _sha256(data) != file.sha256:
        raise ValueError(
            f"downloaded {file.url} but its sha256 {_sha256(data)} is not the expected "
            f"{file.sha256}; not saved"
        )
    target = cache_dir() / file.filename
    write_atomic(target, data)
    return target, data


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.bin"
    >>> write_atomic(p, b"abc"); p.read_bytes()
    b'abc'
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _spec(name: str) -> EncodingSpec:
    try:
        return ENCODINGS[name]
    except KeyError:
        raise ValueError(
            f"unknown encoding {name!r}; known encodings: {', '.join(list_encoding_names())}"
        ) from None


def get_encoding(
    name: str, *, vocab_dir: str | os.PathLike[str] | None = None, download: bool | None = None
) -> Encoding:
    """The encoding called ``name`` (built once per process, then shared).

    Looks for the file locally (see the module docs), then downloads it unless
    ``download=False`` or ``BYTEPAIR_OFFLINE=1``.
    """
    spec = _spec(name)
    key = f"{name}\0{vocab_dir}"
    with _lock:
        cached = _cache.get(key)
    if cached is not None:
        return cached
    path, data = find_vocab_file(name, vocab_dir=vocab_dir, download=download)
    enc = Encoding._from_tiktoken_bytes(
        data,
        name=spec.name,
        pat_str=spec.pat_str,
        special_tokens=spec.special_tokens,
        source=str(path),
    )
    if spec.explicit_n_vocab is not None and enc.n_vocab != spec.explicit_n_vocab:
        raise ValueError(f"{path}: {name} should have {spec.explicit_n_vocab} ids")
    with _lock:
        return _cache.setdefault(key, enc)


def encoding_name_for_model(model_name: str) -> str:
    """The encoding name a model uses.

    >>> encoding_name_for_model("gpt-4o-mini")
    'o200k_base'
    """
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, encoding in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return encoding
    raise KeyError(
        f"no tokenizer is known for model {model_name!r}; pass an encoding name instead, "
        f"e.g. get_encoding('o200k_base') (known: {', '.join(list_encoding_names())})"
    )


def encoding_for_model(
    model_name: str,
    *,
    vocab_dir: str | os.PathLike[str] | None = None,
    download: bool | None = None,
) -> Encoding:
    """The encoding a model uses (``KeyError`` for an unknown model)."""
    return get_encoding(encoding_name_for_model(model_name), vocab_dir=vocab_dir, download=download)
