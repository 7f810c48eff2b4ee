"""adk-go session stores (issue 13 part 2): detection, selection, Go's own next-request and
compaction rules (google/adk-go 2918701f, cited in inspector/formats/adk_go.py), findings, bad
rows, read-only. Stores are built from adk-go's types by tests/adk_go_store.py."""

from __future__ import annotations

import glob
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import EXCLUDED, HOLE, LIVE, RETAINED, SUMMARIZED, Report
from inspector.formats import adk, adk_go
from inspector.formats.jsonl import LoadError

sys.path.insert(0, str(Path(__file__).parent))
from adk_go_store import call, compaction, ev, export, response, rfc, store, t, text

ROOT = Path(__file__).parent.parent
ADK_CORPUS = Path(__file__).parent.parent.parent / "shared" / "peers" / "adk" / "corpus"


def notes_example(casing: str = "pascal") -> list[dict[str, Any]]:
    """docs/runtimes/adk-go.md §8: e2 is excluded by the record, e3 covered."""
    return [
        ev("e1", "inv-1", "user", t(0.000001), text("user", "List the files"), casing=casing),
        ev("e2", "inv-1", "coder", t(1), call("c1", "ls", {"dir": "."}), casing=casing, usage={"promptTokenCount": 812, "candidatesTokenCount": 12}),
        ev("e3", "inv-1", "coder", t(1.5), response("c1", "ls", {"out": "a.py"}), casing=casing),
        ev("e4", "inv-9", "user", t(30), None, casing=casing, comp=compaction(rfc(0.000001), rfc(1.5), "S1", [("inv-1", rfc(1, 123))])),
    ]


def load(tmp_path: Path, rows: list[dict[str, Any]], **more: list[dict[str, Any]]) -> Any:
    p = store(str(tmp_path / "s.db"), {"s1": rows, **more})
    return adk_go.load(p, None, None)


def request(r: Report) -> list[tuple[str, str, str]]:
    """(role, kind, event id or text) per item of the predicted next request."""
    out = []
    for it in r.context:
        ref = it.text if it.seq is None or it.kind == "summary" else (r.ledger.records[it.seq].id or "")
        out.append((it.role, it.kind, ref))
    return out


def states(r: Report) -> dict[str, str]:
    return {rec.id: r.states[rec.seq] for rec in r.ledger.records if r.states[rec.seq] is not None}


CONT = ("user", "message", adk_go.CONTINUE_TEXT)


# ---------------------------------------------------------------------------------------- detection


def test_detection_claims_go_stores_only(tmp_path: Path) -> None:
    p = store(str(tmp_path / "s.db"), {"s1": notes_example()})
    assert adk_go.looks_like_file(p)
    assert not adk.looks_like_file(p)  # no longer misread as adk v0
    with pytest.raises(LoadError, match="adk-go session store"):
        adk.load_sqlite(p, p, None, None)
    others = [*glob.glob(str(ADK_CORPUS / "*")), *glob.glob(str(ROOT / "sample_sessions" / "**" / "*"), recursive=True)]
    others += glob.glob(str(ROOT / "tests" / "peers" / "**" / "*.sqlite"), recursive=True)
    assert any(o.endswith(".db") for o in others)
    for o in others:
        if Path(o).is_file():
            assert not adk_go.looks_like_file(o), o
            assert not adk_go.looks_like_export(o), o
    for o in glob.glob(str(ADK_CORPUS / "*.db")):
        assert adk.looks_like_file(o), o  # ADK Python's stores stay ADK's


def test_export_detection(tmp_path: Path) -> None:
    f = tmp_path / "export.json"
    f.write_bytes(export(notes_example("camel")))
    assert adk_go.looks_like_export(str(f))
    assert not adk.sniff_dump(f.read_bytes())
    assert not adk_go.looks_like_file(str(f))


# ---------------------------------------------------------------------------------------- selection


