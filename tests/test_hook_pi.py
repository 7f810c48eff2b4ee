"""`inspector hook pi` and the pi extension (issue 17 point 4): the JSON answer for each event, our
own errors, and the proof with the real pi 0.73.1 (tests/peers/pi_hook/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.cli import hook
from inspector.formats import load
from tests.conftest import REPO, SHARED, need_shared

PEER = SHARED / "peers" / "pi" / "corpus" / "manual_compact.jsonl"
HARNESS_DIR = REPO / "tests" / "peers" / "pi_hook"


def _objs(path: Path) -> list[dict[str, Any]]:
    need_shared(path)
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(tmp_path: Path, objs: list[dict[str, Any]], name: str = "s.jsonl") -> Path:
    p = tmp_path / name
    p.write_bytes(b"".join(json.dumps(o).encode() + b"\n" for o in objs))
    return p


def _with_empty_summaries(tmp_path: Path) -> Path:
    """The peer's manual compactions with their summaries emptied: what they removed is a hole."""
    objs = _objs(PEER)
    for o in objs:
        if o["type"] == "compaction":
            o["summary"] = ""
    return _write(tmp_path, objs, "empty-summary.jsonl")


def _hook(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspector", "hook", "pi", *args], capture_output=True, text=True, timeout=60
    )


def _answer(*args: str) -> dict[str, Any]:
    out = _hook(*args)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    return json.loads(out.stdout)


# ------------------------------------------------------------------------------------- answers


def test_a_compaction_that_lost_history_is_notified_and_told_to_the_model(tmp_path: Path) -> None:
    path = _with_empty_summaries(tmp_path)
    ans = _answer("--event", "session_compact", "--session", str(path))
    assert ans["schema"] == "inspector.hook.pi/1" and ans["checked"] is True
    assert [f["code"] for f in ans["findings"]] == ["hole", "hole"]
    assert ans["notify"].startswith("inspector: this session has 2 problems: hole: 15 messages")
    assert ans["notify_type"] == "error"
    ctx = ans["context"]
    assert "- line 4: [turn:m01] Check module 01." in ctx and "- line 28: [turn:m04] Check module 04." in ctx
    assert str(path) in ctx and "Read them there" in ctx


def test_a_sound_session_gets_an_answer_with_nothing_to_say() -> None:
    need_shared(PEER)
    ans = _answer("--event", "session_compact", "--session", str(PEER))
    assert (ans["checked"], ans["findings"], ans["notify"], ans["notify_type"], ans["context"]) == (True, [], None, None, None)


def test_an_over_budget_request_is_reported_with_the_model_window() -> None:
    need_shared(PEER)
    ans = _answer("--event", "session_start", "--reason", "resume", "--session", str(PEER), "--window", "4000")
    assert [f["code"] for f in ans["findings"]] == ["over_budget"]
    assert ans["notify_type"] == "error" and ans["notify"].startswith("inspector: this session has over_budget")


@pytest.mark.parametrize("reason", ["new", "reload"])
def test_session_starts_without_a_new_history_are_not_checked(tmp_path: Path, reason: str) -> None:
    ans = _answer("--event", "session_start", "--reason", reason, "--session", str(tmp_path / "not-written-yet.jsonl"))
    assert (ans["checked"], ans["notify"], ans["context"]) == (False, None, None)


def test_what_the_model_was_told_already_is_not_injected_twice(tmp_path: Path) -> None:
    """The extension's message is saved in the session (custom_message): while it is still in the
    request, a later check (a resume) notifies the user again but gives the model nothing new."""
    path = _with_empty_summaries(tmp_path)
    told = _answer("--event", "session_compact", "--session", str(path))["context"]
    objs = _objs(path)
    objs.append({"type": "custom_message", "customType": "inspector", "content": told, "display": True,
                 "id": "c0ffee01", "parentId": objs[-1]["id"], "timestamp": objs[-1]["timestamp"]})  # fmt: skip
    _write(tmp_path, objs, path.name)
    again = _answer("--event", "session_start", "--reason", "startup", "--session", str(path))
    assert again["notify"] and again["context"] is None
    assert hook.already_in_request(analyze(load(str(path), fmt="pi")), told)


# ------------------------------------------------------------------------------ our own errors


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--event", "session_compact", "--session", "/nonexistent/s.jsonl"), "/nonexistent/s.jsonl"),
        (("--session", "x.jsonl"), "pi needs --event"),
        (("--event", "session_start", "--session", "x.jsonl"), "--event session_start needs --reason"),
        (("--evnt", "session_compact"), "unrecognized arguments: --evnt"),
    ],
)
def test_a_check_that_cannot_run_is_one_line_on_stderr_and_exit_2(args: tuple[str, ...], says: str) -> None:
    out = _hook(*args)
    assert out.returncode == 2 and out.stdout == ""
    assert says in out.stderr and "Traceback" not in out.stderr


