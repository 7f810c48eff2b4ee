"""ADK's rewinds, without the runtime: an event whose `actions.rewind_before_invocation_id` names
invocation X drops itself and every event back to X's first (events/_rewind_events.py:22-61);
ADK applies that before it builds a request (flows/llm_flows/context/_contents.py:509-516), before
its compactor selects (apps/compaction.py:683-686, 790) and before its router reads the session
(agents/_agent_router.py:186). The real ADK's verdicts on rewound stores are in
tests/test_adk_line_rule.py (type probes) and the differential scenarios with a `rewind` step."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.engine import INACTIVE
from inspector.formats import adk_compaction as rules
from inspector.formats import adk_heads, adk_writer, load
from inspector.formats.adk import follow_sqlite, next_agent
from inspector.formats.base import CheckpointDraft
from inspector.live.incremental import Follower

APP, USER, SID = "app", "user-1", "s1"
_ACTIONS = {"state_delta": {}, "artifact_delta": {}, "requested_auth_configs": {}, "requested_tool_confirmations": {}}
_SCHEMA = """
CREATE TABLE app_states (app_name TEXT PRIMARY KEY, state TEXT NOT NULL, update_time REAL NOT NULL);
CREATE TABLE user_states (app_name TEXT NOT NULL, user_id TEXT NOT NULL, state TEXT NOT NULL,
    update_time REAL NOT NULL, PRIMARY KEY (app_name, user_id));
CREATE TABLE sessions (app_name TEXT NOT NULL, user_id TEXT NOT NULL, id TEXT NOT NULL, state TEXT NOT NULL,
    create_time REAL NOT NULL, update_time REAL NOT NULL, PRIMARY KEY (app_name, user_id, id));
CREATE TABLE events (id TEXT NOT NULL, app_name TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
    invocation_id TEXT NOT NULL, timestamp REAL NOT NULL, event_data TEXT NOT NULL,
    PRIMARY KEY (app_name, user_id, session_id, id));
"""


class Session:
    """Events as ADK's SqliteSessionService writes them (one per turn's question and answer)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def add(self, author: str, inv: str, text: str | None = None, **actions: Any) -> dict[str, Any]:
        n = len(self.events)
        o: dict[str, Any] = {"invocation_id": inv, "author": author, "actions": {**_ACTIONS, **actions},
                             "id": f"ev{n:02d}", "timestamp": 1000.0 + n}
        if text is not None:
            o["content"] = {"parts": [{"text": text}], "role": "user" if author == "user" else "model"}
        self.events.append(o)
        return o

    def turn(self, inv: str, q: str, agent: str = "assistant") -> None:
        self.add("user", inv, q)
        self.add(agent, inv, f"answer to {q}")

    def rewind(self, target: str, inv: str = "e-rw") -> None:
        """What `Runner.rewind_async` appends (sessions/_rewind_utils.py:199-210)."""
        self.add("user", inv, rewind_before_invocation_id=target)

    def compaction(self, start: int, end: int, summary: str) -> None:
        self.add("user", f"c-{len(self.events)}", compaction={
            "start_timestamp": self.events[start]["timestamp"], "end_timestamp": self.events[end]["timestamp"],
            "compacted_content": {"parts": [{"text": summary}], "role": "model"}})

    def store(self, path: Path, upto: int | None = None) -> Path:
        con = sqlite3.connect(path)
        if not con.execute("SELECT 1 FROM sqlite_master WHERE name='events'").fetchone():
            con.executescript(_SCHEMA)
            con.execute("INSERT INTO sessions VALUES (?,?,?,'{}',1000.0,1000.0)", (APP, USER, SID))
        have = con.execute("SELECT count(*) FROM events").fetchone()[0]
        for o in self.events[have:upto]:
            con.execute("INSERT INTO events VALUES (?,?,?,?,?,?,?)", (o["id"], APP, USER, SID, o["invocation_id"],
                        o["timestamp"], json.dumps(o, separators=(",", ":"))))
        con.commit()
        con.close()
        return path

    def dump(self, path: Path) -> Path:
        path.write_text(json.dumps({"app_name": APP, "user_id": USER, "id": SID, "state": {}, "events": self.events,
                                    "last_update_time": 2000.0}))
        return path


