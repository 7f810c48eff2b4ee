"""maka runtime.sqlite (inspector/formats/maka.py), on stores built from maka's own DDL and types
(tests/maka_store.py). The adapter is not registered yet: these tests load through its `load`
and give the analysis its rules the way the registry will."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from inspector.analysis import analyze
from inspector.analysis.export import checkpoint_json, checkpoint_status
from inspector.formats import adk, maka, openclaw_sqlite
from inspector.formats.jsonl import LoadError
from inspector.ledger.model import Route
from tests.maka_store import SECTIONED_SUMMARY, Session, write

ROOT = Path(__file__).resolve().parent.parent
ADK_CORPUS = ROOT.parent / "shared" / "peers" / "adk" / "corpus"


def two_turns(tmp_path: Path, version: int = 2, **kw: Any) -> tuple[Session, str]:
    """Turn 1 (a call and its result), a checkpoint over it, turn 2."""
    s = Session()
    s.run("run1", "turn1")
    s.user("u1", "run1", "Rename foo")
    s.call("c1", "run1", "call_1")
    s.result("r1", "run1", "call_1")
    s.reply("a1", "run1", "Renamed")
    s.run("run2", "turn2")
    s.checkpoint("cp1", "run2", 4, version=version, **kw)
    s.user("u2", "run2", "Now bar")
    s.reply("a2", "run2", "Done")
    return s, str(tmp_path / "runtime.sqlite")


def context(led: Any) -> list[tuple[str, str, str | None]]:
    rep = analyze(led)
    return [(it.role, it.kind, it.record_id) for it in rep.context]


def codes(led: Any) -> list[tuple[str, str | None]]:
    return [(f.code, (f.data or {}).get("problem")) for f in analyze(led).findings]


# ---------------------------------------------------------------------------------------- detection


def test_detects_maka_and_not_its_neighbours(tmp_path: Path) -> None:
    s, p = two_turns(tmp_path)
    write(p, s)
    assert maka.looks_like_file(p)
    assert not openclaw_sqlite.looks_like_file(p)
    with pytest.raises(LoadError, match="not an ADK session store"):
        adk.load_sqlite(p, p, None, None)  # ADK declines it cleanly, no traceback
    others = [*ROOT.joinpath("sample_sessions").rglob("*.*"), *ADK_CORPUS.rglob("*.*")]
    assert others and not [o for o in others if o.is_file() and maka.looks_like_file(str(o))]

    con = sqlite3.connect(p)
    con.execute("CREATE TABLE sessions (id TEXT)")  # an ADK table in it: not maka's store
    con.commit()
    con.close()
    assert not maka.looks_like_file(p)
    (tmp_path / "x.jsonl").write_text('{"type":"session"}\n')
    assert not maka.looks_like_file(str(tmp_path / "x.jsonl"))


def test_not_sqlite_or_not_maka_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a.sqlite").write_text("hello")
    with pytest.raises(LoadError, match="not a SQLite database"):
        maka.load(str(tmp_path / "a.sqlite"), None, None)

    con = sqlite3.connect(tmp_path / "b.sqlite")
    con.execute("CREATE TABLE sessions (id TEXT)")
    con.close()
    with pytest.raises(LoadError, match=r"not a maka runtime\.sqlite"):
        maka.load(str(tmp_path / "b.sqlite"), None, None)


# ---------------------------------------------------------------------------------------- selection


def test_selects_the_session_used_last_or_the_named_one(tmp_path: Path) -> None:
    a, p = two_turns(tmp_path)
    b = Session(sid="s2", t=a.t + 10_000)
    b.run("rb", "tb")
    b.user("ub", "rb", "other session")
    write(p, a, b)
    led = maka.load(p, None, None)
    assert led.session_id == "s2"
    assert any(d.problem == "session_choice" and "others: s1" in d.message for d in led.diagnostics)
    assert maka.load(p, "s1", None).session_id == "s1"
    with pytest.raises(LoadError, match="no session 'nope'"):
        maka.load(p, "nope", None)


# ---------------------------------------------------------------------------------------- the next request


def test_v2_checkpoint_replays_its_rendered_text_then_the_successors(tmp_path: Path) -> None:
    s, p = two_turns(tmp_path)
    write(p, s)
    led = maka.load(p, None, None)
    rep = analyze(led)
    assert [(it.role, it.kind, it.record_id) for it in rep.context] == [
        ("user", "summary", "history-compact:cp1"),
        ("user", "message", "u2"),
        ("assistant", "message", "a2"),
    ]
    text = rep.context[0].text
    assert text.startswith('<maka_history_compact_checkpoint id="cp1" high_water="runtime_events" seq="4" version="2">\n')
    assert f"summary: {SECTIONED_SUMMARY}\n" in text
    assert "coverage: 4 runtime events across 1 turns\nsource: maka.compactable_runtime_event_projection.v1 0-3\n" in text
    assert text.endswith("</maka_history_compact_checkpoint>")
    v = rep.checkpoints[-1]
    assert sorted(led.records[x].id for x in v.represents) == ["a1", "c1", "r1", "u1"]
    assert v.retains == []
    assert rep.coverage_counts()["hole"] == 0 and rep.coverage_counts()["summarized"] == 4
    assert codes(led) == []


def test_v3_checkpoint_is_an_opaque_assistant_item_on_its_own_route(tmp_path: Path) -> None:
    s, p = two_turns(tmp_path, version=3)
    write(p, s)
    led = maka.load(p, None, None)
    rep = analyze(led)
    assert [(it.role, it.kind, it.record_id) for it in rep.context] == [
        ("assistant", "summary", "cmp_cp1"),
        ("user", "message", "u2"),
        ("assistant", "message", "a2"),
    ]
    assert "encrypted" in rep.context[0].text
    assert led.records[rep.checkpoints[-1].seq].checkpoint.summary == ""  # opaque: represents known, content not
    assert rep.coverage_counts()["summarized"] == 4


def test_v3_checkpoint_states_an_opaque_summary_not_an_empty_one(tmp_path: Path) -> None:
    """A v3 checkpoint carries encrypted provider state: its summary is opaque, not empty (issue 13).
    It keeps its coverage, is no hole's cause, and its status says what it is, in a neutral tone."""
    s, p = two_turns(tmp_path, version=3)
    write(p, s)
    rep = analyze(maka.load(p, None, None))
    v = rep.checkpoints[-1]
    assert not v.empty_summary and v.checkpoint.opaque_summary == "encrypted provider state"
    status = checkpoint_status(rep, v)
    assert (status.words, status.tone) == ("opaque summary (encrypted provider state)", "neutral")
    out = checkpoint_json(rep, v)
    assert (out["status"], out["status_tone"], out["empty_summary"]) == (status.words, "neutral", False)
    assert not [f for f in rep.findings if f.severity == "error"]


