"""`subword.tiktoken` against tiktoken itself: model tables, registry, plugins, `load`.

The encodings' ids are checked elsewhere (test_parity_tiktoken, test_open_models); here the
surface around them: the same names, lookups, errors and file helpers, so tiktoken code runs with
`import subword.tiktoken as tiktoken`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import subword
import subword.tiktoken as sw_tiktoken
import tiktoken
import tiktoken.load
import tiktoken.model

MODELS = [
    *tiktoken.model.MODEL_TO_ENCODING,
    "gpt-4o-2024-05-13",
    "gpt-4-0314",
    "gpt-4-32k",
    "gpt-3.5-turbo-0301",
    "gpt-35-turbo-16k",
    "gpt-oss-120b",
    "o1-mini",
    "o3-pro",
    "o4-mini-high",
    "gpt-5-nano",
    "gpt-4.1-mini",
    "chatgpt-4o-latest",
    "ft:gpt-4o:org:custom:id",
    "ft:gpt-3.5-turbo-0613:org::id",
    "ft:davinci-002:x",
]


def test_model_tables_are_tiktokens():
    assert sw_tiktoken.model.MODEL_TO_ENCODING == tiktoken.model.MODEL_TO_ENCODING
    # Prefixes are tried in order, so the order is part of the table.
    assert list(sw_tiktoken.model.MODEL_PREFIX_TO_ENCODING.items()) == list(
        tiktoken.model.MODEL_PREFIX_TO_ENCODING.items()
    )


@pytest.mark.parametrize("model", MODELS)
def test_encoding_name_for_model(model):
    assert sw_tiktoken.encoding_name_for_model(model) == tiktoken.encoding_name_for_model(model)


@pytest.mark.parametrize("model", ["gpt-9", "", "llama-3", "text-davinci-004"])
def test_unknown_model_is_tiktokens_key_error(model):
    with pytest.raises(KeyError) as want:
        tiktoken.encoding_name_for_model(model)
    with pytest.raises(KeyError) as got:
        sw_tiktoken.encoding_name_for_model(model)
    assert str(got.value) == str(want.value)
    with pytest.raises(KeyError):
        sw_tiktoken.encoding_for_model(model)


def test_encoding_for_model_gives_subword_encodings(encodings):
    encodings("o200k_base")
    enc = sw_tiktoken.encoding_for_model("gpt-4o")
    assert isinstance(enc, subword.Encoding)
    assert enc.name == "o200k_base"
    assert enc is sw_tiktoken.get_encoding("o200k_base") is subword.get_encoding("o200k_base")
    assert sw_tiktoken.encoding_for_model("gpt-oss-20b").name == "o200k_harmony"


def test_registry_errors_are_tiktokens():
    with pytest.raises(ValueError, match="Expected a string in get_encoding"):
        sw_tiktoken.get_encoding(3)
    with pytest.raises(ValueError, match="Unknown encoding no_such_encoding"):
        sw_tiktoken.get_encoding("no_such_encoding")


def test_list_encoding_names_has_tiktokens_and_the_open_models():
    names = sw_tiktoken.list_encoding_names()
    assert set(tiktoken.list_encoding_names()) <= set(names)
    assert {"llama3", "qwen2", "tekken"} <= set(names)
    assert len(names) == len(set(names))


def test_o200k_harmony_is_tiktokens(encodings):
    encodings("o200k_base")
    sw = sw_tiktoken.get_encoding("o200k_harmony")
    tk = tiktoken.get_encoding("o200k_harmony")
    assert sw.special_tokens_set == tk.special_tokens_set
    assert sw.n_vocab == tk.n_vocab
    text = "<|start|>user<|message|>Hi there<|end|><|start|>assistant<|channel|>final<|message|>"
    assert sw.encode(text, allowed_special="all") == tk.encode(text, allowed_special="all")
    for token in ("<|endofprompt|>", "<|reserved_200018|>", "<|call|>", "<|reserved_201087|>"):
        assert sw.encode_single_token(token) == tk.encode_single_token(token)
    with pytest.raises(ValueError):
        sw.encode("<|return|>")


PLUGIN = """
import os
from subword.tiktoken.load import load_tiktoken_bpe

def tiny():
    return {{
        "name": "tiny_plugin_enc",
        "pat_str": r"\\S+|\\s+",
        "mergeable_ranks": load_tiktoken_bpe({path!r}),
        "special_tokens": {{"<|tiny|>": 60000}},
    }}

