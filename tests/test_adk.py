"""Google ADK sessions (issue 6): JSON dumps and SQLite stores load, and our next request is the one
ADK 2.13 actually sent.

The peer corpus (../shared/peers/adk/corpus, made by a real google-adk 2.13.0 Runner with a fake
model) records every LlmRequest.contents. For every agent model call we read the session as it
stood then (`--at N`, N = the events that existed at the call) and compare, content by content,
what we predict with what ADK sent; every event ADK dropped without summarizing must be a `hole`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import LoadError, load, load_bytes, registry
from inspector.formats.adk import unpickle_actions
from tests.conftest import REPO, SHARED, app_reaches, need_shared

# INSPECTOR_ADK_CORPUS: another corpus made by the same harness (e.g. every scenario generate.py
# can produce, regenerated elsewhere); every scenario with a JSON dump in it is checked.
CORPUS = Path(os.environ.get("INSPECTOR_ADK_CORPUS", SHARED / "peers" / "adk" / "corpus"))
SCENARIOS = tuple(
    sorted(
        p.name[: -len(".json")]
        for p in CORPUS.glob("*.json")
        if p.name.count(".") == 1 and p.name != "INDEX.json"
    )
) or ("multi_agent", "retention_zero", "sliding_window", "tie_token", "token_threshold")
STORAGES = (".db", ".v1.db", ".json")


def _need_corpus() -> None:
    need_shared(CORPUS)


def _oracle_name(scenario: str, storage: str) -> str:
    # The DatabaseSessionService run has its own oracle where it differed (the tie scenarios).
    if storage == ".v1.db" and (CORPUS / f"{scenario}.v1.requests.jsonl").exists():
        return f"{scenario}.v1"
    return scenario


def _requests(name: str) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for line in (CORPUS / f"{name}.requests.jsonl").read_text().splitlines()
        if line.strip()
    ]


def _sha(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def _our_contents(path: Path, at: int) -> tuple[list[dict[str, Any]], list[str | None]]:
    """What we predict at that point, as (role, parts) digests comparable with the oracle's, and
    each event's coverage state then."""
    led = load(str(path), upto_line=at)
    rep = analyze(led)
    out: list[dict[str, Any]] = []
    for it in rep.context:
        rec = led.records[it.seq] if it.seq is not None else None
        if it.kind == "summary":
            out.append({"role": "model", "parts": [("text", _sha(it.text))], "summary_seq": it.seq})
            continue
        assert rec is not None and rec.message is not None
        if it.role == "user" and rec.role != "user":
            out.append({"role": "user", "parts": [("context", None)], "seq": it.seq})  # another agent's turn
            continue
        parts: list[tuple[str, Any]] = []
        for b in rec.message.blocks:
            if b.type == "text":
                parts.append(("text", _sha(b.text)))
            elif b.type == "tool_call" and (b.call_id in it.tool_call_ids or not b.call_id):
                parts.append(("call", b.name))
            elif b.type == "tool_result":
                parts.append(("response", b.name))
        out.append({"role": "model" if it.role == "assistant" else "user", "parts": parts, "seq": it.seq})
    return out, rep.states


def _theirs(content: dict[str, Any]) -> dict[str, Any]:
    parts: list[tuple[str, Any]] = []
    for p in content["parts"]:
        if "function_call" in p:
            parts.append(("call", p["function_call"]["name"]))
        elif "function_response" in p:
            parts.append(("response", p["function_response"]["name"]))
        elif "text" in p:
            parts.append(("text", p["sha1"]))
    return {"role": content["role"], "parts": parts}


def _events_at(path: Path) -> list[str]:
    led = load(str(path))
    return [r.id for r in led.records if r.id is not None]


# Every storage of every scenario, plus the JSON dump of the DatabaseSessionService run where it
# differed from the Sqlite one (ties reload by id).
REQUEST_CASES = [(s, st) for s in SCENARIOS for st in STORAGES] + [
    (s, ".v1.json") for s in SCENARIOS if (CORPUS / f"{s}.v1.json").exists()
]


