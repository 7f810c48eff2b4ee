"""Claude Code resumes what we wrote (issue 14 §3): the real CLI continues from our checkpoint.

Every Claude Code session of the peer corpus (`../shared/peers/claude_code/corpus/`), of the real
transcripts in `../shared/real_sessions/claude_code/` (two are refused: a sub-agent's transcript,
one whose parent links do not walk), and every
incident session the real CLI wrote for this test (`tests/peers/claude_code_resume/sessions/`,
made by its harness: a live question summarized by an auto-compaction, an empty summary, parallel
calls around a /compact) is repaired in place (`inspector repair --write`, the extractive
summarizer) with each strategy that has something to install. Then Claude Code 2.1.328 itself
resumes each repaired file (`claude --resume <id> -p ...`, offline against the scripted local
Messages API) and the first request it sends must be exactly what `inspector context --json`
predicted on the repaired file: our summary text to the character, then the kept records in
order (Claude Code's own "No response requested." to a turn left unfinished among them, predicted
as a synthetic item), then the new prompt; no orphaned result, no unanswered call. What the CLI
adds of its own (the system reminders it renders, its environment note) is the only thing left over.

The CLI is installed by tests/peers/claude_code_hook/install.sh (tests/install_runtimes.sh); when
it is missing the test fails naming the cause.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.cli.main import main
from inspector.formats import load
from inspector.ledger.model import Ledger
from tests.conftest import REPO, SHARED

PEERS = SHARED / "peers" / "claude_code" / "corpus"
RESUME_DIR = REPO / "tests" / "peers" / "claude_code_resume"
INCIDENTS = RESUME_DIR / "sessions"
REAL = SHARED / "real_sessions" / "claude_code"  # transcripts real users' Claude Code (2.1.x) wrote
# Sessions a repair must refuse, and why (nothing is written).
REFUSED = {
    "real-agent-sessions__claude_small": "parent links do not walk",  # trimmed by its source: reused uuids
    "real-spotter__8463c716__agent-acompact-f46190": "sub-agent's transcript",
}
BUDGETS = ["--window", "16000", "--reserve", "2000"]
# Each strategy with a tail short enough that these small sessions have something to summarize,
# and a recovery (made where it changes something: plan.py `_recovery_changes_nothing`).
STRATEGIES: tuple[tuple[str, ...], ...] = (
    ("resummarize", "--keep-recent", "200"),
    ("compact", "--keep-recent", "200"),
    ("compact", "--keep-recent", "50"),
    ("recover",),
)


# The incident each generated session shows before its repair (an error of that code), which
# the repairs that rebuild or recover must heal.
INCIDENT_CODES = {"incident-cc_amnesiac_compact": "hole", "incident-cc_live_question_summarized": "live_question_summarized"}
HEALING = (".resummarize", ".recover")


def _harness() -> Any:
    """tests/peers/claude_code_resume/harness.py, under its own module name."""
    name = "claude_code_resume_harness"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, RESUME_DIR / "harness.py")
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


def _sessions() -> list[tuple[str, Path]]:
    out = [(f"incident-{p.stem}", p) for p in sorted(INCIDENTS.glob("*.jsonl"))]
    out += [(f"peer-{p.stem}", p) for p in sorted(PEERS.glob("*.jsonl")) if not p.name.endswith((".requests.jsonl", ".stream.jsonl"))]
    out += [(f"real-{p.stem}", p) for p in sorted(REAL.glob("*.jsonl"))]
    return out


SESSIONS = _sessions()


def _repaired(tmp: Path, capsys: pytest.CaptureFixture[str]) -> list[tuple[str, Path, Path]]:
    """Every (case, repaired file, its source): a copy of each session per strategy that installs something."""
    done: list[tuple[str, Path, Path]] = []
    for name, src in SESSIONS:
        for strategy, *opts in STRATEGIES:
            args = ["--strategy", strategy, *opts, *BUDGETS]
            assert main(["plan", str(src), *args, "--json"]) == 0, name
            if json.loads(capsys.readouterr().out)["action"] == "noop":
                continue
            label = f"{name}.{strategy}{''.join(opts)}"
            f = tmp / f"{label}.jsonl"
            shutil.copyfile(src, f)
            f.chmod(0o644)
            if name in REFUSED:
                assert main(["repair", str(f), *args, "--write"]) == 2, label
                assert REFUSED[name] in capsys.readouterr().err, label
                assert f.read_bytes() == src.read_bytes(), label
                continue
            code = main(["repair", str(f), *args, "--write", "--json"])
            res = json.loads(capsys.readouterr().out)
            assert code == 0, (label, res["reason"])
            assert res["backup"] and Path(res["backup"]).read_bytes() == src.read_bytes()
            done.append((label, f, src))
    return done


def _record_of_line(led: Ledger) -> dict[str, str]:
    """Line uuid -> the id of the record the prediction names for it: a reply's continuation lines
    name their reply's first line, a summary line its boundary."""
    by_line = {r.line: r for r in led.records}
    out: dict[str, str] = {}
    for r in led.records:
        if r.id is None:
            continue
        e = r.extra or {}
        into = e.get("merged_into_line") if isinstance(e.get("merged_into_line"), int) else e.get("summary_of_line")
        target = by_line.get(into) if isinstance(into, int) else r
        out[r.id] = (target or r).id or r.id
    return out


