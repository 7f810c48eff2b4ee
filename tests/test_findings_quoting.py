"""A finding quotes what a file holds shortened, never megabytes of it: the renderers wrap it (a
checkpoint whose boundary names a 2 MB id made `plan` render for minutes: `python -m tests.fuzz
--seed 917`, a native ledger with a huge line)."""

from __future__ import annotations

import json
from pathlib import Path

from inspector.analysis import analyze
from inspector.formats import load


def test_a_dangling_first_kept_id_of_megabytes_is_quoted_shortened(tmp_path: Path) -> None:
    huge = "lorem ipsum " * 200_000
    lines = [
        {"type": "ledger", "format": "inspector-ledger", "version": 1, "id": "s1", "created": "2026-06-30T10:05:58.733Z"},
        {"type": "message", "id": "m1", "ts": "2026-06-30T10:06:00.000Z", "role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"type": "message", "id": "m2", "ts": "2026-06-30T10:06:01.000Z", "role": "assistant", "content": [{"type": "text", "text": "hello"}]},
        {"type": "checkpoint", "id": "cp1", "ts": "2026-06-30T10:07:00.000Z", "boundary": huge, "represents": [["m1", "m2"]],
         "retains": [], "summary": "they greeted each other", "tokens_before": 10, "trigger": "auto"},
    ]
    f = tmp_path / "s.jsonl"
    f.write_text("".join(json.dumps(o) + "\n" for o in lines))
    found = [x for x in analyze(load(str(f))).findings if x.code == "dangling_first_kept"]
    assert found and all(len(x.message) < 1000 for x in found)
    assert found[0].data["first_kept"] == huge  # (the whole id in --json)
