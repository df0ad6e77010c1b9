"""bytepair.formats.hf_json: every tokenizer.json in shared/vocab gives tokenizers' ids and text.

The differential tests run each vocabulary over a sample of every corpus file (see
``formats_support``), with and without ``add_special_tokens``, and per line for a few files. The
component tests build small tokenizers with ``tokenizers`` itself and compare on hand-picked
inputs, so each supported option (behaviours, ``invert``, added-token flags, normalizers,
post-processors) is checked against the reference, not against our reading of its source.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tokenizers
from formats_support import (
    IGNORED_SETTINGS,
    TOKENIZER_JSONS,
    corpus_lines,
    corpus_samples,
    difference,
    hf_tokenizer,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Regex, decoders, models, normalizers, processors
from tokenizers import pre_tokenizers as pt

from bytepair import Encoding, _core
from bytepair.bytes_unicode import encode_bytes
from bytepair.formats.hf_pipeline import stages_of

from conftest import shared_path


@pytest.fixture(scope="module", params=sorted(TOKENIZER_JSONS))
def pair(request: pytest.FixtureRequest) -> tuple[Encoding, Any]:
    path = shared_path("vocab", TOKENIZER_JSONS[request.param])
    return Encoding.from_tokenizer_json(path, ignore_settings=IGNORED_SETTINGS), hf_tokenizer(path)


@pytest.mark.slow
def test_corpus_ids_and_text(pair: tuple[Encoding, Any]) -> None:
    enc, tk = pair
    # Each file's start with add_special_tokens=True (the default), its middle with False, and
    # files too short for a middle with both: tokenizers takes most of this test's time.
    samples = corpus_samples()
    mids = {label.split("[")[0] for label, _ in samples if not label.endswith(":20000]")}
    with_specials = [s for s in samples if s[0].endswith(":20000]")]
    without = [s for s in samples if s not in with_specials or s[0].split("[")[0] not in mids]
    for add, chosen in ((True, with_specials), (False, without)):
        texts = [t for _, t in chosen]
        want = [e.ids for e in tk.encode_batch(texts, add_special_tokens=add)]
        got = enc.encode_batch(texts, allowed_special="all", add_special_tokens=add)
        for (label, _), w, g in zip(chosen, want, got, strict=True):
            assert g == w, difference(f"{enc.name} add_special_tokens={add} {label}", w, g)
        for (label, _), ids in zip(chosen, want, strict=True):
            assert enc.decode(ids) == tk.decode(ids, skip_special_tokens=False), label
            assert enc.decode(ids, skip_special_tokens=True) == tk.decode(ids), label
    # encode (one text) goes through another path than encode_batch.
    label, text = samples[0]
    assert enc.encode(text, allowed_special="all") == tk.encode(text).ids, label


@pytest.mark.slow
def test_corpus_lines(pair: tuple[Encoding, Any]) -> None:
    enc, tk = pair
    lines = corpus_lines()
    texts = [t for _, t in lines]
    want = [e.ids for e in tk.encode_batch(texts)]
    for (label, text), w in zip(lines, want, strict=True):
        got = enc.encode(text, allowed_special="all")
        assert got == w, difference(f"{enc.name} {label}", w, got)


@pytest.mark.slow
def test_ordinary_is_tokenizers_with_encode_special_tokens(pair: tuple[Encoding, Any]) -> None:
    enc, tk = pair
    tk.encode_special_tokens = True
    try:
        texts = [t for _, t in corpus_samples(3000)]
        want = [e.ids for e in tk.encode_batch(texts, add_special_tokens=False)]
    finally:
        tk.encode_special_tokens = False
    for text, w in zip(texts, want, strict=True):
        assert enc.encode_ordinary(text) == w, difference(enc.name, w, enc.encode_ordinary(text))


@pytest.mark.slow
def test_counts_numpy_and_batches_agree(pair: tuple[Encoding, Any]) -> None:
    enc, _ = pair
    texts = [t for _, t in corpus_samples(2000)[:20]]
    for specials in ({"allowed_special": "all"}, {"disallowed_special": ()}):
        batch = enc.encode_batch(texts, **specials)
        assert batch == [enc.encode(t, **specials) for t in texts]
        assert enc.count_batch(texts, **specials) == [len(ids) for ids in batch]
        assert enc.count(texts[0], **specials) == len(batch[0])
        assert enc.encode_to_numpy(texts[0], **specials).tolist() == batch[0]
    assert enc.encode_ordinary_batch(texts) == [enc.encode_ordinary(t) for t in texts]


# ---- special tokens: tiktoken's rule by default, tokenizers' with allowed_special="all" -------


def test_special_added_tokens_in_text_raise_by_default() -> None:
    path = shared_path("vocab", "roberta-base", "tokenizer.json")
    enc = Encoding.from_tokenizer_json(path)
    assert enc.special_tokens_set == {"<s>", "<pad>", "</s>", "<unk>", "<mask>"}
    text = "Hello <mask> world</s>"
    calls: list[Any] = [
        lambda: enc.encode(text),
        lambda: enc.encode(text, add_special_tokens=False),
        lambda: enc.count(text),
        lambda: enc.encode_to_numpy(text),
        lambda: enc.encode_batch(["fine", text]),
        lambda: enc.count_batch(["fine", text]),
    ]
    for call in calls:
        # The first special token in the text is named, with tiktoken's message.
        with pytest.raises(ValueError, match=r"disallowed special token '<mask>'\.\n"):
            call()
    # The post-processor's <s> ... </s> are inserted as ids, not read from text: no error.
    assert enc.encode("Hello world") == [0, 31414, 232, 2]
    assert enc.count("Hello world") == 4


def test_allowed_special_all_gives_tokenizers_ids() -> None:
    path = shared_path("vocab", "roberta-base", "tokenizer.json")
    enc, tk = Encoding.from_tokenizer_json(path), hf_tokenizer(path)
    text = "Hello <mask> world</s>"
    ids = enc.encode(text, allowed_special="all")
    assert ids == tk.encode(text).ids  # [0, ..., 50264, ..., 2, 2]
    assert 50264 in ids
    assert (
        enc.encode(text, allowed_special="all", add_special_tokens=False)
        == tk.encode(text, add_special_tokens=False).ids
    )
    assert enc.encode_batch([text], allowed_special="all") == [ids]
    assert enc.count(text, allowed_special="all") == len(ids)
    # Some allowed, the others disallowed (tiktoken's rule), or plain text.
    with pytest.raises(ValueError, match="disallowed special token '</s>'"):
        enc.encode(text, allowed_special={"<mask>"})
    some = enc.encode(
        text, allowed_special={"<mask>"}, disallowed_special=(), add_special_tokens=False
    )
    assert 50264 in some and 2 not in some


def test_disallowed_special_empty_encodes_special_added_tokens_as_text() -> None:
    path = shared_path("vocab", "roberta-base", "tokenizer.json")
    enc, tk = Encoding.from_tokenizer_json(path), hf_tokenizer(path)
    text = "Hello <mask> world</s>"
    ids = enc.encode(text, disallowed_special=(), add_special_tokens=False)
    assert ids == enc.encode_ordinary(text)
    assert 50264 not in ids and 2 not in ids
    # What tokenizers does when told to treat special tokens as text.
    tk.encode_special_tokens = True
    try:
        assert ids == tk.encode(text, add_special_tokens=False).ids
    finally:
        tk.encode_special_tokens = False
    # The post-processor still adds the model's tokens around the text.
    assert enc.encode(text, disallowed_special=()) == [0, *ids, 2]


def test_non_special_added_tokens_are_always_recognised() -> None:
    # NeoX's whitespace tokens are added tokens with special=False: vocabulary, not control
    # tokens, so the default (which refuses <|endoftext|> in text) still recognises them.
    path = shared_path("vocab", "gpt-neox-20b", "20B_tokenizer.json")
    enc, tk = Encoding.from_tokenizer_json(path), hf_tokenizer(path)
    text = "def f():\n        return  1"
    assert enc.encode(text) == tk.encode(text).ids
    assert 50276 in enc.encode(text)  # "  "
    with pytest.raises(ValueError, match=r"disallowed special token '<\|endoftext\|>'"):
        enc.encode(text + "<|endoftext|>")
    text += "<|endoftext|>"
    assert enc.encode(text, allowed_special="all") == tk.encode(text).ids
    assert 50276 in enc.encode_ordinary(text)
    assert 50276 in enc.encode(text, disallowed_special=())
    assert 0 not in enc.encode_ordinary(text)  # <|endoftext|> is special: text here
    assert 0 not in enc.encode(text, disallowed_special=())
    assert enc.eot_token == 0


# ---- components, each against tokenizers -----------------------------------------------------


def _byte_vocab(extra: list[str]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    vocab = {encode_bytes(bytes([b])): b for b in range(256)}
    merges = []
    for token in extra:
        # Each extra token is merged from its first character and the rest (all in the vocab).
        left, right = token[:-1], token[-1]
        merges.append((left, right))
        vocab.setdefault(token, len(vocab))
    return vocab, merges


def _save(tk: tokenizers.Tokenizer, folder: Path) -> Path:
    path = folder / "tokenizer.json"
    tk.save(str(path))
    return path


def _toy(
    pre: Any,
    *,
    normalizer: Any = None,
    post: Any = None,
    added: list[tokenizers.AddedToken] | None = None,
    special: list[tokenizers.AddedToken] | None = None,
    ignore_merges: bool = False,
) -> tokenizers.Tokenizer:
    tokens = ["he", "hel", "hell", "hello", "Ġw", "Ġwo", "Ġwor", "Ġworl", "Ġworld", "ab", "abc"]
    vocab, merges = _byte_vocab(tokens)
    tk = tokenizers.Tokenizer(models.BPE(vocab, merges, ignore_merges=ignore_merges))
    tk.pre_tokenizer = pre
    tk.decoder = decoders.ByteLevel()
    if normalizer is not None:
        tk.normalizer = normalizer
    if post is not None:
        tk.post_processor = post
    if special:
        tk.add_special_tokens(special)
    if added:
        tk.add_tokens(added)
    return tk


TEXTS = [
    "hello world",
    "Hello  WORLD hello-world--x",
    "a1b22c333 ½ ²³ 12345678",
    "x, y; (z)! ¿qué? «ok» «»",
    "  leading and trailing  \n\n\t",
    "<mask>hello<mask> <mask> x<mask>y <MASK>",
    "ΣΑΣ ǅ İ ß",
    "",
]

BL = pt.ByteLevel(add_prefix_space=False)
BL_NO_REGEX = pt.ByteLevel(add_prefix_space=False, use_regex=False)


@pytest.mark.parametrize(
    "pre",
    [
        BL,
        pt.ByteLevel(add_prefix_space=True),
        pt.Sequence([pt.Split(Regex(r"\s"), "isolated"), pt.ByteLevel(add_prefix_space=True)]),
        *(
            pt.Sequence([pt.Split(Regex(r"[0-9]+|\s+"), behavior, invert=invert), BL_NO_REGEX])
            for behavior in (
                "removed",
                "isolated",
                "merged_with_previous",
                "merged_with_next",
                "contiguous",
            )
            for invert in (False, True)
        ),
        pt.Sequence([pt.Split("-", "merged_with_next"), BL]),
        pt.Sequence([pt.Split("", "isolated"), BL]),
        pt.Sequence([pt.Split("", "contiguous"), BL]),
        pt.Sequence([pt.Split(Regex(""), "merged_with_next"), BL]),
        pt.Sequence([pt.Digits(individual_digits=True), BL]),
        pt.Sequence([pt.Digits(individual_digits=False), BL]),
        pt.Sequence([pt.Punctuation("contiguous"), BL]),
        pt.Sequence([pt.Punctuation("merged_with_previous"), BL, pt.Digits()]),
        # Falcon's shape: stages after ByteLevel see its characters ("½" is "Â½").
        pt.Sequence([BL, pt.Digits(individual_digits=True)]),
        pt.Sequence([BL, pt.Split(Regex("[0-9][0-9][0-9]"), "isolated")]),
        pt.Sequence([pt.Split(Regex(r"o$"), "isolated"), BL_NO_REGEX]),
        pt.Sequence([pt.Split(Regex(r"\d{1,2}+"), "isolated"), BL_NO_REGEX]),
    ],
    ids=repr,
)
def test_pre_tokenizers(pre: Any, tmp_path: Path) -> None:
    tk = _toy(pre)
    enc = Encoding.from_tokenizer_json(_save(tk, tmp_path))
    for text in TEXTS:
        assert enc.encode(text) == tk.encode(text).ids, text
        assert enc.decode(enc.encode(text)) == tk.decode(tk.encode(text).ids)


@pytest.mark.parametrize(
    "normalizer",
    [
        normalizers.NFC(),
        normalizers.NFKC(),
        normalizers.NFD(),
        normalizers.NFKD(),
        normalizers.Lowercase(),
        normalizers.Replace(" ", "Ġ"),
        normalizers.Replace(Regex(r"\s+"), " "),
        normalizers.Prepend("Ġ"),
        normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]),
    ],
    ids=repr,
)
def test_normalizers(normalizer: Any, tmp_path: Path) -> None:
    special = [tokenizers.AddedToken("<MASK>", special=True, normalized=False)]
    added = [tokenizers.AddedToken("Hello", normalized=True)]
    tk = _toy(BL, normalizer=normalizer, special=special, added=added)
    enc = Encoding.from_tokenizer_json(_save(tk, tmp_path))
    for text in [*TEXTS, "Ｈｅｌｌｏ ﬁ ｗｏｒｌｄ<MASK>Hello", "é = e\u0301, Å = A\u030a"]:
        assert enc.encode(text, allowed_special="all") == tk.encode(text).ids, text


@pytest.mark.parametrize(
    "flags",
    [
        {},
        {"lstrip": True},
        {"rstrip": True},
        {"lstrip": True, "rstrip": True},
        {"single_word": True},
        {"single_word": True, "lstrip": True, "rstrip": True},
        {"normalized": True},
    ],
    ids=repr,
)
def test_added_token_flags(flags: dict[str, bool], tmp_path: Path) -> None:
    options = {"normalized": False, **flags}
    special = [tokenizers.AddedToken("<mask>", special=True, **options)]
    added = [tokenizers.AddedToken("mask", single_word=True), tokenizers.AddedToken("<m")]
    tk = _toy(BL, normalizer=normalizers.Lowercase(), special=special, added=added)
    enc = Encoding.from_tokenizer_json(_save(tk, tmp_path))
    mask = enc.encode_single_token("<mask>")
    for text in TEXTS:
        assert enc.encode(text, allowed_special="all") == tk.encode(text).ids, text
        # By default the special token never comes from text: its exact spelling raises, and
        # what only the normalizer turns into it ("<MASK>", lowercased) stays text.
        if "<mask>" in text:
            with pytest.raises(ValueError, match="disallowed special token '<mask>'"):
                enc.encode(text)
        else:
            assert mask not in enc.encode(text), text


@pytest.mark.parametrize(
    "post",
    [
        processors.TemplateProcessing(
            single="<s> $A </s>", pair="<s> $A </s> $B:1", special_tokens=[("<s>", 0), ("</s>", 2)]
        ),
        processors.TemplateProcessing(single="$A <s>", special_tokens=[("<s>", 0)]),
        processors.RobertaProcessing(("</s>", 2), ("<s>", 0)),
        processors.BertProcessing(("</s>", 2), ("<s>", 0)),
        processors.ByteLevel(),
        processors.Sequence(
            [
                processors.ByteLevel(),
                processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)]),
            ]
        ),
    ],
    ids=repr,
)
def test_post_processors(post: Any, tmp_path: Path) -> None:
    tk = _toy(BL, post=post)
    enc = Encoding.from_tokenizer_json(_save(tk, tmp_path))
    for text in TEXTS:
        for add in (True, False):
            assert (
                enc.encode(text, add_special_tokens=add)
                == tk.encode(text, add_special_tokens=add).ids
            ), text


def test_ignore_merges_and_merge_formats(tmp_path: Path) -> None:
    # "abc" is a token the merges build only from ("ab", "c"); with ignore_merges a whole piece
    # "abc" is that token however the merges would cut it.
    vocab = {encode_bytes(bytes([b])): b for b in range(256)} | {"bc": 256, "ab": 257, "abc": 258}
    for ignore in (False, True):
        tk = tokenizers.Tokenizer(
            models.BPE(vocab, [("b", "c"), ("a", "b"), ("ab", "c")], ignore_merges=ignore)
        )
        tk.pre_tokenizer = BL
        tk.decoder = decoders.ByteLevel()
        path = _save(tk, tmp_path)
        enc = Encoding.from_tokenizer_json(path)
        for text in ["abc", "abcabc x abc", "aabcc"]:
            assert enc.encode(text) == tk.encode(text).ids, (ignore, text)
        # The same merges written as "a b" strings instead of pairs.
        spec = json.loads(path.read_text())
        spec["model"]["merges"] = [" ".join(m) for m in spec["model"]["merges"]]
        path.write_text(json.dumps(spec))
        assert Encoding.from_tokenizer_json(path).encode("abcabc") == tk.encode("abcabc").ids


@settings(max_examples=60, deadline=None)
@given(
    merges=st.lists(
        st.tuples(st.sampled_from("abcd"), st.sampled_from("abcd")), min_size=1, max_size=12
    ),
    text=st.text(alphabet="abcd ", max_size=40),
)
def test_pair_rule_equals_tokenizers_on_random_merges(
    merges: list[tuple[str, str]], text: str
) -> None:
    # Random merge lists (merging tokens made by earlier merges too) exercise exactly the cases
    # where pair priority and tiktoken's rank rule differ.
    vocab = {encode_bytes(bytes([b])): b for b in range(256)}
    made: list[tuple[str, str]] = []
    pieces = list("abcd")
    for i, (x, y) in enumerate(merges):
        left = pieces[(ord(x) + i) % len(pieces)]
        right = pieces[(ord(y) * 7 + i) % len(pieces)]
        if (left, right) in made:
            continue
        made.append((left, right))
        if left + right not in vocab:
            vocab[left + right] = len(vocab)
            pieces.append(left + right)
    tk = tokenizers.Tokenizer(models.BPE(vocab, made))
    tk.pre_tokenizer = BL
    data = json.loads(tk.to_str())
    data["decoder"] = {"type": "ByteLevel"}
    enc = _from_json(data)
    assert enc.encode(text) == tk.encode(text).ids


def _from_json(data: dict[str, Any]) -> Encoding:
    from bytepair.formats.hf_json import load_tokenizer_json

    return load_tokenizer_json("<memory>", data=data)


def test_pipeline_split_matches_pre_tokenize_str() -> None:
    pre = {
        "type": "Sequence",
        "pretokenizers": [
            {"type": "Punctuation", "behavior": "Contiguous"},
            {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
            {"type": "Digits", "individual_digits": False},
            {"type": "Split", "pattern": {"Regex": "[0-9][0-9][0-9]"}, "behavior": "Isolated"},
        ],
    }
    reference = tokenizers.Tokenizer(models.BPE())
    reference.pre_tokenizer = pt.Sequence(
        [
            pt.Punctuation("contiguous"),
            pt.ByteLevel(add_prefix_space=False),
            pt.Digits(False),
            pt.Split(Regex("[0-9][0-9][0-9]"), "isolated"),
        ]
    )
    stages = stages_of(pre, "pre_tokenizer")
    for text in [*TEXTS, "Falcon 1234567 ½¾ ...!!", "\u166d\U0001144b mixed ¿¡"]:
        want = [p for p, _ in reference.pre_tokenizer.pre_tokenize_str(text)]
        got = [encode_bytes(p) for p in _core.pipeline_split(stages, text)]
        assert got == want, text


# ---- what is refused ---------------------------------------------------------------------------


def _gpt2_json() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        shared_path("vocab", "gpt2-hf", "gpt2.json").read_text(encoding="utf-8")
    )
    return data


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("model", "type"), "WordPiece", r"model: unsupported model 'WordPiece'"),
        (("model", "dropout"), 0.1, r"model.dropout: unsupported dropout"),
        (("model", "continuing_subword_prefix"), "##", r"model.continuing_subword_prefix"),
        (("model", "end_of_word_suffix"), "</w>", r"model.end_of_word_suffix"),
        (("pre_tokenizer",), {"type": "Metaspace"}, r"pre_tokenizer: unsupported pre-tokenizer"),
        (
            ("pre_tokenizer",),
            {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Whitespace"}]},
            r"pre_tokenizer.pretokenizers\[1\]: unsupported pre-tokenizer 'Whitespace'",
        ),
        (("pre_tokenizer",), None, r"pre_tokenizer: no ByteLevel"),
        (("normalizer",), {"type": "BertNormalizer"}, r"normalizer: unsupported normalizer"),
        (
            ("normalizer",),
            {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Strip"}]},
            r"normalizer.normalizers\[1\]: unsupported normalizer 'Strip'",
        ),
        (("decoder",), {"type": "WordPiece"}, r"decoder: unsupported decoder 'WordPiece'"),
        (("decoder",), None, r"decoder: unsupported decoder 'null'"),
        (
            ("post_processor",),
            {"type": "SomethingElse"},
            r"post_processor: unsupported post-processor",
        ),
        (("version",), "2.0", r"version: unsupported"),
    ],
)
def test_unsupported_components_are_named(
    path: tuple[str, ...], value: Any, message: str, tmp_path: Path
) -> None:
    data = _gpt2_json()
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    file = tmp_path / "tokenizer.json"
    file.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        Encoding.from_tokenizer_json(file)
    assert str(file) in str(info.value)


def test_byte_fallback_on_a_byte_level_model_gives_tokenizers_ids(tmp_path: Path) -> None:
    # What BpeTrainer(byte_fallback=True) writes for a Split + ByteLevel model: with every
    # byte-level character in the vocabulary tokenizers never falls back, and neither do we.
    data = _gpt2_json()
    data["model"]["byte_fallback"] = True
    file = tmp_path / "tokenizer.json"
    file.write_text(json.dumps(data), encoding="utf-8")
    enc = Encoding.from_tokenizer_json(file)
    reference = tokenizers.Tokenizer.from_file(str(file))
    for text in [*TEXTS, "bytes \x00\x7f\u00ff \U0001f600 end"]:
        assert enc.encode(text) == reference.encode(text).ids, text
    enc.save(f"{tmp_path / 'out'}/", format="hf")
    written = json.loads((tmp_path / "out" / "tokenizer.json").read_text(encoding="utf-8"))
    assert written["model"]["byte_fallback"] is True


def test_byte_fallback_with_bytes_missing_gives_tokenizers_ids_and_offsets(
    tmp_path: Path,
) -> None:
    # tokenizers turns a byte-level character missing from the vocabulary into the <0xHH>
    # tokens of its UTF-8 bytes where they all exist (the space's Ġ is c4 a0), and drops it
    # where one does not (0x80's Ģ is c4 a2; <0xA2> is absent).
    data = _gpt2_json()
    vocab = data["model"]["vocab"]
    data["model"]["byte_fallback"] = True
    del vocab["\u0120"], vocab["\u0122"]
    data["model"]["merges"] = [
        m for m in data["model"]["merges"] if "\u0120" not in m and "\u0122" not in m
    ]
    for name in ("<0xC4>", "<0xA0>"):
        vocab[name] = max(vocab.values()) + 1
    file = tmp_path / "tokenizer.json"
    file.write_text(json.dumps(data), encoding="utf-8")
    enc = Encoding.from_tokenizer_json(file)
    reference = tokenizers.Tokenizer.from_file(str(file))
    fallback = [vocab["<0xC4>"], vocab["<0xA0>"]]
    assert enc.encode("a b") == [vocab["a"], *fallback, vocab["b"]] == reference.encode("a b").ids
    long = " " * 300 + "x"  # the long-piece path
    for text in [*TEXTS, long, "bytes \x00\x7f\u00ff \U0001f600 end", "\x80 x \x80"]:
        want = reference.encode(text)
        assert enc.encode(text) == want.ids, text
        spans = enc.encode_with_offsets(text)[1]
        if "\x80" not in text:  # tokenizers moves a word's spans onto a byte it drops
            assert spans == want.offsets, text
    assert enc.encode_with_offsets("a b") == (enc.encode("a b"), [(0, 1), (1, 2), (1, 2), (2, 3)])


def test_padding_and_truncation_are_ignored_only_when_asked() -> None:
    # SmolLM's file pads to 192 tokens and truncates there: never dropped silently (issue 30).
    path = shared_path("vocab", "smollm", "tokenizer.json")
    with pytest.raises(ValueError, match=r"padding: tokenizers pads .*ignore_settings"):
        Encoding.from_tokenizer_json(path)
    with pytest.raises(ValueError, match=r"truncation: tokenizers cuts .*max_length"):
        Encoding.from_tokenizer_json(path, ignore_settings=("padding",))
    # Asked to, the ids are those of tokenizers without both.
    enc = Encoding.from_tokenizer_json(path, ignore_settings=IGNORED_SETTINGS)
    text = "word " * 300
    assert len(enc.encode(text)) == len(hf_tokenizer(path).encode(text).ids) > 192
