"""A Codex rollout whose lines lost their payload is still Codex (issue 11): detected by its line
types and timestamps, and each line says what it lacks, instead of "not a session ledger"."""

from __future__ import annotations

import copy
from pathlib import Path

from inspector.formats import load
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