def _sent_items(
    harness: Any, body: dict[str, Any], copy: str, led: Ledger, predicted: list[dict[str, Any]]
) -> tuple[list[tuple[str, str | None]], list[Any], list[Any]]:
    """(record id, call id of a synthetic result) per item the request carries, in order; the
    blocks the runtime added itself; the blocks of the new prompt. A text several lines hold
    alike is credited to the predicted one (the request cannot tell them apart). A line's item is
    where its first block is: Claude Code splits a line holding a tool result and other blocks when
    it joins it to other user lines (results first, `NU`/`fXo`), and the rest of the line, later in
    the same message, is the same item."""
    names = _record_of_line(led)
    named = {m["record_id"] for m in predicted}
    # A user message all of whose results the CLI removed, or a reply all of whose calls, is sent
    # as its text, on no line: the item predicted so (the line it stands in for).
    emptied = {
        (m["role"], m["preview"]): m["record_id"]
        for m in predicted
        if m["record_id"] is not None
        and (m["role"], m["preview"]) in {("user", harness.NO_CONTENT), ("user", harness.ORPHANS_REMOVED), ("assistant", harness.REPEATED_CALLS_REMOVED)}
    }
    items: list[tuple[str, str | None]] = []
    placed: dict[str, int] = {}  # record id -> the request message its item is in
    own: list[Any] = []
    prompt: list[Any] = []
    for s in harness.request_blocks(body, copy, {u for u, rid in names.items() if rid in named}):
        if s.line_uuid is not None and (s.line_uuid in names or s.line_uuid.startswith("line:")):
            rid = names.get(s.line_uuid, s.line_uuid)
            if (not items or items[-1][0] != rid) and placed.get(rid) != s.message:
                items.append((rid, None))
                placed[rid] = s.message
        elif s.line_uuid is None and emptied.get((s.role, s.text)) not in (None, *placed):
            items.append((emptied[s.role, s.text], None))
            placed[emptied[s.role, s.text]] = s.message
        elif s.line_uuid is not None or s.kind == "tool_result":
            # A line the CLI appended on resume: the new prompt, a result it made up for a call
            # left unanswered (predicted as a synthetic result), or its reply to the turn it found
            # unfinished (predicted as a synthetic reply, on resume); or a result it made up as it
            # built the request (`harness.MISSING_RESULT`), on no line.
            if s.kind == "tool_result":
                items.append((f"synthetic:{s.call_id}", s.call_id))
            elif s.role == "assistant":
                items.append((f"resume:{s.text}", None))
            elif s.text.startswith("<system-reminder>"):
                own.append(s)  # e.g. a background task's notification the CLI writes on resume
            else:
                prompt.append(s)
        else:
            own.append(s)
    return items, own, prompt


def _predicted_item(m: dict[str, Any]) -> tuple[str, str | None]:
    """A predicted item as `_sent_items` names what was sent: a record by its id, a synthetic
    result by its call, the reply Claude Code appends on resume by its text."""
    if m.get("on_resume"):
        return (f"resume:{m['preview']}", None)
    if m["synthetic"]:
        return (f"synthetic:{m['tool_call_id']}", m["tool_call_id"])
    return (m["record_id"] if m["record_id"] is not None else f"line:{m['line']}", None)


