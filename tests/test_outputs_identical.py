"""Speed must not change the analysis (issue 15): `analyze --json` and `context --json` on every sample,
real session and peer corpus file, and on every bad-input case of Claude Code and Codex, are byte for
byte what main printed before the loaders were made faster (tests/golden/outputs/, written by
`python -m tests.golden_outputs --write`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO, need_shared
from tests.golden_outputs import (
    CASE_FORMATS,
    GOLDEN,
    SHARED,
    case_digests,
    file_outputs,
    golden_name,
    session_files,
)


def test_every_input_has_its_golden_output() -> None:
    need_shared(SHARED / "real_sessions")
    files = session_files()
    assert len([f for f in files if "/real_sessions/" in f]) >= 10
    assert len([f for f in files if "/peers/" in f]) >= 4
    missing = [f for f in files if not (GOLDEN / golden_name(f)).exists()]
    assert not missing, f"no golden output for {missing}"


@pytest.mark.parametrize("rel", session_files())
def test_file_outputs_are_byte_identical(rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    want = json.loads((GOLDEN / golden_name(rel)).read_text())
    got = file_outputs(rel)
    for cmd in want:
        assert got[cmd] == want[cmd], f"{cmd} --json {rel} changed"


@pytest.mark.parametrize("fmt", CASE_FORMATS)
def test_bad_input_case_outputs_are_byte_identical(fmt: str, tmp_path: Path) -> None:
    want = json.loads((GOLDEN / f"cases__{fmt}.json").read_text())
    got = case_digests(fmt, tmp_path)
    assert set(got) == set(want)
    changed = sorted(label for label in want if got[label] != want[label])
    assert not changed, f"{len(changed)} of {len(want)} {fmt} cases changed, e.g. {changed[:10]}"
