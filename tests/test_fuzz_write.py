"""The in-place repair campaign (`python -m tests.fuzz_write`) in CI: a few cases of every kind, and
it finds an `undo` that says it restored a session it did not, and a refused write that keeps its
backup."""

from __future__ import annotations

import pytest

from inspector.store import dbwrite, writeback
from tests import fuzz_write


def test_repairs_written_into_damaged_sessions_keep_every_byte_and_undo() -> None:
    assert fuzz_write.run(4 * len(fuzz_write.KINDS), seed=5, quiet=True) == 0


def test_an_undo_that_cuts_nothing_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writeback, "_cut_back", lambda fd, size, written_size, sha: None)
    assert fuzz_write.run(12, seed=5, kinds=("pi", "native", "claude_code", "codex"), quiet=True) >= 2


def test_a_refused_write_that_keeps_its_backup_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dbwrite, "discard_backup", lambda data, sidecar: None)
    assert fuzz_write.run(30, seed=13, kinds=("openclaw_db", "adk_db"), quiet=True) >= 1