def test_selection(tmp_path: Path) -> None:
    other = [ev("o1", "inv-o", "user", t(2), text("user", "other"))]
    p = store(str(tmp_path / "s.db"), {"s1": notes_example(), "s2": other})
    led = adk_go.load(p, None, None)
    assert led.session_id == "s2"  # the most recently updated
    assert any(d.problem == "session_choice" and "s1" in d.message for d in led.diagnostics)
    assert adk_go.load(p, "s1", None).session_id == "s1"
    with pytest.raises(LoadError, match="no session 'nope'"):
        adk_go.load(p, "nope", None)


# ---------------------------------------------------------------------------------------- next request


@pytest.mark.parametrize("casing", ["pascal", "camel"])
def test_notes_example_request(tmp_path: Path, casing: str) -> None:
    r = analyze(load(tmp_path, notes_example(casing)))
    # summary at e1's position (the first event it covers); e2 excluded stays raw; e3 covered;
    # the call goes unanswered and no result is synthesized; the continuation turn ends it.
    assert request(r) == [("assistant", "summary", "S1"), ("assistant", "message", "e2"), CONT]
    assert states(r) == {"e1": SUMMARIZED, "e2": RETAINED, "e3": SUMMARIZED}


def test_findings_name_events_and_say_what_adk_go_sends(tmp_path: Path) -> None:
    """The notes example's unanswered call, in adk-go's terms: the finding names the event (not a
    "line" of a database) and says adk-go sends the call as is (contents_processor.go:389-408),
    not that providers reject it; the checkpoint is named by its event too."""
    r = analyze(load(tmp_path, notes_example()))
    by_code = {f.code: f.message for f in r.findings}
    msg = by_code["unanswered_tool_call"]
    assert "'c1' on event 2 has no result" in msg and "adk-go sends the call as is" in msg
    assert "providers reject" not in msg
    assert not any("line" in m for m in by_code.values()), by_code


def test_export_gives_the_same_request(tmp_path: Path) -> None:
    f = tmp_path / "export.json"
    f.write_bytes(export(notes_example("camel")))
    r = analyze(adk_go.load(str(f), None, None))
    assert request(r) == [("assistant", "summary", "S1"), ("assistant", "message", "e2"), CONT]


def test_export_diagnostics_name_the_event_and_its_line(tmp_path: Path) -> None:
    """Each diagnostic of an export names the event's place and the line it starts on, for every
    kind of problem (not an object, a bad time, a wrong-typed field), and only those events."""
    good = orjson.loads(export(notes_example("camel")))
    bad_time = {**good[1], "timestamp": "yesterday"}
    bad_type = {**good[2], "author": 7}
    doc = b"[\n" + b",\n".join(orjson.dumps(o, option=orjson.OPT_INDENT_2) for o in [good[0], 5, bad_time, bad_type, good[3]]) + b"\n]\n"
    f = tmp_path / "export.json"
    f.write_bytes(doc)
    starts = {i + 1: doc[: doc.index(orjson.dumps(o, option=orjson.OPT_INDENT_2))].count(b"\n") + 1 for i, o in enumerate([good[0], 5, bad_time, bad_type]) if i}
    msgs = [d.message for d in adk_go.load(str(f), None, None).diagnostics if d.problem != "exclusion_unmatched"]
    assert [m.split(":")[1] for m in msgs] == [f" event {n} (line {starts[n]})" for n in (2, 3, 4)]
    assert "not a JSON object" in msgs[0] and "is not a time" in msgs[1] and "author" in msgs[2]


def _turn(n: int, sec: float) -> list[dict[str, Any]]:
    return [
        ev(f"u{n}", f"inv-{n}", "user", t(sec), text("user", f"q{n}")),
        ev(f"a{n}", f"inv-{n}", "coder", t(sec + 0.5), text("model", f"a{n}")),
    ]