def _sent(path: Path) -> list[str]:
    report = analyze(load(str(path)))
    recs = report.ledger.records
    out = []
    for it in report.context:
        rec = recs[it.seq]
        out.append(rec.checkpoint.summary if it.kind == "summary" and rec.checkpoint else rec.message.text())  # type: ignore[union-attr]
    return out


def _three_turns() -> Session:
    s = Session()
    s.turn("i1", "q1")
    s.turn("i2", "q2")
    s.turn("i3", "q3")
    return s


# ---------------------------------------------------------------------------------------- the rule


def _applied(s: Session) -> set[int]:
    events = rules.make_events(s.events, list(range(len(s.events))))
    return rules.rewound_indexes(rules.apply_rewinds(events, [e for e in events if rules.rewind_target(e) is not None]))


def test_a_rewind_drops_itself_and_everything_back_to_the_invocations_first_event() -> None:
    s = _three_turns()
    s.rewind("i2")
    assert _applied(s) == {2, 3, 4, 5, 6}


def test_a_rewind_naming_no_earlier_event_drops_itself_alone() -> None:
    s = _three_turns()
    s.rewind("nowhere")
    s.add("user", "i4", "q4")
    s.rewind("e-own", inv="e-own")  # its own invocation, of which it is the first event
    assert _applied(s) == {6, 8}


def test_a_rewind_to_an_invocation_that_starts_after_it_drops_itself_alone() -> None:
    s = _three_turns()
    s.rewind("i4")
    s.turn("i4", "q4")
    assert _applied(s) == {6}


def test_an_empty_rewind_is_no_rewind(tmp_path: Path) -> None:
    # ADK tests the id's truth (events/_rewind_events.py:46): the event is sent as any other.
    s = _three_turns()
    s.add("user", "i4", "q4", rewind_before_invocation_id="")
    assert _applied(s) == set()
    assert _sent(s.dump(tmp_path / "s.json"))[-1] == "q4"
    assert _sent(s.store(tmp_path / "s.db"))[-1] == "q4"


def test_a_rewind_inside_a_range_a_later_one_drops_is_never_read() -> None:
    # The later rewind (to i2) drops the earlier one (to i3): read backward, the earlier is never
    # applied; a rewind of a rewind (to its invocation) brings back what that one dropped.
    s = _three_turns()
    s.rewind("i3", inv="e-r1")
    s.rewind("i2", inv="e-r2")
    assert _applied(s) == {2, 3, 4, 5, 6, 7}
    t = _three_turns()
    t.rewind("i3", inv="e-r1")
    t.rewind("e-r1", inv="e-r2")
    assert _applied(t) == {6, 7}


# ---------------------------------------------------------------------------------------- what is sent


def test_rewound_events_are_not_sent_and_are_no_holes(tmp_path: Path) -> None:
    s = _three_turns()
    s.rewind("i2")
    s.turn("i4", "q4")
    db = s.store(tmp_path / "s.db")
    assert _sent(db) == ["q1", "answer to q1", "q4", "answer to q4"]
    report = analyze(load(str(db)))
    counts = report.coverage_counts()
    assert counts["hole"] == 0 and counts["inactive"] == 4 and counts["live"] == 4, counts
    assert [report.states[i] for i in (2, 3, 4, 5)] == [INACTIVE] * 4
    (d,) = [d for d in report.ledger.diagnostics if d.problem == "rewind_applied"]
    assert d.severity == "info" and d.line == 7 and d.seqs == [2, 3, 4, 5, 6]
    assert "drops 5 events (4 messages)" in d.message and "'i2'" in d.message
    (f,) = [f for f in report.findings if f.data.get("problem") == "rewind_applied"]
    assert f.code == "file_structure" and f.severity == "info"
    # a dump reads the same
    assert _sent(s.dump(tmp_path / "s.json")) == _sent(db)


