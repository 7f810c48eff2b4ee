"""A Codex rollout whose lines lost their payload is still Codex (issue 11): detected by its line
types and timestamps, and each line says what it lacks, instead of "not a session ledger"."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from inspector.formats import LoadError, load, load_bytes
from tests.bad_input_seeds import SEEDS, encode


def test_a_rollout_without_any_payload_is_read_as_codex(tmp_path: Path) -> None:
    session = copy.deepcopy(SEEDS["codex"][:2])
    for line in session:
        del line["payload"]
    f = tmp_path / "rollout.jsonl"
    f.write_bytes(encode("codex", session))
    led = load(str(f))
    assert led.format == "codex" and len(led.records) == 2
    lacks = [d for d in led.diagnostics if "has no payload" in d.message]
    assert [d.line for d in lacks] == [1, 2] and "'session_meta' line" in lacks[0].message


def test_a_payload_of_another_type_is_named(tmp_path: Path) -> None:
    session = copy.deepcopy(SEEDS["codex"][:1])
    session[0]["payload"] = ["x"]
    f = tmp_path / "rollout.jsonl"
    f.write_bytes(encode("codex", session))
    (d,) = [d for d in load(str(f)).diagnostics if d.problem == "invalid_field"]
    assert "has a list for its payload, not an object" in d.message


@pytest.mark.parametrize("kind", ["codex", "pi", "claude_code", "native"])
def test_a_file_read_up_to_a_line_is_detected_from_the_lines_up_to_it(tmp_path: Path, kind: str) -> None:
    """`--at LINE` reads the file as it stood when LINE was the last written: its format is judged
    from those lines only, as reading those bytes whole judges it (`load_bytes`), whether or not the
    format streams. A file whose first line is unreadable (a BOM before it) is not yet a session at
    line 1, and is one from line 2 (found by `python -m tests.fuzz_heads`: a streaming format was
    detected from the later lines)."""
    f = tmp_path / "s.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + encode(kind, SEEDS[kind]))
    for at in (1, 2, 3):
        try:
            got: object = load(str(f), upto_line=at, fingerprint=False).format
        except LoadError as e:
            got = str(e)
        try:
            want: object = load_bytes(f.read_bytes(), name=str(f), upto_line=at).format
        except LoadError as e:
            want = str(e)
        assert got == want, at
        assert (got == kind) == (at > 1), (at, got)