@pytest.mark.parametrize(("scenario", "storage"), REQUEST_CASES)
def test_next_request_is_what_adk_sent(scenario: str, storage: str) -> None:
    _need_corpus()
    path = CORPUS / f"{scenario}{storage}"
    if storage == ".v1.json":
        oracle = f"{scenario}.v1"
    else:
        oracle = _oracle_name(scenario, storage) if storage != ".json" else scenario
    events = json.loads((CORPUS / f"{oracle}.json").read_text())["events"]
    summary_seq = {}
    for i, e in enumerate(events):
        if (e.get("actions") or {}).get("compaction"):
            summary_seq[i] = len(summary_seq)
    order = _events_at(path)
    assert order == [e["id"] for e in events], (
        "we read the events in the order the session service returns them"
    )
    checked = 0
    oracle_requests = {
        r["seq"]: r["visibility_of_earlier_events"]
        for r in json.loads((CORPUS / f"{oracle}.oracle.json").read_text())["requests"]
    }
    for req in _requests(oracle):
        if req["kind"] != "agent":
            continue
        at = len(req["session_event_ids_at_call"])
        if set(order[:at]) != set(req["session_event_ids_at_call"]):
            # Tied timestamps reloaded in another order than they were appended: no prefix of the
            # file is the session as it stood then.
            continue
        ours, states = _our_contents(path, at)
        theirs = [_theirs(c) for c in req["contents"]]
        where = f"{path.name} request {req['seq']} (--at {at})"
        assert [o["role"] for o in ours] == [t["role"] for t in theirs], where
        for o, t in zip(ours, theirs, strict=True):
            if o["parts"] == [("context", None)]:
                assert t["parts"] and t["parts"][0][0] == "text", where
                continue
            assert o["parts"] == t["parts"], f"{where}: {o} != {t}"
        assert sorted(o["seq"] for o in ours if "seq" in o) == sorted(req["event_indexes_in_prompt"]), where
        assert [summary_seq[o["summary_seq"]] for o in ours if "summary_seq" in o] == req[
            "summaries_in_prompt"
        ], where
        # Every earlier event: sent raw, in a summary that is sent, or dropped unsummarized (a hole).
        # (Not from a dump of a DatabaseSessionService session: where tied events of several
        # invocations were reloaded by id, what existed when a summarizer ran cannot be told;
        # test_tie_reloaded_by_id_from_a_json_dump covers the one-invocation case.)
        visible = oracle_requests.get(req["seq"], {}) if storage != ".v1.json" else {}
        for k, how in visible.items():
            want = {"raw": ("live", "retained"), "summarized": ("summarized",)}.get(how, ("hole",))
            assert states[int(k)] in want, f"{where}: event {k} is {how} but ours is {states[int(k)]}"
        checked += 1
    assert checked >= 5


def test_cli_context_at_matches_a_recorded_request() -> None:
    """The same through the command line: `inspector context --json --at N FILE`."""
    _need_corpus()
    req = next(r for r in _requests("token_threshold") if r["kind"] == "agent" and r["seq"] == 13)
    at = len(req["session_event_ids_at_call"])
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspector",
            "context",
            "--json",
            "--at",
            str(at),
            str(CORPUS / "token_threshold.db"),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    ctx = json.loads(out.stdout)
    assert ctx["format"] == "adk"
    assert [m["kind"] for m in ctx["messages"]] == ["summary", "message", "message"]
    assert [m["seq"] for m in ctx["messages"][1:]] == req["event_indexes_in_prompt"]
    assert [m["role"] for m in ctx["messages"]] == ["assistant", "assistant", "tool"]


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_dropped_without_summary_is_a_hole(scenario: str, storage: str) -> None:
    _need_corpus()
    name = _oracle_name(scenario, storage) if storage != ".json" else scenario
    oracle = json.loads((CORPUS / f"{name}.oracle.json").read_text())
    rep = analyze(load(str(CORPUS / f"{scenario}{storage}")))
    holes = {s for s, st in enumerate(rep.states) if st == "hole"}
    never = {d["event_index"] for d in oracle["dropped_without_summary"] if not d["ever_summarized"]}
    assert holes == never
    codes = [f.code for f in rep.findings]
    assert ("hole" in codes) == bool(never)
    for f in rep.findings:
        if f.code == "hole":
            assert "its summarizer was not handed them" in f.message
    # What each summarizer was handed (inferred: the session does not store it) is what ADK handed it.
    cps = [rep.ledger.records[v.seq] for v in rep.checkpoints]
    for c, cp_rec in zip(oracle["compactions"], cps, strict=True):
        assert cp_rec.checkpoint is not None
        d = cp_rec.checkpoint.details
        ids = [e["id"] for e in oracle["events"]]
        assert sorted(d["summarizer_input_ids"]) == sorted(
            ids[i] for i in c["summarizer_input_event_indexes"]
        )
        assert d["start_timestamp"] == c["start_timestamp"] and d["end_timestamp"] == c["end_timestamp"]