def test_a_rewind_to_no_invocation_is_a_warning_and_drops_nothing_else(tmp_path: Path) -> None:
    s = _three_turns()
    s.rewind("nowhere")
    db = s.store(tmp_path / "s.db")
    assert _sent(db) == ["q1", "answer to q1", "q2", "answer to q2", "q3", "answer to q3"]
    (d,) = [d for d in load(str(db)).diagnostics if d.problem.startswith("rewind")]
    assert (d.problem, d.severity, d.seqs) == ("rewind_ignored", "warning", [6])


def test_the_file_read_up_to_before_the_rewind_sends_everything(tmp_path: Path) -> None:
    s = _three_turns()
    s.rewind("i2")
    db = s.store(tmp_path / "s.db")
    report = analyze(load(str(db), upto_line=6))
    assert len(report.context) == 6 and not report.ledger.diagnostics


def test_a_compaction_inside_a_rewound_range_applies_no_range(tmp_path: Path) -> None:
    # ADK drops rewound events, compactions among them, before it applies any compaction
    # (_contents.py:509-516 then :541-556): q1 and q2 come back raw.
    s = _three_turns()
    s.compaction(0, 3, "[SUMMARY of q1 q2]")
    s.rewind("i3")
    s.turn("i4", "q4")
    db = s.store(tmp_path / "s.db")
    assert _sent(db) == ["q1", "answer to q1", "q2", "answer to q2", "q4", "answer to q4"]
    report = analyze(load(str(db)))
    assert report.coverage_counts()["hole"] == 0 and report.checkpoints == []
    d = report.ledger.records[6].checkpoint.details  # type: ignore[union-attr]
    assert d["surviving"] is False and d["inference"].startswith("rewound")


def test_a_compaction_made_after_a_rewind_stands_for_live_events_only(tmp_path: Path) -> None:
    # The compactor applies the rewinds first (apps/compaction.py:683-686): its summarizer was
    # handed q1, q4 and their answers, never the rewound q2, q3.
    s = _three_turns()
    s.rewind("i2")
    s.turn("i4", "q4")
    s.compaction(0, 8, "[SUMMARY]")
    s.turn("i5", "q5")
    report = analyze(load(str(s.store(tmp_path / "s.db"))))
    d = report.ledger.records[9].checkpoint.details  # type: ignore[union-attr]
    assert d["summarizer_input_ids"] == ["ev00", "ev01", "ev07", "ev08"]
    assert d["range_event_ids"] == ["ev00", "ev01", "ev07", "ev08"] and d["surviving"] is True
    assert _sent(tmp_path / "s.db") == ["[SUMMARY]", "q5", "answer to q5"]
    assert report.coverage_counts()["hole"] == 0


def test_a_compaction_after_a_rewind_folds_in_no_rewound_summary() -> None:
    s = Session()
    s.turn("i1", "q1")
    s.compaction(0, 1, "[S0]")  # 2: live
    s.turn("i2", "q2")
    s.compaction(0, 4, "[S1]")  # 5: rewound below
    s.rewind("i2")  # drops 3..6
    s.turn("i3", "q3")
    s.compaction(0, 8, "[S2]")  # S0 folded in or the live events summarized again; never S1
    events = rules.make_events(s.events, list(range(len(s.events))))
    facts = rules.analyze_compactions(events, [e for e in events if rules.rewind_target(e)])
    assert facts[9].seed in (None, 2) and {7, 8} <= set(facts[9].inputs) <= {0, 1, 7, 8}
    assert facts[5].surviving is False and facts[5].subsumed_by is None
    assert facts[2].surviving is False and facts[2].subsumed_by == 9


# ---------------------------------------------------------------------------------------- who runs next


def test_the_router_reads_the_live_events_only() -> None:
    # A transfer to math_agent in the rewound turn: the router (agents/_agent_router.py:186)
    # never sees it; the coordinator runs next.
    s = Session()
    s.turn("i1", "q1", agent="coordinator")
    s.add("user", "i2", "q2")
    s.add("coordinator", "i2", "handing over", transfer_to_agent="math_agent")
    s.add("math_agent", "i2", "42")
    before = rules.make_events(s.events, list(range(len(s.events))))
    assert next_agent(before)[0] == "math_agent"
    s.rewind("i2")
    led_events = rules.make_events(s.events, list(range(len(s.events))))
    live = [e for e in led_events if e.index not in _applied(s)]
    assert next_agent(live)[0] == "coordinator"