def test_v3_checkpoint_on_another_route_is_not_replayed(tmp_path: Path) -> None:
    s, p = two_turns(tmp_path, version=3, provider=("codex-main", "gpt-5-codex"))
    s.connection, s.model = "deepseek", "deepseek-chat"  # the session moved to another route
    write(p, s)
    led = maka.load(p, None, None)
    assert context(led) == [
        ("user", "message", "u1"),
        ("assistant", "message", "c1"),
        ("tool", "message", "r1"),
        ("assistant", "message", "a1"),
        ("user", "message", "u2"),
        ("assistant", "message", "a2"),
    ]
    assert codes(led) == [("checkpoint_not_replayed", "checkpoint_route_scoped")]


def test_routes_come_from_the_run_headers(tmp_path: Path) -> None:
    s = Session()
    s.run("run1", "turn1", model="model-a", connection="conn-a")
    s.user("u1", "run1", "hi")
    s.reply("a1", "run1", "hello")
    s.run("run2", "turn2", model="model-b", connection="conn-b")
    s.user("u2", "run2", "again")
    s.reply("a2", "run2", "yes")
    p = write(str(tmp_path / "runtime.sqlite"), s)
    led = maka.load(p, None, None)
    routes = {r.id: r.message.route for r in led.records if r.role == "assistant"}
    assert routes == {"a1": Route("model-a", "conn-a"), "a2": Route("model-b", "conn-b")}
    assert led.runs["run1"].route == Route("model-a", "conn-a")
    # seed 002: the proven span of route a ends where a's newest reply begins, not b's
    from inspector.analysis.tokens import get_tokenizer
    from inspector.compaction.cut import PathIndex, proven_reply

    ix = PathIndex(analyze(led), get_tokenizer())
    assert led.records[ix.path[proven_reply(ix, Route("model-a", "conn-a"))]].id == "a1"
    assert led.records[ix.path[proven_reply(ix, Route("model-b", "conn-b"))]].id == "a2"