def test_tie_reloaded_by_id_from_a_json_dump() -> None:
    """A DatabaseSessionService dump sorts tied events by id (a response before its call); with
    one invocation in the tie, its order is put back, so the unsummarized answer is the only hole."""
    _need_corpus()
    path = CORPUS / "tie_token.v1.json"
    rep = analyze(load(str(path)))
    oracle = json.loads((CORPUS / "tie_token.v1.oracle.json").read_text())
    assert [s for s, st in enumerate(rep.states) if st == "hole"] == [
        d["event_index"] for d in oracle["dropped_without_summary"]
    ]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_counts_match_the_index(scenario: str) -> None:
    _need_corpus()
    index = {s["scenario"]: s for s in json.loads((CORPUS / "INDEX.json").read_text())["scenarios"]}
    for storage in STORAGES:
        led = load(str(CORPUS / f"{scenario}{storage}"))
        # The DatabaseSessionService run has its own line where it differed from the Sqlite one.
        entry = index.get(f"{scenario}.v1", index[scenario]) if storage == ".v1.db" else index[scenario]
        assert len(led.records) == entry["events"]
        assert sum(1 for r in led.records if r.kind == "checkpoint") == len(entry["compactions"])
        assert led.format == "adk"


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_live_question_summarized_exactly_when_adk_did(scenario: str) -> None:
    """At every recorded call: the finding names the turn's own question iff ADK sent the request
    without it (summarized out of its own prompt)."""
    _need_corpus()
    oracle = json.loads((CORPUS / f"{scenario}.oracle.json").read_text())
    expected = {
        r: d["event_index"]
        for d in oracle["summarized_out_of_own_prompt"]
        for r in d["requests_of_same_invocation_without_it"]
    }
    # A question dropped unsummarized from its own turn's requests (a tie) is removed too.
    inv = {r["seq"]: r.get("invocation_id") for r in _requests(scenario)}
    for d in oracle["dropped_without_summary"]:
        ev = oracle["events"][d["event_index"]]
        if ev["author"] == "user" and ev["kind"] == "text":
            expected.update(
                {r: d["event_index"] for r in d["missing_from_request_seqs"] if inv[r] == ev["invocation_id"]}
            )
    order = _events_at(CORPUS / f"{scenario}.json")
    fired: dict[int, int] = {}
    for req in _requests(scenario):
        at = len(req.get("session_event_ids_at_call") or [])
        if req["kind"] != "agent" or set(order[:at]) != set(req["session_event_ids_at_call"]):
            continue
        rep = analyze(load(str(CORPUS / f"{scenario}.json"), upto_line=at))
        for f in rep.findings:
            if f.code == "live_question_summarized":
                fired[req["seq"]] = f.records[0]
    assert fired == expected


def test_live_question_summarized_fires() -> None:
    """retention_zero: U02's own question is summarized out of the request that answers it."""
    _need_corpus()
    req = next(r for r in _requests("retention_zero") if r["kind"] == "agent" and r["seq"] == 3)
    rep = analyze(load(str(CORPUS / "retention_zero.json"), upto_line=len(req["session_event_ids_at_call"])))
    f = [f for f in rep.findings if f.code == "live_question_summarized"]
    assert f and f[0].records[0] == 2 and f[0].severity == "error"
    # Not before it happened.
    rep = analyze(load(str(CORPUS / "retention_zero.json"), upto_line=5))
    assert not [f for f in rep.findings if f.code == "live_question_summarized"]


def test_analyze_json_keeps_the_ranges() -> None:
    _need_corpus()
    rep = analyze(load(str(CORPUS / "sliding_window.v1.db")))
    j = analyze_json(rep)
    assert j["format"] == "adk" and j["format_version"] == 1
    assert len(j["checkpoints"]) == 4
    d = rep.ledger.records[rep.checkpoints[1].seq].checkpoint.details  # type: ignore[union-attr]
    assert d["surviving"] is True and d["start_timestamp"] < d["end_timestamp"]
    ctx = context_json(rep)
    assert [m["kind"] for m in ctx["messages"]].count("summary") == 4  # partial overlaps all survive


# ---------------------------------------------------------------------------------------- storage


def _copy_db(src: Path, dst: Path) -> None:
    dst.write_bytes(src.read_bytes())


