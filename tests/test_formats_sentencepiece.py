"""Reading SentencePiece ``.model`` files and SentencePiece-style ``tokenizer.json`` files."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import mistral_common
import pytest
from sentencepiece import sentencepiece_model_pb2 as pb
from tokenizers import Tokenizer

from bytepair.formats import detect, load
from bytepair.formats.sentencepiece_json import is_sentencepiece_json, read_sentencepiece_json
from bytepair.formats.sentencepiece_model import read_sentencepiece_model
from bytepair.formats.values import SentencePieceComponents
from bytepair.reference.sentencepiece import SentencePieceReference
from bytepair.sentencepiece import SentencePieceEncoding

from conftest import shared_path

MISTRAL_DATA = Path(os.path.dirname(mistral_common.__file__)) / "data"


def _llama(name: str) -> Path:
    return shared_path("vocab", "llama2", name)


def _llama_json() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_llama("tokenizer.json").read_text(encoding="utf-8"))
    return data


def _components(path: Path) -> SentencePieceComponents:
    """What ``load`` read from ``path``: the encoding's components."""
    enc = load(path)
    assert isinstance(enc, SentencePieceEncoding)
    return enc.vocabulary()


def test_load_reads_both_llama2_files() -> None:
    model = _components(_llama("tokenizer.model"))
    assert isinstance(model, SentencePieceComponents)
    assert (model.source_format, model.model_type, model.name) == (
        "sentencepiece-model",
        "BPE",
        "llama2",
    )
    assert model.original == _llama("tokenizer.model").read_bytes()  # a save can be lossless
    assert model.merges is None and model.prepend == "always" and model.decoder == "sentencepiece"
    assert (model.unk_id, model.bos_id, model.eos_id, model.pad_id) == (0, 1, 2, None)
    assert model.special_tokens == {"<s>": 1, "</s>": 2} and not model.add_bos
    assert model.unk_surface == " \u2047 " and model.byte_fallback
    assert model.pieces[3] == ("<0x00>", 0.0, 6) and len(model.pieces) == 32000

    hf = _components(_llama("tokenizer.json"))
    assert isinstance(hf, SentencePieceComponents) and hf.source_format == "tokenizer-json"
    assert hf.prepend == "first" and hf.decoder == "hf" and not hf.split_on_replacement
    assert hf.merges is not None and len(hf.merges) == 61249
    left, right = hf.merges[0]  # the first merge is "▁ t", as id pairs
    assert (hf.pieces[left][0], hf.pieces[right][0]) == ("▁", "t")
    assert [p[0] for p in hf.pieces] == [p[0] for p in model.pieces]
    assert [p[2] for p in hf.pieces] == [p[2] for p in model.pieces]  # the same piece types
    assert (hf.unk_id, hf.bos_id, hf.eos_id, hf.special_tokens) == (0, 1, 2, {"<s>": 1, "</s>": 2})
    assert hf.fuse_unk and hf.unk_surface == "<unk>" and not hf.add_bos and hf.original is None
    # The folder holds both; tokenizer.json comes first, as for any folder.
    assert _components(_llama("tokenizer.json").parent).source_format == "tokenizer-json"
    assert detect(_llama("tokenizer.model")).kind == "sentencepiece-model"
    assert detect(_llama("tokenizer.json")).kind == "sentencepiece-json"


@pytest.mark.parametrize("name", sorted(p.name for p in MISTRAL_DATA.glob("*.model*")))
def test_mistral_models_load_whatever_their_name(name: str, tmp_path: Path) -> None:
    renamed = tmp_path / "renamed.bin"
    renamed.write_bytes((MISTRAL_DATA / name).read_bytes())
    found = _components(renamed)
    assert isinstance(found, SentencePieceComponents) and found.model_type == "BPE"
    assert found.special_tokens["</s>"] == 2
    if "v1" not in name:
        assert found.special_tokens["[INST]"] == 3


def test_options_that_a_sentencepiece_model_has_itself_are_refused() -> None:
    with pytest.raises(ValueError, match="do not pass pat_str or special_tokens"):
        load(_llama("tokenizer.model"), pat_str="gpt2")
    with pytest.raises(TypeError, match=r"apply to vocab\.json"):
        load(_llama("tokenizer.model"), normalizer="NFC")