def _mid_turn_store(tmp_path: Path) -> str:
    """A turn compacted mid-way (anchored at its user message u1), then one more call."""
    s = Session()
    s.run("run1", "turn1")
    s.user("u1", "run1", "Rename foo")
    s.call("c1", "run1", "call_1")
    s.result("r1", "run1", "call_1")
    s.checkpoint("cp1", "run1", 3, phase="mid_turn", anchor="u1")
    s.call("c2", "run1", "call_2")
    s.result("r2", "run1", "call_2")
    p = write(str(tmp_path / "runtime.sqlite"), s)
    return p


def test_mid_turn_checkpoint_retains_its_head_anchor(tmp_path: Path) -> None:
    p = _mid_turn_store(tmp_path)
    led = maka.load(p, None, None)
    rep = analyze(led)
    assert [(it.role, it.kind, it.record_id) for it in rep.context] == [
        ("user", "summary", "history-compact:cp1"),
        ("user", "message", "u1"),
        ("assistant", "message", "c2"),
        ("tool", "message", "r2"),
    ]
    v = rep.checkpoints[-1]
    assert [led.records[x].id for x in v.retains] == ["u1"]
    assert rep.states[0] == "retained"


def test_a_head_anchor_whose_row_id_is_not_its_payload_id_is_found_as_maka_finds_it(tmp_path: Path) -> None:
    """The coverage check finds a mid-turn checkpoint's head anchor by the stored payload's id; the
    replay took it by the row's own id, which a damaged store may spell otherwise: a KeyError
    (`python -m tests.fuzz_scan --seed 32`). The anchor is the event the check found."""
    import sqlite3

    p = _mid_turn_store(tmp_path)
    with sqlite3.connect(p) as con:
        con.execute("UPDATE runtime_events SET event_id = 'u1-row' WHERE event_id = 'u1'")
    led = maka.load(p, None, None)
    rep = analyze(led)
    assert [(it.role, it.kind) for it in rep.context] == [("user", "summary"), ("user", "message"), ("assistant", "message"), ("tool", "message")]
    assert rep.context[1].record_id == "u1-row"


def test_changed_history_makes_maka_skip_the_checkpoint(tmp_path: Path) -> None:
    s, p = two_turns(tmp_path, digest="sha256:" + "0" * 64)
    write(p, s)
    led = maka.load(p, None, None)
    assert [x[2] for x in context(led)] == ["u1", "c1", "r1", "a1", "u2", "a2"]
    assert codes(led) == [("checkpoint_not_replayed", "checkpoint_unused")]
    assert "source_hash_mismatch" in analyze(led).findings[0].message


def test_a_field_the_guard_drops_is_still_hashed_as_stored(tmp_path: Path) -> None:
    """A wrong-typed field is read without (the field guard) but the digest is over the payload as
    maka stored it: the checkpoint over that event is still the one replayed."""
    s = Session()
    s.run("run1", "turn1")
    s.user("u1", "run1", "Rename foo", status=7)  # status is a string in RuntimeEvent
    s.reply("a1", "run1", "Renamed")
    s.run("run2", "turn2")
    s.checkpoint("cp1", "run2", 2)
    s.user("u2", "run2", "Now bar")
    p = write(str(tmp_path / "runtime.sqlite"), s)
    led = maka.load(p, None, None)
    assert any("status" in d.message and d.line == 1 for d in led.diagnostics)
    assert [x[2] for x in context(led)] == ["history-compact:cp1", "u2"]
    assert codes(led) == [("malformed_line", "wrong_type")]  # the guard's own finding, nothing else


def test_coverage_miss(tmp_path: Path) -> None:
    s, p = two_turns(tmp_path)
    s.run_events[0][1]["data"]["checkpoint"]["coverage"]["through"]["runtimeEventId"] = "r1"
    s.run_events[0][1]["data"]["checkpoint"]["source"]["coverage"]["highWater"]["eventId"] = "r1"
    write(p, s)
    led = maka.load(p, None, None)
    assert "coverage_miss" in analyze(led).findings[0].message
    assert context(led)[0][2] == "u1"


def test_legacy_checkpoint_must_end_at_its_through_event(tmp_path: Path) -> None:
    s, p = two_turns(tmp_path)
    cp = s.run_events[0][1]["data"]["checkpoint"]
    del cp["source"]  # legacy v2: no source cursors, only coverage.through
    cp["coverage"]["through"]["runtimeEventId"] = "r1"
    write(p, s)
    assert "coverage_miss" in analyze(maka.load(p, None, None)).findings[0].message


