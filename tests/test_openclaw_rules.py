"""OpenClaw's own reading of a damaged transcript (`inspector/formats/openclaw_model.py`), rule by
rule, on stores written from the types: the rows it stops on, the entries its schema sets aside,
where its tree hangs an entry, the messages it cannot convert. Each rule was found by resuming
damaged copies of a store it wrote with the real OpenClaw 2026.9.6
(`tests/peers/openclaw/type_probe.py`, held to inspector by tests/test_openclaw_line_rule.py); these
tests hold each without OpenClaw installed.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.formats import load
from tests.test_openclaw import _chat, _context_texts, _header, _msg, _store


def _report(tmp_path: Path, rows: list[dict[str, Any] | bytes], **kw: Any) -> Report:
    return analyze(load(str(_store(tmp_path / "a.sqlite", {"s1": rows}, **kw))))


def _codes(report: Report) -> set[str]:
    return {f.code for f in report.findings}


def _after(parent: str, text: str = "after", i: str = "c") -> dict[str, Any]:
    return _msg(i, parent, "assistant", [{"type": "text", "text": text}], stopReason="stop")


def test_a_row_json_parse_fails_on_stops_openclaw_when_it_rebuilds_its_index(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    rows = [*_chat("s1"), b'{"type":"message","id":"d","parentId":"s1a1"', _after("s1a1")]
    report = _report(tmp_path / "a", rows)
    assert "resume_refused" in _codes(report)
    refused = next(d for d in report.ledger.diagnostics if d.problem == "resume_refused")
    assert refused.line == 5 and "JSON.parse fails" in refused.message and "sends nothing" in refused.message
    # A row of JSON that is no entry object is no node: OpenClaw reads on (the entry after it, its
    # parent unknown, hangs under the leaf), and so do we.
    report = _report(tmp_path / "b", [*_chat("s1"), b"null", _after("nope")])
    assert "resume_refused" not in _codes(report) and _context_texts(report)[0] == "question 0 in s1"


def test_a_lone_surrogate_escape_is_read_as_json_parse_reads_it(tmp_path: Path) -> None:
    d = json.dumps(_msg("d", "s1a1", "user", "PROBE")).encode().replace(b"PROBE", b"PROBE \\ud800")
    report = _report(tmp_path, [*_chat("s1"), d, _after("d")])
    assert not [x for x in report.ledger.diagnostics if x.problem == "malformed_row"]
    assert _context_texts(report)[-2].startswith("PROBE")


def _zstd_bad(tmp_path: Path, parent: str, leaf_after: bool) -> Report:
    """A zstd row (seq 5) whose frame does not decode, its navigation_json naming its place."""
    rows = [*_chat("s1"), _msg("z", parent, "user", "zipped " * 300)]
    if leaf_after:
        rows.append(_after("z"))
    else:
        rows.append(_after("s1a1"))
    p = _store(tmp_path / "a.sqlite", {"s1": rows}, zstd=frozenset({("s1", 5)}))
    con = sqlite3.connect(p)
    blob = con.execute("SELECT event_zstd FROM transcript_events WHERE seq=5").fetchone()[0]
    nav = {"version": 1, "navigation": {"type": "message", "id": "z", "parentId": parent}}
    con.execute("UPDATE transcript_events SET event_zstd=?, navigation_json=? WHERE seq=5", (blob[:12] + b"\x00" * 20, json.dumps(nav)))
    con.commit()
    con.close()
    return analyze(load(str(p)))


def test_a_zstd_row_that_does_not_decode_stops_openclaw_only_on_the_path(tmp_path: Path) -> None:
    (tmp_path / "on").mkdir()
    (tmp_path / "off").mkdir()
    assert "resume_refused" in _codes(_zstd_bad(tmp_path / "on", "s1a1", leaf_after=True))
    off = _zstd_bad(tmp_path / "off", "s1a1", leaf_after=False)
    assert "resume_refused" not in _codes(off)
    assert _context_texts(off)[-1] == "after"


def test_an_entry_whose_parent_is_no_earlier_entry_hangs_under_the_leaf(tmp_path: Path) -> None:
    """transcript-tree-3xvvNd9-.mjs:138-139: pi would start a new root there and lose the history."""
    report = _report(tmp_path, [*_chat("s1"), _msg("d", "ffff", "user", "PROBE"), _after("d")])
    assert _context_texts(report) == ["question 0 in s1", "answer 0", "question 1 in s1", "answer 1", "PROBE", "after"]
    assert any(d.problem == "tree_normalized" for d in report.ledger.diagnostics)


def test_an_entry_without_a_parent_key_hangs_under_the_leaf_and_one_with_null_is_a_root(tmp_path: Path) -> None:
    d = _msg("d", None, "user", "PROBE")
    del d["parentId"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    report = _report(tmp_path / "a", [*_chat("s1"), d, _after("d")])
    assert _context_texts(report)[0] == "question 0 in s1" and _context_texts(report)[-2:] == ["PROBE", "after"]
    report = _report(tmp_path / "b", [*_chat("s1"), _msg("d", None, "user", "PROBE"), _after("d")])
    assert _context_texts(report) == ["PROBE", "after"]


def test_an_entry_of_no_type_of_its_own_does_not_carry_the_path(tmp_path: Path) -> None:
    """The entry after one of another type hangs under the leaf before it (:139), wherever that one
    hangs (here off the first question: its parent chain would lose the last turn)."""
    d = {**_msg("d", "s1u0", "user", "PROBE"), "type": "probe_entry"}
    report = _report(tmp_path, [*_chat("s1"), d, _after("d")])
    assert _context_texts(report) == ["question 0 in s1", "answer 0", "question 1 in s1", "answer 1", "after"]


def test_entries_its_schema_does_not_take_keep_their_place_and_are_never_sent(tmp_path: Path) -> None:
    """`indexedSessionEntrySchema` (transcript-payload-qsg5dB6v.mjs:15-125): pi would stop on a
    user content that is a number; OpenClaw sets the entry aside and sends the rest."""
    cases: list[dict[str, Any]] = [
        _msg("d", "s1a1", "user", 5),
        _msg("d", "s1a1", "user", [{"type": "text", "text": "PROBE"}, None]),
        _msg("d", "s1a1", "toolResult", [{"type": "text", "text": "PROBE"}], toolCallId="c", toolName="read"),  # no isError
        {**_msg("d", "s1a1", "user", "PROBE"), "timestamp": 5},
        _msg("d", "s1a1", "compactionSummary", "PROBE", summary="PROBE"),
    ]
    for k, d in enumerate(cases):
        (tmp_path / str(k)).mkdir()
        report = _report(tmp_path / str(k), [*_chat("s1"), d, _after("d")])
        assert _context_texts(report) == ["question 0 in s1", "answer 0", "question 1 in s1", "answer 1", "after"], k
        assert not {"request_fails", "resume_refused"} & _codes(report), k
        assert any(x.problem == "unrecognized_entry" for x in report.ledger.diagnostics), k


def test_a_compaction_its_schema_does_not_take_is_no_boundary(tmp_path: Path) -> None:
    c = {"type": "compaction", "id": "k", "parentId": "s1a1", "timestamp": "2026-09-10T08:00:05.000Z", "summary": "SUM", "firstKeptEntryId": "s1a1"}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    report = _report(tmp_path / "a", [*_chat("s1"), c, _after("k")])  # no tokensBefore
    assert not report.checkpoints and _context_texts(report)[0] == "question 0 in s1"
    report = _report(tmp_path / "b", [*_chat("s1"), {**c, "tokensBefore": 10}, _after("k")])
    assert report.checkpoints and _context_texts(report)[0] == "SUMMARY"


def test_messages_it_cannot_convert_stop_every_request(tmp_path: Path) -> None:
    """@openclaw/ai's conversion: a user text block's text cleaned with replaceAll, a block of no
    known kind in a user's content has its data trimmed, an answer's block that is neither text
    nor thinking has its id trimmed as a call's."""
    cases: list[tuple[str, dict[str, Any]]] = [
        ("replaceAll", _msg("d", "s1a1", "user", [{"type": "text", "text": None}])),
        ("trim", _msg("d", "s1a1", "user", [{"type": "text", "text": "PROBE"}, {"type": "probe_block"}])),
        ("trim", _msg("d", "s1a1", "assistant", [{"type": "text", "text": "PROBE"}, {"type": "probe_block"}], stopReason="stop")),
        ("trim", _msg("d", "s1a1", "assistant", [{"type": "text", "text": 5}], stopReason="stop")),
    ]
    for k, (error, d) in enumerate(cases):
        (tmp_path / str(k)).mkdir()
        report = _report(tmp_path / str(k), [*_chat("s1"), d, _msg("c", "d", "user", "after")])
        fails = [f for f in report.findings if f.code == "request_fails"]
        assert len(fails) == 1 and error in fails[0].message and "OpenClaw stops" in fails[0].message, k
    # The same beside the path is never converted.
    (tmp_path / "aside").mkdir()
    report = _report(tmp_path / "aside", [*_chat("s1"), cases[0][1], _after("s1a1")])
    assert "request_fails" not in _codes(report)


