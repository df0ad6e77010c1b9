"""The encodings bytepair knows by name, their vocabulary files and the models that use them.

Data only: :mod:`bytepair.registry` finds the files and builds the encodings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bytepair import patterns

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


def llama3_specials() -> dict[str, int]:
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


def harmony_specials() -> dict[str, int]:
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
        "o200k_harmony", O200K_FILE, patterns.O200K, harmony_specials(), folder="o200k_base"
    ),
    "llama3": EncodingSpec("llama3", LLAMA3_FILE, patterns.LLAMA3, llama3_specials()),
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
    "text-similarity-davinci-001": "r50k_base",
    "text-similarity-curie-001": "r50k_base",
    "text-similarity-babbage-001": "r50k_base",
    "text-similarity-ada-001": "r50k_base",
    "text-search-davinci-doc-001": "r50k_base",
    "text-search-curie-doc-001": "r50k_base",
    "text-search-babbage-doc-001": "r50k_base",
    "text-search-ada-doc-001": "r50k_base",
    "code-search-babbage-code-001": "r50k_base",
    "code-search-ada-code-001": "r50k_base",
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