def test_truncated_summary_is_quarantined(tmp_path: Path) -> None:
    s, p = two_turns(tmp_path, summary="We renamed foo and then,", sectioned=False)
    write(p, s)
    led = maka.load(p, None, None)
    assert codes(led) == [("checkpoint_not_replayed", "checkpoint_refused")]
    assert "malformed_summary_truncated" in analyze(led).findings[0].message
    assert context(led)[0][2] == "u1"


def test_sectioned_summary_needs_its_sections(tmp_path: Path) -> None:
    assert maka.summary_defect(SECTIONED_SUMMARY, True) is None
    assert maka.summary_defect("## Goal\nx\n## Progress\ny", True) == "malformed_summary_missing_section"
    assert maka.summary_defect("free form, finished.", False) is None
    assert maka.summary_defect("```\nopen fence", False) == "malformed_summary_truncated"


def test_projection_null_row_means_no_checkpoint(tmp_path: Path) -> None:
    s, p = two_turns(tmp_path)
    s.projection = None
    write(p, s)
    assert context(maka.load(p, None, None))[0][2] == "u1"


def test_projection_names_the_checkpoint_in_force(tmp_path: Path) -> None:
    s, p = two_turns(tmp_path)
    s.run("run3", "turn3")
    s.checkpoint("cp2", "run3", 6, previous="cp1")
    s.user("u3", "run3", "third")
    s.projection = "cp1"  # the store kept cp1 (a repair may have); maka follows the projection
    write(p, s)
    led = maka.load(p, None, None)
    assert context(led)[0][2] == "history-compact:cp1"
    s.projection = "absent"  # recovered from the run ledger: the widest, cp2
    p2 = write(str(tmp_path / "b.sqlite"), s)
    assert [x[2] for x in context(maka.load(p2, None, None))] == ["history-compact:cp2", "u3"]


def test_unanswered_call_is_dropped_and_orphan_result_is_not_sent(tmp_path: Path) -> None:
    s = Session()
    s.run("run1", "turn1")
    s.user("u1", "run1", "go")
    s.call("c1", "run1", "call_1")  # the app died: no response
    s.result("r9", "run1", "call_9")  # a response to no call
    s.reply("a1", "run1", "sorry")
    p = write(str(tmp_path / "runtime.sqlite"), s)
    led = maka.load(p, None, None)
    assert context(led) == [("user", "message", "u1"), ("assistant", "message", "a1")]
    assert ("dropped_tool_call", "unmatched_tool_call") in codes(led)
    assert not [c for c, _ in codes(led) if c in ("unanswered_tool_call", "orphan_tool_result")]


def test_never_sent_events(tmp_path: Path) -> None:
    s = Session()
    s.run("run1", "turn1")
    s.user("u1", "run1", "go")
    s.reply("h1", "run1", "hidden note", modelVisibility="hidden")
    s.event("e1", "run1", "model", {"kind": "error", "message": "provider 500"})
    s.event("y1", "run1", "system", {"kind": "text", "text": "system fact"})
    s.event("f1", "run1", "system", None, actions={"endInvocation": True})
    s.reply("a1", "run1", "done", status="failed")  # terminal status is diagnostic only: still sent
    p = write(str(tmp_path / "runtime.sqlite"), s)
    led = maka.load(p, None, None)
    assert context(led) == [("user", "message", "u1"), ("assistant", "message", "a1")]
    states = dict(zip([r.id for r in led.records], analyze(led).states, strict=True))
    assert states == {"u1": "live", "h1": "excluded", "e1": "excluded", "y1": "excluded", "f1": None, "a1": "live"}


# ---------------------------------------------------------------------------------------- bad rows, --at, read-only


def test_bad_rows_are_named_and_the_rest_loads(tmp_path: Path) -> None:
    s, p = two_turns(tmp_path)
    bad = [
        ("bad1", "s1", "inv-run2", "run2", "turn2", 90, "text", "{not json", 1_787_100_000_000),
        ("bad2", "s1", "inv-run2", "run2", "turn2", 91, "text", json.dumps({"id": "other", "sessionId": "s1", "invocationId": "inv-run2", "runId": "run2", "turnId": "turn2", "role": "user", "content": {"kind": "text", "text": 5}}), 1_787_100_000_001),
    ]
    write(p, s, raw_rows=bad)
    led = maka.load(p, None, None)
    msgs = {d.problem: d.message for d in led.diagnostics}
    assert "runtime_events row 'bad1'" in msgs["malformed_row"] and "not valid JSON" in msgs["malformed_row"]
    assert "'content.text' is an integer" in msgs["wrong_type"]
    assert "row 'bad2'" in msgs["row_identity_mismatch"]
    assert [x[2] for x in context(led)][:3] == ["history-compact:cp1", "u2", "a2"]


