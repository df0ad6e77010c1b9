"""A Hugging Face Hub cache on disk, laid out as ``huggingface_hub`` lays it out, for tests.

``<cache>/models--<org>--<name>/blobs/<sha256>`` holds each file once,
``snapshots/<commit>/<file>`` links to its blob, ``refs/<branch>`` names the commit (see
huggingface_hub's "Understand caching" guide). ``huggingface_hub`` reads it offline as it reads
what it downloaded itself.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conftest import shared_path

# The Hugging Face vocabularies of ../shared/vocab as a repository holds them: repo file name ->
# shared file.
HF_MODELS: dict[str, dict[str, str]] = {
    "gpt2-hf": {"tokenizer.json": "gpt2-hf/gpt2.json"},
    "gpt-neox-20b": {"tokenizer.json": "gpt-neox-20b/20B_tokenizer.json"},
    "olmo1": {"tokenizer.json": "olmo1/allenai_gpt-neox-olmo-dolma-v1_5.json"},
    "olmo2-dolma2": {"tokenizer.json": "olmo2-dolma2/allenai_dolma2.json"},
    "qwen2": {"vocab.json": "qwen2/vocab.json", "merges.txt": "qwen2/merges.txt"},
    "smollm": {
        "tokenizer.json": "smollm/tokenizer.json",
        "vocab.json": "smollm/vocab.json",
        "merges.txt": "smollm/merges.txt",
    },
    "phi-2": {"tokenizer.json": "phi-2/tokenizer.json"},
    "falcon": {"tokenizer.json": "falcon/tokenizer.json"},
    "roberta-base": {"tokenizer.json": "roberta-base/tokenizer.json"},
    "claude-legacy": {"tokenizer.json": "claude-legacy/tokenizer.json"},
    # Llama 2 as meta-llama/Llama-2-7b-hf holds it (both files), and as repos that ship only
    # the SentencePiece model do; both take LLAMA2_CONFIG and tokenizer.json's ids.
    "llama2": {
        "tokenizer.json": "llama2/tokenizer.json",
        "tokenizer.model": "llama2/tokenizer.model",
    },
    "llama2-sentencepiece": {"tokenizer.model": "llama2/tokenizer.model"},
}

# Qwen2's tokenizer_config.json (Qwen2-1.5B-Instruct) keeps its control tokens beside the pair
# of files: the part of it that the tokenizer needs.
QWEN2_CONFIG: dict[str, Any] = {
    "added_tokens_decoder": {
        "151643": {"content": "<|endoftext|>", "special": True},
        "151644": {"content": "<|im_start|>", "special": True},
        "151645": {"content": "<|im_end|>", "special": True},
    },
    "bos_token": None,
    "eos_token": "<|im_end|>",
    "pad_token": "<|endoftext|>",
    "model_max_length": 32768,
}

# Llama 2's tokenizer_config.json, written out as meta-llama/Llama-2-7b-hf publishes it: BOS
# first, no EOS, legacy=false (no dummy-prefix space after the first one). The repository is
# gated and was not readable from here, so the fields are as recalled, not copied.
_LLAMA2_TOKEN = {"lstrip": False, "normalized": False, "rstrip": False, "single_word": False}
LLAMA2_CONFIG: dict[str, Any] = {
    "add_bos_token": True,
    "add_eos_token": False,
    "added_tokens_decoder": {
        str(i): {"content": text, **_LLAMA2_TOKEN, "special": True}
        for i, text in enumerate(("<unk>", "<s>", "</s>"))
    },
    "bos_token": "<s>",
    "clean_up_tokenization_spaces": False,
    "eos_token": "</s>",
    "legacy": False,
    "model_max_length": 1000000000000000019884624838656,
    "pad_token": None,
    "padding_side": "right",
    "sp_model_kwargs": {},
    "tokenizer_class": "LlamaTokenizer",
    "unk_token": "<unk>",
    "use_default_system_prompt": False,
}

# The tokenizer_config.json a repository gets when the test gives none.
DEFAULT_CONFIGS: dict[str, dict[str, Any]] = {
    "qwen2": QWEN2_CONFIG,
    "llama2": LLAMA2_CONFIG,
    "llama2-sentencepiece": LLAMA2_CONFIG,
}


def add_revision(
    cache: Path,
    repo_id: str,
    files: Mapping[str, bytes | Path],
    *,
    commit: str | None = None,
    ref: str | None = "main",
) -> str:
    """Put ``files`` (name -> bytes, or a file to copy) into ``cache`` as the snapshot
    ``commit`` of ``repo_id`` (a hash made from the content when None), with ``ref`` (a branch
    or tag) naming it. Returns the commit."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    contents = {n: v if isinstance(v, bytes) else Path(v).read_bytes() for n, v in files.items()}
    if commit is None:
        digest = hashlib.sha1()
        for name in sorted(contents):
            digest.update(name.encode() + b"\0" + contents[name])
        commit = digest.hexdigest()
    snapshot = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    for name, data in contents.items():
        blob = hashlib.sha256(data).hexdigest()
        (repo / "blobs" / blob).write_bytes(data)
        link = snapshot / name
        if link.exists() or link.is_symlink():
            link.unlink()
        os.symlink(os.path.join("..", "..", "blobs", blob), link)
    if ref is not None:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    return commit


def add_shared_model(
    cache: Path, model: str, config: Mapping[str, Any] | None = None, org: str = "org"
) -> str:
    """Lay out the shared model ``model`` (a key of :data:`HF_MODELS`) as the repository
    ``org/<model>``, with ``config`` (else :data:`DEFAULT_CONFIGS`'s) as its
    tokenizer_config.json. Returns the repo id."""
    files: dict[str, bytes | Path] = {
        name: shared_path("vocab", path) for name, path in HF_MODELS[model].items()
    }
    if config is None:
        config = DEFAULT_CONFIGS.get(model)
    if config is not None:
        files["tokenizer_config.json"] = json.dumps(config).encode()
    repo_id = f"{org}/{model}"
    add_revision(cache, repo_id, files)
    return repo_id