ENCODING_CONSTRUCTORS = {{"tiny_plugin_enc": tiny}}
"""


def test_tiktoken_ext_plugins_are_honoured(tmp_path, r50k_path, r50k_ranks):
    (tmp_path / "tiktoken_ext").mkdir()
    (tmp_path / "tiktoken_ext" / "tiny_plugin.py").write_text(PLUGIN.format(path=str(r50k_path)))
    script = textwrap.dedent(
        """
        import subword.tiktoken as tiktoken
        enc = tiktoken.get_encoding("tiny_plugin_enc")
        print(type(enc).__module__, "tiny_plugin_enc" in tiktoken.list_encoding_names())
        print(enc.encode("plugin text <|tiny|>", allowed_special="all"))
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    ).stdout.splitlines()
    assert out[0] == "subword.encoding True"
    oracle = tiktoken.Encoding(
        "tiny", pat_str=r"\S+|\s+", mergeable_ranks=r50k_ranks, special_tokens={"<|tiny|>": 60000}
    )
    assert out[1] == str(oracle.encode("plugin text <|tiny|>", allowed_special="all"))


def test_load_tiktoken_bpe_is_tiktokens(r50k_path, tmp_path):
    ours = sw_tiktoken.load.load_tiktoken_bpe(str(r50k_path))
    assert ours == tiktoken.load.load_tiktoken_bpe(str(r50k_path))
    out = tmp_path / "copy.tiktoken"
    sw_tiktoken.load.dump_tiktoken_bpe(ours, str(out))
    assert out.read_bytes() == r50k_path.read_bytes()
    bad = tmp_path / "bad.tiktoken"
    bad.write_bytes(b"YQ== 0\nnot-a-line\n")
    with pytest.raises(ValueError, match="line 2"):
        sw_tiktoken.load.load_tiktoken_bpe(str(bad))


def test_read_file_cached_checks_the_hash(tmp_path, monkeypatch, r50k_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    data = sw_tiktoken.load.read_file_cached(str(r50k_path))
    assert data == r50k_path.read_bytes()
    with pytest.raises(ValueError, match="Hash mismatch"):
        sw_tiktoken.load.read_file_cached(str(r50k_path), expected_hash="0" * 64)


def test_data_gym_ranks_are_tiktokens(tmp_path, r50k_ranks):
    import gpt2files

    encoder_json, vocab_bpe = gpt2files.write_gpt2_files(r50k_ranks, tmp_path)
    want = tiktoken.load.data_gym_to_mergeable_bpe_ranks(str(vocab_bpe), str(encoder_json))
    got = sw_tiktoken.load.data_gym_to_mergeable_bpe_ranks(str(vocab_bpe), str(encoder_json))
    assert got == want


def test_pickle_by_name_and_by_content(encodings):
    import pickle

    sw, _ = encodings("r50k_base")
    by_name = pickle.loads(pickle.dumps(sw))
    assert len(pickle.dumps(sw)) < 100  # the name, not the ranks
    assert by_name._core is sw._core
    custom = sw_tiktoken.Encoding(
        "custom",
        pat_str=sw._pat_str,
        mergeable_ranks=sw._mergeable_ranks,
        special_tokens={"<|pickle|>": 100_000},
    )
    back = pickle.loads(pickle.dumps(custom))
    assert back.encode("<|pickle|>", allowed_special="all") == [100_000]
    assert back.encode("hello world") == sw.encode("hello world")


def test_own_names_never_import_plugins(tmp_path):
    # A plugin that cannot be imported (e.g. it needs tiktoken, which is not installed) must not
    # break subword's own encodings; tiktoken's names are served without looking at plugins.
    (tmp_path / "tiktoken_ext").mkdir()
    (tmp_path / "tiktoken_ext" / "broken_plugin.py").write_text("import no_such_module_here\n")
    script = textwrap.dedent(
        """
        import subword.tiktoken as tiktoken
        print(tiktoken.get_encoding("r50k_base").encode("hello world"))
        try:
            tiktoken.get_encoding("not_a_known_name")
        except ImportError as e:
            print("ImportError", e.name)
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    ).stdout.splitlines()
    assert out == ["[31373, 995]", "ImportError no_such_module_here"]
