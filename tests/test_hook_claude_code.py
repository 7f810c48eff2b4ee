"""`inspector hook claude-code` (issue 17 point 4): the answer for each event, our own errors never
blocking, and the proof with the real Claude Code 2.1.328 (tests/peers/claude_code_hook/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.cli import hook
from inspector.formats import load, load_bytes
from tests.conftest import REPO, SHARED, need_shared

PEERS = SHARED / "peers" / "claude_code" / "corpus"
MANUAL = PEERS / "manual_compact.jsonl"
HARNESS_DIR = REPO / "tests" / "peers" / "claude_code_hook"


def _objs(path: Path) -> list[dict[str, Any]]:
    need_shared(path)
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(tmp_path: Path, objs: list[dict[str, Any]], name: str = "s.jsonl") -> Path:
    p = tmp_path / name
    p.write_bytes(b"".join(json.dumps(o).encode() + b"\n" for o in objs))
    return p


def _with_empty_summary(tmp_path: Path) -> Path:
    """The peer's manual compaction with its summary emptied: everything it removed is a hole."""
    objs = _objs(MANUAL)
    assert objs[52]["isCompactSummary"] is True
    objs[52]["message"]["content"] = ""
    return _write(tmp_path, objs, "empty-summary.jsonl")


def _hook(event: dict[str, Any] | bytes, *flags: str) -> subprocess.CompletedProcess[str]:
    data = event if isinstance(event, bytes) else json.dumps(event).encode()
    return subprocess.run(
        [sys.executable, "-m", "inspector", "hook", "claude-code", *flags],
        input=data.decode(errors="replace"), capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def _event(name: str, path: Path, **kw: Any) -> dict[str, Any]:
    return {"session_id": "s-1", "transcript_path": str(path), "cwd": "/tmp", "hook_event_name": name, **kw}


# ------------------------------------------------------------------------------------- answers


def test_a_resume_with_a_hole_warns_and_tells_the_model_what_it_lost(tmp_path: Path) -> None:
    path = _with_empty_summary(tmp_path)
    out = _hook(_event("SessionStart", path, source="resume"))
    assert out.returncode == 0 and out.stderr == ""
    ans = json.loads(out.stdout)
    assert ans["systemMessage"].startswith("inspector: this session has hole: 10 messages")
    spec = ans["hookSpecificOutput"]
    assert spec["hookEventName"] == "SessionStart"
    ctx = spec["additionalContext"]
    # the lost user prompts by line, and where to read them
    assert "- line 3: [P1] Please say hello using bash." in ctx
    assert "[P2] Run two commands in parallel" in ctx
    assert str(path) in ctx and "Read them there" in ctx


def test_at_a_compaction_only_what_it_cannot_bring_back_is_reported(tmp_path: Path) -> None:
    """SessionStart(compact) sees the transcript before its boundary: the budget is about the
    request the compaction is rebuilding, so only holes are reported then."""
    sound = MANUAL
    need_shared(sound)
    over = ("--window", "1000")
    assert json.loads(_hook(_event("SessionStart", sound, source="resume"), *over).stdout)["systemMessage"].startswith(
        "inspector: this session has over_budget"
    )
    at_compact = _hook(_event("SessionStart", sound, source="compact"), *over)
    assert at_compact.returncode == 0 and at_compact.stdout == ""
    holed = _hook(_event("SessionStart", _with_empty_summary(tmp_path), source="compact"), *over)
    ans = json.loads(holed.stdout)
    assert "hole" in ans["systemMessage"] and "over_budget" not in ans["systemMessage"]


def test_pre_compact_answers_in_plain_text_for_the_user_and_the_summarizer(tmp_path: Path) -> None:
    out = _hook(_event("PreCompact", _with_empty_summary(tmp_path), trigger="auto", custom_instructions=None))
    assert out.returncode == 0
    assert out.stdout.startswith("inspector: this session has hole: 10 messages")
    assert "State in the summary that this history was lost" in out.stdout
    with pytest.raises(json.JSONDecodeError):  # Claude Code does not parse PreCompact's stdout as JSON
        json.loads(out.stdout)


def test_a_sound_session_and_other_events_are_silent_success(tmp_path: Path) -> None:
    need_shared(MANUAL)
    for ev in (
        _event("SessionStart", MANUAL, source="resume"),
        _event("PreCompact", MANUAL, trigger="manual"),
        _event("SessionStart", _with_empty_summary(tmp_path), source="startup"),
        _event("Stop", _with_empty_summary(tmp_path)),
    ):
        out = _hook(ev)
        assert (out.returncode, out.stdout, out.stderr) == (0, "", ""), ev


def _calls(o: dict[str, Any]) -> bool:
    content = o["message"]["content"]
    return isinstance(content, list) and any(b.get("type") == "tool_use" for b in content)


def test_a_result_whose_call_is_gone_is_not_sent_and_the_hook_stays_quiet() -> None:
    """Claude Code 2.1.328 removes from the joined user message a result no call of the reply before
    it asks for (`Pqi`, tests/peers/claude_code_resume/order_probe.py): no orphan reaches the
    provider, so there is no orphan to warn of; the line is excluded (before, inspector predicted
    an orphan sent and the hook warned of one the CLI never sends)."""
    objs = _objs(MANUAL)
    # the line of the call made after the compaction (Read) gone: its result answers no call
    call = max(i for i, o in enumerate(objs) if o.get("type") == "assistant" and _calls(o))
    for o in objs:
        if o.get("parentUuid") == objs[call]["uuid"]:
            o["parentUuid"] = objs[call]["parentUuid"]
    gone = {b["id"] for b in objs[call]["message"]["content"] if b.get("type") == "tool_use"}
    del objs[call]
    report = analyze(load_bytes(b"".join(json.dumps(o).encode() + b"\n" for o in objs), "orphan.jsonl", fmt="claude_code"))
    assert not any(f.code == "orphan_tool_result" for f in report.findings)
    result = next(r for r in report.ledger.records if r.role == "tool" and r.result_id in gone)
    assert report.states[result.seq] == "excluded"
    ans = hook.answer(hook.HookEvent("SessionStart", "orphan.jsonl", source="resume"), report)
    assert ans is None or "orphan_tool_result" not in json.loads(ans)["systemMessage"]


# ------------------------------------------------------------------------------ our own errors


@pytest.mark.parametrize(
    ("stdin", "says"),
    [
        (b"", "stdin is empty"),
        (b"not json", "stdin is not JSON"),
        (b"[1, 2]", "a JSON list, not a hook event object"),
        (b'{"transcript_path": "x"}', "no hook_event_name"),
        (b'{"hook_event_name": "PreCompact"}', "the PreCompact event has no transcript_path"),
        (b'{"hook_event_name": "PreCompact", "transcript_path": "/nonexistent/t.jsonl"}', "/nonexistent/t.jsonl"),
    ],
)
def test_a_bad_event_is_one_line_on_stderr_and_never_blocks(stdin: bytes, says: str) -> None:
    out = _hook(stdin)
    # 1: Claude Code's non-blocking error (2 would stop a compaction)
    assert out.returncode == 1 and out.stdout == ""
    assert says in out.stderr and out.stderr.startswith("inspector hook claude-code: ")
    assert "Traceback" not in out.stderr and out.stderr.count("\n") == 1


def test_a_mistyped_flag_is_not_a_blocking_exit_code() -> None:
    out = _hook(b"{}", "--windw", "5")
    assert out.returncode == 1 and "unrecognized arguments: --windw" in out.stderr


def test_a_bug_in_the_check_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def boom(*_a: Any, **_k: Any) -> None:
        raise ValueError("kaput")

    monkeypatch.setattr(hook, "analyze", boom)
    need_shared(MANUAL)
    ev = json.dumps(_event("SessionStart", MANUAL, source="resume")).encode()
    assert hook.run(["claude-code"], stdin=ev) == 1
    assert "internal error: ValueError: kaput" in capsys.readouterr().err


# ------------------------------------------------------------------- the adapter, with a hook


def test_a_line_hung_off_the_hooks_attachment_still_follows_the_boundary(tmp_path: Path) -> None:
    """With a SessionStart hook, Claude Code 2.1.328 writes the hook's attachments before the
    boundary and hangs the /compact caveat off the last of them (the boundary's logicalParentUuid):
    the summary is still what it sends (the harness's request after the compaction)."""

    def line(kind: str, uuid: str, parent: str | None, content: Any = None, **kw: Any) -> dict[str, Any]:
        o: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "type": kind, "uuid": uuid, "sessionId": "s", **kw}
        if kind in ("user", "assistant"):
            o["message"] = {"role": kind, "content": content}
            if kind == "assistant":
                o["message"].update(id=f"m-{uuid}", model="claude-x", stop_reason="end_turn")
        return o

    objs = [
        line("user", "u1", None, "[P1] hello"),
        line("assistant", "a1", "u1", [{"type": "text", "text": "hi"}]),
        line("attachment", "h1", "a1", attachment={"type": "hook_additional_context"}),
        line("system", "b1", None, subtype="compact_boundary", content="Conversation compacted", logicalParentUuid="h1",
             compactMetadata={"trigger": "manual", "preTokens": 100}),
        line("user", "s1", "b1", "This session is being continued. Summary: the user said hello.", isCompactSummary=True),
        line("user", "c1", "h1", "<local-command-caveat>caveat</local-command-caveat>", isMeta=True),
        line("user", "u2", "c1", "[P2] still there?"),
    ]
    report = analyze(load(str(_write(tmp_path, objs)), fmt="claude_code"))
    assert len(report.checkpoints) == 1
    assert [report.ledger.records[s].id for s in report.path][-4:] == ["b1", "s1", "c1", "u2"]
    assert report.context[0].kind == "summary"
    assert report.coverage_counts()["summarized"] == 2