@pytest.mark.parametrize("through", [["u1"], {"id": "u1"}, 7, None])
def test_a_checkpoint_through_no_event_id_is_refused_not_a_crash(tmp_path: Path, through: Any) -> None:
    """A checkpoint row whose coverage.through.runtimeEventId is no string (a list made the
    timeline's placement raise) is placed by its time and refused by the shape check."""
    s, p = two_turns(tmp_path)
    s.run_events[0][1]["data"]["checkpoint"]["coverage"]["through"]["runtimeEventId"] = through
    write(p, s)
    led = maka.load(p, None, None)
    refused = [d.message for d in led.diagnostics if d.problem == "checkpoint_refused"]
    assert len(refused) == 1 and "coverage.through is incomplete" in refused[0]
    assert [x[2] for x in context(led)][:2] == ["u1", "c1"]


@pytest.mark.parametrize("count", [None, "4", ["4"], {"n": 4}])
def test_a_checkpoint_whose_event_count_is_no_number_is_refused_not_a_crash(tmp_path: Path, count: Any) -> None:
    """A checkpoint with source cursors whose coverage.eventCount is no number (null made the
    cursors' check raise 'unsupported operand type(s) for -') is refused by the shape check."""
    s, p = two_turns(tmp_path)
    s.run_events[0][1]["data"]["checkpoint"]["coverage"]["eventCount"] = count
    write(p, s)
    led = maka.load(p, None, None)
    refused = [d.message for d in led.diagnostics if d.problem == "checkpoint_refused"]
    assert len(refused) == 1 and "coverage.eventCount is not a positive integer" in refused[0]
    assert [x[2] for x in context(led)][:2] == ["u1", "c1"]


def test_at_line_reads_the_timeline_prefix(tmp_path: Path) -> None:
    s, p = two_turns(tmp_path)
    write(p, s)
    before = maka.load(p, None, 4)
    assert [r.id for r in before.records] == ["u1", "c1", "r1", "a1"] and not analyze(before).checkpoints
    after = maka.load(p, None, 6)
    assert [x[2] for x in context(after)] == ["history-compact:cp1", "u2"]


def test_reading_leaves_the_store_unchanged(tmp_path: Path) -> None:
    s, p = two_turns(tmp_path)
    write(p, s)
    digest = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    analyze(maka.load(p, None, None))
    assert hashlib.sha256(Path(p).read_bytes()).hexdigest() == digest
    assert sorted(x.name for x in tmp_path.iterdir()) == ["runtime.sqlite"]


# ---------------------------------------------------------------------------------------- maka's serialization


