"""The in-place repair campaign (`python -m tests.fuzz_write`) in CI: a few cases of every kind, and
it finds an `undo` that says it restored a session it did not, and a write taken back that `undo`
would stop at."""

from __future__ import annotations

import os

import pytest

from inspector.live.incremental import Follower
from inspector.store import writeback
from tests import fuzz_write


def test_repairs_written_into_damaged_sessions_keep_every_byte_and_undo() -> None:
    assert fuzz_write.run(4 * len(fuzz_write.KINDS), seed=5, quiet=True) == 0


def test_an_undo_that_cuts_nothing_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writeback, "_cut_back", lambda fd, size, written_size, sha: None)
    assert fuzz_write.run(12, seed=5, kinds=("pi", "native", "claude_code", "codex"), quiet=True) >= 2


def test_a_write_taken_back_but_left_open_for_undo_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A write the verification took back whose backup is not marked: `undo` would stop at it."""
    monkeypatch.setattr(writeback, "mark_undone", lambda b, step=None: True)
    assert fuzz_write.run(24, seed=39, kinds=("adk_db", "pi"), quiet=True) >= 1


def test_a_follower_that_misses_the_write_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A follower that keeps its report when the session shrinks (an undo cuts the record off)."""
    real = Follower.poll

    def blind_to_cuts(self: Follower) -> object:
        read = self._read
        if read is not None and self.report is not None and os.path.getsize(self.path) < read.offset:
            return None
        return real(self)

    monkeypatch.setattr(Follower, "poll", blind_to_cuts)
    assert fuzz_write.run(12, seed=5, kinds=("pi", "native", "claude_code", "codex"), quiet=True) >= 2


def test_the_case_above_holds_on_this_code() -> None:
    assert fuzz_write.run(24, seed=39, kinds=("adk_db", "pi"), quiet=True) == 0
