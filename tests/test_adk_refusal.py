"""A stored event google-adk 2.13's own model refuses makes SqliteSessionService refuse the whole
session (`get_session` raises, nothing is sent): `analyze` says `resume_refused`, naming the row and
why (`inspector/formats/adk_model.py`), whichever way the row is read (from its head or whole), and
reads the rest as before. An event whose content has no role is loaded and never sent; a
compaction whose end is a numeric string is used at that number. Checked against the real ADK, probe
by probe, in tests/test_adk_line_rule.py; these hold the rules without it."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.formats import adk, adk_heads, load
from tests.conftest import SHARED, need_shared

CORPUS = SHARED / "peers" / "adk" / "corpus"
LAST_TS = 1767225847.125  # token_threshold.db's last event


def _event(**more: Any) -> dict[str, Any]:
    return {
        "content": {"parts": [{"text": "MARK"}], "role": "user"}, "invocation_id": "e-x", "author": "user",
        "actions": {"state_delta": {}, "artifact_delta": {}, "requested_auth_configs": {}, "requested_tool_confirmations": {}},
        "node_info": {"path": ""}, "id": "probe", "timestamp": LAST_TS + 10, **more,
    }  # fmt: skip


def _store(tmp_path: Path, data: bytes, base: str = "token_threshold.db") -> Path:
    out = tmp_path / base
    shutil.copyfile(need_shared(CORPUS / base), out)
    out.chmod(0o644)
    with sqlite3.connect(out) as con:
        app, user, sid = con.execute("SELECT app_name, user_id, id FROM sessions").fetchone()
        con.execute(
            "INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) VALUES (?,?,?,?,?,?,CAST(? AS TEXT))",
            ("probe", app, user, sid, "e-x", LAST_TS + 10, data),
        )
    return out


def _dumps(o: Any) -> bytes:
    return json.dumps(o, separators=(",", ":")).encode()


REFUSED: dict[str, bytes] = {
    "an author of another type": _dumps(_event(author=5)),
    "a null id": _dumps(_event(id=None)),
    "a null author": _dumps(_event(author=None)),
    "null actions": _dumps(_event(actions=None)),
    "a null node_info": _dumps(_event(node_info=None)),
    "an error code that is a number": _dumps(_event(error_code=500)),
    "a thought signature not base64": _dumps(_event(content={"role": "model", "parts": [{"text": "t", "thought_signature": "not base64!"}]})),
    "an artifact version that is not an integer": _dumps(_event(actions={"state_delta": {}, "artifact_delta": {"f": 1.5}})),
    "a part of an unknown key": _dumps(_event(content={"role": "user", "parts": [{"text": "t"}, {"zz": 1}]})),
    "a call whose args are a string": _dumps(_event(content={"role": "model", "parts": [{"function_call": {"name": "f", "args": "x"}}]})),
    "a compaction without its end": _dumps(_event(content=None, actions={"compaction": {"start_timestamp": 1.0, "compacted_content": {"role": "model", "parts": [{"text": "s"}]}}})),
    "invalid UTF-8": _dumps(_event()).replace(b"MARK", b"\xffMARK"),
    "a lone surrogate": _dumps(_event()).replace(b"MARK", b"\\ud800MARK"),
    "text after the object": _dumps(_event()) + b" 1",
    "nested past pydantic's limit": _dumps(_event(custom_metadata={"d": json.loads("[" * 250 + "]" * 250)})),
}
READ: dict[str, bytes] = {
    "as written": _dumps(_event()),
    "an unknown top-level key": _dumps(_event(zz=[1, {"a": None}])),
    "a numeric string timestamp": _dumps(_event(timestamp=str(LAST_TS + 10))),
    "a boolean written as a string": _dumps(_event(partial="yes")),
    "no id, author or invocation id": _dumps({k: v for k, v in _event().items() if k not in ("id", "author", "invocation_id")}),
    "nested just within pydantic's limit": _dumps(_event(custom_metadata={"d": json.loads("[" * 150 + "]" * 150)})),
    "NaN in a key ADK ignores": _dumps(_event()).replace(b'{"content"', b'{"x":NaN,"content"', 1),
}


def _sent(rep: Any) -> str:
    """The text of the next request's items (a summary's, each message's blocks)."""
    recs = rep.ledger.records
    out = []
    for it in rep.context:
        r = recs[it.seq]
        if it.kind == "summary" and r.checkpoint is not None:
            out.append(r.checkpoint.summary)
        elif r.message is not None:
            out += [b.text for b in r.message.blocks]
    return "\n".join(out)