JS = """
const canon = (v, k) => {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) { const a = v.map((x) => canon(x)); return (k === 'required' || k === 'enum') ? a.slice().sort() : a; }
  const o = {}; for (const key of Object.keys(v).sort()) o[key] = canon(v[key], key); return o;
};
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(input.map((v) => JSON.stringify(canon(v)))));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")
def test_stable_stringify_matches_javascript() -> None:
    values: list[Any] = [
        {"b": 1, "a": [3, 1], "10": "x", "9": "y", "é": "ü\n\t\"\\", "Z": None},
        {"n": [1.0, 1.5, 1e21, 1e-7, 0.000001, 123456789012.25, -0.5, 2**53], "required": ["b", "a"]},
        {"s": "\u2028 \x7f \x01 😀", "nested": {"y": True, "x": False}},
        # UTF-16 order puts an astral key before U+FFFF (code-point order would not); every control character
        {"a\uffff": 1, "a😀": 2, "\x00\x1f": "".join(map(chr, range(32))) + "\u00ad\ufeff"},
        [{"a\uffff": 1, "a😀": 2}, {"a😀": 3, "a\uffff": 4}],  # one shape twice, in two key orders
        # lone surrogates (JSON.parse keeps them; ES2019's JSON.stringify escapes them), as keys
        # too, and a pair held as two characters (one character to JavaScript)
        {"\ud800": "a\udfffb", "\ue000": 1, "😀": 2, "k": ["\ud83d" + "\ude00", "\ude00\ud83d", "\udbff"]},
    ]
    out = subprocess.run(["node", "-e", JS], input=json.dumps(values), capture_output=True, text=True, check=True).stdout
    assert [maka.stable_stringify(v) for v in values] == json.loads(out)


def test_stable_json_is_stable_stringify_where_orjson_would_write_another_text() -> None:
    """The digest's serializer writes with orjson only where orjson's sorted output is maka's:
    each of these orjson writes otherwise (a float, an array-index key, a sorted array, UTF-16 key
    order, an integer past 64 bits), and each is still written as `stable_stringify` does."""
    differ: list[Any] = [
        {"ts": 1.0},
        {"a": [{"x": [2.0]}]},
        {"10": 1, "9": 2},
        {"-b": 1, "1": 2},
        {"required": ["b", "a"]},
        {"args": {"enum": ["z", "y"]}},
        {"a\uffff": 1, "a😀": 2},
        {"n": 2**70},
    ]
    for v in differ:
        try:
            fast: bytes | None = orjson.dumps(v, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            fast = None
        exact = maka.stable_stringify(v).encode()
        assert fast != exact, v
        assert maka.stable_json(v) == exact, v
    plain: list[Any] = [
        {"id": "e1", "ts": 17, "partial": False, "content": {"kind": "text", "text": "é \u2028 😀\n"}, "x": None},
        [{"b": [1, "2", True], "a": {}}, []],
        {"required": "a string: not sorted", "9": "one index key alone"},
    ]
    for v in plain:
        assert maka.stable_json(v) == maka.stable_stringify(v).encode() == orjson.dumps(v, option=orjson.OPT_SORT_KEYS), v


def test_the_sorted_encoder_writes_what_orjson_writes() -> None:
    """`stable_json` writes with msgspec's sorted encoder: byte for byte orjson's sorted output for
    every code point in a key and in a string, keys of every plane sorted alike, 64-bit integers."""
    for start in range(0, 0x110000, 0x1000):
        chars = [chr(c) for c in range(start, start + 0x1000) if not 0xD800 <= c < 0xE000]
        if not chars:
            continue
        v = {"k" + c: [c, 1, True, None] for c in chars} | {"".join(chars): {"": "x", "\uffff": 0, "😀": -(2**63)}}
        assert maka._SORTED_JSON(v) == orjson.dumps(v, option=orjson.OPT_SORT_KEYS), hex(start)
    assert maka.stable_json({"n": 2**70}) == maka.stable_stringify({"n": 2**70}).encode()


def test_stable_stringify_escapes_a_lone_surrogate_as_javascript_does() -> None:
    """A string orjson cannot encode (a lone surrogate, which JSON.parse reads from its escape) is
    written as ES2019's JSON.stringify writes it: the escape, not the raw code unit, nor an error
    (and the digest over it is UTF-8, test_a_checkpoint_over_arguments_holding_lone_surrogates_is_replayed)."""
    assert maka.stable_stringify({"k": "a\ud800b"}) == '{"k":"a\\ud800b"}'


def test_source_digest_is_pinned() -> None:
    """The digest as this adapter computed it before it was made faster (a store's checkpoints were
    written with it): a float, an array-index key, a sorted array, non-ASCII text, a big integer."""
    events = [
        {"id": "e1", "ts": 1787000000000, "content": {"kind": "text", "text": "héllo 😀 \u2028"}, "partial": False},
        {"id": "e2", "args": {"10": 1, "9": [2.0, 1.5e21]}, "required": ["b", "a"]},
        {"n": 2**70, "x": None},
    ]
    assert maka.source_digest(events) == "sha256:46187c2ff25a5acd90e3d8f0414071481f3490b5e525f3a590363e74066df60e"
    digests = maka.PrefixDigests({1, 3})
    for ev in events:
        digests.feed(ev)
    assert digests.found == {1: maka.source_digest(events[:1]), 3: maka.source_digest(events)}


@pytest.mark.parametrize("block", [1, 40, 1 << 20])
def test_prefix_digests_hash_in_blocks_what_source_digest_hashes_event_by_event(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`PrefixDigests` gathers the events' parts and hashes them a block at a time: a block flushed
    after every event, after some, or only where a prefix's digest is taken, each prefix's digest is
    `source_digest` of those events, and nothing is hashed twice or left out (restart forgets all)."""
    monkeypatch.setattr(maka.PrefixDigests, "_BLOCK", block)
    events = [{"id": f"e{i}", "content": {"kind": "text", "text": "x" * i}, "n": i} for i in range(12)]
    wanted = {1, 2, 5, 9, 12}
    digests = maka.PrefixDigests(wanted)
    for ev in events[:7]:
        digests.feed(ev)
    digests.restart()
    for ev in events:
        digests.feed(ev)
    digests.feed({"past": "the widest"})  # (hashes nothing)
    assert digests.found == {n: maka.source_digest(events[:n]) for n in wanted}