def test_several_sessions_most_recent_and_by_name(tmp_path: Path) -> None:
    _need_corpus()
    db = tmp_path / "session.db"
    _copy_db(CORPUS / "tie_token.db", db)
    con = sqlite3.connect(db)
    con.execute(
        "INSERT INTO sessions VALUES ('other_app', 'user-2', 'older', '{}', 1000.0, 1000.0)",
    )
    con.commit()
    con.close()
    led = load(str(db))
    assert led.session_id == "tie_token-session"
    note = [d for d in led.diagnostics if d.problem == "session_choice"]
    assert (
        note
        and "most recently updated" in note[0].message
        and "'older'" not in note[0].message.split("reading")[0]
    )
    assert "older" in note[0].message
    led2 = load(f"{db}#older")
    assert led2.session_id == "older" and led2.records == []
    with pytest.raises(LoadError, match="no session 'nope'"):
        load(f"{db}#nope")
    # A session choice is information, not a malformed line.
    assert "malformed_line" not in [f.code for f in analyze(led).findings]


def test_detected_by_content_not_name(tmp_path: Path) -> None:
    _need_corpus()
    a = tmp_path / "anything.bin"
    _copy_db(CORPUS / "retention_zero.db", a)
    b = tmp_path / "anything.txt"
    b.write_bytes((CORPUS / "retention_zero.json").read_bytes())
    assert load(str(a)).format == "adk" and load(str(b)).format == "adk"
    # A compact one-line dump too, and through load_bytes.
    compact = json.dumps(json.loads(b.read_text())).encode()
    assert load_bytes(compact, "dump").format == "adk"


def test_bad_rows_are_diagnostics(tmp_path: Path) -> None:
    _need_corpus()
    db = tmp_path / "s.db"
    _copy_db(CORPUS / "tie_token.db", db)
    con = sqlite3.connect(db)
    con.execute("UPDATE events SET event_data='{not json' WHERE rowid=3")
    con.commit()
    con.close()
    led = load(str(db))
    assert len(led.records) == 14
    d = [d for d in led.diagnostics if d.problem == "malformed_row"]
    assert d and "row 3" in d[0].message and "not valid JSON" in d[0].message
    analyze(led)  # no traceback


def test_not_an_adk_database(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (a)")
    con.commit()
    con.close()
    with pytest.raises(LoadError, match="not an ADK session store"):
        load(str(db))


def test_cli_plans_but_refuses_to_write_without_a_writer() -> None:
    """`plan` works on every format (it writes nothing); `repair --write` needs the format's writer."""
    _need_corpus()
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "inspector", *a, "--window", "32000", str(CORPUS / "tie_token.json")],
        capture_output=True, text=True, cwd=REPO,
    )
    planned = run("plan", "--strategy", "recover")
    assert planned.returncode == 0, planned.stderr
    if registry.get("adk").writer is None:
        out = run("repair", "--strategy", "recover", "--write")
        assert out.returncode == 2, (out.stdout, out.stderr)
        assert "adk sessions are read only" in out.stderr.lower()


# ---------------------------------------------------------------------------------------- v0 pickles


class _Refused:
    def __reduce__(self) -> Any:
        return (os.system, ("echo pwned",))


def test_v0_actions_pickle_refuses_arbitrary_globals() -> None:
    import pickle

    actions, why = unpickle_actions(pickle.dumps({"state_delta": {"x": _Refused()}}))
    assert actions is None and "refused global" in why and "system" in why


# ---------------------------------------------------------------------------------------- the app


def test_triage_finds_adk_session_db(tmp_path: Path) -> None:
    _need_corpus()
    from inspector.tui.triage import discover

    (tmp_path / "weather" / ".adk").mkdir(parents=True)
    _copy_db(CORPUS / "tie_token.db", tmp_path / "weather" / ".adk" / "session.db")
    (tmp_path / "notes.db").write_bytes(b"")  # a .db elsewhere is not taken for a session
    _, files, _ = discover([str(tmp_path)])
    assert files == [str(tmp_path / "weather" / ".adk" / "session.db")]


@pytest.mark.anyio
async def test_app_opens_an_adk_database() -> None:
    _need_corpus()
    from inspector.tui.app import create_app

    app = create_app([str(CORPUS / "tie_token.v1.db")])
    async with app.run_test(size=(140, 40)) as pilot:
        await app_reaches(pilot, lambda: getattr(app.screen, "report", None) is not None)
        report = app.screen.report  # type: ignore[attr-defined]
        assert report is not None and report.ledger.format == "adk"
        assert [s for s, st in enumerate(report.states) if st == "hole"] == [6]