def _refusals(f: Path) -> list[str]:
    return [x.message for x in analyze(load(str(f))).findings if x.code == "resume_refused"]


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_an_event_adk_refuses_is_said_to_refuse_the_session(case: str, tmp_path: Path) -> None:
    f = _store(tmp_path, REFUSED[case])
    said = _refusals(f)
    assert len(said) == 1 and "row 31 (rowid 31, event id 'probe')" in said[0] and "refuses the whole session" in said[0], said
    led = load(str(f))
    assert len(led.records) in (30, 31)  # (the base's events are read as before; the row too, where it parses)


@pytest.mark.parametrize("case", sorted(READ))
def test_an_event_adk_reads_is_no_refusal(case: str, tmp_path: Path) -> None:
    assert _refusals(_store(tmp_path, READ[case])) == []


def test_the_same_refusal_from_a_rows_head_as_from_the_whole_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A row read from its head (`Head.refused`, by the index-first load or the ordinary one) is
    refused in the same words as when every row is parsed whole."""
    for case in ("a null id", "an error code that is a number", "a thought signature not base64"):
        (tmp_path / case).mkdir()
        f = _store(tmp_path / case, REFUSED[case])
        h = adk_heads.head(REFUSED[case])
        assert h is not None and h.refused is not None, case
        fast = [(d.line, d.message, d.seqs) for d in load(str(f)).diagnostics if d.problem == "resume_refused"]
        with monkeypatch.context() as m:
            m.setattr(adk, "_indexed_events", lambda *a: None)  # (heads, every column fetched at once)
            ordinary = [(d.line, d.message, d.seqs) for d in load(str(f)).diagnostics if d.problem == "resume_refused"]
            m.setattr(adk_heads, "head", lambda data: None)
            m.setattr(adk_heads, "heads", lambda datas: [None] * len(datas))
            whole = [(d.line, d.message, d.seqs) for d in load(str(f)).diagnostics if d.problem == "resume_refused"]
        assert fast == ordinary == whole and len(fast) == 1, (case, fast, ordinary, whole)


def test_a_v1_store_is_not_judged(tmp_path: Path) -> None:
    """DatabaseSessionService validates the stored dict, not the JSON, in pydantic's Python mode:
    not mirrored, and not said."""
    out = tmp_path / "s.v1.db"
    shutil.copyfile(need_shared(CORPUS / "token_threshold.v1.db"), out)
    with sqlite3.connect(out) as con:
        rowid, data = con.execute("SELECT rowid, event_data FROM events ORDER BY timestamp LIMIT 1").fetchone()
        o = json.loads(data)
        o["author"] = 5
        con.execute("UPDATE events SET event_data = ? WHERE rowid = ?", (json.dumps(o), rowid))
    assert _refusals(out) == []


@pytest.mark.parametrize("role", [None, "", "drop"])
@pytest.mark.parametrize("way", ["strict", "ordinary", "whole"])
def test_a_content_without_a_role_is_never_sent(role: str | None, way: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ADK leaves out an event whose content has no role (`_contains_empty_content`,
    flows/llm_flows/context/_contents.py:277-279), whichever way inspector reads the row."""
    ev = _event()
    if role == "drop":
        del ev["content"]["role"]
    else:
        ev["content"]["role"] = role
    if way == "ordinary":
        ev["zz"] = {"a": [1]}  # (an unknown key: the strict decode refuses it)
    (tmp_path / "a").mkdir()
    f = _store(tmp_path / "a", _dumps(ev))
    ev["content"]["role"] = "user"
    (tmp_path / "b").mkdir()
    g = _store(tmp_path / "b", _dumps(ev))
    if way == "whole":
        monkeypatch.setattr(adk_heads, "head", lambda data: None)
        monkeypatch.setattr(adk_heads, "heads", lambda datas: [None] * len(datas))
    rep = analyze(load(str(f)))
    assert not [x for x in rep.findings if x.code == "resume_refused"]
    assert "MARK" not in _sent(rep) and "[U08 answer" in _sent(rep), way
    assert "MARK" in _sent(analyze(load(str(g))))