def resumed_as_predicted(harness: Any, body: dict[str, Any], transcript: str, report: Any, predicted: list[dict[str, Any]]) -> str | None:
    """What the first request Claude Code sent on resuming a repaired file (`body`; the copy it
    resumed, `transcript`) says against `inspector context --json`'s `predicted` messages and the
    analysis `report` of that file: None when it is as predicted, else the first difference.

    Every item the request carries, in order, is a predicted one; our summary, to the character,
    is the first thing sent (Claude Code joins consecutive user lines into one API message and ends
    each text but the last with a newline: the peer corpus's requests show it for its own lines
    too); then the new prompt, and nothing else but what the CLI renders itself; no orphaned result,
    no unanswered call."""
    items, own, prompt = _sent_items(harness, body, transcript, report.ledger, predicted)
    want = [_predicted_item(m) for m in predicted]
    if items != want:
        extra, missing = [i for i in items if i not in want], [i for i in want if i not in items]
        if extra or missing:
            return f"items sent but not predicted {extra}, predicted but not sent {missing}"
        return f"items sent in another order: {items} != predicted {want}"
    first = body["messages"][0]["content"]
    text = first if isinstance(first, str) else first[0]["text"]
    joined = not isinstance(first, str) and len(first) > 1
    if text != report.context[0].text + ("\n" if joined else ""):
        return f"first text sent {text[:200]!r} is not the summary {report.context[0].text[:200]!r}"
    if [s.text for s in prompt] != [harness.NEXT_PROMPT]:
        return f"the new prompt sent as {[s.text[:80] for s in prompt]}"
    if not all(s.role == "system" or s.text.startswith("<system-reminder>") for s in own):
        return f"blocks the CLI added: {[s.text[:80] for s in own]}"
    blocks = harness.request_blocks(body, transcript)
    calls = sorted(s.call_id for s in blocks if s.kind == "tool_use")
    results = sorted(s.call_id for s in blocks if s.kind == "tool_result")
    if calls != results:
        return f"calls {calls} != results {results}"
    return None


def test_claude_code_resumes_every_repaired_session_as_predicted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    harness = _harness()
    try:
        harness.cli.check_installed()
    except harness.HarnessError as e:
        pytest.fail(f"Claude Code cannot be run, so its acceptance cannot be checked: {e}", pytrace=False)
    for d in (PEERS, REAL):
        if not d.exists():
            pytest.fail(f"{d} is missing (the checkout expects ../shared next to it)", pytrace=False)
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "repaired").mkdir()
    repaired = _repaired(tmp_path / "repaired", capsys)
    assert {n.split(".")[0] for n, _, _ in repaired} == {n for n, _ in SESSIONS} - set(REFUSED)
    assert {n.split(".")[1] for n, _, _ in repaired} >= {"resummarize--keep-recent200", "compact--keep-recent200", "recover"}
    # Every summarizing strategy has work on every session; a recovery where something is summarized,
    # lost or orphaned (the incidents among them), none where every message is sent raw already.
    summarizing = [n for n, _, _ in repaired if not n.endswith(".recover")]
    assert len(summarizing) == (len(SESSIONS) - len(REFUSED)) * (len(STRATEGIES) - 1)
    assert {f"{n}.recover" for n in INCIDENT_CODES} <= {n for n, _, _ in repaired}
    resumed = harness.resume_many([str(f) for _, f, _ in repaired], str(tmp_path / "resume"))
    for (name, f, src), run in zip(repaired, resumed, strict=True):
        assert run.rc == 0, (name, run.stderr)
        assert main(["context", str(f), "--json"]) == 0
        predicted = json.loads(capsys.readouterr().out)["messages"]
        report = analyze(load(str(f)))
        # The lines as issue 14 states them: the boundary hung under the leaf by logicalParentUuid,
        # the summary after it, read back as one checkpoint, the latest on the path.
        boundary, summary = (json.loads(x) for x in f.read_bytes().splitlines()[-2:])
        before = load(str(src))
        assert boundary["parentUuid"] is None and boundary["subtype"] == "compact_boundary", name
        assert boundary["logicalParentUuid"] == before.records[before.leaf_seq].id, name
        assert boundary["compactMetadata"]["trigger"] == "manual", name
        assert summary["isCompactSummary"] is True and summary["parentUuid"] == boundary["uuid"], name
        assert report.checkpoints[-1].record.id == boundary["uuid"], name
        assert not any(it.orphan or it.unanswered for it in report.context), name
        holes_before = analyze(before).coverage_counts()["hole"]
        assert report.coverage_counts()["hole"] <= holes_before, name
        assert report.coverage_counts()["hole"] == 0 or ".compact" in name, name
        code = INCIDENT_CODES.get(name.split(".")[0])
        if code is not None:
            assert any(x.code == code and x.severity == "error" for x in analyze(before).findings), name
            if any(h in name for h in HEALING):
                assert not any(x.code == code and x.severity == "error" for x in report.findings), name

        problem = resumed_as_predicted(harness, run.first_main(), run.transcript, report, predicted)
        assert problem is None, (name, problem)


