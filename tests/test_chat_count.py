"""count_chat and report on chat prompts: what the model receives, not only the messages' text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hub_support import QWEN2_CONFIG, add_shared_model

from bytepair import Encoding, get_encoding
from bytepair.report import count_chat, load_prompts, token_report

from conftest import shared_path

CHAT = [
    {"role": "system", "content": "You are a helpful, pattern-following assistant."},
    {"role": "user", "name": "example_user", "content": "New synergies will help drive revenue."},
    {"role": "assistant", "content": "Things working well together will increase revenue."},
]
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "unit": {"type": "string", "description": "Unit", "enum": ["c", "f"]},
            },
        },
    },
}


@pytest.fixture(scope="module")
def o200k() -> Encoding:
    return get_encoding("o200k_base", vocab_dir=shared_path("vocab"))


def test_openai_models_are_counted_as_the_cookbook_counts(o200k: Encoding) -> None:
    n = count_chat(CHAT, "gpt-4o", vocab_dir=shared_path("vocab"))
    values = sum(o200k.count(v) for m in CHAT for v in m.values())
    assert n.tokens == 3 * len(CHAT) + values + 1 + 3  # 1 for the name, 3 priming the reply
    assert n.content == sum(o200k.count(m["content"]) for m in CHAT)
    assert n.overhead == n.tokens - n.content and n.estimate and n.method == "openai"


def test_openai_tool_definitions_are_counted_as_the_cookbook_counts(o200k: Encoding) -> None:
    without = count_chat(CHAT, "gpt-4o", vocab_dir=shared_path("vocab"))
    with_tool = count_chat(CHAT, "gpt-4o", [TOOL], vocab_dir=shared_path("vocab"))
    # gpt-4o: 7 per function, 3 for the properties, 3 per property, -3 + 3 per item for an
    # enum, 12 at the end; the lines "name:description" and "key:type:description".
    lines = ["get_weather:Get the weather", "city:string:The city", "unit:string:Unit"]
    expected = 7 + 3 + 3 * 2 + (-3 + 3 * 2) + 12
    expected += sum(o200k.count(t) for t in [*lines, "c", "f"])
    assert with_tool.tokens - without.tokens == expected


def test_a_hub_model_is_counted_with_its_template(tmp_path: Path) -> None:
    source = Path(__file__).parent / "data" / "chat_templates" / "Qwen-QwQ-32B.jinja"
    config = {**QWEN2_CONFIG, "chat_template": source.read_text(encoding="utf-8")}
    add_shared_model(tmp_path, "qwen2", config)
    enc = Encoding.from_pretrained("org/qwen2", local_files_only=True, cache_dir=tmp_path)
    chat = [{"role": "user", "content": "Hello<|im_end|>"}]
    n = count_chat(chat, enc)
    ids = enc.encode_chat(chat, template="model", add_generation_prompt=True)
    assert (n.tokens, n.method, n.estimate) == (len(ids), "template", False)
    assert n.content == enc.count("Hello<|im_end|>", disallowed_special=())
    # <|im_start|>user\n ... <|im_end|>\n<|im_start|>assistant\n<think>\n
    assert n.overhead == len(ids) - n.content > 5

    # report on chat JSONL: the template's tokens are counted, and shown as their own row.
    path = tmp_path / "chats.jsonl"
    path.write_text(json.dumps({"messages": chat}) + "\n" + json.dumps({"prompt": "plain"}))
    report = token_report(load_prompts([path]), {"qwen": enc})
    stats = report["qwen"]
    assert stats.counts == (len(ids), enc.count("plain"))
    assert (stats.overhead, stats.overhead_method) == (n.overhead, "template")
    table = report.to_table()
    assert "chat overhead" in table and "(est.)" not in table


def test_errors_name_what_to_give(o200k: Encoding) -> None:
    ranks = {bytes([b]): b for b in range(256)}
    plain = Encoding("b", pat_str=r".", special_tokens={}, mergeable_ranks=ranks)
    with pytest.raises(ValueError, match="no chat template and is not an OpenAI encoding"):
        count_chat(CHAT, plain)
    with pytest.raises(ValueError, match="unknown model 'nonesuch'"):
        count_chat(CHAT, "nonesuch")
    assert count_chat(CHAT, o200k).method == "openai"