def test_a_user_message_of_blank_texts_is_left_out(tmp_path: Path) -> None:
    report = _report(tmp_path, [*_chat("s1"), _msg("d", "s1a1", "user", [{"type": "text", "text": " "}]), _after("d")])
    assert _context_texts(report) == ["question 0 in s1", "answer 0", "question 1 in s1", "answer 1", "after"]



def test_a_session_without_a_version_3_header_is_refused(tmp_path: Path) -> None:
    """`assertCurrentSessionTranscriptHeader` (transcript-payload-qsg5dB6v.mjs:146-148): pi would
    start a new session; OpenClaw stops."""
    for k, header in enumerate([None, {**_header("s1"), "version": 2}, {**_header("s1"), "id": 5}]):
        (tmp_path / str(k)).mkdir()
        rows: list[dict[str, Any] | bytes] = [b"null" if header is None else header, *_chat("s1")[1:]]
        report = _report(tmp_path / str(k), rows)
        assert "resume_refused" in _codes(report), k
        assert "legacy" in next(d.message for d in report.ledger.diagnostics if d.problem == "resume_refused"), k
    (tmp_path / "v3").mkdir()
    assert "resume_refused" not in _codes(_report(tmp_path / "v3", [{**_header("s1"), "version": 3}, *_chat("s1")[1:]]))


