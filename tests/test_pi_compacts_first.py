"""pi compacts a session before the prompt it resumes with where its last reply overflowed the
context or passed its threshold (agent-session.js:754-758, 1376-1446): inspector says so
(`compacts_first`), held to the real pi, and finds the model's window in pi's own registry.

Before this rule, `analyze` showed a pi session whose last reply was a context overflow (the seeds'
summarizer loop) as sending its request as it stands, where pi first runs its summarizer again.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.formats import load, pi_resume
from tests.conftest import REPO, need_shared
from tests.peers.pi_resume import compaction_probe


def _need_pi() -> None:
    from tests.peers.pi_hook import pi_harness

    try:
        pi_harness.check_installed()
    except pi_harness.HarnessError as e:
        pytest.fail(f"pi cannot be run, so its compaction cannot be checked: {e}", pytrace=False)
    need_shared(compaction_probe.type_probe.BASE)


def test_inspector_says_when_the_real_pi_compacts_before_the_prompt() -> None:
    _need_pi()
    with tempfile.TemporaryDirectory() as tmp:
        rows = compaction_probe.run(Path(tmp))
    assert [r for r in rows if r[1] != r[2]] == []
    verdicts = dict((name, pi) for name, pi, _ in rows)
    # Both ways occur, at the threshold's edge and at the estimate's.
    assert verdicts["at the threshold"] is False and verdicts["one over the threshold"] is True
    assert verdicts["error, the estimate at the threshold"] is False and verdicts["error, the estimate one over"] is True
    assert verdicts["overflow error"] is True and verdicts["rate limit naming too many tokens"] is False


def test_real_and_peer_sessions_compact_first_where_pi_does() -> None:
    """The real pi sessions of `../shared/real_sessions/pi` (v1, migrated in memory) at a window
    their last usage passes or not, and the peer corpus at one that splits it: pi and inspector agree."""
    _need_pi()
    from tests.conftest import SHARED

    real = sorted(need_shared(SHARED / "real_sessions" / "pi").glob("*.jsonl"))
    peer = sorted(p for p in (SHARED / "peers" / "pi" / "corpus").glob("*.jsonl") if not p.name.endswith(("events.jsonl", "requests.jsonl")))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rows += compaction_probe.run_files(real, 140_000, Path(tmp) / "real")
        rows += compaction_probe.run_files(peer, 22_000, Path(tmp) / "peer")
    assert [r for r in rows if r[1] != r[2]] == []
    compacted = [name for name, pi, _ in rows if pi is True]
    assert 3 <= len(compacted) <= len(rows) - 3, rows  # both ways, on files nobody edited


def _session(tmp: Path, model: str, usage: dict[str, int], stop: str = "stop", error: str | None = None) -> Path:
    """A short pi session whose last reply is by `model` ("provider/id") with `usage`."""
    provider, mid = model.split("/", 1)
    reply = {"role": "assistant", "content": [{"type": "text", "text": "done"}], "api": "anthropic-messages",
             "provider": provider, "model": mid, "usage": usage, "stopReason": stop, "timestamp": 1796044100000}  # fmt: skip
    if error is not None:
        reply["errorMessage"] = error
    lines = [
        {"type": "session", "version": 3, "id": "0f6c1d2e-0000-4000-8000-000000000001", "timestamp": "2026-11-30T13:00:00.000Z", "cwd": str(tmp)},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-11-30T13:00:01.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "go"}], "timestamp": 1796044090000}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-11-30T13:00:02.000Z", "message": reply},
    ]  # fmt: skip
    f = tmp / "s.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return f


def _finding(f: Path, window: int | None = None) -> str | None:
    got = [x.message for x in analyze(load(str(f)), window=window).findings if x.code == "compacts_first"]
    return got[0] if got else None


def test_the_window_of_a_model_pi_ships_comes_from_its_registry(tmp_path: Path) -> None:
    window = pi_resume.model_window("anthropic", "claude-sonnet-4-5")
    assert window == 200_000
    over = _session(tmp_path, "anthropic/claude-sonnet-4-5", {"input": 190_000, "output": 100, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 183_617})
    message = _finding(over)
    assert message is not None and "183,617 tokens" in message and "183,616" in message and "registry" in message
    at = _session(tmp_path, "anthropic/claude-sonnet-4-5", {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 183_616})
    assert _finding(at) is None
    # A window given to the analysis is taken instead of the registry's.
    assert _finding(at, window=100_000) is not None


def test_a_model_pi_does_not_ship_has_no_window_unless_one_is_given(tmp_path: Path) -> None:
    f = _session(tmp_path, "my-local/llama-9000", {"input": 500_000, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 500_000})
    assert _finding(f) is None
    assert _finding(f, window=131_072) is not None


def test_an_overflow_error_needs_no_window(tmp_path: Path) -> None:
    """The seeds' loop: the last reply is the provider refusing the context; pi compacts again."""
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    f = _session(tmp_path, "my-local/llama-9000", zero, stop="error", error="prompt is too long: 210000 tokens > 200000 maximum")
    assert "context overflow" in (_finding(f) or "")
    f = _session(tmp_path, "my-local/llama-9000", zero, stop="error", error="rate limit exceeded: prompt is too long")
    assert _finding(f) is None


def test_the_compaction_loop_sample_says_pi_compacts_again() -> None:
    f = REPO / "sample_sessions" / "pi" / "compaction_loop_nothing_summarized.jsonl"
    assert "context overflow" in (_finding(f) or "")


def test_the_registry_table_is_what_the_pinned_pi_ships() -> None:
    """`pi_windows.json` is generated from the installed pi's models.generated.js: not stale."""
    _need_pi()
    got = subprocess.run([sys.executable, "-m", "tests.peers.pi_resume.model_windows", "--check"], cwd=REPO, capture_output=True, text=True)
    assert got.returncode == 0, got.stdout + got.stderr


def test_js_string_lengths_and_rounding_of_the_estimate() -> None:
    # UTF-16 units: an emoji is two; a quarter rounded up.
    assert pi_resume.estimate_tokens({"role": "user", "content": "ab\U0001f600"}) == 1
    assert pi_resume.estimate_tokens({"role": "user", "content": "abcde"}) == 2
    call = {"type": "toolCall", "name": "edit", "arguments": {"path": "é"}}
    assert pi_resume.estimate_tokens({"role": "assistant", "content": [call]}) == -(-(4 + len('{"path":"é"}')) // 4)
    # JSON.stringify of the arguments: JavaScript's numbers, a lone surrogate's escape, any depth
    call = {"type": "toolCall", "name": "edit", "arguments": {"n": 1e16, "s": "\ud800"}}
    assert pi_resume.estimate_tokens({"role": "assistant", "content": [call]}) == -(-(4 + len('{"n":10000000000000000,"s":"\\ud800"}')) // 4)
    deep: object = 1
    for _ in range(1000):
        deep = [deep]
    call = {"type": "toolCall", "name": "edit", "arguments": deep}
    assert pi_resume.estimate_tokens({"role": "assistant", "content": [call]}) == -(-(4 + 2001) // 4)
    assert pi_resume.estimate_tokens({"role": "toolResult", "content": [{"type": "image"}]}) == 1200
    assert pi_resume.estimate_tokens({"role": "user", "content": [{"type": "image"}]}) == 0