V0 = REPO / "tests" / "data" / "adk" / "token_threshold.v0.db"  # made by make_v0.py beside it


def test_v0_database_reads_like_the_json_dump() -> None:
    """The legacy schema (pickled EventActions) is read without importing or calling anything it
    names: same events, same compactions, same next request as the JSON dump of that session."""
    _need_corpus()
    a, b = load(str(V0)), load(str(CORPUS / "token_threshold.json"))
    assert a.format == "adk" and a.version == 0 and a.header is not None and a.header["storage"] == "v0"
    assert [r.id for r in a.records] == [r.id for r in b.records]
    assert [r.checkpoint.details for r in a.records if r.checkpoint] == [
        r.checkpoint.details for r in b.records if r.checkpoint
    ]
    ra, rb = analyze(a), analyze(b)
    assert ra.states == rb.states
    assert [(m["seq"], m["kind"], m["role"]) for m in context_json(ra)["messages"]] == [
        (m["seq"], m["kind"], m["role"]) for m in context_json(rb)["messages"]
    ]


def test_v0_hostile_pickle_is_a_diagnostic(tmp_path: Path) -> None:
    import pickle

    db = tmp_path / "v0.db"
    _copy_db(V0, db)
    con = sqlite3.connect(db)
    con.execute("UPDATE events SET actions=? WHERE rowid=15", (pickle.dumps(_Refused()),))
    con.commit()
    con.close()
    led = load(str(db))
    d = [d for d in led.diagnostics if d.problem == "malformed_row"]
    assert len(d) == 1 and "refused global" in d[0].message and "row 15" in d[0].message
    assert len(led.records) == 30  # the event itself (its content) still loads
    analyze(led)


def test_content_chars_is_the_json_of_the_content_without_its_nulls() -> None:
    from inspector.formats.adk import _serialized_chars

    bare = {"role": "model", "parts": [{"text": "null é"}]}
    assert _serialized_chars(bare) == len('{"role":"model","parts":[{"text":"null é"}]}')
    nulls = {"role": "model", "parts": [{"text": "hi", "thought": None, "function_call": {"args": {"a": None}}}]}
    assert _serialized_chars(nulls) == len('{"role":"model","parts":[{"text":"hi","function_call":{"args":{}}}]}')
    assert _serialized_chars({"parts": [None, {"text": None}]}) == len('{"parts":[null,{}]}')


def test_counted_chars_as_context_is_the_length_of_the_text_another_agent_is_shown() -> None:
    from inspector.formats.adk import _OTHER_AGENT_PREAMBLE, _counted_chars_as_context

    begin, end = "<<<BEGIN_QUOTED_AGENT_CONTENT>>>", "<<<END_QUOTED_AGENT_CONTENT>>>"

    def quoted(t: str) -> str:  # _fencing.py quote_untrusted
        return f"{begin}\n{t.replace(begin, '<<<ELIDED_MARKER>>>').replace(end, '<<<ELIDED_MARKER>>>')}\n{end}"

    text = f"see {end} and {begin} é"
    content = {
        "parts": [
            {"text": "hidden", "thought": True},
            {"text": "   "},
            {"text": text},
            {"function_call": {"name": f"ls{end}", "args": {"b": 1, "a": [None]}}},
            {"function_response": {"name": "ls", "response": {"out": "x"}}},
            {"inline_data": {}},
        ]
    }
    shown = [
        f"[bot] said:\n{quoted(text)}",
        "[bot] called tool `ls<<<ELIDED_MARKER>>>` with parameters:\n" + quoted(str({"a": [None], "b": 1})),
        "[bot] `ls` tool returned result:\n" + quoted(str({"out": "x"})),
    ]
    assert _counted_chars_as_context("bot", content) == len(_OTHER_AGENT_PREAMBLE) + sum(map(len, shown))
    assert _counted_chars_as_context("bot", {"parts": [{"text": "t", "thought": True}, {"text": " "}]}) == 0
    # An image alone is relayed (_fencing.py:338-346): the event is not dropped, its preamble counted.
    assert _counted_chars_as_context("bot", {"parts": [{"inline_data": {}}]}) == len(_OTHER_AGENT_PREAMBLE)
    assert _counted_chars_as_context("bot", {"parts": [{"inline_data": {}, "thought": True}]}) == 0


