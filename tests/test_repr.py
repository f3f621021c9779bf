"""HF's ``repr`` and ``str`` (``_repr.py``), against HF's own on the same objects: every
component kind with its options, models with vocabularies longer than ``str`` shows, and whole
tokenizers with added tokens, padding and truncation."""

from __future__ import annotations

import pytest
import subword.tokenizers as ours
import tokenizers as hf


def _objects(lib):
    n, p, d, r, m = lib.normalizers, lib.pre_tokenizers, lib.decoders, lib.processors, lib.models
    out = [
        n.NFC(),
        n.NFKD(),
        n.Lowercase(),
        n.StripAccents(),
        n.Strip(left=False),
        n.Replace("a", "b"),
        n.Replace(lib.Regex(r"\s+"), "▁"),
        n.Prepend("▁"),
        n.BertNormalizer(strip_accents=False, lowercase=False),
        n.Sequence([n.NFC(), n.Lowercase()]),
        p.Metaspace(),
        p.Metaspace(replacement="_", prepend_scheme="first", split=False),
        p.Split(" ", "isolated"),
        p.Split(lib.Regex(r"\d+"), "merged_with_next", invert=True),
        p.Punctuation("contiguous"),
        p.Digits(True),
        p.CharDelimiterSplit("x"),
        p.Whitespace(),
        p.WhitespaceSplit(),
        p.BertPreTokenizer(),
        p.FixedLength(3),
        p.ByteLevel(add_prefix_space=False, use_regex=False),
        p.Sequence([p.Whitespace()] * 7),
        d.Metaspace(prepend_scheme="never"),
        d.ByteFallback(),
        d.Fuse(),
        d.Strip(" ", 1, 0),
        d.Replace("_", " "),
        d.CTC(cleanup=False),
        d.BPEDecoder(suffix="@@"),
        d.WordPiece(prefix="##", cleanup=False),
        d.ByteLevel(),
        d.Sequence([d.Fuse(), d.ByteFallback()]),
        r.BertProcessing(("[SEP]", 1), ("[CLS]", 0)),
        r.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=False),
        r.ByteLevel(trim_offsets=False),
        r.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
        ),
        r.Sequence([r.ByteLevel()]),
        m.WordLevel({"b": 1, "a": 0}, unk_token="a"),
        m.WordPiece({"a": 0, "[UNK]": 1, "##b": 2}, max_input_chars_per_word=50),
        m.BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")], dropout=0.25, unk_token="a"),
        m.BPE(),
        m.WordLevel({str(9 - i): i for i in range(9)}, unk_token="0"),
    ]
    tok = lib.Tokenizer(m.BPE())
    tok.enable_padding(pad_to_multiple_of=8)
    tok.enable_truncation(10, stride=2, strategy="only_first")
    out.append(tok)
    tok = lib.Tokenizer(m.WordLevel({str(i): i for i in range(8)}, unk_token="0"))
    tok.add_special_tokens(["<s>"])
    tok.add_tokens([lib.AddedToken("my", single_word=True, lstrip=True)])
    tok.enable_padding(length=8, direction="left")
    tok.normalizer = n.Lowercase()
    tok.pre_tokenizer = p.Whitespace()
    tok.post_processor = r.TemplateProcessing(single="$A <s>", special_tokens=[("<s>", 8)])
    tok.decoder = d.WordPiece()
    out.append(tok)
    return out


@pytest.mark.parametrize("k", range(len(_objects(hf))))
def test_repr_and_str_are_hfs(k):
    mine, theirs = _objects(ours)[k], _objects(hf)[k]
    assert repr(mine) == repr(theirs)
    assert str(mine) == str(theirs)
