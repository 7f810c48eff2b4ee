"""pi / OpenClaw JSONL v1-v3 (issue 2, point 2)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from inspector.analysis import analyze
from inspector.formats import load
from tests.conftest import SHARED

NORMAL = SHARED / "peers" / "pi" / "corpus" / "normal.jsonl"


def _to_v1(lines: list[dict]) -> list[dict]:
    """Render a v3 file the way pi v1 wrote it: no ids/parents, firstKeptEntryIndex."""
    index = {o.get("id"): i for i, o in enumerate(lines)}
    out = []
    for o in lines:
        o = dict(o)
        if o["type"] == "session":
            o.pop("version", None)
        else:
            o.pop("id", None)
            o.pop("parentId", None)
            if o["type"] == "compaction":
                o["firstKeptEntryIndex"] = index[o.pop("firstKeptEntryId")]
        out.append(o)
    return out


def _sig(path: Path) -> list[tuple[str, str, int | None]]:
    r = analyze(load(str(path)))
    return [(it.role, it.kind, it.line) for it in r.context]


def test_v1_and_v2_migrate_in_memory_to_the_same_context(tmp_path: Path) -> None:
    objs = [json.loads(x) for x in NORMAL.read_text().splitlines()]
    v1 = tmp_path / "v1.jsonl"
    v1.write_text("".join(json.dumps(o) + "\n" for o in _to_v1(objs)))
    v2 = tmp_path / "v2.jsonl"
    v2_objs = [dict(o, version=2) if o["type"] == "session" else o for o in objs]
    v2.write_text("".join(json.dumps(o) + "\n" for o in v2_objs))
    before = {p: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in (v1, v2)}
    expected = _sig(NORMAL)
    assert _sig(v1) == expected
    assert _sig(v2) == expected
    led = load(str(v1))
    assert led.version == 1 and led.migrated
    # The input is never written.
    for p, (digest, mtime) in before.items():
        assert hashlib.sha256(p.read_bytes()).hexdigest() == digest and p.stat().st_mtime_ns == mtime


def test_v2_hook_message_is_custom(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    objs = [
        {"type": "session", "version": 2, "id": "s", "timestamp": "t", "cwd": "/"},
        {"type": "message", "id": "a", "parentId": None, "timestamp": "t",
         "message": {"role": "hookMessage", "customType": "x", "content": "from a hook", "timestamp": 1}},
    ]
    f.write_text("".join(json.dumps(o) + "\n" for o in objs))
    led = load(str(f))
    m = led.records[1].message
    assert m is not None and m.source_role == "custom" and m.role == "user" and m.text() == "from a hook"
    assert [it.role for it in analyze(led).context] == ["user"]


def test_every_entry_type_and_unknown_fields_are_kept(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    objs = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/", "futureHeaderField": 1},
        {"type": "model_change", "id": "e1", "parentId": None, "timestamp": "t", "provider": "p", "modelId": "m"},
        {"type": "thinking_level_change", "id": "e2", "parentId": "e1", "timestamp": "t", "thinkingLevel": "high"},
        {"type": "message", "id": "e3", "parentId": "e2", "timestamp": "t", "novel": [1, 2],
         "message": {"role": "user", "content": "do it", "timestamp": 1, "mystery": True}},
        {"type": "custom", "id": "e4", "parentId": "e3", "timestamp": "t", "customType": "ext", "data": {"k": 1}},
        {"type": "custom_message", "id": "e5", "parentId": "e4", "timestamp": "t", "customType": "ext",
         "content": "extension says hi", "display": True},
        {"type": "label", "id": "e6", "parentId": "e5", "timestamp": "t", "targetId": "e3", "label": "start"},
        {"type": "session_info", "id": "e7", "parentId": "e6", "timestamp": "t", "name": "my session"},
        {"type": "branch_summary", "id": "e8", "parentId": "e7", "timestamp": "t", "fromId": "e3", "summary": "a branch"},
        {"type": "message", "id": "e9", "parentId": "e8", "timestamp": "t",
         "message": {"role": "bashExecution", "command": "ls", "output": "a b", "exitCode": 1, "timestamp": 1}},
        {"type": "message", "id": "e10", "parentId": "e9", "timestamp": "t",
         "message": {"role": "bashExecution", "command": "secret", "output": "x", "exitCode": 0,
                     "excludeFromContext": True, "timestamp": 1}},
        {"type": "telemetry_blob", "id": "e11", "parentId": "e10", "timestamp": "t", "payload": {"x": 1}},
    ]
    f.write_text("".join(json.dumps(o) + "\n" for o in objs))
    led = load(str(f))
    by = {r.id: r for r in led.records if r.id}
    assert led.records[0].extra == {"futureHeaderField": 1}
    assert by["e3"].extra == {"novel": [1, 2], "message": {"mystery": True}}
    assert by["e11"].kind == "unknown" and by["e11"].extra["payload"] == {"x": 1}
    assert by["e5"].message is not None and by["e5"].message.text() == "extension says hi"
    assert by["e8"].message is not None and by["e8"].message.text().startswith("The following is a summary of a branch")
    assert by["e9"].message is not None and "Command exited with code 1" in by["e9"].message.text()
    report = analyze(led)
    # What pi sends: user, custom_message, branch summary, bash output; the excluded bash is not sent.
    assert [led.records[it.seq].id for it in report.context] == ["e3", "e5", "e8", "e9"]
    assert report.states[by["e10"].seq] == "excluded"
    assert len(report.path) == 11  # the unknown entry is on the path (it is the leaf)


def test_leaf_is_last_entry_in_file_order(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    objs = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"},
        {"type": "message", "id": "a", "parentId": None, "timestamp": "t", "message": {"role": "user", "content": "one"}},
        {"type": "message", "id": "b", "parentId": "a", "timestamp": "t", "message": {"role": "user", "content": "two"}},
        {"type": "message", "id": "c", "parentId": "a", "timestamp": "t", "message": {"role": "user", "content": "branch"}},
    ]
    f.write_text("".join(json.dumps(o) + "\n" for o in objs))
    report = analyze(load(str(f)))
    assert [it.record_id for it in report.context] == ["a", "c"]
    assert report.states[2] == "inactive"  # b: another branch, shown, never a hole
    assert report.coverage_counts()["hole"] == 0