def _model_file(tmp_path: Path, edit: Any) -> Path:
    model = pb.ModelProto()
    model.ParseFromString(_llama("tokenizer.model").read_bytes())
    edit(model)
    path = tmp_path / "edited.model"
    path.write_bytes(model.SerializeToString())
    return path


@pytest.mark.parametrize("kind", ["UNIGRAM", "WORD", "CHAR"])
def test_models_other_than_bpe_are_refused_by_type_and_file(kind: str, tmp_path: Path) -> None:
    number = pb.TrainerSpec.ModelType.Value(kind)
    path = _model_file(tmp_path, lambda m: setattr(m.trainer_spec, "model_type", number))
    with pytest.raises(ValueError, match=rf"edited\.model: a {kind} sentencepiece model"):
        load(path)


def test_unicode_rules_and_broken_files_are_refused(tmp_path: Path) -> None:
    path = _model_file(tmp_path, lambda m: setattr(m.normalizer_spec, "precompiled_charsmap", b"x"))
    with pytest.raises(ValueError, match=r"edited\.model: normalizer_spec: .*precompiled_charsmap"):
        read_sentencepiece_model(path)
    data = _llama("tokenizer.model").read_bytes()
    cut = tmp_path / "cut.model"
    cut.write_bytes(data[:-1])
    with pytest.raises(ValueError, match=r"cut\.model: sentencepiece model: .* at byte \d+"):
        load(cut)
    two = _model_file(tmp_path, lambda m: setattr(m.pieces[5], "type", 2))
    with pytest.raises(ValueError, match="exactly one piece of type UNKNOWN, this one 2"):
        read_sentencepiece_model(two)


# ---- tokenizer.json ----------------------------------------------------------------------


def _write(tmp_path: Path, spec: dict[str, Any]) -> Path:
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    return path


