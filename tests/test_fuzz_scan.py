"""The many-sessions campaign (`python -m tests.fuzz_scan`) in CI: a few trees of damaged sessions of
every kind, and it finds an index that serves a changed session's old row."""

from __future__ import annotations

import pytest

from inspector.store import scan
from inspector.store.index import FileIdentity
from tests import fuzz_scan


def test_scanned_trees_say_what_analyze_says_and_rescans_what_a_fresh_index_does() -> None:
    assert fuzz_scan.run(12, seed=5, quiet=True) == 0


def test_an_index_blind_to_changes_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    real = scan.file_identity

    def blind(path: str) -> FileIdentity:  # the file's place only: a changed file looks unchanged
        i = real(path)
        return FileIdentity(i.real_path, i.dev, i.ino, 0, 0, "")

    monkeypatch.setattr(scan, "file_identity", blind)
    assert fuzz_scan.run(12, seed=5, quiet=True) >= 2