def test_summary_sits_at_first_covered_and_tail_is_retained(tmp_path: Path) -> None:
    # u1 lies before the range; the record is appended after a raw tail (tail retention).
    rows = [*_turn(1, 1), *_turn(2, 2), *_turn(3, 3), ev("c", "inv-c", "user", t(9), None, comp=compaction(rfc(2), rfc(2.5), "S"))]
    r = analyze(load(tmp_path, rows))
    assert request(r) == [
        ("user", "message", "u1"),
        ("assistant", "message", "a1"),
        ("assistant", "summary", "S"),
        ("user", "message", "u3"),
        ("assistant", "message", "a3"),
        CONT,
    ]
    assert states(r) == {"u1": RETAINED, "a1": RETAINED, "u2": SUMMARIZED, "a2": SUMMARIZED, "u3": RETAINED, "a3": RETAINED}


def test_only_earlier_events_are_covered(tmp_path: Path) -> None:
    # u3 sorts after the record in the stream (timestamp order) but inside its range: adk-go keeps it.
    rows = [*_turn(1, 1), ev("c", "inv-c", "user", t(1.7), None, comp=compaction(rfc(1), rfc(2.5), "S")), ev("u3", "inv-3", "user", t(2), text("user", "late"))]
    r = analyze(load(tmp_path, rows))
    late = [it for it in r.context if it.seq is not None and r.ledger.records[it.seq].id == "u3"]
    assert len(late) == 1 and states(r)["u3"] == LIVE
    assert [x for x in request(r) if x[1] == "summary"] == [("assistant", "summary", "S")]
    # The same with a later record after u3 (one that covers nothing: its summary sits at its own
    # position): u3 is still not covered by the earlier record.
    rows.append(ev("c2", "inv-c2", "user", t(3), None, comp=compaction(rfc(0.5), rfc(0.6), "S2")))
    r = _fresh(tmp_path, rows)
    assert request(r) == [("assistant", "summary", "S"), ("user", "message", "u3"), ("assistant", "summary", "S2"), CONT]
    assert states(r)["u3"] == RETAINED and states(r)["u1"] == SUMMARIZED


def test_subsumption_by_covers_all_of(tmp_path: Path) -> None:
    base = [*_turn(1, 1), *_turn(2, 2)]
    narrow = ev("c1", "inv-c1", "user", t(10), None, comp=compaction(rfc(1), rfc(1.5), "S-narrow"))
    wide = ev("c2", "inv-c2", "user", t(11), None, comp=compaction(rfc(1), rfc(2.5), "S-wide"))
    r = analyze(load(tmp_path, [*base, narrow, wide]))
    assert [x for x in request(r) if x[1] == "summary"] == [("assistant", "summary", "S-wide")]
    cps = {v.record.id: v.checkpoint.details for v in r.checkpoints}
    assert cps["c1"]["subsumed_by"] == "c2" and cps["c2"]["surviving"]
    # A wider record that leaves out an event the narrow one covers does not subsume it.
    holey = ev("c2", "inv-c2", "user", t(11), None, comp=compaction(rfc(1), rfc(2.5), "S-wide", [("inv-1", rfc(1.5))]))
    r = _fresh(tmp_path, [*base, narrow, holey])
    assert [x[2] for x in request(r) if x[1] == "summary"] == ["S-narrow", "S-wide"]


def _fresh(tmp_path: Path, rows: list[dict[str, Any]]) -> Report:
    d = tmp_path / f"f{len(list(tmp_path.iterdir()))}"
    d.mkdir()
    return analyze(load(d, rows))


def test_record_without_content_covers_nothing(tmp_path: Path) -> None:
    rows = [*_turn(1, 1), ev("c", "inv-c", "user", t(9), None, comp=compaction(rfc(1), rfc(1.5), None))]
    led = load(tmp_path, rows)
    r = analyze(led)
    assert request(r) == [("user", "message", "u1"), ("assistant", "message", "a1"), CONT]
    assert any(d.problem == "compaction_without_content" for d in led.diagnostics)
    assert any(f.data and f.data.get("problem") == "compaction_without_content" for f in r.findings)


