"""OpenClaw's heartbeat filter: the heartbeat polls it leaves out of the request it replays.

OpenClaw 2026.9.6 takes out of the history each heartbeat poll ("[OpenClaw heartbeat poll]", the other
wake prompts, its heartbeat prompts), its acknowledgement (HEARTBEAT_OK, NO_REPLY, ...) and what came
between, up to the next user message (`filterHeartbeatTranscriptArtifacts`, dist/heartbeat-filter-
DxPIMf2l.mjs:236-255; inspector/formats/openclaw_heartbeat.py). Found on two real sessions
(sirdeuce/nucbox-backup, `.openclaw/agents/main/sessions/*.jsonl`, imported by `openclaw doctor --fix`
and resumed): OpenClaw sent 3 and 5 messages where inspector predicted 196 and 61.

The filter's port is held to OpenClaw's own functions, run by node on random message sequences; the
reader's use of it to the real OpenClaw resuming stores shaped like those sessions.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import EXCLUDED, LIVE
from inspector.formats import load, openclaw_heartbeat, openclaw_sqlite
from inspector.live.incremental import GROWN, Follower
from tests.peers.openclaw.generate import NODE, OPENCLAW
from tests.peers.openclaw.resume import NotInstalled, resume
from tests.peers.openclaw.type_probe import BASE, LEAF, LEAF_SEQ
from tests.scope import probe_cases
from tests.test_incremental_stores import as_json, full_json
from tests.test_openclaw import sent_as_predicted
from tests.test_openclaw_accepts import _first_agent_request
from tests.test_openclaw_failed_turns import CALL, append, result, seq_of, store, user
from tests.test_openclaw_failed_turns import answer as _answer
from tests.test_openclaw_runtime_context import runtime_context

POLL = "[OpenClaw heartbeat poll]"


def said(eid: str, parent: str, text: str, stop: str = "stop") -> dict[str, Any]:
    return _answer(eid, parent, [{"type": "text", "text": text}], stop)


def calling(eid: str, parent: str) -> dict[str, Any]:
    return _answer(eid, parent, [{"type": "text", "text": "checking"}, CALL], "toolUse")


def custom(eid: str, parent: str) -> dict[str, Any]:
    """A message entry of role "custom" of another customType than the runtime context's."""
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": "2026-12-02T09:00:00.000Z",
            "message": {"role": "custom", "customType": "other.note", "content": "OTHER-NOTE", "display": False,
                        "timestamp": 1796202000000}}  # fmt: skip


def compaction(eid: str, parent: str, first_kept: str) -> dict[str, Any]:
    """A compaction keeping everything from `first_kept` on (the real sessions' shape)."""
    return {"type": "compaction", "id": eid, "parentId": parent, "timestamp": "2026-12-02T09:00:00.000Z",
            "summary": "## Goal\n(None)", "firstKeptEntryId": first_kept, "tokensBefore": 900,
            "details": {"readFiles": [], "modifiedFiles": []}, "fromHook": False}  # fmt: skip


def chain(*rows: tuple[Any, ...]) -> list[dict[str, Any]]:
    """Entries hung one under the other from the corpus store's leaf: (maker, id, *args) each."""
    out: list[dict[str, Any]] = []
    for make, eid, *args in rows:
        out.append(make(eid, out[-1]["id"] if out else LEAF, *args))
    return out


# One store, every rule: a plain poll and its HEARTBEAT_OK; one with its runtime-context message
# between (OpenClaw strips those before its second pass); one with a tool call and its result
# before the acknowledgement; one answered with a text that is no acknowledgement (kept); two polls
# in a row (merged into one user message, no poll any more: kept); a real turn; a poll whose answer
# is "NO_REPLY." (a silent answer, left out before the filter reads: the poll then has nothing after
# it up to the next user message, and goes) and, last, a poll with its runtime context and no
# answer at the leaf (no trailing user message: left out). Between, silent answers that are no
# heartbeat's: a string "NO_REPLY" and reasoning with a "NO_REPLY" text (left out), a text that
# ends in it (sent); a poll whose answer was aborted with a blank text (left out before the filter
# reads: no acknowledgement) and another custom message after it (which keeps the poll).
SPANS = chain(
    (user, "hp1", POLL), (said, "ha1", "HEARTBEAT_OK"),
    (user, "hp2", POLL), (runtime_context, "hr2"), (said, "ha2", "HEARTBEAT_OK"),
    (user, "hp3", POLL), (calling, "hc3"), (result, "hr3", CALL["id"]), (said, "ha3", "All quiet. HEARTBEAT_OK"),
    (user, "hp4", POLL), (said, "ha4", "The disk is full: please look."),
    (user, "hp5", POLL), (user, "hp6", POLL), (said, "ha6", "HEARTBEAT_OK"),
    (user, "hu7", "a real question"), (said, "ha7", "a real answer"),
    (user, "hp8", "[OpenClaw cron wake]"), (runtime_context, "hr8"), (said, "ha8", "NO_REPLY."),
    (user, "hu9", "one more question"), (said, "ha9", "one more answer"),
    (user, "hu11", "q11"), (_answer, "ha11", "NO_REPLY", "stop"),
    (user, "hu12", "q12"), (_answer, "ha12", [{"type": "thinking", "thinking": "t"}, {"type": "text", "text": " NO_REPLY "}], "stop"),
    (user, "hu13", "q13"), (said, "ha13", "an answer, then NO_REPLY"),
    (user, "hp14", POLL), (_answer, "ha14", [{"type": "text", "text": ""}], "aborted"), (custom, "hx14"),
    (user, "hu15", "q15"), (said, "ha15", "a15"),
    (user, "hp10", POLL), (runtime_context, "hr10"),
)  # fmt: skip
LEFT_OUT = ["hp1", "ha1", "hp2", "ha2", "hp3", "hc3", "hr3", "ha3", "hp8", "hp10"]