# ------------------------------------------------------------------------ the real Claude Code


def test_the_real_claude_code_runs_the_hook_and_receives_what_it_printed(tmp_path: Path) -> None:
    """Claude Code 2.1.328, offline against the scripted model, with the hook in its settings:
    PreCompact's note reaches the summarizer, SessionStart(resume) after the compaction answers
    from the compacted transcript, and the next request carries exactly our additionalContext."""
    sys.path.insert(0, str(HARNESS_DIR))
    try:
        import harness
    finally:
        sys.path.remove(str(HARNESS_DIR))
    try:
        s = harness.run_session(str(tmp_path))
    except harness.HarnessError as e:
        pytest.fail(f"the Claude Code hook harness cannot run: {e}")
    assert [r.rc for r in s.runs] == [0, 0, 0], [r.stderr for r in s.runs]
    kinds = [r.get("kind") for r in s.requests]
    assert kinds == ["main", "main", "compact", "main"], kinds
    answers = [(i, ev["hook_name"], ev["exit_code"], ev["stdout"]) for i, ev in s.hook_responses()]
    assert [a[:3] for a in answers] == [(1, "SessionStart:resume", 0), (1, "SessionStart:compact", 0), (2, "SessionStart:resume", 0)]
    assert answers[1][3] == ""  # at the compaction: no hole, and the budget is the rebuilt request's

    # PreCompact: its plain-text answer is in the summarizer's instructions
    compact_body = json.dumps(s.requests[2]["body"])
    assert "Additional Instructions:" in compact_body and "inspector: this session has over_budget" in compact_body

    # After the compaction: the hook read the compacted transcript (a checkpoint on the path) ...
    after = answers[2][3]
    ans = json.loads(after)
    context = ans["hookSpecificOutput"]["additionalContext"]
    ours = hook.answer(
        hook.HookEvent("SessionStart", s.transcript, source="resume"),
        analyze(_transcript_before_last_prompt(s.transcript), window=harness.WINDOW, reserve=harness.RESERVE),
    )
    assert ours is not None and json.loads(ours) == ans
    # ... and the next request to the model carries exactly what it printed
    last = s.requests[3]["body"]
    sent = [b.get("text", "") for m in last["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])]
    assert any(f"SessionStart hook additional context: {context}" in t for t in sent)
    assert not any("A check of this session" in json.dumps(r["body"]) for r in s.requests[:3])


def _transcript_before_last_prompt(transcript: str) -> Any:
    """The transcript as it stood when the last run's SessionStart hook ran (before its prompt)."""
    lines = Path(transcript).read_text().splitlines()
    n = next(i for i, line in enumerate(lines) if "[H2] Are you still there?" in line and '"type":"user"' in line)
    led = load(transcript, fmt="claude_code", upto_line=n)
    assert any(r.kind == "checkpoint" for r in led.records)  # the compaction is in it
    return led