def test_long_running_call_is_reinjected(tmp_path: Path) -> None:
    rows = [
        ev("u1", "inv-1", "user", t(1), text("user", "deploy")),
        ev("k1", "inv-1", "coder", t(1.1), call("lr", "deploy", {}), long_running=["lr"]),
        ev("p1", "inv-1", "coder", t(1.2), response("lr", "deploy", {"status": "pending"})),
        ev("c", "inv-c", "user", t(5), None, comp=compaction(rfc(1), rfc(1.2), "S")),
        ev("p2", "inv-2", "user", t(6), response("lr", "deploy", {"status": "done"})),
    ]
    led = load(tmp_path, rows)
    r = analyze(led)
    assert request(r) == [("assistant", "summary", "S"), ("assistant", "message", "k1"), ("tool", "message", "p2")]
    assert states(r)["k1"] == RETAINED
    assert any(d.problem == "call_reinjected" for d in led.diagnostics)


def test_foreign_agent_events_become_context(tmp_path: Path) -> None:
    rows = [
        ev("u1", "inv-1", "user", t(1), text("user", "hi")),
        ev("h1", "inv-1", "helper", t(1.5), text("model", "I looked")),
        ev("a1", "inv-1", "coder", t(2), text("model", "ok")),
        ev("c", "inv-c", "user", t(5), None, comp=compaction(rfc(1), rfc(1), "S")),
    ]
    r = analyze(load(tmp_path, rows))
    assert request(r) == [
        ("assistant", "summary", "S"),
        ("user", "message", "For context:\n[helper] said: I looked"),
        ("assistant", "message", "a1"),
        CONT,
    ]


def test_without_a_record_the_request_is_built_as_adk_go_builds_it(tmp_path: Path) -> None:
    """No compaction record: the messages are not sent as written where adk-go sends them otherwise
    (as the real adk-go at 2918701f does, tests/peers/adk_go): another agent's event as "For
    context:" user text (ConvertForeignEvent, contents_processor.go:575-602), and a history ending
    on a model turn followed by the continuation turn (:77-83)."""
    rows = [
        ev("u1", "inv-1", "user", t(1), text("user", "hi")),
        ev("h1", "inv-1", "helper", t(1.5), text("model", "I looked")),
        ev("a1", "inv-1", "coder", t(2), text("model", "ok")),
    ]
    led = load(tmp_path, rows)
    r = analyze(led)
    assert request(r) == [("user", "message", "u1"), ("user", "message", "For context:\n[helper] said: I looked"), ("assistant", "message", "a1"), CONT]
    assert led.sent_history is not None
    # One sent as written (the user's turn last, no other agent) is the engine's own.
    plain = [rows[0], ev("a1", "inv-1", "coder", t(2), text("model", "ok")), ev("u2", "inv-2", "user", t(3), text("user", "more"))]
    led = adk_go.load(store(str(tmp_path / "plain.db"), {"s1": plain}), None, None)
    assert led.sent_history is None
    assert request(analyze(led)) == [("user", "message", "u1"), ("assistant", "message", "a1"), ("user", "message", "u2")]