@pytest.mark.parametrize(
    "stored",
    [[3, 1, 2], [1, 2.5, 2, 2.5], [2.5, 1, 3.5], [1, "x", 2], [1, float("inf"), 2], [float("-inf"), 1, 2], [1, b"x", 2], [None, 1, 2]],
)
def test_commit_times_are_the_sorted_finite_ones(stored: list[Any]) -> None:
    """`_commit_times` of events in the session order SQLite gives (committed_at first): its fast path
    (first and last an integer: the list as it is) is the sorted finite times, whatever the column holds."""
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (committed_at INTEGER)")
    con.executemany("INSERT INTO t VALUES (?)", [(v,) for v in stored])
    order = [r[0] for r in con.execute("SELECT committed_at FROM t ORDER BY committed_at")]
    events = [maka._Event(i, str(i), b"{}", t, None, None, None, None, False, None, None, False, False, False) for i, t in enumerate(order, 1)]
    assert maka._commit_times(events) == sorted(t for t in order if type(t) is int or maka._finite(t))


# ---------------------------------------------------------------------------------------- the record index


def _random_session(rng: Any) -> Session:
    """Turns of user texts, calls and results, replies and runtime facts (no content), with
    checkpoints over a prefix among them (one in force), and an event whose id is a checkpoint
    row's (`ev-cpN`)."""
    s = Session()
    n_cp = 0
    for t in range(rng.randint(1, 6)):
        s.run(f"run{t}", f"turn{t}")
        s.user(f"u{t}", f"run{t}", f"ask {t}")
        for k in range(rng.randint(0, 3)):
            kind = rng.choice(("call", "fact", "reply", "id"))
            if kind == "call" or (kind == "id" and f"ev-cp{n_cp + 1}" in {e["id"] for e in s.events}):
                s.call(f"c{t}.{k}", f"run{t}", f"call_{t}_{k}")
                if rng.random() < 0.8:
                    s.result(f"r{t}.{k}", f"run{t}", f"call_{t}_{k}")
            elif kind == "fact":
                s.event(f"f{t}.{k}", f"run{t}", "system", None, status=rng.choice(("completed", "failed")))
            elif kind == "id" and f"ev-cp{n_cp + 1}" not in {e["id"] for e in s.events}:
                s.reply(f"ev-cp{n_cp + 1}", f"run{t}", "an id a checkpoint row takes")
            else:
                s.reply(f"a{t}.{k}", f"run{t}", "ok")
        if t and rng.random() < 0.6:
            n_cp += 1
            s.checkpoint(f"cp{n_cp}", f"run{t}", rng.randint(1, len(s.compactable())))
    return s


@pytest.mark.parametrize("seed", range(12))
def test_the_index_lists_what_the_records_say_and_reads_as_they_do(tmp_path: Path, seed: int) -> None:
    """The loader's `RecordIndex` (message and checkpoint seqs, no record off the path, ids found
    without a walk) is what a walk of the records finds, and the analysis reads the same with it
    as without it, whole and at each cut."""
    import random

    from inspector.analysis.export import analyze_json, context_json
    from inspector.ledger.model import seqs_without

    path = write(str(tmp_path / "runtime.sqlite"), _random_session(random.Random(seed)))
    n = len(maka.load(path, None, None).records)
    for upto in (None, *range(1, n + 1, 3)):
        led = maka.load(path, None, upto)
        ix = led.record_index()
        assert ix is not None
        assert ix.marks == [r.seq for r in led.records if r.kind in ("message", "checkpoint")]
        assert seqs_without(ix.off_path or [], len(led.records)) == [r.seq for r in led.records if r.runtime_visible and r.kind != "header"]
        ids = {r.id for r in led.records if r.id is not None} | {"no such id"}
        by_id = {r.id: r.seq for r in led.records if r.id is not None and r.runtime_visible}
        assert ix.find_ids(ids) == {i: by_id[i] for i in ids if i in by_id}  # type: ignore[misc]
        plain = maka.load(path, None, upto)
        plain.index = None
        a, b = analyze(led), analyze(plain)
        assert (analyze_json(a), context_json(a)) == (analyze_json(b), context_json(b))


