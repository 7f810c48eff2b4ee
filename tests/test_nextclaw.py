"""NextClaw's NCP journal adapter (inspector/formats/nextclaw.py), on journals built from NextClaw's
types (tests/nextclaw_store.py). The adapter is not registered yet: it is loaded through its own
`load` and its rules are put into the runtime table for the test's duration."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.formats import adk, nextclaw, openclaw_sqlite
from inspector.formats.jsonl import LoadError, parse_bytes
from tests.nextclaw_store import Journal, checkpoint, message, timeline, tool_part, ts

ROOT = Path(__file__).resolve().parent.parent
ADK_CORPUS = ROOT.parent / "shared" / "peers" / "adk" / "corpus"

SEED_004 = {
    "attemptCount": 3,
    "degraded": True,
    "finishReason": "length",
    "installedSummaryTokens": 180,
    "providerInputTokens": 7600,
    "providerMaxOutputTokens": 600,
    "providerUsage": {"inputTokens": 22000, "outputTokens": 1800},
    "rawSummaryTokens": 600,
    "recovery": "deterministic-recent-context",
    "targetSummaryTokens": 550,
}


def _analyze(path: Path, upto: int | None = None) -> Report:
    return analyze(nextclaw.load(str(path), None, upto))


def _request(rep: Report) -> list[tuple[str, str, str | None]]:
    """(role, kind, record id) of every item of the predicted next request."""
    return [(it.role, it.kind, it.record_id) for it in rep.context]


def _state(rep: Report, rid: str) -> str | None:
    seq = rep.ledger.by_id()[rid]
    return rep.states[seq]


def _streamed_turn(j: Journal) -> Journal:
    """A user turn and an assistant reply streamed as deltas and tool-call events (NCP events)."""
    j.sent(message("u1", "user", "Summarise the report", ts(0, 1)))
    j.event("run.started", ts(0, 2), runId="r1", messageId="a1")
    j.event("message.text-start", ts(0, 3), messageId="a1")
    j.event("message.text-delta", ts(0, 3), messageId="a1", delta="Reading it. ")
    j.event("message.tool-call-start", ts(0, 4), messageId="a1", toolCallId="c1", toolName="read_file")
    j.event("message.tool-call-args", ts(0, 4), toolCallId="c1", args='{"path": "report.txt"}')
    j.event("message.tool-call-end", ts(0, 4), toolCallId="c1")
    j.event("message.tool-call-result", ts(0, 5), toolCallId="c1", content="The report says X.")
    j.event("message.tool-call-start", ts(0, 6), messageId="a1", toolCallId="c2", toolName="grep")
    j.event("message.tool-call-start", ts(0, 6), messageId="a1", toolCallId="c3", toolName="ls")
    j.event("message.tool-call-result", ts(0, 6), toolCallId="c3", content="partial", final=False)
    j.event("message.text-delta", ts(0, 7), messageId="a1", delta="It says X.")
    j.event("run.finished", ts(0, 8), runId="r1", messageId="a1", endedAt=ts(0, 8))
    return j


# ---------------------------------------------------------------------------------------- detection


def test_detects_journals_and_nothing_else(tmp_path: Path) -> None:
    p = _streamed_turn(Journal()).write(tmp_path)
    assert nextclaw.looks_like_file(str(p))
    side = tmp_path / "agent_main_s1.metadata.json"
    side.write_text(Journal().lines[0] + "\n")
    assert not nextclaw.looks_like_file(str(side))  # the metadata sidecar is no session
    legacy = tmp_path / "legacy.jsonl"  # core's SessionStore lines (session.store.ts:372-389)
    legacy.write_text(
        '{"_type":"metadata","created_at":"x","metadata":{}}\n{"_type":"event","seq":1,"type":"message.user","timestamp":"x","data":{}}\n'
    )
    assert not nextclaw.looks_like_file(str(legacy))
    # Nobody else claims a journal.
    assert not adk.looks_like_file(str(p)) and not openclaw_sqlite.looks_like_file(str(p))
    from inspector.formats import detect

    assert detect(parse_bytes(p.read_bytes(), str(p), None)[0]) is None
    # And a journal adapter claims no sample, ADK corpus file or OpenClaw store.
    others = [*sorted((ROOT / "sample_sessions").rglob("*.*")), *sorted(ADK_CORPUS.glob("*"))]
    others += sorted((ROOT / "tests" / "peers").rglob("*.sqlite"))
    assert others
    claimed = [str(o) for o in others if o.is_file() and nextclaw.looks_like_file(str(o))]
    assert claimed == []


# ---------------------------------------------------------------------------------------- replay + request


def test_replay_builds_messages_from_deltas_and_tool_events(tmp_path: Path) -> None:
    j = _streamed_turn(Journal())
    j.sent(message("u2", "user", "Thanks", ts(1)))
    rep = _analyze(j.write(tmp_path))
    # One assistant message with its result, its result as a tool message; the call that never got
    # a result (c2, cancelled at run.finished) is not sent (message-converter.utils.ts:84-92).
    assert _request(rep) == [
        ("user", "message", "u1"),
        ("assistant", "message", "a1"),
        ("tool", "message", "a1#c1"),
        ("user", "message", "u2"),
    ]
    a1 = rep.ledger.records[rep.ledger.by_id()["a1"]]
    assert a1.call_ids == ("c1",)
    assert a1.message is not None and a1.message.text("") == "Reading it. It says X."
    other = [b for b in a1.message.blocks if b.type == "other"]
    assert [b.raw["state"] for b in other] == ["cancelled", "cancelled"]  # c3 had only a non-final result
    tool = rep.ledger.records[rep.ledger.by_id()["a1#c1"]]
    assert tool.message is not None and tool.message.text() == "The report says X."
    assert a1.line == 14  # the run.finished line settled it
    assert all(s == "live" for s in rep.states if s is not None)


def test_completed_message_replaces_streamed_one_in_place(tmp_path: Path) -> None:
    j = _streamed_turn(Journal())
    j.completed(message("a1", "assistant", None, ts(0, 3), parts=[{"type": "text", "text": "Final words."}]))
    led = nextclaw.load(str(j.write(tmp_path)), None, None)
    assert [r.id for r in led.records] == ["u1", "a1"]
    assert led.records[1].message is not None and led.records[1].message.text() == "Final words."


def _compacted(j: Journal, **cp_fields: Any) -> dict[str, Any]:
    j.sent(message("u2", "user", "And the appendix?", ts(1)))
    j.completed(message("a2", "assistant", "The appendix says Y.", ts(1, 5)))
    j.sent(message("u3", "user", "Now the conclusion", ts(29)))
    fields: dict[str, Any] = {"retainedMessageIds": ["u3"], "preservedUserMessageIds": ["u1"]}
    fields.update(cp_fields)
    summary = fields.pop("summary", "## Active Request\nReport summary.\n")
    cp = checkpoint("ctx-20260820093000-4", summary, ts(1, 5), ts(30), **fields)
    j.sent(timeline(cp))
    j.completed(message("a3", "assistant", "The conclusion is Z.", ts(31)))
    return cp


def test_checkpoint_projection_order_and_coverage(tmp_path: Path) -> None:
    j = _streamed_turn(Journal())
    cp = _compacted(j)
    rep = _analyze(j.write(tmp_path))
    assert _request(rep) == [
        ("system", "summary", "ctx-20260820093000-4"),
        ("user", "message", "u1"),  # preserved
        ("user", "message", "u3"),  # retained
        ("assistant", "message", "a3"),  # after coveredUntil
    ]
    # (its trailing newline trimmed, as the real NextClaw sent it: tests/test_nextclaw_probed.py)
    assert rep.context[0].text == nextclaw.PREAMBLE + "\n\n" + cp["summary"].rstrip()
    assert [_state(rep, i) for i in ("u1", "a1", "a1#c1", "u2", "a2", "u3", "a3")] == [
        "retained",
        "summarized",
        "summarized",
        "summarized",
        "summarized",
        "retained",
        "live",
    ]
    assert not [f for f in rep.findings if f.code == "hole"]


def test_messages_after_covered_until_before_the_marker_stay_by_timestamp(tmp_path: Path) -> None:
    j = _streamed_turn(Journal())
    _compacted(j, coveredUntil=ts(0, 1), preservedUserMessageIds=[], retainedMessageIds=[])
    rep = _analyze(j.write(tmp_path))
    assert [i for _, _, i in _request(rep)] == ["ctx-20260820093000-4", "a1", "a1#c1", "u2", "a2", "u3", "a3"]
    assert _state(rep, "u1") == "summarized"


def test_mid_run_continuation_and_truncated_preserved_user(tmp_path: Path) -> None:
    j = _streamed_turn(Journal())
    _compacted(
        j,
        phase="mid-run",
        retainedMessageIds=[],
        preservedUserMessageIds=["u1", "u3"],
        truncatedPreservedUserMessage={"messageId": "u1", "text": "Summ…3 tokens truncated…port"},
    )
    rep = _analyze(j.write(tmp_path))
    assert [(it.role, it.record_id, it.seq is None) for it in rep.context] == [
        ("system", "ctx-20260820093000-4", False),
        ("user", "u1", True),  # its truncated text, not the record
        ("user", "u3", False),
        ("user", "context-compaction-message-ctx-20260820093000-4:continuation", True),
        ("assistant", "a3", False),
    ]
    assert rep.context[1].text == "Summ…3 tokens truncated…port"
    assert rep.context[3].text == nextclaw.CONTINUATION_TEXT


def test_continuation_message_keeps_its_uncovered_parts(tmp_path: Path) -> None:
    j = _streamed_turn(Journal())
    _compacted(j, phase="mid-run", continuationMessageId="a2", continuationMessageCoveredPartCount=0)
    rep = _analyze(j.write(tmp_path))
    ids = [it.record_id for it in rep.context]
    assert ids.index("a2") > ids.index("u3") and _state(rep, "a2") == "retained"
    assert next(it.text for it in rep.context if it.record_id == "a2") == "The appendix says Y."


def test_latest_checkpoint_by_updated_at_is_the_one_applied(tmp_path: Path) -> None:
    j = _streamed_turn(Journal())
    _compacted(j)
    older = checkpoint("ctx-old", "old summary", ts(0, 1), ts(20))
    j.sent(timeline(older) | {"timestamp": ts(32)})  # written later, updatedAt earlier
    rep = _analyze(j.write(tmp_path))
    assert rep.context[0].record_id == "ctx-20260820093000-4"
    assert len(rep.checkpoints) == 1
    newer = checkpoint("ctx-new", "newer summary", ts(31), ts(40))
    j.sent(timeline(newer))  # the usual case: written later, updatedAt later
    rep2 = _analyze(j.write(tmp_path))
    assert rep2.context[0].record_id == "ctx-new" and rep2.context[0].text.endswith("newer summary")
    assert any(
        f.code == "compaction_report" and "'ctx-old' is not applied" in f.message for f in rep.findings
    )


def test_failed_compaction_is_sent_as_system_text(tmp_path: Path) -> None:
    j = _streamed_turn(Journal())
    failed = checkpoint("ctx-f", "", ts(0, 1), ts(5)) | {"status": "failed"}
    j.sent(timeline(failed))
    rep = _analyze(j.write(tmp_path))
    assert rep.checkpoints == []
    items = [it for it in rep.context if it.record_id == "context-compaction-message-ctx-f"]
    assert [it.role for it in items] == ["system"]
    assert any(f.code == "compaction_report" and "ended 'failed'" in f.message for f in rep.findings)


# ---------------------------------------------------------------------------------------- seed 004


def test_seed_004_deterministic_recovery_drops_history(tmp_path: Path) -> None:
    j = _streamed_turn(Journal())
    emergency = (
        "## Current Work State\n\nModel-based compaction did not produce a safe summary. Exact retained recent source:\n\n"
        "> The appendix says Y.\n"
    )
    _compacted(j, summary=emergency, summaryDiagnostics=SEED_004, preservedUserMessageIds=[])
    rep = _analyze(j.write(tmp_path))
    # Quoted in the emergency checkpoint: represented; the older history is a hole.
    assert _state(rep, "a2") == "summarized"
    assert [_state(rep, i) for i in ("u1", "a1", "a1#c1", "u2")] == ["hole"] * 4
    codes = {f.code for f in rep.findings}
    assert {"hole", "truncated_summary", "compaction_report"} <= codes
    report = next(f for f in rep.findings if f.code == "compaction_report")
    assert report.severity == "warning"
    for words in (
        "finishReason 'length'",
        "3 summary calls spent",
        "deterministic-recent-context",
        "older history was dropped",
    ):
        assert words in report.message
    assert rep.checkpoints[0].checkpoint.failure_reason == "summary_provider"
    assert (
        rep.checkpoints[0].checkpoint.usage is not None and rep.checkpoints[0].checkpoint.usage.input == 22000
    )


def test_provider_summary_is_reported_calm(tmp_path: Path) -> None:
    j = _streamed_turn(Journal())
    diag = SEED_004 | {
        "recovery": "provider-summary",
        "attemptCount": 1,
        "degraded": False,
        "finishReason": "stop",
        "rawSummaryTokens": 180,
    }
    _compacted(j, summaryDiagnostics=diag)
    rep = _analyze(j.write(tmp_path))
    report = next(f for f in rep.findings if f.code == "compaction_report")
    assert report.severity == "info"
    assert not {"hole", "truncated_summary"} & {f.code for f in rep.findings}


def test_metadata_last_compaction_disagreeing_is_reported(tmp_path: Path) -> None:
    j = Journal(metadata={"last_context_compaction": {"id": "ctx-other", "status": "compressed"}})
    _streamed_turn(j)
    _compacted(j)
    rep = _analyze(j.write(tmp_path))
    assert any(f.code == "compaction_report" and "'ctx-other'" in f.message for f in rep.findings)


# ---------------------------------------------------------------------------------------- store, bad rows


def test_folder_selection(tmp_path: Path) -> None:
    _streamed_turn(Journal()).write(tmp_path, "agent_main_s1")
    other = Journal()
    other.sent(message("x1", "user", "other session", ts(0, 1)))
    p2 = other.write(tmp_path, "agent_main_s2")
    os.utime(p2, (1, 1))  # the older one
    led = nextclaw.load(str(tmp_path), None, None)
    assert [r.id for r in led.records][:1] == ["u1"]
    choice = next(d for d in led.diagnostics if d.problem == "session_choice")
    assert "agent_main_s2" in choice.message and "DIR#SESSION" in choice.message
    led2 = nextclaw.load(str(tmp_path), "agent:main:s2", None)
    assert [r.id for r in led2.records] == ["x1"]
    with pytest.raises(LoadError, match="no session 'nope'"):
        nextclaw.load(str(tmp_path), "nope", None)


def test_bad_rows_are_named_and_the_rest_loads(tmp_path: Path) -> None:
    j = Journal()
    j.sent(message("u1", "user", "hello", ts(0, 1)))
    j.raw('{"_type":"event","seq":2,"timestamp"')  # line 3: cut
    j.raw("[1, 2]")  # line 4
    j.raw(
        '{"_type":"event","version":1,"seq":3,"timestamp":"2026-08-20T09:00:05.000Z","event":{"type":"message.sent","payload":{"sessionId":"s","message":{"id":7,"role":"user","parts":[]}}}}'
    )
    j.completed(message("a1", "assistant", "hi", ts(0, 6)))
    led = nextclaw.load(str(j.write(tmp_path)), None, None)
    by_line = {d.line: d for d in led.diagnostics}
    assert "line 3: not valid JSON" in by_line[3].message
    assert "line 4: a JSON list" in by_line[4].message
    assert by_line[5].problem == "wrong_type" and "'event.payload.message.id'" in by_line[5].message
    assert next(r.id for r in led.records if r.kind == "message") == "u1" and led.records[-1].id == "a1"
    empty = tmp_path / "empty.jsonl"
    empty.write_text(Journal().text())
    led = nextclaw.load(str(empty), None, None)  # NextClaw starts it empty (test_nextclaw_probed)
    assert led.records == [] and [d.problem for d in led.diagnostics] == ["empty_session"]


def test_upto_replays_the_first_lines(tmp_path: Path) -> None:
    j = _streamed_turn(Journal())
    _compacted(j)
    p = j.write(tmp_path)
    led = nextclaw.load(str(p), None, 6)
    assert [r.id for r in led.records] == ["u1", "a1"]  # a1 still streaming, its call not yet answered
    assert led.records[1].call_ids == ()


def test_read_only(tmp_path: Path) -> None:
    j = _streamed_turn(Journal())
    _compacted(j)
    p = j.write(tmp_path)
    side = tmp_path / "agent_main_s1.metadata.json"
    side.write_text(Journal().lines[0] + "\n")
    before = {q: hashlib.sha256(q.read_bytes()).hexdigest() for q in tmp_path.iterdir()}
    _analyze(p)
    nextclaw.load(str(tmp_path), None, None)
    assert {q: hashlib.sha256(q.read_bytes()).hexdigest() for q in tmp_path.iterdir()} == before


def test_replay_places_messages_by_time_without_rescanning_the_timeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The state manager puts a new message after every one later than it (by Date.parse) and replaces
    one it holds in place; a journal in time order needs no scan of what it already holds (issue 15:
    the scans made a 20 MB journal take 34 s), and a message that arrives late still goes to its time."""
    j = Journal()
    n = 300
    for k in range(n):
        at = ts(1 + k // 30, k % 30 * 2)
        j.sent(message(f"u{k}", "user", f"question {k}", at))
        j.event("message.text-start", at, messageId=f"a{k}")  # a streamed reply: bootstrapped, then completed
        j.event("message.text-delta", at, messageId=f"a{k}", delta="answer")
        j.completed(message(f"a{k}", "assistant", f"answer {k}", ts(1 + k // 30, k % 30 * 2 + 1)))
    j.sent(message("late", "user", "sent late, stamped early", ts(0, 30)))
    j.sent(message("u7", "user", "question 7, edited", ts(1, 14)))  # the same id: replaced where it is
    parsed, compared = [], []
    real_ms, real_id = nextclaw._ms, nextclaw._Msg.id
    monkeypatch.setattr(nextclaw, "_ms", lambda v: parsed.append(v) or real_ms(v))
    # (`_Msg.id` is a slot: its descriptor wrapped, each read counted)
    monkeypatch.setattr(
        nextclaw._Msg, "id", property(lambda m: compared.append(1) or real_id.__get__(m), real_id.__set__)
    )
    led = nextclaw.load(str(j.write(tmp_path)), None, None)
    ids = [r.id for r in led.records if r.role in ("user", "assistant")]
    assert ids == ["late"] + [x for k in range(n) for x in (f"u{k}", f"a{k}")]
    assert led.records[led.by_id()["u7"]].message.blocks[0].text == "question 7, edited"
    # linear: the old scans read every held message's time per insert, and its id per lookup
    assert len(parsed) < 20 * n and len(compared) < 50 * n


def test_times_read_by_hand_equal_datetimes_reading() -> None:
    """`_parsed_ms` reads NextClaw's ISO form by hand from a cached epoch day; every string, of that
    form or near it, reads as datetime.fromisoformat reads it (`_iso_ms`), NaN where that refuses."""
    import itertools

    dates = ["1969-12-31", "1970-01-01", "2026-02-29", "2024-02-29", "0001-01-01", "9999-12-31", "2026-13-01", "0000-01-01"]
    times = ["00:00:00", "23:59:59", "24:00:00", "12:60:00", "12:00:60"]
    fracs = ["", ".5", ".12", ".123", ".1234", ".123456", ".1234567", ".999"]
    zones = ["Z", "+00:00", "-00:00", "+05:30", "-12:45", "+24:00", "-01:60", "", "z", "+0530", "+05:30:15"]
    n = 0
    for d, sep, t, fr, z in itertools.product(dates, ["T", " "], times, fracs, zones):
        ts = f"{d}{sep}{t}{fr}{z}"
        fast, slow = nextclaw._parsed_ms(ts), nextclaw._iso_ms(ts)
        assert fast == slow or (fast != fast and slow != slow), ts
        n += fast == fast
    assert n > 500
    # An offset past year 1 is a time (JS's Date.parse has one), not an OverflowError.
    assert nextclaw._iso_ms("0001-01-01 00:00:00+05:30") == nextclaw._parsed_ms("0001-01-01T00:00:00+05:30") == -62135616600000.0


# One value of every JSON type, and the edges the index must judge as the message does.
VALUES: list[Any] = [None, True, False, 0, 7, 1.5, 2**70, "", "x", "c1", "user", "assistant", "tool", "service", "error", "result", "tool-invocation", "text", "reasoning", [], [1], {}, {"a": 1}]


def test_each_record_holds_what_its_lazily_built_message_gives(tmp_path: Path) -> None:
    """A replayed message's records carry role, stop reason, tool-call ids and answered call without
    their Message, which is built on demand (`_Source`). For every field of a sent message of every
    role, and of each of its parts, set to every JSON type, removed, or beside an unknown key, each
    record holds what `Record._take` takes from the Message built for it."""
    import random

    from inspector.ledger.model import Record
    from tests.field_mutations import mutated

    parts = [
        {"type": "text", "text": "t"},
        {"type": "reasoning", "text": "r"},
        {"type": "tool-invocation", "toolCallId": "c1", "toolName": "ls", "state": "result", "args": "{}", "result": "ok"},
        {"type": "tool-invocation", "toolCallId": "c2", "toolName": "ls", "state": "call", "args": {}},
        {"type": "file", "url": "u"},
    ]
    base = [message("m", role, None, ts(0, 1), parts=[dict(p) for p in parts]) for role in ("user", "assistant", "tool", "system", "service", "x")]
    variants: list[dict[str, Any]] = []
    for m in base:
        places = [((), k) for k in [*m, "unknown"]] + [(("parts", i), k) for i in range(len(parts)) for k in [*parts[i], "unknown"]]
        variants += mutated(m, places, VALUES)
    random.Random(15).shuffle(variants)
    checked = 0
    for start in range(0, len(variants), 50):
        j = Journal()
        for i, m in enumerate(variants[start : start + 50]):
            j.sent(m | {"id": f"m{i}", "timestamp": ts(1, i % 60)})
        led = nextclaw.load(str(j.write(tmp_path, f"s{start}")), None, None)
        for r in led.records:
            if r.kind != "message":
                continue
            ref = Record(r.seq, r.line, r.kind, r.type, r.id, None, r.timestamp, message=r.message)
            assert (r.role, r.stop_reason, r.never_sent, r.source_role, r.call_ids, r.result_id) == (
                ref.role, ref.stop_reason, ref.never_sent, ref.source_role, ref.call_ids, ref.result_id,
            ), j.lines[r.line - 1]  # fmt: skip
            checked += 1
    assert checked > 3000


def test_an_interrupted_run_error_is_skipped_when_its_message_goes_on(tmp_path: Path) -> None:
    """replay-event :25-60: an interrupted `run.error` whose message (or run) has a later event is
    skipped; the events after it wait until the end of the journal, where that is known. Without a
    later event it settles the message as an error."""

    def journal(resumed: bool) -> Path:
        j = Journal()
        j.sent(message("u1", "user", "go", ts(0, 1)))
        j.event("run.started", ts(0, 2), runId="r1", messageId="a1")
        j.event("message.text-delta", ts(0, 3), messageId="a1", delta="Part one. ")
        j.event("run.error", ts(0, 4), runId="r1", messageId="a1", interrupted=True)
        if resumed:
            j.event("message.text-delta", ts(0, 5), messageId="a1", delta="Part two.")
            j.event("run.finished", ts(0, 6), runId="r1", messageId="a1")
        return j.write(tmp_path, f"resumed-{resumed}")

    resumed = nextclaw.load(str(journal(True)), None, None)
    a1 = resumed.records[resumed.by_id()["a1"]]
    assert a1.stop_reason is None and a1.message is not None and a1.message.text("") == "Part one. Part two."
    assert a1.line == 7  # the run.finished line settled it
    cut = nextclaw.load(str(journal(False)), None, None)
    a1 = cut.records[cut.by_id()["a1"]]
    assert a1.stop_reason == "error" and a1.message is not None and a1.message.text("") == "Part one. "


def _random_journal(rng: Any) -> str:
    """A journal of random NCP events over a few message, call and run ids (some ids padded, some
    missing, some messages sent back under a streamed id, times out of order): the states the
    replay's shortcuts must not tell apart from its plain rules."""
    mids = ["a1", "a2", " a1 ", "tool-c1", "u1", ""]
    calls = ["c1", "c2", "c3"]
    runs = ["r1", "r2"]
    j = Journal()
    for _ in range(rng.randrange(1, 40)):
        at = ts(rng.randrange(0, 4), rng.randrange(0, 3))
        k = rng.randrange(17)
        mid = rng.choice(mids)
        call = rng.choice(calls)
        maybe_mid = {"messageId": mid} if rng.random() < 0.8 else {}
        if k == 0:
            j.sent(message(mid.strip() or "u1", rng.choice(["user", "assistant"]), "hi", at, status=rng.choice(["final", "streaming"])))
        elif k == 1:
            parts = [{"type": "text", "text": "done"}] + [
                {"type": "tool-invocation", "toolCallId": c, "toolName": "t", "state": "call", "args": "{}"} for c in calls if rng.random() < 0.4
            ]  # fmt: skip
            j.completed(message(mid.strip() or "a1", "assistant", None, at, parts=parts, status=rng.choice(["final", "pending", "error"])))
        elif k in (2, 3, 4, 5):
            kind = rng.choice(["text-start", "text-delta", "reasoning-start", "reasoning-delta", "text-end"])
            j.event(f"message.{kind}", at, **maybe_mid, **({"delta": rng.choice(["x", "", "yz"])} if "delta" in kind else {}))
        elif k in (6, 7):
            j.event("message.tool-call-start", at, **maybe_mid, toolCallId=call, toolName=rng.choice(["bash", "read"]))
        elif k == 8:
            j.event("message.tool-call-args-delta", at, **maybe_mid, toolCallId=call, delta='{"a"')
        elif k == 9:
            j.event("message.tool-call-args", at, toolCallId=call, args="{}")
        elif k == 10:
            j.event("message.tool-call-end", at, toolCallId=call)
        elif k == 11:
            j.event("message.tool-call-result", at, toolCallId=call, content="out", **({"final": False} if rng.random() < 0.2 else {}))
        elif k == 12:
            j.event("message.tool-execution-started", at, **maybe_mid, toolCallId=call)
        elif k == 13:
            j.event("message.abort", at, **maybe_mid)
        elif k == 14:
            j.event("message.failed", at, **maybe_mid)
        elif k == 15:
            j.event("run.started", at, runId=rng.choice(runs), **maybe_mid)
        else:
            end = rng.choice(["run.finished", "run.error"])
            j.event(end, at, runId=rng.choice(runs), **maybe_mid, **({"interrupted": True} if rng.random() < 0.3 else {}))
    return j.text()


def _replayed(text: str) -> list[tuple[str, int, bytes]]:
    import orjson

    led = nextclaw.build(text.encode(), "x.jsonl", None)
    out = [(r.id or "", r.line, orjson.dumps(r.message, default=repr) if r.message is not None else b"") for r in led.records]
    return out + [(d.problem, d.line, d.message.encode()) for d in led.diagnostics]


def test_the_streaming_bootstrap_shortcut_replays_as_the_plain_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """A streamed message's bootstrap becomes the streaming message at once when its event's handler
    would begin by taking it out of the timeline again (`_Replay._streams_next`). On 3,000 random
    journals the records, messages and diagnostics equal those of the plain rules (bootstrap
    inserted into the timeline, then ensure_streaming)."""
    import random

    rng = random.Random(15)
    journals = [_random_journal(rng) for _ in range(3000)]
    fast = [_replayed(t) for t in journals]
    monkeypatch.setattr(nextclaw._Replay, "_streams_next", lambda self, t, p, sm: False)
    slow = [_replayed(t) for t in journals]
    assert sum(f != s for f, s in zip(fast, slow, strict=True)) == 0
    assert sum(1 for f in fast if len(f) > 3) > 1000  # (most journals replay to several records)


def test_a_compaction_left_compressing_reads_as_its_run_ended_it(tmp_path: Path) -> None:
    """A timeline checkpoint still `compressing` when its run ends reads as failed (run.finished,
    run.error) or cancelled (message.abort), stamped with that event's time, its timeline text
    NextClaw's for that status (recovery service :72-138); one that a later event settles, or none
    ends, stays as written."""
    def journal(end: str | None, settled: bool = False) -> str:
        j = Journal()
        j.sent(message("u1", "user", "Summarise the report", ts(1)))
        cp = checkpoint("ctx-1", "", ts(1, 5), ts(2)) | {"status": "compressing"}
        j.sent(timeline(cp))
        if settled:
            j.sent(timeline(cp | {"status": "failed"}))
        if end == "message.abort":
            j.event(end, ts(3), messageId="nobody")
        elif end is not None:
            j.event(end, ts(3), runId="r1")
        j.sent(message("u2", "user", "Go on", ts(4)))
        p = tmp_path / f"{end}-{settled}.jsonl"
        p.write_text(j.text())
        return "\n".join(d.message for d in nextclaw.load(str(p), None, None).diagnostics if d.problem == "compaction_report")

    assert "ended 'failed'" in journal("run.finished") and "'Context compaction failed'" in journal("run.finished")
    assert "ended 'failed'" in journal("run.error")
    assert "ended 'cancelled'" in journal("message.abort") and "'Context compaction was cancelled'" in journal("message.abort")
    assert "ended 'compressing'" in journal(None) and "'Compressing earlier context'" in journal(None)
    assert "ended 'failed'" in journal(None, settled=True)


def _checkpoint_journal(rng: Any, ordered: bool) -> str:
    """User and assistant messages (each with a sent call: a tool record beside it) and compressed
    checkpoints between them, each covering up to some earlier time (some of them deterministic
    recoveries, some with retained or preserved ids), the times in order or not."""
    j = Journal()
    at = 0
    ids: list[str] = []
    for i in range(rng.randrange(4, 40)):
        at = at + rng.choice([0, 1, 1, 3]) if ordered or rng.random() < 0.8 else rng.randrange(0, at + 1)
        when = ts(at // 60, at % 60) if rng.random() < 0.95 else "soon"  # (no time: NaN)
        r = rng.random()
        if r < 0.05 and ids:  # (an id sent again, later: replaced where it is, its time now later)
            j.sent(message(rng.choice(ids), "user", "edited", when))
        elif r < 0.35:
            j.sent(message(f"u{i}", "user", f"question {i} about the build", when))
        elif r < 0.75:
            parts = [{"type": "text", "text": f"answer {i}"}, tool_part(f"c{i}", "bash", {"n": i}, f"out {i}")]
            j.completed(message(f"a{i}", "assistant", None, when, parts=parts))
        else:
            fields: dict[str, Any] = {}
            if rng.random() < 0.3:
                fields["summaryDiagnostics"] = {"recovery": "deterministic-recent-context"}
            if rng.random() < 0.2 and ids:
                fields["retainedMessageIds" if rng.random() < 0.5 else "preservedUserMessageIds"] = rng.sample(ids, 1)
            covered = rng.randrange(0, at + 1) if rng.random() < 0.7 else at + rng.randrange(1, 6)  # (or later: records after it covered)
            summary = "> " + " ".join(f"question {k} about the build" for k in range(i) if rng.random() < 0.3)
            updated = max(0, at + rng.randrange(-3, 3))  # (where its timeline message goes among the others)
            cp = checkpoint(f"cp{i}", summary, ts(covered // 60, covered % 60), ts(updated // 60, updated % 60), **fields)
            j.sent(timeline(cp))
        ids.append(f"u{i}" if r < 0.35 else f"a{i}")
    return j.text()


def test_checkpoints_split_by_time_order_as_by_each_records_fate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkpoint other than the applied one, over message records whose times never go down,
    takes the records after coveredUntil as the last ones (`_Regular.in_order`: one bisection); what
    each checkpoint retains, represents and drops, and the diagnostics, equal those of each record's
    fate (`_IN_ORDER` off), on journals of several checkpoints, in time order or not."""
    import random

    rng = random.Random(15)
    split = [0]
    bisect = nextclaw.bisect_right

    def counted(*a: Any) -> int:
        split[0] += 1
        return bisect(*a)

    for k in range(300):
        path = tmp_path / f"j{k}.jsonl"
        path.write_text(_checkpoint_journal(rng, ordered=k % 3 != 0))
        got = []
        for in_order in (True, False):
            with monkeypatch.context() as m:
                m.setattr(nextclaw, "_IN_ORDER", in_order)
                m.setattr(nextclaw, "bisect_right", counted)
                led = nextclaw.load(str(path), None, None)
            got.append(
                ([(r.seq, r.kind, r.id, repr(r.checkpoint)) for r in led.records], [repr(d) for d in led.diagnostics])
            )
        assert got[0] == got[1], path.read_text()
    assert split[0] > 100


@pytest.mark.parametrize("in_order", [True, False])
def test_messages_after_the_checkpoint_out_of_time_order_are_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_order: bool
) -> None:
    """Where NextClaw sends the records after the applied checkpoint in another (timestamp) order
    than the file's, a prediction_order note says so (and the request follows NextClaw's order,
    test_nextclaw_probed). A message sent again under its
    id keeps its place with its new time, so the tail can be out of time order; the order check
    skips its sort only when every message record's time never goes down (`_Regular.in_order`)."""

    def said(resent_at: str) -> bool:
        j = Journal()
        j.sent(message("u0", "user", "before", ts(1)))
        j.sent(timeline(checkpoint("cp1", "## Summary\n", ts(1), ts(2))))
        j.sent(message("u1", "user", "first", ts(3)))
        j.completed(message("a1", "assistant", "answer", ts(4)))
        j.sent(message("u1", "user", "first, edited", resent_at))  # (replaced in place)
        led = nextclaw.load(str(j.write(tmp_path)), None, None)
        return any(d.problem == "prediction_order" for d in led.diagnostics)

    monkeypatch.setattr(nextclaw, "_IN_ORDER", in_order)
    assert not said(ts(3, 30))  # still before a1: in order
    assert said(ts(5))  # now after a1, sent before it: NextClaw sorts it after