def test_a_long_running_call_is_sent_with_its_last_response(tmp_path: Path) -> None:
    """A long-running call answered later (no record): adk-go sends the call followed by its last
    response only, the pending one dropped (rearrangeEventsForFunctionResponsesInHistory,
    contents_processor.go:382-402), as the real adk-go does (tests/peers/adk_go, long_running_answered)."""
    rows = [
        ev("u1", "inv-1", "user", t(1), text("user", "deploy")),
        ev("k1", "inv-1", "coder", t(1.1), call("lr", "deploy", {}), long_running=["lr"]),
        ev("p1", "inv-1", "coder", t(1.2), response("lr", "deploy", {"status": "pending"})),
        ev("a1", "inv-1", "coder", t(1.3), text("model", "started")),
        ev("p2", "inv-2", "user", t(5), response("lr", "deploy", {"status": "done"})),
        ev("a2", "inv-2", "coder", t(6), text("model", "done")),
    ]
    led = load(tmp_path, rows)
    r = analyze(led)
    assert request(r) == [
        ("user", "message", "u1"),
        ("assistant", "message", "k1"),
        ("tool", "message", "p2"),
        ("assistant", "message", "a1"),
        ("assistant", "message", "a2"),
        CONT,
    ]
    (d,) = [d for d in led.diagnostics if d.problem == "response_replaced"]
    assert d.line == 3 and "a later response answers again" in d.message
    assert states(r)["p1"] == EXCLUDED and [f.code for f in r.findings] == ["dropped_tool_result"]


def test_responses_merged_for_one_call_event_drop_the_replaced_ones(tmp_path: Path) -> None:
    """Two long-running calls in one event, both pending, then one answered: adk-go merges the
    response events of the call event into one content, the later response replacing the pending
    one in place (mergeFunctionResponseEvents, contents_processor.go:458-534), after dropping the
    text between them (:321-352), as the real adk-go does (tests/peers/adk_go, long_running_parallel)."""
    two = {"role": "model", "parts": [{"functionCall": {"id": i, "name": "job", "args": {}}} for i in ("ja", "jb")]}
    pending = {"role": "user", "parts": [{"functionResponse": {"id": i, "name": "job", "response": {"s": "pending"}}} for i in ("ja", "jb")]}
    rows = [
        ev("u1", "inv-1", "user", t(1), text("user", "start both")),
        ev("k1", "inv-1", "coder", t(1.1), two, long_running=["ja", "jb"]),
        ev("p1", "inv-1", "coder", t(1.2), pending),
        ev("a1", "inv-1", "coder", t(1.3), text("model", "started")),
        ev("p2", "inv-2", "user", t(5), response("ja", "job", {"s": "done"})),
    ]
    led = load(tmp_path, rows)
    r = analyze(led)
    # [done-ja, pending-jb] as one content: p2, then p1 less its response to ja.
    assert request(r) == [("user", "message", "u1"), ("assistant", "message", "k1"), ("tool", "message", "p2"), ("tool", "message", "p1")]
    assert [list(it.removed_results) for it in r.context] == [[], [], [], ["ja"]]
    (d,) = [d for d in led.diagnostics if d.problem == "response_replaced"]
    assert d.line == 3 and "'ja'" in d.message
    assert [f.code for f in r.findings if f.code == "dropped_tool_result"] == ["dropped_tool_result"]


def test_a_raw_tail_not_sent_as_written_is_in_the_records_history(tmp_path: Path) -> None:
    """After the last record, another agent's event and the continuation turn: the record's history
    holds the whole request, where adk-go sends each item (`replacement_holds_later`); a tail sent
    as written is left to the engine."""
    head = [*_turn(1, 1), ev("c", "inv-c", "user", t(3), None, comp=compaction(rfc(1), rfc(1.5), "S"))]
    rows = [*head, ev("u2", "inv-2", "user", t(4), text("user", "ask the helper")), ev("h2", "inv-2", "helper", t(4.5), text("model", "found it")), ev("a2", "inv-2", "coder", t(5), text("model", "thanks"))]
    r = analyze(load(tmp_path, rows))
    assert request(r) == [
        ("assistant", "summary", "S"),
        ("user", "message", "u2"),
        ("user", "message", "For context:\n[helper] said: found it"),
        ("assistant", "message", "a2"),
        CONT,
    ]
    assert r.checkpoints[-1].checkpoint.replacement_holds_later
    r = _fresh(tmp_path, [*head, ev("u2", "inv-2", "user", t(4), text("user", "more"))])
    assert request(r) == [("assistant", "summary", "S"), ("user", "message", "u2")]
    assert not r.checkpoints[-1].checkpoint.replacement_holds_later