# A local command's lines as Claude Code writes them (the incident session cc_amnesiac_compact,
# lines 40-42): the caveat (a meta line), the command, its output.
_CAVEAT = (
    "<local-command-caveat>The command below was run directly in Claude Code, not sent to you as a request, "
    "and its output goes straight to the user. It's recorded here as context for later messages.</local-command-caveat>"
)
ENDINGS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    # A prompt never answered: Claude Code appends its "No response requested." on resume.
    "unanswered_prompt": [("[Q9] A prompt the session stopped before answering.", {})],
    # A local command (its output goes to the user, no turn is open): no reply appended.
    "local_command": [
        (_CAVEAT, {"isMeta": True}),
        ("<command-name>/cost</command-name>\n            <command-message>cost</command-message>\n            <command-args></command-args>", {}),
        ("<local-command-stdout>Total cost: $0.00</local-command-stdout>", {}),
    ],
}


def _ending_on(src: Path, dst: Path, lines: list[tuple[str, dict[str, Any]]]) -> None:
    """The session with user lines appended under its last reply, as Claude Code writes them."""
    objs = [json.loads(x) for x in src.read_bytes().splitlines() if x.strip()]
    leaf = [o for o in objs if o.get("type") == "assistant"][-1]
    fields = {k: leaf[k] for k in ("isSidechain", "userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch") if k in leaf}
    parent = leaf["uuid"]
    out = src.read_bytes()
    for i, (text, extra) in enumerate(lines, 1):
        uid = f"0e4d1a9e-0000-4000-8000-{i:012d}"
        o = {"parentUuid": parent, **fields, "type": "user", "message": {"role": "user", "content": text},
             "uuid": uid, "timestamp": "2026-11-30T14:00:00.000Z", **extra}  # fmt: skip
        out += json.dumps(o).encode() + b"\n"
        parent = uid
    dst.write_bytes(out)


def test_claude_code_replies_on_resume_exactly_when_predicted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The reply Claude Code appends to a turn it finds unfinished on resume is predicted as a
    synthetic item at the end of the next request, and only where it appends one: not after a
    local command, whose lines are user lines too (docs/runtimes/claude_code.md §2)."""
    harness = _harness()
    try:
        harness.cli.check_installed()
    except harness.HarnessError as e:
        pytest.fail(f"Claude Code cannot be run, so its acceptance cannot be checked: {e}", pytrace=False)
    if not PEERS.exists():
        pytest.fail(f"{PEERS} is missing (the checkout expects ../shared next to it)", pytrace=False)
    files = []
    for name, lines in ENDINGS.items():
        f = tmp_path / f"{name}.jsonl"
        _ending_on(PEERS / "manual_compact.jsonl", f, lines)
        files.append(f)
    runs = harness.resume_many([str(f) for f in files], str(tmp_path / "resume"))
    replied = {}
    for f, run in zip(files, runs, strict=True):
        assert run.rc == 0, (f.name, run.stderr)
        assert main(["context", str(f), "--json"]) == 0
        predicted = json.loads(capsys.readouterr().out)["messages"]
        led = analyze(load(str(f))).ledger
        items, _own, prompt = _sent_items(harness, run.first_main(), run.transcript, led, predicted)
        assert items == [_predicted_item(m) for m in predicted], f.name
        assert [s.text for s in prompt] == [harness.NEXT_PROMPT], f.name
        replied[f.stem] = predicted[-1].get("on_resume", False)
    assert replied == {"unanswered_prompt": True, "local_command": False}