def test_the_reader_leaves_out_each_heartbeat_openclaw_filters(tmp_path: Path) -> None:
    report = analyze(load(str(store(tmp_path, SPANS))))
    for eid in LEFT_OUT:
        r = seq_of(report, eid)
        assert report.states[r] == EXCLUDED and report.ledger.records[r].never_sent, eid
    for eid in ("hp4", "ha4", "hp5", "hp6", "ha6", "hu7", "ha7", "hu9", "ha9"):
        assert report.states[seq_of(report, eid)] == LIVE, eid
    for eid in ("ha8", "ha11", "ha12"):  # (silent answers: `openclaw_model.silent_answer`)
        assert report.states[seq_of(report, eid)] == EXCLUDED, eid
    for eid in ("hu11", "hu12", "hu13", "ha13", "hp14", "hx14", "hu15", "ha15"):
        assert report.states[seq_of(report, eid)] == LIVE, eid
    note = [d for d in report.ledger.diagnostics if d.problem == openclaw_sqlite.HEARTBEAT_LEFT_OUT]
    assert len(note) == 1 and "heartbeat" in note[0].message and "heartbeat-filter-DxPIMf2l.mjs" in note[0].message
    assert sorted(note[0].seqs) == sorted(seq_of(report, e) for e in LEFT_OUT)
    assert not [f for f in report.findings if f.code in ("hole", "unanswered_tool_call", "orphan_tool_result")]
    # What OpenClaw does by design is a note, never a damaged line (`findings.NOTE_PROBLEMS`).
    assert not [f for f in report.findings if f.code == "malformed_line"]


def test_a_trailing_poll_is_merged_into_the_prompt_not_filtered(tmp_path: Path) -> None:
    """A user message at the leaf goes into the prompt (OpenClaw's orphan repair) before the filter
    reads the history: a poll there stays, as the real OpenClaw showed (it sent it merged into the
    prompt); one followed by its runtime-context message is no trailing message, and goes."""
    report = analyze(load(str(store(tmp_path, chain((user, "hp1", POLL))))))
    assert report.states[seq_of(report, "hp1")] == LIVE
    assert not [d for d in report.ledger.diagnostics if d.problem == openclaw_sqlite.HEARTBEAT_LEFT_OUT]


def test_an_acknowledgement_holding_a_lone_surrogate_is_measured_as_javascript_does(tmp_path: Path) -> None:
    """JSON.parse keeps a lone surrogate's escape as one UTF-16 unit: "HEARTBEAT_OK" and it is an
    acknowledgement (at most 300 units left), its span left out, not a crash of the length check."""
    rows = chain((user, "hp1", POLL), (said, "ha1", "HEARTBEAT_OK \ud800"), (user, "hu2", "q"), (said, "ha2", "a"))
    report = analyze(load(str(store(tmp_path, rows))))
    assert [report.states[seq_of(report, e)] for e in ("hp1", "ha1", "hu2", "ha2")] == [EXCLUDED, EXCLUDED, LIVE, LIVE]


def test_a_session_without_polls_is_not_filtered(tmp_path: Path) -> None:
    """An acknowledgement without a poll before it is an answer like any (and no row holding a poll:
    the reader runs no filter)."""
    report = analyze(load(str(store(tmp_path, chain((user, "hu1", "hi"), (said, "ha1", "HEARTBEAT_OK"))))))
    assert report.states[seq_of(report, "ha1")] == LIVE