def test_unmatched_exclusion_is_a_hole(tmp_path: Path) -> None:
    # The record names e2 at a time 400 µs off what the store holds: e2 is covered anyway.
    rows = [*notes_example()[:3], ev("e4", "inv-9", "user", t(30), None, comp=compaction(rfc(0.000001), rfc(1.5), "S1", [("inv-1", rfc(1.0004))]))]
    led = load(tmp_path, rows)
    r = analyze(led)
    assert states(r)["e2"] == HOLE
    assert any(d.problem == "exclusion_unmatched" and "'e2'" in d.message for d in led.diagnostics)
    assert any(f.code == "hole" for f in r.findings), [f.code for f in r.findings]


def test_unmatched_last_response_is_refused(tmp_path: Path) -> None:
    rows = [ev("u1", "inv-1", "user", t(1), text("user", "x")), ev("a1", "inv-1", "coder", t(2), text("model", "y")), ev("r1", "inv-1", "coder", t(3), response("zz", "ls", {}))]
    led = load(tmp_path, rows)
    assert led.header["next_request_error"]
    assert any(d.problem == "request_refused" and d.severity == "error" for d in led.diagnostics)


# ---------------------------------------------------------------------------------------- bad rows, --at, read-only


def test_bad_rows_are_named_and_the_rest_loads(tmp_path: Path) -> None:
    rows = notes_example()
    rows[1]["actions"] = b"\x80\x04not json"
    rows[0]["content"] = "{not json"
    rows[2]["content"] = '{"role": "user", "parts": [{"text": 5}]}'
    led = load(tmp_path, rows)
    msgs = [d.message for d in led.diagnostics]
    assert any("row 2 (rowid 2, event 'e2'): actions is a pickle" in m for m in msgs), msgs
    assert any("row 1 (rowid 1, event 'e1'): content is not valid JSON" in m for m in msgs), msgs
    assert any("text" in m and "row 3" in m for m in msgs), msgs
    assert len(led.records) == 4


def test_upto_reads_the_first_events(tmp_path: Path) -> None:
    p = store(str(tmp_path / "s.db"), {"s1": notes_example()})
    led = adk_go.load(p, None, 3)
    assert [r.id for r in led.records] == ["e1", "e2", "e3"]
    assert request(analyze(led)) == [("user", "message", "e1"), ("assistant", "message", "e2"), ("tool", "message", "e3")]


def test_read_only(tmp_path: Path) -> None:
    p = store(str(tmp_path / "s.db"), {"s1": notes_example()})
    before = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    analyze(adk_go.load(p, None, None))
    assert hashlib.sha256(Path(p).read_bytes()).hexdigest() == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["s.db"]


def test_keys_lower_cased_keep_the_first_of_two_spellings() -> None:
    """`_lower` (Go's case-insensitive match, as read here): of two keys that differ only by case the
    first one's value is kept; a key that is not a string is skipped."""
    assert adk_go._lower({"Author": "a", "author": "b", "ID": "x"}) == {"author": "a", "id": "x"}
    assert adk_go._lower({1: "n", "Author": "a", "AUTHOR": "b"}) == {"author": "a"}
    assert adk_go._lower(["not", "an", "object"]) == {}


def test_a_compaction_time_nested_deep_is_quoted_not_recursed_into(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m tests.fuzz --seed 129`: an adk-go export whose compaction time is a value
    nested hundreds of levels deep (its endTimestamp): the diagnostic quoting it took its whole repr (RecursionError).
    It quotes it shortened, as every message quoting a file does."""
    from inspector.cli.main import main

    found = Path(__file__).parent / "fuzz" / "found" / "adk-go-compaction-time-nested-deep.json"
    assert main(["analyze", "--json", str(found)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert any("compaction endTimestamp [[[[...]]]] is not a time" in d["message"] for d in out["diagnostics"])