PREPEND_REPLACE = {
    "type": "Sequence",
    "normalizers": [
        {"type": "Prepend", "prepend": "▁"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
    ],
}

TEXTS = [
    "",
    " ",
    "hello",
    " hello",
    "  hello  world ",
    "a<s>b",
    "<s> x</s>",
    "\u2581x",
    "x\n y",
    "😀\U0010ffff",
]


@pytest.mark.parametrize(
    "variant",
    ["as_shipped", "prepend_replace", "metaspace_always", "metaspace_split", "metaspace_never"],
)
def test_variants_give_the_ids_of_tokenizers(variant: str, tmp_path: Path) -> None:
    spec = _llama_json()
    if variant == "prepend_replace":  # the newer Llama 2 files: ▁ before every part, always
        spec["normalizer"], spec["pre_tokenizer"] = PREPEND_REPLACE, None
    elif variant.startswith("metaspace_"):
        scheme = "never" if variant == "metaspace_never" else "always"
        spec["pre_tokenizer"].update(prepend_scheme=scheme, split=variant == "metaspace_split")
        if scheme == "never":
            spec["decoder"]["decoders"].pop()  # no prefix, no Strip
    path = _write(tmp_path, spec)
    enc = load(path)
    components = enc.vocabulary()
    ref = SentencePieceReference(components.pieces, **components.encoder_options())
    hf = Tokenizer.from_file(str(path))
    for text in TEXTS:
        want = hf.encode(text, add_special_tokens=False).ids
        assert ref.encode(text, "all") == want, (variant, text)
        assert ref.decode(want) == hf.decode(want), (variant, text)
        # The compiled model too, whose prefix rule the core takes from the flavour.
        assert enc.encode(text, allowed_special="all", add_special_tokens=False) == want
        assert enc.decode(want, skip_special_tokens=True) == hf.decode(want), (variant, text)


def test_the_post_processor_says_whether_bos_and_eos_are_added(tmp_path: Path) -> None:
    spec = _llama_json()
    spec["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [
            {"SpecialToken": {"id": "<s>", "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
            {"SpecialToken": {"id": "</s>", "type_id": 0}},
        ],
        "pair": [],
        "special_tokens": {
            "<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]},
            "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]},
        },
    }
    found = read_sentencepiece_json(_write(tmp_path, spec))
    assert (found.add_bos, found.add_eos, found.bos_id, found.eos_id) == (True, True, 1, 2)
    spec["post_processor"]["single"] = spec["post_processor"]["single"][:2]
    found = read_sentencepiece_json(_write(tmp_path, spec))
    assert (found.add_bos, found.add_eos) == (True, False)
    spec["post_processor"]["single"].insert(0, {"SpecialToken": {"id": "<s>", "type_id": 0}})
    with pytest.raises(ValueError, match=r"post_processor.single: only '\[bos\] \$A \[eos\]'"):
        read_sentencepiece_json(_write(tmp_path, spec))


def test_new_special_tokens_are_appended_as_control_pieces(tmp_path: Path) -> None:
    spec = _llama_json()
    pad = {"id": 32000, "content": "<pad>", "single_word": False, "lstrip": False}
    spec["added_tokens"].append({**pad, "rstrip": False, "normalized": False, "special": True})
    found = read_sentencepiece_json(_write(tmp_path, spec))
    assert found.pieces[32000] == ("<pad>", 0.0, 3) and found.special_tokens["<pad>"] == 32000
    hf = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    ref = SentencePieceReference(found.pieces, **found.encoder_options())
    assert ref.encode("a<pad>b", "all") == hf.encode("a<pad>b", add_special_tokens=False).ids


def _set(spec: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    spec = copy.deepcopy(spec)
    target = spec
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return spec


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("decoder", "decoders"), [{"type": "ByteFallback"}], r"decoder: unsupported decoder"),
        (("decoder",), {"type": "Metaspace"}, r"decoder: unsupported decoder 'Metaspace'"),
        (("decoder", "decoders", 3, "start"), 2, r"decoder.decoders\[3\]: expected Strip"),
        (("pre_tokenizer",), {"type": "Whitespace"}, r"pre_tokenizer: unsupported pre-tokenizer"),
        (("pre_tokenizer", "prepend_scheme"), "sometimes", r"prepend_scheme: unknown scheme"),
        (("pre_tokenizer", "replacement"), "__", r"pre_tokenizer.replacement: expected one"),
        (("normalizer",), {"type": "NFKC"}, r"normalizer: unsupported normalizer 'NFKC'"),
        (("normalizer",), PREPEND_REPLACE, r"normalizer: a Replace or Prepend normalizer and"),
        (("added_tokens", 0, "special"), False, r"added_tokens\[0\]: '<s>' is not special"),
        (("added_tokens", 1, "lstrip"), True, r"added_tokens\[1\]: lstrip, rstrip"),
        (("post_processor",), {"type": "RobertaProcessing"}, r"post_processor: unsupported"),
        (("model", "dropout"), 0.1, r"model.dropout: unsupported dropout"),
        (("model", "unk_token"), "<nope>", r"model.unk_token: '<nope>' is not in model.vocab"),
        (("model", "merges", 0), ["▁", "zzz"], r"model.merges\[0\]: 'zzz' is not in model.vocab"),
        (("model", "vocab", "<unk>"), 99999, r"model.vocab: ids must be 0 to 31999; 0 is missing"),
        (("padding",), {"length": 8}, r"padding: tokenizers pads"),
        (("version",), "2.0", r"version: unsupported"),
    ],
)
def test_unsupported_components_are_named(
    path: tuple[Any, ...], value: Any, message: str, tmp_path: Path
) -> None:
    file = _write(tmp_path, _set(_llama_json(), path, value))
    with pytest.raises(ValueError, match=r"tokenizer\.json: .*" + message):
        load(file)


def test_recognition_needs_a_sentencepiece_sign() -> None:
    spec = _llama_json()
    assert is_sentencepiece_json(spec)
    assert is_sentencepiece_json(_set(spec, ("model", "byte_fallback"), False))  # Metaspace
    plain = _set(_set(spec, ("model", "byte_fallback"), False), ("pre_tokenizer",), None)
    assert not is_sentencepiece_json(plain)
    assert is_sentencepiece_json(_set(plain, ("normalizer",), PREPEND_REPLACE))
    assert not is_sentencepiece_json(_set(spec, ("model", "type"), "Unigram"))