def test_the_index_and_the_follower_read_heartbeats_as_the_whole_parse(tmp_path: Path) -> None:
    path = store(tmp_path, SPANS)
    fast, whole = openclaw_sqlite.load(str(path), None, None), openclaw_sqlite.load(str(path), None, None, index=False)
    assert [(r.seq, r.never_sent) for r in fast.records] == [(r.seq, r.never_sent) for r in whole.records]
    grown = tmp_path / "grown.sqlite"
    shutil.copyfile(BASE, grown)
    fol = Follower(str(grown))
    fol.poll()
    for k, row in enumerate([*SPANS, said("ha10", "hr10", "HEARTBEAT_OK")]):
        append(grown, [row], LEAF_SEQ + 1 + k)
        up = fol.poll()
        assert up is not None, row["id"]
        assert as_json(fol.report) == full_json(str(grown)), row["id"]
    assert up.whole != GROWN  # (a store holding a poll is read again in full: an append may change what goes)


# ---------------------------------------------------------------------------------------- the port


_FILTER_JS = """
const dist = process.argv[1];
const { t: filter } = await import(`${dist}/heartbeat-filter-DxPIMf2l.mjs`);
const { o: isAck, n: PROMPT } = await import(`${dist}/heartbeat-vWflpIwS.mjs`);
const { i: isSilent } = await import(`${dist}/tokens-BTKQYTUd.mjs`);
const { r: isPoll } = await import(`${dist}/heartbeat-filter-DxPIMf2l.mjs`);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const { cases, texts } = JSON.parse(input);
const kept = cases.map((msgs) => filter(msgs.map((m, i) => ({ ...m, __i: i })), 300, PROMPT).map((m) => m.__i));
process.stdout.write(JSON.stringify({ kept, acks: texts.map((t) => isAck(t, 300)), silent: texts.map((t) => isSilent(t)),
  polls: texts.map((t) => isPoll({ role: "user", content: t }, PROMPT)) }));
"""
H = openclaw_heartbeat
TEXTS = [
    "HEARTBEAT_OK", "NO_REPLY", " HEARTBEAT_OK.", "**HEARTBEAT_OK**", "HEARTBEAT_OK all good", "x" * 301 + " HEARTBEAT_OK",
    "x" * 290 + " HEARTBEAT_OK", "", "  ", "Disk full!", "<b>HEARTBEAT_OK</b>", "HEARTBEAT_OK HEARTBEAT_OK", "no_reply",
    '"NO_REPLY"', '{"action": "NO_REPLY"}', '{"action": "NO_REPLY", "x": 1}', "<thinking>hm</thinking> NO_REPLY",
    "thinking:\nI will stay quiet. NO_REPLY", "HEARTBEAT_OK\n\nDone", "Done. HEARTBEAT_OK!!", "HEARTBEAT_OK_x",
    "ok HEARTBEAT_OK 🙂", "NO_REPLY.", "…NO_REPLY…", "HEARTBEAT_OK\u00a0", "\ufeffHEARTBEAT_OK", "I'll stay quiet NO_REPLY",
    "analysis:\nnothing\nNO_REPLY", "HEARTBEAT_OK\n", "NO_REPLY\n", "NO\\u005fREPLY", '"NO\\u005fREPLY"', "NO REPLY",
    POLL, " [OpenClaw cron wake] ", "[OpenClaw heartbeat poll]\nmore", "[OpenClaw heartbeat poll] more", H.WAKE_PROMPTS[1],
    H.HEARTBEAT_PROMPT, H.HEARTBEAT_PROMPT + "\nextra", H.HEARTBEAT_PROMPT + " extra", H._TOOL_PROMPT,
    H._prompt_for_respond_tool(H.HEARTBEAT_PROMPT), H._DELIVERY_HINTS[0] + "\n\n" + POLL, H._DELIVERY_HINTS[3] + POLL,
    H._TASK_PREFIX + "\n- a\nAfter completing all due tasks, reply HEARTBEAT_OK.", H._TASK_PREFIX + "\n- a",
    "Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. If nothing needs attention, reply HEARTBEAT_OK.",
]  # fmt: skip


def _message(rng: random.Random) -> dict[str, Any]:
    k = rng.random()
    text = rng.choice(TEXTS)
    if k < 0.3:
        return {"role": "user", "content": rng.choice([text, [{"type": "text", "text": text}], "a real question"])}
    if k < 0.65:
        content: list[Any] = [{"type": "text", "text": text}]
        if rng.random() < 0.25:
            args = rng.choice([{}, {"notify": True}, {"notify": "true"}, '{"notify": false}', '{"notify": true}', "{bad"])
            content.append({"type": rng.choice(["toolCall", "tool_use"]), "id": rng.choice(["c1", "c2"]),
                            "name": rng.choice(["read", "heartbeat_respond"]), "arguments": args})  # fmt: skip
        if rng.random() < 0.1:
            content.insert(0, {"type": "thinking", "thinking": "t"})
        if rng.random() < 0.05:
            content.append({"type": "image", "data": "x"})
        return {"role": "assistant", "content": rng.choice([content, content, text])}
    if k < 0.85:
        return {"role": "toolResult", "toolCallId": rng.choice(["c1", "c2"]), "content": [{"type": "text", "text": "r"}],
                "isError": rng.random() < 0.3}  # fmt: skip
    if k < 0.9:
        return {"role": "user", "content": [{"type": "toolResult", "toolCallId": rng.choice(["c1", "c2"]), "is_error": rng.random() < 0.3}]}
    return {"role": rng.choice(["custom", "compactionSummary", "branchSummary"]), "content": "x"}