def test_an_orphan_tool_result_is_left_out(tmp_path: Path) -> None:
    """`classifyToolUseResultPairing` (tool-result-pairing-Bky0eubt.mjs:125-254) drops a result whose
    call is not in the request: no orphan sent, no orphan finding."""
    d = _msg("d", "s1a1", "toolResult", [{"type": "text", "text": "PROBE"}], toolCallId="nope", toolName="read", isError=False)
    report = _report(tmp_path, [*_chat("s1"), d, _after("d")])
    assert _context_texts(report) == ["question 0 in s1", "answer 0", "question 1 in s1", "answer 1", "after"]
    assert "orphan_tool_result" not in _codes(report)
    assert report.states[next(r.seq for r in report.ledger.records if r.id == "d")] == "excluded"


def test_a_call_without_arguments_or_name_is_dropped_before_it_is_paired(tmp_path: Path) -> None:
    """`repairToolCallInputs` (session-transcript-repair-rV_-0RVP.mjs:135-145): the call goes, and no
    synthetic result is made for it; an answer left with nothing is not sent."""
    call = {"type": "toolCall", "id": "k1", "name": "read", "arguments": {"path": "a"}}
    cases = [{**call, "arguments": None}, {k: v for k, v in call.items() if k != "name"}, {**call, "id": 5}]
    for k, c in enumerate(cases):
        (tmp_path / str(k)).mkdir()
        d = _msg("d", "s1a1", "assistant", [{"type": "text", "text": "PROBE"}, c], stopReason="toolUse")
        report = _report(tmp_path / str(k), [*_chat("s1"), d, _msg("c", "d", "user", "after")])
        assert not [it for it in report.context if it.synthetic], k
        assert not {"request_fails", "resume_refused"} & _codes(report), k
        assert "PROBE" in _context_texts(report), k
    (tmp_path / "alone").mkdir()
    d = _msg("d", "s1a1", "assistant", [{**call, "arguments": None}], stopReason="toolUse")
    report = _report(tmp_path / "alone", [*_chat("s1"), d, _msg("c", "d", "user", "after")])
    assert len(report.context) == 5 and _context_texts(report)[-1] == "after"