def test_the_loaded_session_names_the_agent_the_router_would_run(tmp_path: Path) -> None:
    s = Session()
    s.turn("i1", "q1", agent="coordinator")
    s.add("user", "i2", "q2")
    s.add("coordinator", "i2", "handing over", transfer_to_agent="math_agent")
    s.add("math_agent", "i2", "42")
    s.rewind("i2")
    header = load(str(s.store(tmp_path / "s.db"))).header or {}
    assert header["next_agent"] == "coordinator"
    assert header["run_input_seq"] == 0  # a rewind event is the user's, but starts no run


# ---------------------------------------------------------------------------------------- reading


def test_a_rewind_is_read_whole_not_from_its_head() -> None:
    s = _three_turns()
    s.rewind("i2")
    s.rewind("", inv="e-empty")
    rewind, empty = (json.dumps(o).encode() for o in s.events[-2:])
    assert adk_heads.head(rewind) is None
    assert adk_heads.head(empty) is not None
    assert adk_heads.head(json.dumps(s.events[0]).encode()) is not None


def test_a_followed_store_is_read_again_when_a_rewind_comes(tmp_path: Path) -> None:
    s = _three_turns()
    s.rewind("i2")
    s.turn("i4", "q4")
    db = s.store(tmp_path / "s.db", upto=6)
    led = load(str(db))
    s.store(db)
    grown = follow_sqlite(str(db), None, led, None)
    assert grown.ledger is None and "rewind" in (grown.reload or "")
    f = Follower(str(db))
    f.poll()
    s.add("user", "i5", "q5")
    s.store(db)
    up = f.poll()
    assert up is not None
    assert [it.seq for it in up.report.context] == [it.seq for it in analyze(load(str(db))).context]
    assert up.report.states == analyze(load(str(db))).states


# ---------------------------------------------------------------------------------------- writing


def test_a_repair_range_is_placed_by_the_live_events_and_compactions(tmp_path: Path) -> None:
    # A rewound compaction whose range reaches past the retained tail's first event must not
    # stretch the repair's range (ADK never applies it): the tail stays raw.
    s = Session()
    s.turn("i1", "q1")
    s.turn("i2", "q2")
    s.turn("i3", "q3")  # 4, 5
    s.compaction(0, 5, "[rewound summary]")  # 6
    s.rewind("i3")  # drops 4..7
    s.turn("i4", "q4")  # 8, 9
    led = load(str(s.store(tmp_path / "s.db")))
    draft = CheckpointDraft(
        entry_id="inspector-1", timestamp="2026-01-01T00:00:00Z", summary="[REPAIR]", leaf_id=None,
        first_kept_id="ev02", boundary_id="ev01", keeps_ahead=False, represents=[["ev00", "ev01"]], retains=[],
        shape="recent_window", failure_reason=None, tokens_before=0, budget_tokens=0, read_files=[],
        modified_files=[], usage=None, requests=1, truncated=False, essential_complete=True, producer="inspector",
    )  # fmt: skip
    start, end = adk_writer.event_range(draft, led)
    assert (start, end) == (1000.0, 1001.0)
    assert adk_writer.represented_ids([["ev00", "ev08"]], led) == ["ev00", "ev01", "ev02", "ev03", "ev08"]


def test_a_dump_read_index_first_finds_its_rewinds(tmp_path: Path) -> None:
    # A dump past bounded.LARGE_LINE_BYTES is read event by event from heads (`_dump_heads`): the
    # rewind, read whole, is found among the few events that are.
    s = _three_turns()
    for o in s.events:
        o["content"]["parts"][0]["text"] += " " + "w" * 900_000
    s.rewind("i2")
    s.turn("i4", "q4")
    dump = s.dump(tmp_path / "big.json")
    assert dump.stat().st_size > 4_000_000
    sent = [t.split(" ")[0] for t in _sent(dump)]
    assert sent == ["q1", "answer", "q4", "answer"]
    assert _sent(dump) == _sent(s.store(tmp_path / "big.db"))