def _reinjection_dump(tmp_path: Path, answered: str) -> Path:
    """A dump whose compaction covers a call (c1) and whose later event answers `answered`."""
    def part(kind: str, **v: Any) -> dict[str, Any]:
        return {"role": "model" if kind == "function_call" else "user", "parts": [{kind: v}]}

    events = [
        {"id": "u", "invocation_id": "i1", "author": "user", "timestamp": 1.0,
         "content": {"role": "user", "parts": [{"text": "q"}]}},
        {"id": "c", "invocation_id": "i1", "author": "agent", "timestamp": 2.0,
         "content": part("function_call", id="c1", name="f", args={})},
        {"id": "k", "invocation_id": "i1", "author": "user", "timestamp": 2.5, "actions": {"compaction": {
            "start_timestamp": 1.0, "end_timestamp": 2.0, "compacted_content": {"role": "model", "parts": [{"text": "s"}]}}}},
        {"id": "d", "invocation_id": "i1", "author": "agent", "timestamp": 2.7,
         "content": part("function_call", id="c2", name="f", args={})},
        {"id": "r", "invocation_id": "i1", "author": "agent", "timestamp": 3.0,
         "content": part("function_response", id=answered, name="f", response={"x": 1})},
    ]  # fmt: skip
    path = tmp_path / f"reinject-{answered}.json"
    path.write_text(json.dumps({"app_name": "a", "user_id": "u", "id": "s", "events": events, "last_update_time": 3.5}))
    return path


def test_a_compacted_call_comes_back_only_next_to_a_response_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ADK re-injects a call its compaction removed just before a later response to it; where no
    sent response answers a compacted call, the analysis skips that search (`_answers_compacted_call`)
    and sends what it would have: the same request as the full search, on these and the corpus."""
    from inspector.analysis import adk as adk_analysis

    seqs = {}
    for answered in ("c1", "c2"):
        rep = analyze(load(str(_reinjection_dump(tmp_path, answered))))
        seqs[answered] = [it.seq for it in rep.context]
    assert seqs["c1"] == [2, 1, 4], seqs  # the summary, the call back (d's unanswered: dropped), its response
    assert seqs["c2"] == [2, 3, 4], seqs
    paths = [_reinjection_dump(tmp_path, a) for a in ("c1", "c2")] + sorted(CORPUS.glob("*.db"))
    fast = [context_json(analyze(load(str(p)))) for p in paths]
    monkeypatch.setattr(adk_analysis, "_answers_compacted_call", lambda *a: True)
    assert fast == [context_json(analyze(load(str(p)))) for p in paths]


def _shift_v0_times(db: Path, hours: float) -> None:
    """Every event's `timestamp` column moved by `hours`, as an older google-adk wrote it at that
    UTC offset (a naive local time, `datetime.fromtimestamp`); the compactions' ranges, inside
    their pickles, stay in epoch seconds."""
    import datetime as dt

    con = sqlite3.connect(db)
    for rowid, ts in con.execute("SELECT rowid, timestamp FROM events").fetchall():
        moved = dt.datetime.fromisoformat(ts) + dt.timedelta(hours=hours)
        con.execute("UPDATE events SET timestamp=? WHERE rowid=?", (moved.isoformat(sep=" "), rowid))
    con.commit()
    con.close()


def test_a_v0_store_written_in_local_time_is_named_so(tmp_path: Path) -> None:
    """A real v0 store (2025, written at UTC-05:00) has compactions whose ranges land on its events
    only 5 h later: today's ADK, reading the column as UTC, sent every event raw beside the
    summaries (its real 2.13 did). We read as it does, and say why."""
    db = tmp_path / "local.v0.db"
    _copy_db(V0, db)
    assert not [d for d in load(str(db)).diagnostics if d.problem == "local_time_stamps"]
    _shift_v0_times(db, -5)
    led = load(str(db))
    notes = [d for d in led.diagnostics if d.problem == "local_time_stamps"]
    assert len(notes) == 1 and "written at UTC-05:00" in notes[0].message and "by 5 h" in notes[0].message
    rep = analyze(led)
    assert rep.coverage_counts()["summarized"] == 0  # (as today's ADK reads the store)
    assert any(f.code == "file_structure" and "naive local times" in f.message for f in rep.findings)
    _shift_v0_times(db, 5.5)  # now at UTC+00:30 (a half hour zone's worth)
    assert "written at UTC+00:30" in next(d.message for d in load(str(db)).diagnostics if d.problem == "local_time_stamps")