def test_a_row_it_cannot_parse_behind_a_current_index_is_read_past_and_kept_from_a_write(tmp_path: Path) -> None:
    """With its transcript index current OpenClaw rebuilds nothing and reads past the row; a row we
    write leaves the index behind, and OpenClaw would then stop on it: the writer refuses."""
    from inspector.formats import openclaw_writer

    rows = [*_chat("s1"), b'{"type":"message","id":"d","parentId":"s1a1"', _after("s1a1")]
    led = load(str(_store(tmp_path / "a.sqlite", {"s1": rows}, leaf={"s1": "c"})))
    report = analyze(led)
    assert "resume_refused" not in _codes(report)
    assert any(d.problem == "unparsed_row" for d in led.diagnostics)
    why = openclaw_writer.refusal(led)
    assert why is not None and "row 5" in why


def test_an_entry_whose_type_is_a_list_or_an_object_is_set_aside_not_a_crash(tmp_path: Path) -> None:
    """A type of another JSON kind is no key of the set of OpenClaw's entry types: hashing it for the
    membership test crashed the load (TypeError: unhashable type; fuzz_live seed 78, 4 cases)."""
    for i, t in enumerate(([], {"a": 1}, ["message"])):
        (tmp_path / str(i)).mkdir()
        d = {**_msg("d", "s1a1", "user", "PROBE"), "type": t}
        report = _report(tmp_path / str(i), [*_chat("s1"), d, _after("d")])
        opaque = [x for x in report.ledger.diagnostics if x.problem == "unrecognized_entry"]
        assert opaque and opaque[0].line == 5 and "its type is" in opaque[0].message, report.ledger.diagnostics
        assert not any("PROBE" in t for t in _context_texts(report))


# ---------------------------------------------------------------------------------------- leaf rows
# OpenClaw's navigation controls (`createLeafControl`, session-manager-DjC09C_X.mjs:612-622), read
# by its tree scan (transcript-tree-3xvvNd9-.mjs:100-174); held to the real OpenClaw by
# tests/peers/openclaw/leaf_probe.py (tests/test_openclaw_leaf_rule.py).


def _leaf(i: str, parent: str | None, target: str | None, **extra: Any) -> dict[str, Any]:
    return {"type": "leaf", "id": i, "parentId": parent, "timestamp": "2026-09-10T08:00:02.000Z", "targetId": target, **extra}


def _problems(report: Report) -> list[str]:
    return [d.problem for d in report.ledger.diagnostics]


