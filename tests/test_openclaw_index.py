"""OpenClaw's index-first load (issue 15): a plain message or custom row becomes its record from a
head decode, its content read back from its row (decompressed again) when asked for; every other
row is parsed whole. The index must map every row exactly as parsing every row whole does
(`load(..., index=False)`, the reference): the same records, messages, fields, diagnostics and
digest, on rows built to sit on the edge between the two paths."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import load, openclaw_sqlite, openclaw_writer
from inspector.ledger.model import Ledger, Record
from tests.test_openclaw import _header, _msg, _store

CALL = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a", "deep": [1, {"x": "é"}]}}


def _edge_rows() -> list[dict[str, Any] | bytes]:
    """One session whose rows each test one rule of the index against the whole parse."""
    u = "s1"
    rows: list[dict[str, Any] | bytes] = [
        _header(u),
        _msg("m1", None, "user", "plain question"),
        _msg("m2", "m1", "assistant", [{"type": "thinking", "thinking": "t"}, CALL], stopReason="toolUse",
             usage={"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0}, model="m", provider="p", api="x"),
        _msg("m3", "m2", "toolResult", [{"type": "text", "text": "ok"}, {"type": "image", "mimeType": "image/png"}],
             toolCallId="c1", toolName="read", isError=False),
        # a user message keeps no stop reason; a call in a user's content is still a call
        _msg("m4", "m3", "user", [{"type": "text", "text": "q"}, dict(CALL, id="c2")], stopReason="stop"),
        # fields `fields.PI` types, of another type: removed and said, on every role and at the top
        _msg("m5", "m4", "user", "typed", model=5),
        _msg("m6", "m5", "assistant", [{"type": "text", "text": "a"}], summary=["x"], stopReason="stop"),
        dict(_msg("m7", "m6", "assistant", [{"type": "text", "text": "b"}], stopReason="stop"), summary=5),
        dict(_msg("m8", "m7", "user", "v"), version="4"),
        _msg("m9", "m8", "assistant", [{"type": "text", "text": "c"}], usage={"input": True}, stopReason="stop"),
        # OpenClaw's excludeFromContext, on any role, in any form
        _msg("x1", "m9", "user", "hidden", excludeFromContext=True),
        _msg("x2", "x1", "assistant", [{"type": "text", "text": "shown"}], excludeFromContext=False, stopReason="stop"),
        _msg("x3", "x2", "custom", "nested", customType="openclaw.nested-tool.v1", excludeFromContext="yes"),
        _msg("x4", "x3", "bashExecution", "", command="ls", output="a", exitCode=0, excludeFromContext=True),
        # the key written with an escape is the same key
        b'{"type":"message","id":"x5","parentId":"x4","timestamp":"2026-09-10T08:00:01.000Z",'
        b'"message":{"role":"user","content":"esc","\\u0065xcludeFromContext":true}}',
        # custom entries: plain, with a message, with a field the index does not read
        {"type": "custom", "id": "k1", "parentId": "x5", "timestamp": "2026-09-10T08:00:02.000Z",
         "customType": "openclaw.cache-ttl", "data": {"ttl": 5}},
        {"type": "custom", "id": "k2", "parentId": "k1", "timestamp": 3, "customType": "c", "message": {"role": "user"}},
        {"type": "custom", "id": "k3", "parentId": "k2", "timestamp": "t", "customType": "c", "content": 5},
        {"type": "custom", "id": "k4", "parentId": "k3", "timestamp": "t", "details": {"usage": {"input": "1"}}},
        {"type": "custom", "parentId": "k4", "timestamp": "t", "customType": "no id"},
        # odd shapes: a non-object content item, an id of another type, a timestamp of another type,
        # a role pi does not know, a message that is not an object, an empty tool-call id
        _msg("o1", "k4", "user", ["loose", {"type": "text", "text": "t"}]),
        dict(_msg("o2", "o1", "user", "int id"), id=7),
        dict(_msg("o3", "o1", "user", "bool time"), timestamp=True),
        _msg("o4", "o3", "hookMessage", "hook"),
        {"type": "message", "id": "o5", "parentId": "o4", "timestamp": "t", "message": "text"},
        _msg("o6", "o5", "toolResult", "r", toolCallId=""),
        _msg("o7", "o6", "assistant", [{"type": "text", "text": "big " * 3000}], stopReason="length"),
        # not JSON, invalid UTF-8, not an object
        b'{"type":"message","id":"b1"',
        b'{"type":"message","id":"b2","parentId":"o7","timestamp":"t","message":{"role":"user","content":"\xff\xfe"}}',
        b"[1, 2]",
        # a reset, keeping what OpenClaw keeps
        {"type": "reset", "id": "r1", "parentId": "o7", "timestamp": "t", "reason": "new", "firstKeptEntryId": "m1"},
        _msg("z1", "r1", "user", "after the reset"),
        _msg("m1", "z1", "user", "a reused id"),
        # what OpenClaw's own reading reads (openclaw_model): no timestamp, no parentId key, a result
        # without isError, a call without arguments or name, only blank texts, a hook message
        # without a customType, a block of no known kind, a parent that is no earlier entry
        {k: v for k, v in _msg("n1", "m1", "user", "no time").items() if k != "timestamp"},
        {k: v for k, v in _msg("n2", "n1", "user", "no parent key").items() if k != "parentId"},
        _msg("n3", "n2", "toolResult", [{"type": "text", "text": "r"}], toolCallId="c1", toolName="read"),
        _msg("n4", "n3", "assistant", [dict(CALL, id="c3", arguments=None), dict(CALL, id="c4", name=" ")], stopReason="toolUse"),
        _msg("n5", "n4", "user", [{"type": "text", "text": " "}]),
        _msg("n6", "n5", "custom", "hook text"),
        _msg("n7", "n6", "user", [{"type": "text", "text": "q"}, {"type": "video", "data": "x"}, {"type": "probe", "data": 5}]),
        _msg("n8", "gone", "assistant", [{"type": "text", "text": "stale parent"}, {"type": "probe"}], stopReason="stop"),
        _msg("n9", "n8", "assistant", [{"type": "text", "text": "kept"}, dict(CALL, id="c5")], stopReason="toolUse"),
    ]
    return rows


def _zstd_rows(rows: list[dict[str, Any] | bytes]) -> frozenset[tuple[str, int]]:
    return frozenset(("s1", i) for i in range(1, len(rows), 3))


def _record(r: Record) -> dict[str, Any]:
    out = {f: getattr(r, f) for f in r.__struct_fields__ if not f.startswith("_")}
    out["message"] = dataclasses.asdict(r.message) if r.message is not None else None
    out["extra"] = r.extra
    out["raw"] = r.raw()
    return out


def _ledger(led: Ledger) -> dict[str, Any]:
    return {
        "records": [_record(r) for r in led.records],
        "diagnostics": [dataclasses.asdict(d) for d in led.diagnostics],
        **{k: getattr(led, k) for k in ("header", "leaf_seq", "store_state", "session_id", "version", "runtime_rejects_file")},
        "by_id": led.by_id(),
    }


@pytest.mark.parametrize("compressed", [False, True])
def test_the_index_maps_every_row_as_the_whole_parse_does(tmp_path: Path, compressed: bool) -> None:
    rows = _edge_rows()
    path = str(_store(tmp_path / "a.sqlite", {"s1": rows}, zstd=_zstd_rows(rows) if compressed else frozenset()))
    whole = openclaw_sqlite.load(path, None, None, index=False)
    fast = openclaw_sqlite.load(path, None, None)
    # the index took the plain rows (their content not held), the whole parse none
    lazy = [r.id for r in fast.records if r._message is None and r.kind == "message"]
    assert {"m1", "m2", "m3", "o7"} <= set(lazy)
    # (and not a row one of OpenClaw's rules reads: m4's call in a user's content, which OpenClaw
    # fails to convert, o6's result whose content is a string, which its schema sets aside)
    assert not {"m4", "m5", "m6", "m7", "m8", "m9", "x1", "x2", "x3", "x4", "x5", "o1", "o6"} & set(lazy)
    assert not [r for r in whole.records if r._message is None and r.kind == "message"]
    assert _ledger(fast) == _ledger(whole)
    for out in (analyze_json, context_json):
        assert out(analyze(load(path))) == out(analyze(whole))


def test_the_index_and_the_whole_parse_agree_up_to_every_row(tmp_path: Path) -> None:
    rows = _edge_rows()
    path = str(_store(tmp_path / "a.sqlite", {"s1": rows}, zstd=_zstd_rows(rows)))
    for upto in range(len(rows)):
        assert _ledger(openclaw_sqlite.load(path, None, upto)) == _ledger(openclaw_sqlite.load(path, None, upto, index=False)), upto


def test_content_is_read_back_from_the_row(tmp_path: Path) -> None:
    rows = _edge_rows()
    path = tmp_path / "a.sqlite"
    _store(path, {"s1": rows}, zstd=_zstd_rows(rows))
    led = load(str(path))
    rec = next(r for r in led.records if r.id == "o7")
    assert rec._message is None  # not held: read back (and decompressed) when asked for
    assert rec.message is not None and rec.message.text() == "big " * 3000
    many = [r for r in led.records if r._message is None and r.kind == "message"]
    led.load_messages([r.seq for r in many])
    assert all(r._message is not None for r in many)
    # a row that went since the load reads back as nothing, never an error
    led = load(str(path))
    gone = next(r for r in led.records if r.id == "m2")
    con = sqlite3.connect(path)
    con.execute("DELETE FROM transcript_events WHERE seq=?", (gone.line,))
    con.commit()
    con.close()
    assert gone.message is None and gone.raw() == {}


def test_the_digest_taken_while_loading_is_the_writers(tmp_path: Path) -> None:
    rows = _edge_rows()
    path = str(_store(tmp_path / "a.sqlite", {"s1": rows}, zstd=_zstd_rows(rows)))
    led = load(path)
    con = sqlite3.connect(path)
    try:
        assert led.store_state == openclaw_writer.state(con, led)
    finally:
        con.close()
    assert load(path + "#s1").store_state == led.store_state


def test_a_read_only_load_takes_no_digest_and_a_repair_still_checks_one(tmp_path: Path) -> None:
    """A command that only reads (`load(fingerprint=False)`: analyze, context, plan) leaves the rows'
    digest untaken (it was 7% of a 100 MB store's load); the same ledger otherwise, the digest back
    for the next load (it follows a changed row). (`repair --write`, which loads with it, is
    test_openclaw_writer's test_plan_shows_the_coverage_after_and_write_then_undo_restore_the_rows.)"""
    import json

    from inspector.cli.main import main
    rows = _edge_rows()
    path = str(_store(tmp_path / "a.sqlite", {"s1": rows}, zstd=_zstd_rows(rows)))
    quick = load(path, fingerprint=False)
    full = load(path)
    assert quick.store_state is None and full.store_state is not None
    assert {**_ledger(quick), "store_state": None} == {**_ledger(full), "store_state": None}
    assert load(path).store_state == full.store_state
    con = sqlite3.connect(path)
    con.execute("UPDATE transcript_events SET event_json=? WHERE seq=1", (json.dumps(rows[1]) + " ",))
    con.commit()
    con.close()
    assert load(path).store_state != full.store_state
    assert main(["analyze", path, "--json"]) == 0  # (a read-only command: no digest, the same report)


def test_a_reset_keeps_its_entry_as_written(tmp_path: Path) -> None:
    """A reset's checkpoint details are its row's JSON as stored, a field of another type too
    (the builder's check takes such a field out of the object it maps, not out of the row)."""
    reset = {"type": "reset", "id": "r1", "parentId": "m2", "timestamp": "t", "reason": "reset", "firstKeptEntryId": "m1", "summary": 5}
    rows: list[dict[str, Any] | bytes] = [
        _header("s1"), _msg("m1", None, "user", "q"), _msg("m2", "m1", "assistant", "a", stopReason="stop"), reset,
    ]
    led = load(str(_store(tmp_path / "a.sqlite", {"s1": rows})))
    rec = next(r for r in led.records if r.id == "r1")
    assert rec.checkpoint is not None and rec.checkpoint.details == reset
    assert any(d.problem == "wrong_type" and "summary" in d.message for d in led.diagnostics)
