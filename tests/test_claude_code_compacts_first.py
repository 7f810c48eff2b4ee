"""Claude Code compacts a transcript before the prompt it resumes with where its count of the
conversation (the last counted reply's usage and its estimate of what follows) is at or over its
threshold, the window less min(max output, 20,000) less 13,000 (`ORs`, offset 319896514): inspector
says so (`compacts_first`), held to the real Claude Code 2.1.328, with the windows of its catalog.

Before this rule, `analyze` showed such a session as sending its request as it stands, where Claude
Code first sends the history to its summarizer.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.formats import claude_code_resume as ccr
from inspector.formats import load
from inspector.ledger.jsontext import json_dumps
from tests.conftest import need_shared
from tests.peers.claude_code_resume import compacts_first_probe


def _need_claude() -> None:
    from tests.peers.claude_code_resume import harness

    try:
        harness.cli.check_installed()
    except harness.HarnessError as e:
        pytest.fail(f"Claude Code cannot be run, so its compaction cannot be checked: {e}", pytrace=False)
    need_shared(compacts_first_probe.BASE)


def test_inspector_says_when_the_real_claude_code_compacts_before_the_prompt() -> None:
    _need_claude()
    with tempfile.TemporaryDirectory() as tmp:
        rows = compacts_first_probe.run(Path(tmp))
    assert [(p.name, got, ours) for p, got, ours in rows if got != ours] == []
    verdicts = {p.name: got for p, got, _ in rows}
    # Both ways, at each edge: the threshold, the counts, what follows the reply, the prompt, the window.
    for name in ("input", "reply in two lines,", "synthetic API error after it,", "server cleared 500,", "ends inside a turn,",
                 "a 300-character prompt,", "claude-sonnet-5-5,", "claude-sonnet-4-6, window 200,000 given,",
                 "claude-opus-4-6 (requests without 1m),"):  # fmt: skip
        at = verdicts[f"{name} at" if name != "input" else "input at the threshold"]
        under = verdicts[f"{name} one under"]
        assert (at, under) == (True, False), name
    assert verdicts["four counts at the threshold"] is True and verdicts["four counts one under (output)"] is False
    assert verdicts["claude-opus-4-5 (no threshold), over 200,000"] is False
    assert verdicts["claude-opus-4-6[1m] (requests with 1m), over 200,000"] is False
    assert verdicts["ends after a compaction, old usage over"] is False


def _session(tmp: Path, usage: dict[str, int], model: str = "claude-opus-5-5", after: list[dict] | None = None) -> Path:
    """A short Claude Code transcript whose last reply is by `model` with `usage`."""
    sid = "0f6c1d2e-0000-4000-8000-000000000001"
    common = {"isSidechain": False, "sessionId": sid, "cwd": str(tmp), "version": "2.1.328", "userType": "external"}
    lines = [
        {**common, "parentUuid": None, "type": "user", "uuid": "u1", "timestamp": "2026-11-30T13:00:01.000Z",
         "message": {"role": "user", "content": "go"}},
        {**common, "parentUuid": "u1", "type": "assistant", "uuid": "a1", "timestamp": "2026-11-30T13:00:02.000Z",
         "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": [{"type": "text", "text": "done"}],
                     "stop_reason": "end_turn", "stop_sequence": None, "usage": usage}},
    ]  # fmt: skip
    parent = "a1"
    for i, extra in enumerate(after or []):
        lines.append({**common, "parentUuid": parent, "uuid": f"x{i}", "timestamp": "2026-11-30T13:00:03.000Z", **extra})
        parent = f"x{i}"
    f = tmp / "s.jsonl"
    f.write_text("".join(json_dumps(x) + "\n" for x in lines))  # (json.dumps, however deep)
    return f


def _usage(input_: int, output: int = 0) -> dict[str, int]:
    return {"input_tokens": input_, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": output}


def _finding(f: Path, window: int | None = None, reserve: int | None = None) -> str | None:
    got = [x.message for x in analyze(load(str(f)), window=window, reserve=reserve).findings if x.code == "compacts_first"]
    return got[0] if got else None


def test_the_threshold_of_a_million_token_model(tmp_path: Path) -> None:
    assert ccr.threshold("claude-opus-5-5", 1_000_000) == 967_000
    message = _finding(_session(tmp_path, _usage(966_000, 1_000)))
    assert message is not None and "967,000 tokens" in message and "threshold of 967,000" in message and "line 2" in message
    assert _finding(_session(tmp_path, _usage(966_000, 999))) is None


def test_what_follows_the_reply_counts_at_claude_codes_estimate(tmp_path: Path) -> None:
    # A user message of 300 characters after the reply: 100 tokens at 3 characters a token; the
    # session then ends inside a turn, and the "No response requested." Claude Code adds is 7 more.
    user = {"type": "user", "message": {"role": "user", "content": "y" * 300}}
    assert _finding(_session(tmp_path, _usage(966_893), after=[user])) is not None
    assert _finding(_session(tmp_path, _usage(966_892), after=[user])) is None


def test_a_window_given_is_claude_codes_and_a_reserve_given_its_output_reserve(tmp_path: Path) -> None:
    f = _session(tmp_path, _usage(150_000))
    assert _finding(f) is None
    assert _finding(f, window=163_000) is not None  # 163,000 - 20,000 - 13,000 = 130,000
    assert _finding(f, window=183_000) is not None  # at: 150,000
    assert _finding(f, window=183_001) is None
    assert _finding(f, window=200_000, reserve=40_000) is not None  # 147,000


def test_windows_by_model(tmp_path: Path) -> None:
    led = load(str(_session(tmp_path, _usage(100))))
    assert ccr.model_window(led, "claude-opus-4-7") == 1_000_000
    assert ccr.model_window(led, "claude-opus-4-5-20251101") == 0  # left to the API
    assert ccr.model_window(led, "claude-sonnet-4-6") is None  # the [1m] choice is not recorded here
    assert ccr.model_window(led, "my-model") is None
    # A model Claude Code leaves to the API: nothing, a window given or not.
    f = _session(tmp_path, _usage(199_000), model="claude-opus-4-5-20251101")
    assert _finding(f) is None and _finding(f, window=200_000) is None
    # A model it does not ship: only with a window given (3 characters a token).
    f = _session(tmp_path, _usage(199_000), model="my-model")
    assert _finding(f) is None and _finding(f, window=200_000) is not None


def test_the_4_6_models_window_from_the_requests_recorded(tmp_path: Path) -> None:
    def request(betas: list[str]) -> dict:
        return {"type": "api-request", "params": {"model": "claude-sonnet-4-6", "betas": betas}}

    without = _session(tmp_path, _usage(167_000), model="claude-sonnet-4-6", after=[request(["claude-code-20250219"])])
    assert ccr.model_window(load(str(without)), "claude-sonnet-4-6") == 200_000
    assert _finding(without) is not None
    with_1m = _session(tmp_path, _usage(167_000), model="claude-sonnet-4-6", after=[request([ccr.ONE_M_BETA])])
    assert _finding(with_1m) is None and _finding(with_1m, window=200_000) is None


def test_claude_codes_estimate() -> None:
    # JavaScript's Math.round (halves up) of UTF-16 units over the bytes per token.
    assert ccr.estimate("ab", 4) == 1 and ccr.estimate("a", 3) == 0 and ccr.estimate("ab", 3) == 1
    assert ccr.estimate("\U0001f600", 4) == 1  # two units
    assert ccr.estimate([{"type": "image"}, {"type": "tool_result", "content": "abcdef"}], 3) == 2002
    call = {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}
    assert ccr.estimate([call], 3) == round(len('Bash{"command":"ls"}') / 3)
    assert ccr.bytes_per_token("claude-sonnet-4-20250514") == 4 and ccr.bytes_per_token("claude-opus-5-5") == 3


def _bundle() -> bytes:
    from tests.peers.claude_code_resume import harness

    _need_claude()
    return Path(harness.cli.CLAUDE).read_bytes()


def test_the_tables_are_the_pinned_bundles() -> None:
    """The windows, bytes per token and constants are what the installed Claude Code ships."""
    data = _bundle()
    start = data.index(b'models:[{id:"claude-3-5-haiku"')
    catalog = data[start : start + 40_000].decode("latin-1")
    native, bounded = set(), set()
    for m in re.finditer(r'\{id:"([^"]+)",family:"[^"]+"', catalog):
        body = catalog[m.start() : catalog.find('{id:"', m.start() + 5)]
        ctx = re.search(r"context:\{([^}]*)\}", body)
        if ctx and "native_1m:!0" in ctx.group(1):
            native.add(m.group(1))
        elif ctx and "maximum_window:1e6" in ctx.group(1) and "clamp_long_context_without_beta" not in ctx.group(1):
            bounded.add(m.group(1))
    assert set(ccr.WINDOWS) == native and bounded == ccr.OPT_IN_1M
    lj = re.search(rb"Lj=new Set\(\[([^\]]*)\]\)", data)
    assert lj is not None and set(json.loads(b"[" + lj.group(1) + b"]")) == ccr.FOUR_BYTES
    assert data[318907747:318907760] == b"var AWn=13000" and data[318911067:318911080] == b"var $2r=20000"
    assert data[318908540:318908600].startswith(b"function s4(e,o){let r=e-13000")


def test_a_call_input_counts_as_javascript_writes_it(tmp_path: Path) -> None:
    """Claude Code counts a tool call by `JSON.stringify` of its input: numbers as JavaScript
    writes them, a lone surrogate as its escape (6 units), and an input nested 1,000 deep counted,
    not left without a verdict (jsontext.js_stringify, checked against node)."""
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"n": 1e16, "s": "\ud800"}}
    assert ccr.estimate([call], 1) == len('Bash{"n":10000000000000000,"s":"\\ud800"}')
    deep: object = 1
    for _ in range(1000):
        deep = {"a": deep}
    reply = {"type": "assistant", "message": {"id": "msg_2", "role": "assistant", "model": "claude-opus-5-5",
             "content": [{"type": "tool_use", "id": "t2", "name": "X", "input": deep}]}}  # fmt: skip
    units = len("X") + 1000 * len('{"a":') + 1 + 1000  # 6,002 units, 2,001 tokens at 3 units a token
    f = _session(tmp_path, _usage(967_000 - round(units / 3)), after=[reply])
    assert ccr.estimate(reply["message"]["content"], 3) == round(units / 3)
    assert _finding(f) is not None