def test_a_compaction_end_written_as_a_numeric_string_is_used(tmp_path: Path) -> None:
    """pydantic reads a float from a numeric string (events/event_actions.py:68-71): the
    compaction stands, its summary sent and its events not."""
    f = tmp_path / "s.db"
    shutil.copyfile(need_shared(CORPUS / "token_threshold.db"), f)
    with sqlite3.connect(f) as con:
        (data,) = con.execute("SELECT event_data FROM events WHERE rowid = 25").fetchone()
        o = json.loads(data)
        o["actions"]["compaction"]["end_timestamp"] = str(o["actions"]["compaction"]["end_timestamp"])
        con.execute("UPDATE events SET event_data = ? WHERE rowid = 25", (json.dumps(o),))
    rep = analyze(load(str(f)))
    text = _sent(rep)
    assert "[SUMMARY S1]" in text and "[U05] What is 5" not in text
    assert not [x for x in rep.findings if x.code == "resume_refused"]


def test_a_followed_store_says_so_when_a_row_adk_refuses_lands(tmp_path: Path) -> None:
    """A store followed live: the look that reads a new row ADK refuses says `resume_refused`, as a
    full read of the store does, and so do the looks after it."""
    import orjson

    from inspector.analysis.export import analyze_json, context_json
    from inspector.live.incremental import Follower

    def as_json(rep: Any) -> bytes:
        rep.ensure_tokens()
        return orjson.dumps([analyze_json(rep), context_json(rep)], option=orjson.OPT_SORT_KEYS)

    f = tmp_path / "token_threshold.db"
    shutil.copyfile(need_shared(CORPUS / "token_threshold.db"), f)
    fol = Follower(str(f))
    fol.poll()
    said = []
    for k, ev in enumerate([_event(id="ok-1"), _event(id="bad", error_code=500), _event(id="ok-2")]):
        with sqlite3.connect(f) as con:
            app, user, sid = con.execute("SELECT app_name, user_id, id FROM sessions").fetchone()
            con.execute(
                "INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) VALUES (?,?,?,?,?,?,?)",
                (ev["id"], app, user, sid, "e-x", LAST_TS + 10 + k, _dumps({**ev, "timestamp": LAST_TS + 10 + k}).decode()),
            )
        assert fol.poll() is not None
        assert fol.report is not None and as_json(fol.report) == as_json(analyze(load(str(f))))
        said.append([x.message for x in fol.report.findings if x.code == "resume_refused"])
    assert [len(s) for s in said] == [0, 1, 1] and "event id 'bad'" in said[1][0], said


STATES: dict[str, tuple[str, bool]] = {
    "session state not JSON": ("UPDATE sessions SET state = '{oops'", True),
    "session state a list": ("UPDATE sessions SET state = '[1]'", True),
    "session state invalid UTF-8": ("UPDATE sessions SET state = CAST(x'7b2261223a22ff227d' AS TEXT)", True),
    "app state not JSON": ("INSERT OR REPLACE INTO app_states SELECT app_name, 'nope', 1.0 FROM sessions", True),
    "user state a number": ("INSERT OR REPLACE INTO user_states SELECT app_name, user_id, '5', 1.0 FROM sessions", True),
    "session state with NaN": ("""UPDATE sessions SET state = '{"a": NaN}'""", False),
    "another app's state not JSON": ("INSERT OR REPLACE INTO app_states VALUES ('other-app', 'nope', 1.0)", False),
    "another user's state a list": ("INSERT OR REPLACE INTO user_states SELECT app_name, 'user-2', '[]', 1.0 FROM sessions", False),
}


@pytest.mark.parametrize("case", sorted(STATES))
def test_a_stored_state_adk_cannot_read_refuses_the_session(case: str, tmp_path: Path) -> None:
    """get_session decodes the session's, its app's and its user's state before any event
    (sessions/sqlite_session_service.py:331-333, 361-362, 184-199): one it cannot read refuses it."""
    sql, refused = STATES[case]
    f = tmp_path / "token_threshold.db"
    shutil.copyfile(need_shared(CORPUS / "token_threshold.db"), f)
    with sqlite3.connect(f) as con:
        con.execute(sql)
    said = _refusals(f)
    assert len(said) == refused and all("state" in s and "refuses the whole session" in s for s in said), said