def test_the_port_leaves_out_what_openclaws_own_filter_does() -> None:
    """OpenClaw's own functions (its bundle, run by node) and the port agree on 3,000 random message
    sequences (polls, acknowledgements, calls, heartbeat_respond calls, results, other messages) and
    on each text above as a poll and as an acknowledgement."""
    if not NODE.exists() or not OPENCLAW.exists():
        pytest.fail("OpenClaw 2026.9.6 is not installed (tests/install_runtimes.sh installs it)", pytrace=False)
    rng = random.Random(7)
    cases = [[_message(rng) for _ in range(rng.randint(1, 9))] for _ in range(3000)]
    got = subprocess.run([str(NODE), "--input-type=module", "-e", _FILTER_JS, str(OPENCLAW.parent / "dist")],
                         input=json.dumps({"cases": cases, "texts": TEXTS}), capture_output=True, text=True, check=True)  # fmt: skip
    js = json.loads(got.stdout)
    assert [H.is_acknowledgement(t) for t in TEXTS] == js["acks"]
    assert [H.is_silent_reply(t) for t in TEXTS] == js["silent"]
    assert [H.is_poll(H.Unit({"role": "user", "content": t})) for t in TEXTS] == js["polls"]
    ours = [[i for i in range(len(c)) if i not in set(H.left_out([H.Unit(m) for m in c]))] for c in cases]
    assert ours == js["kept"]
    assert sum(len(k) < len(c) for k, c in zip(js["kept"], cases, strict=True)) > 300  # (the cases do drop)


def test_merged_joins_adjacent_answers_then_user_messages() -> None:
    """Before the filter: two polls in a row are one user message (its text both), no poll."""
    units = H.merged([H.Unit({"role": "user", "content": POLL}, [1]), H.Unit({"role": "user", "content": [{"type": "text", "text": POLL}]}, [2]),
                      H.Unit({"role": "assistant", "content": [{"type": "text", "text": "HEARTBEAT_OK"}]}, [3])])  # fmt: skip
    assert [u.seqs for u in units] == [[1, 2], [3]]
    assert not H.is_poll(units[0]) and H.left_out(units) == []


# ---------------------------------------------------------------------------------------- the runtime


def test_openclaw_resumes_stores_with_heartbeats_as_predicted(tmp_path: Path) -> None:
    """The real OpenClaw 2026.9.6 on the corpus store with SPANS appended: it sends what inspector
    predicts, item for item; and on a store shaped like the real session that ends in a poll and its
    runtime context, every turn a poll, its runtime context and HEARTBEAT_OK under a compaction that
    keeps them all (as OpenClaw before 2026.9 wrote them): that one under INSPECTOR_FULL_PROBES
    (tests/scope.py)."""
    real = chain((user, "rp1", POLL), (runtime_context, "rr1"), (said, "ra1", "HEARTBEAT_OK"), (compaction, "rc1", "rp1"),
                 (user, "rp2", POLL), (runtime_context, "rr2"), (said, "ra2", "HEARTBEAT_OK"), (compaction, "rc2", "rp1"),
                 (user, "rp3", POLL), (runtime_context, "rr3"))  # fmt: skip
    message = "[turn:hb1] are you still there?"
    rows = {"spans.sqlite": SPANS, "real.sqlite": real}
    stores = [store(tmp_path, rows[name], name) for name in probe_cases(list(rows), ["spans.sqlite"])]  # (tests/scope.py)
    try:
        runs = [resume(p, "s1", message, tmp_path / f"scratch-{p.stem}") for p in stores]
    except NotInstalled as e:
        pytest.fail(f"{e} (tests/install_runtimes.sh installs it): OpenClaw's reading cannot be checked", pytrace=False)
    for p, (rc, reqs) in zip(stores, runs, strict=True):
        assert rc == 0, (tmp_path / f"scratch-{p.stem}" / "openclaw.stderr.log").read_text()[-2000:]
        sent_as_predicted(_first_agent_request(reqs), analyze(load(str(p))), message)