def test_a_bug_in_the_check_is_reported_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def boom(*_a: Any, **_k: Any) -> None:
        raise ValueError("kaput")

    monkeypatch.setattr(hook, "analyze", boom)
    assert hook.run(["pi", "--event", "session_compact", "--session", str(_with_empty_summaries(tmp_path))]) == 2
    assert capsys.readouterr().err == "inspector hook pi: internal error: ValueError: kaput\n"


def test_pi_flags_are_refused_for_claude_code() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "inspector", "hook", "claude-code", "--session", "x.jsonl"],
        input="", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 1 and "--session is for pi" in out.stderr


def test_the_extension_ships_in_the_package() -> None:
    out = _hook("--extension-path")
    assert out.returncode == 0
    path = Path(out.stdout.strip())
    assert path == REPO / "inspector" / "hooks" / "pi-extension.ts"
    text = path.read_text()
    assert all(f'pi.on("{e}"' in text for e in ("session_compact", "session_start", "before_agent_start"))
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"hooks/*.ts"' in pyproject  # package-data: installed with the wheel, not only in a checkout


# ------------------------------------------------------------------------------- the real pi


def _texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if isinstance(b, dict)]


def _carries(request: dict[str, Any], text: str) -> int:
    """How many user messages of a request pi sent say exactly `text`."""
    return sum(t == text for m in request["body"]["messages"] if m.get("role") == "user" for t in _texts(m))


def test_the_real_pi_runs_the_extension_and_sends_what_it_injected(tmp_path: Path) -> None:
    """pi 0.73.1, offline against the scripted model, with the extension loaded by `-e`: a manual
    compaction whose summary comes back empty -> session_compact ran the check -> the user was
    notified -> the next request pi sent carries exactly the context `inspector hook pi` printed;
    pi restarted on the session: notified again, not injected twice."""
    sys.path.insert(0, str(HARNESS_DIR))
    try:
        import pi_harness as harness
    finally:
        sys.path.remove(str(HARNESS_DIR))
    try:
        s = harness.run_session(str(tmp_path))
    except harness.HarnessError as e:
        pytest.fail(f"the pi hook harness cannot run: {e}")
    assert [r.extension_errors() for r in s.runs] == [[], []], [r.stderr for r in s.runs]
    session = s.session_file
    assert [c[:4] for c in s.hook_calls] == [["hook", "pi", "--event", "session_compact"], ["hook", "pi", "--event", "session_start"]]
    assert s.hook_calls[0][4:6] == ["--session", session] and "--reason" in s.hook_calls[1]

    # what the check said when pi had just appended the compaction entry
    lines = Path(session).read_text().splitlines()
    at = next(i for i, line in enumerate(lines, 1) if json.loads(line)["type"] == "compaction")
    assert json.loads(lines[at - 1])["summary"].strip().startswith("---")  # the summarizer's empty answer (split turn)
    expected = hook.pi_answer(
        hook.PiEvent("session_compact", session),
        analyze(load(session, fmt="pi", upto_line=at), window=harness.WINDOW),
    )
    assert expected["findings"] and expected["findings"][0]["code"] == "hole"

    # the user was notified, in pi's RPC UI protocol
    first, second = (run.notifications() for run in s.runs)
    assert [(n["notifyType"], n["message"]) for n in first] == [("error", expected["notify"])]
    assert len(second) == 1 and second[0]["message"].startswith("inspector: this session has hole")

    # the next request carries what the extension injected, and nothing before it did
    context = expected["context"]
    assert context
    # A split turn's two summaries are asked for at once (pi 0.73.1 dist/core/compaction/compaction.js:563,
    # Promise.all): they reach the model in either order.
    assert sorted(r["kind"] for r in s.requests_of("compact")) == ["summary_initial", "turn_prefix"]
    k03 = s.requests_of("k03")
    assert len(k03) == 4 and all(_carries(r, context) == 1 for r in k03)
    assert not any(_carries(r, context) for r in s.requests_of("k01") + s.requests_of("k02") + s.requests_of("compact"))
    # after the restart: still in the request once, not injected again
    (k04,) = s.requests_of("k04")
    assert _carries(k04, context) == 1
    customs = [json.loads(line) for line in lines if json.loads(line)["type"] == "custom_message"]
    assert [(c["customType"], c["content"]) for c in customs] == [("inspector", context)]
