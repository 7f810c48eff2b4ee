"""The live campaign (`python -m tests.fuzz_live`) in CI: a few damaged sessions of every line format
followed as they grow, and it finds a follower that loses an appended line."""

from __future__ import annotations

from typing import Any

import pytest

from inspector.live import incremental
from tests import fuzz_live


def test_damaged_sessions_followed_as_they_grow_read_as_a_full_read() -> None:
    assert fuzz_live.run(3 * len(fuzz_live.KINDS), seed=5, quiet=True) == 0


def test_a_follower_that_loses_an_appended_line_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    real = incremental.complete_lines

    def losing(data: bytes, offset: int, first: int) -> Any:
        lines, used, count = real(data, offset, first)
        return lines[:-1], used, count  # (the batch's last line read, then dropped)

    monkeypatch.setattr(incremental, "complete_lines", losing)
    assert fuzz_live.run(6, seed=5, kinds=("codex", "pi"), quiet=True) >= 3