def test_a_checkpoint_over_arguments_holding_lone_surrogates_is_replayed(tmp_path: Path) -> None:
    """Arguments maka wrote with a lone surrogate (a key and a value: JSON.parse keeps it, JSON.stringify
    escapes it) are hashed as maka hashes them: the checkpoint over them is the one replayed, not a crash."""
    s = Session()
    s.run("run1", "turn1")
    s.user("u1", "run1", "Rename foo")
    s.call("c1", "run1", "k1", args={"\ud800": 1, "b": [1, {"x": "\udfff"}]})
    s.result("r1", "run1", "k1")
    s.reply("a1", "run1", "Renamed")
    s.run("run2", "turn2")
    s.checkpoint("cp1", "run2", 4)
    s.user("u2", "run2", "Now bar")
    led = maka.load(write(str(tmp_path / "runtime.sqlite"), s), None, None)
    assert [x[2] for x in context(led)] == ["history-compact:cp1", "u2"]
    assert codes(led) == []


def _text_time_in_index(path: str, committed_at: int) -> None:
    """The session index's entry of the row committed at `committed_at` made to hold its 6 bytes as
    text (its record header's serial type 5, a 6-byte integer, made 25, 6 bytes of text), in place
    among the integers, the table row unchanged: what one damaged byte of an index page does (the
    fuzz campaign, seed 4401). SQLite reads the column from the index as it walks it in order."""
    data = bytearray(Path(path).read_bytes())
    body = b"s1" + committed_at.to_bytes(6, "big")
    at = data.find(body)
    assert at > 0 and data.find(body, at + 1) < 0, "one index entry holds it"
    header = data[at - 5 : at]  # [length 5][17: 's1'][5: the time][the event id's][the rowid's]
    assert header[0] == 5 and header[1] == 17 and header[2] == 5, bytes(header)
    data[at - 3] = 25
    Path(path).write_bytes(bytes(data))


def test_a_commit_time_the_index_holds_as_text_among_integers_is_not_compared_with_them(tmp_path: Path) -> None:
    """The session's rows come in the index's order, their commit times read from it: one it holds
    as text between integers (a damaged page) is left out of the times the checkpoint is placed
    by, not compared with them (a TypeError once)."""
    s, p = two_turns(tmp_path)
    write(p, s)
    _text_time_in_index(p, s.events[3]["ts"] + 1)  # (the middle one, where the search for the checkpoint's place looks first)
    led = maka.load(p, None, None)
    assert [x[2] for x in context(led)] == ["history-compact:cp1", "u2", "a2"]


def test_a_wrong_typed_field_holding_a_lone_surrogate_is_named_not_a_crash(tmp_path: Path) -> None:
    """A text holding a lone surrogate (JSON.parse keeps it) where maka keeps a boolean: the field
    guard names it and reads the event without it, as for any wrong type (msgspec's own check of the
    types raised UnicodeEncodeError on it: tests.fuzz seed 4409 case 3919)."""
    s = Session()
    s.run("run1", "turn1")
    s.user("u1", "run1", "Rename foo", partial="\ud800")
    s.reply("a1", "run1", "Renamed")
    led = maka.load(write(str(tmp_path / "runtime.sqlite"), s), None, None)
    assert [x[2] for x in context(led)] == ["u1", "a1"]
    assert codes(led) == [("malformed_line", "wrong_type")]
    assert any("partial" in d.message and d.line == 1 for d in led.diagnostics)


def test_a_run_header_field_holding_a_lone_surrogate_where_a_number_goes_is_named(tmp_path: Path) -> None:
    """The same for a run header (`core_agent_runs.record_json`): named, the session read."""
    s = Session()
    s.run("run1", "turn1")
    s.user("u1", "run1", "Rename foo")
    s.reply("a1", "run1", "Renamed")
    p = write(str(tmp_path / "runtime.sqlite"), s)
    con = sqlite3.connect(p)
    con.execute("""UPDATE core_agent_runs SET record_json = json_set(record_json, '$.createdAt', 'x')""")
    con.execute("""UPDATE core_agent_runs SET record_json = replace(record_json, '"createdAt":"x"', '"createdAt":"\\ud800"')""")
    con.commit()
    con.close()
    led = maka.load(p, None, None)
    assert [x[2] for x in context(led)] == ["u1", "a1"]
    assert any("createdAt" in d.message for d in led.diagnostics)
