"""Repair plans (issue 4, point 1): budgets from the session, requests, the checkpoint, the session
after it; a plan calls nothing and writes nothing."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.compaction.execute import repair
from inspector.compaction.export import plan_json
from inspector.compaction.plan import PI_KEEP_RECENT_TOKENS, PI_RESERVE_TOKENS, Budgets, PlanError, plan
from inspector.formats import load
from inspector.ledger.model import Route
from tests.compaction_helpers import Scripted
from tests.conftest import SAMPLES

ADR_PI = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"
ADR_NATIVE = SAMPLES / "native" / "adr0302_amnesiac_fallback.jsonl"
LOOP_PI = SAMPLES / "pi" / "compaction_loop_nothing_summarized.jsonl"
LOOP_NATIVE = SAMPLES / "native" / "compaction_loop_nothing_summarized.jsonl"


def _digest(p: Path) -> tuple[str, int]:
    return hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns


def _beside(d: Path) -> list[Path]:
    """What lies next to the session (the test's own cache dir aside: conftest puts
    $INSPECTOR_CACHE_DIR there, where a process's first token count may store its rank index)."""
    return sorted(p for p in d.iterdir() if p.name != "inspector-cache")


def test_plan_calls_nothing_and_writes_nothing(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    shutil.copy(ADR_PI, f)
    before = _digest(f)
    listing = _beside(tmp_path)
    p = plan(analyze(load(str(f))), "resummarize", Budgets(keep_recent=3_000), route=Route("gpt-4.1", "openai"))
    assert p.requests and p.checkpoint is not None and p.after is not None
    assert _digest(f) == before and _beside(tmp_path) == listing
    # The CLI's plan never even loads a provider.
    code = (
        "import sys\nfrom inspector.cli.main import main\n"
        f"main(['plan', {str(f)!r}, '--strategy', 'resummarize', '--json'])\n"
        "print('PROVIDERS' if 'inspector.providers' in sys.modules else 'NONE', file=sys.stderr)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stderr.strip().endswith("NONE")
    assert json.loads(run.stdout)["action"] in ("summarize", "carry")


def test_plan_lists_requests_checkpoint_and_session_after() -> None:
    r = analyze(load(str(ADR_PI)))
    p = plan(r, "resummarize", Budgets(keep_recent=3_000))
    assert p.action == "summarize" and len(p.requests) == 1
    ch = p.requests[0]
    ix = p.index
    # The range starts at the first message no sound summary represents: the hole of seed 000.
    holes = [s for s in r.path if r.states[s] == "hole"]
    assert ix.rec(ch.positions[0]).seq == holes[0]
    assert ch.prompt_tokens <= ch.budget and ch.file_list
    cp = p.checkpoint
    assert cp is not None and cp.kind == "summary" and cp.shape == "recent_window"
    removed = ix.messages_in(0, cp.cut)
    assert all(any(a <= q < b for a, b in cp.represents) for q in removed)  # nothing removed unrepresented
    assert p.before.holes == 168 and p.after is not None and p.after.holes == 0
    assert 0 < p.target_tokens <= 4_000 and p.max_output_tokens <= p.target_tokens * 1.1
    out = plan_json(p)
    for key in ("strategy", "action", "budgets", "range", "requests", "output", "checkpoint", "before", "after", "notes"):
        assert key in out
    req = out["requests"][0]
    assert {"from", "to", "count", "by_role", "prompt_tokens", "budget", "max_output_tokens", "file_list"} <= set(req)
    c = out["checkpoint"]
    assert {"boundary", "removes", "represents", "retains", "shape", "summary_tokens", "tail_tokens", "size_tokens"} <= set(c)
    assert c["size_tokens"] == c["summary_tokens"] + c["tail_tokens"]
    assert out["before"]["holes"] == 168 and out["after"]["holes"] == 0
    json.dumps(out)


def test_budgets_come_from_the_native_session_settings() -> None:
    p = plan(analyze(load(str(LOOP_NATIVE))), "resummarize")
    b = p.budgets
    assert (b.window, b.reserve, b.keep_recent) == (4_096, 512, 20_000)
    assert b.sources["window"] == b.sources["reserve"] == b.sources["keep_recent"] == "session"
    p2 = plan(analyze(load(str(LOOP_NATIVE))), "resummarize", Budgets(window=8_000, keep_recent=1_000))
    assert (p2.budgets.window, p2.budgets.keep_recent) == (8_000, 1_000)
    assert p2.budgets.sources["window"] == "flag" and p2.budgets.sources["reserve"] == "session"


def test_pi_budgets_use_pi_defaults_and_a_known_model_window() -> None:
    b = plan(analyze(load(str(ADR_PI))), "resummarize").budgets
    assert (b.reserve, b.keep_recent) == (PI_RESERVE_TOKENS, PI_KEEP_RECENT_TOKENS) == (16_384, 20_000)
    assert b.sources["reserve"] == b.sources["keep_recent"] == "pi default"
    assert b.sources["window"].startswith("model table") and "gpt-4.1" in b.sources["window"]


def test_pi_session_with_an_unknown_model_window_requires_window() -> None:
    r = analyze(load(str(LOOP_PI)))
    with pytest.raises(PlanError, match="context window") as e:
        plan(r, "compact")
    assert "tokensBefore" in str(e.value)  # the evidence the session does record is shown
    # Each shell says how to give the missing budget in its own terms (issue 12, point 10).
    from inspector.cli.repair import plan_error_text as cli_words
    from inspector.tui.repair import plan_error_text as app_words

    assert e.value.field == "window"
    assert cli_words(e.value).endswith(": pass --window N")
    assert app_words(e.value).endswith(": type it in the window field") and "--" not in app_words(e.value)
    with pytest.raises(PlanError, match="reserve") as e2:
        plan(r, "compact", Budgets(window=4_096))  # pi's default reserve leaves nothing
    assert e2.value.field == "reserve" and cli_words(e2.value).endswith("pass --reserve N")
    p = plan(r, "compact", Budgets(window=4_096, reserve=512))
    assert p.budgets.sources["window"] == "flag" and p.action == "summarize"


def test_simulated_after_agrees_with_the_repair() -> None:
    r = analyze(load(str(ADR_NATIVE)))
    p = plan(r, "resummarize", Budgets(keep_recent=2_000))
    res = repair(p, Scripted())
    assert p.after is not None and res.after is not None
    assert (p.after.holes, p.after.orphans) == (res.after.holes, res.after.orphans) == (0, 0)
    assert {f.code for f in p.after.findings} == {f.code for f in res.after.findings}


def test_noop_when_nothing_needs_summarizing() -> None:
    p = plan(analyze(load(str(SAMPLES / "pi" / "healthy_chained.jsonl"))), "compact")
    assert p.action == "noop" and p.checkpoint is None and p.reason == "no_new_history"
    res = repair(p, Scripted())
    assert res.status == "noop" and res.entry is None


def test_unknown_strategy_is_refused() -> None:
    with pytest.raises(PlanError, match="strategy"):
        plan(analyze(load(str(ADR_PI))), "shrink")