def test_a_leaf_row_makes_its_target_the_leaf_and_the_next_turn_hangs_there(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    report = _report(tmp_path / "a", [*_chat("s1"), _leaf("f1", "s1a1", "s1a0")])
    assert _context_texts(report) == ["question 0 in s1", "answer 0"]
    assert "leaf_moved" in _problems(report) and "unrecognized_entry" not in _problems(report)
    # The next turn, written under the target or under the leaf row itself, hangs under the target.
    rows = [*_chat("s1"), _leaf("f1", "s1a1", "s1a0"), _msg("d", "f1", "user", "PROBE"), _after("d")]
    report = _report(tmp_path / "b", rows)
    assert _context_texts(report) == ["question 0 in s1", "answer 0", "PROBE", "after"]
    assert "leaf_moved" not in _problems(report)


def test_leaf_rows_are_reported_as_how_the_session_is_put_together_not_as_bad_lines(tmp_path: Path) -> None:
    """A branch switch is no damage: its notes are `file_structure` findings (as ADK's rewinds), not
    `malformed_line` ones."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for sub, rows, problem, severity in (
        ("a", [_leaf("f1", "s1a1", "s1a0")], "leaf_moved", "info"),
        ("b", [_leaf("f1", "s1a1", "nope")], "leaf_ignored", "warning"),
    ):
        report = _report(tmp_path / sub, [*_chat("s1"), *rows])
        leaf = [f for f in report.findings if (f.data or {}).get("problem") == problem]
        assert [(f.code, f.severity) for f in leaf] == [("file_structure", severity)], report.findings
        assert "malformed_line" not in _codes(report)


def test_leaf_rows_naming_no_earlier_entry_are_ignored(tmp_path: Path) -> None:
    """isKnownLeafReference (transcript-tree-3xvvNd9-.mjs:119-134): an unknown target, an unknown
    appendParentId, or an ignored leaf row."""
    for k, rows in enumerate(
        (
            [_leaf("f1", "s1a1", "nope")],
            [_leaf("f1", "s1a1", "s1a0", appendParentId="nope")],
            [_leaf("f1", "s1a1", "nope"), _leaf("f2", "f1", "f1")],
        )
    ):
        (tmp_path / str(k)).mkdir()
        report = _report(tmp_path / str(k), [*_chat("s1"), *rows])
        assert _context_texts(report) == ["question 0 in s1", "answer 0", "question 1 in s1", "answer 1"], k
        assert _problems(report).count("leaf_ignored") == len(rows)


def test_a_leaf_row_naming_a_leaf_row_leads_on_to_its_target(tmp_path: Path) -> None:
    report = _report(tmp_path, [*_chat("s1"), _leaf("f1", "s1a1", "s1a0"), _leaf("f2", "f1", "f1")])
    assert _context_texts(report) == ["question 0 in s1", "answer 0"]


def test_a_leaf_row_to_null_sends_no_history(tmp_path: Path) -> None:
    report = _report(tmp_path, [*_chat("s1"), _leaf("f1", "s1a1", None)])
    assert report.ledger.leaf_seq is None and _context_texts(report) == []


def test_after_a_leaf_row_an_entry_under_its_append_parent_hangs_under_its_target(tmp_path: Path) -> None:
    """transcript-tree-3xvvNd9-.mjs:139: `parentId === appendParentId && leafId !== appendParentId`."""
    for side in (False, True):
        d = tmp_path / str(side)
        d.mkdir()
        extra = {"appendParentId": "s1a1", **({"appendMode": "side"} if side else {})}
        report = _report(d, [*_chat("s1"), _leaf("f1", "s1a1", "s1a0", **extra), _msg("d", "s1a1", "user", "PROBE")])
        assert _context_texts(report) == ["question 0 in s1", "answer 0", "PROBE"]


def test_after_a_switch_an_entry_under_the_old_tip_stays_there(tmp_path: Path) -> None:
    report = _report(tmp_path, [*_chat("s1"), _leaf("f1", "s1a1", "s1a0"), _msg("d", "s1a1", "user", "PROBE")])
    assert _context_texts(report) == ["question 0 in s1", "answer 0", "question 1 in s1", "answer 1", "PROBE"]


def test_a_leaf_row_after_a_reset_may_not_lead_back_past_it(tmp_path: Path) -> None:
    """transcript-tree-3xvvNd9-.mjs:115-118: the leaf stays where it is; one naming a descendant
    of the reset moves it."""
    reset = {"type": "reset", "id": "r", "parentId": "s1a1", "timestamp": "2026-09-10T08:00:02.000Z", "reason": "reset"}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    report = _report(tmp_path / "a", [*_chat("s1"), reset, _leaf("f1", "r", "s1a0")])
    assert _context_texts(report) == [] and "leaf_ignored" in _problems(report)
    rows = [*_chat("s1"), reset, _msg("d", "r", "user", "PROBE"), _after("d"), _leaf("f1", "c", "d")]
    report = _report(tmp_path / "b", rows)
    assert _context_texts(report) == ["PROBE"] and "leaf_ignored" not in _problems(report)


def test_a_leaf_row_without_a_target_or_a_parent_key_is_no_control(tmp_path: Path) -> None:
    for k, row in enumerate(({"type": "leaf", "id": "f1", "parentId": "s1a1"}, {"type": "leaf", "id": "f1", "targetId": "s1a0"})):
        (tmp_path / str(k)).mkdir()
        report = _report(tmp_path / str(k), [*_chat("s1"), row])
        assert _context_texts(report) == ["question 0 in s1", "answer 0", "question 1 in s1", "answer 1"], k


def test_with_leaf_rows_a_current_index_naming_the_append_parent_keeps_the_trees_leaf(tmp_path: Path) -> None:
    """The index's leaf_event_id is the tree's append parent (session-transcript-index-UaRlRUAw.mjs:
    168); its active rows are the path to the leaf (:143-149)."""
    rows = [*_chat("s1"), _leaf("f1", "s1a1", "s1a0", appendParentId="s1a1")]
    report = _report(tmp_path, rows, leaf={"s1": "s1a1"})
    assert _context_texts(report) == ["question 0 in s1", "answer 0"]
