"""Token counting falls back to the pinned offline cl100k_base, checked against tiktoken's hash."""

from __future__ import annotations

import hashlib

import pytest

from inspector.analysis import analyze
from inspector.analysis import tokens as tk
from inspector.formats import load
from tests.conftest import SHARED


def test_offline_copy_matches_the_hash_tiktoken_expects() -> None:
    digest = tk.verify_offline_copy()
    assert digest == tk._expected_hash_from_tiktoken() == tk.CL100K_SHA256
    with open(tk.offline_data_path(), "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == digest


def test_tampered_copy_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    bad = tmp_path / "cl100k_base.tiktoken"
    bad.write_bytes(b"IQ== 0\n")
    monkeypatch.setattr(tk, "offline_data_path", lambda: str(bad))
    with pytest.raises(ValueError, match="sha256"):
        tk.verify_offline_copy()


def test_offline_tokenizer_counts_like_cl100k() -> None:
    tk.get_tokenizer.cache_clear()
    tok = tk.get_tokenizer()
    assert tok.offline_fallback and "offline" in tok.name
    # cl100k_base: "hello world" is two tokens, "tiktoken is great!" six.
    assert tok.count("hello world") == 2
    assert tok.count("tiktoken is great!") == 6


def test_report_says_which_tokenizer_and_source() -> None:
    tk.get_tokenizer.cache_clear()
    r = analyze(load(str(SHARED / "peers" / "pi" / "corpus" / "normal.jsonl")))
    assert r.tokenizer_offline and "offline" in r.tokenizer
    assert r.tokens_source == "usage+tiktoken"
    r.ensure_tokens()
    assert all(it.tokens is not None for it in r.context)
    assert any(it.tokens_from == "usage" for it in r.context)
    assert any(it.tokens_from == "tiktoken" for it in r.context)


def test_a_batch_counts_a_repeated_text_as_often_as_it_comes() -> None:
    tok = tk.get_tokenizer()
    texts = ["hello world", "", "x" * 40_000, "hello world", "naïve café", "x" * 40_000, "", "hello world", "a b c"]
    assert tok.count_many(texts) == [tk.encoded_len(tok.encoding, t) if t else 0 for t in texts]