def test_a_followed_store_whose_state_goes_bad_reloads(tmp_path: Path) -> None:
    from inspector.live.incremental import Follower

    f = tmp_path / "token_threshold.db"
    shutil.copyfile(need_shared(CORPUS / "token_threshold.db"), f)
    fol = Follower(str(f))
    fol.poll()
    with sqlite3.connect(f) as con:
        con.execute("UPDATE sessions SET state = '[1]'")
        app, user, sid = con.execute("SELECT app_name, user_id, id FROM sessions").fetchone()
        con.execute(
            "INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) VALUES (?,?,?,?,?,?,?)",
            ("ok-1", app, user, sid, "e-x", LAST_TS + 10, _dumps(_event(id="ok-1")).decode()),
        )
    up = fol.poll()
    assert up is not None and fol.report is not None
    assert [x.code for x in fol.report.findings if x.code == "resume_refused"] == ["resume_refused"]


@pytest.mark.parametrize("raw", [b"NaN", b"-Infinity", b"1e400", b"9" * 400])
def test_a_row_with_a_number_orjson_refuses_is_read_as_adk_reads_it(raw: bytes, tmp_path: Path) -> None:
    """pydantic's JSON parser reads NaN, Infinity and numbers past a double's range (events/event.py
    ignores the key holding one); the row is read (as orjson would read the rest), its event sent,
    a recovered diagnostic saying why, and ADK's verdict unchanged."""
    content = {"role": "model", "parts": [{"text": "MARK"}, {"function_call": {"id": "c", "name": "f", "args": {"n": "@"}}}]}
    f = _store(tmp_path, _dumps(_event(x="@", custom_metadata={"n": "@"}, content=content)).replace(b'"@"', raw))
    led = load(str(f))
    assert len(led.records) == 31
    assert [r.extra for r in led.records] and [r.message for r in led.records]  # (their JSON sizes: orjson writes each value)
    from inspector.analysis.export import analyze_json, context_json

    assert analyze_json(analyze(led)) and context_json(analyze(led))
    notes = [d for d in led.diagnostics if d.problem == "malformed_row"]
    assert len(notes) == 1 and notes[0].recovered and "read as ADK reads it" in notes[0].message
    rep = analyze(led)
    assert "MARK" in _sent(rep) and not [x for x in rep.findings if x.code == "resume_refused"]


def test_a_session_adk_refuses_is_not_repaired_by_an_inserted_event(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One more event leaves the stored one ADK refuses where it is, so `repair` refuses, naming it,
    and the store is left as it was (a clean store is no refusal)."""
    from inspector.cli.main import main

    f = _store(tmp_path, REFUSED["a null author"])
    before = f.read_bytes()
    assert main(["repair", str(f), "--strategy", "recover", "--window", "100000", "--write"]) == 2
    err = capsys.readouterr().err
    assert "ADK refuses to load this session whatever is inserted" in err and "author" in err, err
    assert f.read_bytes() == before
    clean = tmp_path / "clean"
    clean.mkdir()
    from inspector.formats import adk_writer

    assert adk_writer.refusal(load(str(_store(clean, _dumps(_event()))))) is None


FOUND = Path(__file__).parent / "fuzz" / "found"


def test_found_by_the_fuzz_campaign_an_event_null_and_a_refusal_after_the_at_cut(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m tests.fuzz --seed 127`: a v1 store whose event_data is the JSON text `null`
    crashed the read (UnboundLocalError), and `--at 1` on a store whose row 8 ADK refuses crashed
    the JSON export (the refusal named a record the cut had left out: at event 1 that row was not
    stored, so nothing was refused)."""
    from inspector.cli.main import main

    assert main(["analyze", str(FOUND / "adk-event-data-null.v1.db"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert any("event_data is null, not a JSON object" in d["message"] for d in out["diagnostics"])
    found = FOUND / "adk-refused-row-after-the-at-cut.db"
    assert main(["analyze", "--at", "1", "--json", str(found)]) == 0
    assert "resume_refused" not in {f["code"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert main(["analyze", "--json", str(found)]) == 0  # (the whole store: refused)
    assert "resume_refused" in {f["code"] for f in json.loads(capsys.readouterr().out)["findings"]}
