"""The head-vs-whole campaign (`python -m tests.fuzz_heads`) in CI: a few cases of every kind, and it
finds a head path that maps a line differently from the whole parse."""

from __future__ import annotations

import pytest

from inspector.formats import codex
from tests import fuzz_heads


def test_every_kinds_head_path_reads_damaged_files_as_its_whole_parse() -> None:
    assert fuzz_heads.run(4 * len(fuzz_heads.KINDS), seed=5, quiet=True) == 0


def test_a_head_path_that_maps_a_line_differently_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Codex meta line's type named otherwise on the head path only: the cases disagree."""
    real = codex._meta_head
    monkeypatch.setattr(codex, "_meta_head", lambda b, t, p: real(b, t, p) + "!")
    assert fuzz_heads.run(6, seed=5, kinds=("codex",), quiet=True) >= 3


def test_every_kind_of_the_corpus_has_its_whole_parse() -> None:
    from tests.fuzz.corpus import KINDS

    assert set(fuzz_heads.KINDS) == set(KINDS)
