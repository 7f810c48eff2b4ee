"""What-if replays (issue 7): checked against what ADK 2.13 actually did (the peers corpus) and
against seed 003's measured shape on a generated 160-turn session."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import simulate as sim
from inspector.cli.main import main
from inspector.formats import load
from tests.conftest import REPO, SAMPLES, SHARED, need_shared

CORPUS = SHARED / "peers" / "adk" / "corpus"
SCENARIOS = sorted(
    p.name[: -len(".json")]
    for p in CORPUS.glob("*.json")
    if p.name.count(".") == 1 and p.name != "INDEX.json"
) or ["multi_agent", "retention_zero", "sliding_window", "tie_token", "token_threshold"]
# Every scenario in each storage; a DatabaseSessionService run (.v1.db) has its own oracle where it
# differed (the tie scenarios: ties reload in id order).
REPLAYS = [
    (f"{s}{ext}", f"{s}.v1" if ext == ".v1.db" and (CORPUS / f"{s}.v1.oracle.json").exists() else s)
    for s in SCENARIOS
    for ext in (".json", ".db", ".v1.db")
]


def _oracle(name: str) -> dict[str, Any]:
    return json.loads((CORPUS / f"{name}.oracle.json").read_text())


def _need(path: Path) -> None:
    need_shared(path)


# ---------------------------------------------------------------------------------------- ADK corpus


@pytest.mark.parametrize(("fname", "oracle_name"), REPLAYS)
def test_replay_under_the_recorded_policy_makes_adks_own_compactions(fname: str, oracle_name: str) -> None:
    """Same summarizer input, same seed, same trigger and moment, same timestamp range as ADK."""
    _need(CORPUS / fname)
    oracle = _oracle(oracle_name)
    led = load(str(CORPUS / fname))
    result = sim.simulate(led, sim.AdkPolicy(**oracle["compaction_config"]))
    got = result.whatif.compactions
    want = oracle["compactions"]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.summarized_seqs == w["summarizer_input_event_indexes"]
        assert g.trigger == w["trigger"]
        assert g.when == w["when"]
        assert ([g.seeded_from] if g.seeded_from is not None else []) == w["seed_summaries_folded_in"]
        assert g.range_seqs == [
            i for i in w["timestamp_range_event_indexes"] if i not in _comp_indexes(oracle)
        ]
    # Holes and questions summarized out of their own prompt: the same events as ADK's requests show.
    holes = sorted(
        d[0] if isinstance(d, list) else d["event_index"] for d in oracle["dropped_without_summary"]
    )
    assert result.whatif.holes == holes
    lost = sorted({d["event_index"] for d in oracle["summarized_out_of_own_prompt"]})
    assert sorted({q for q, _ in result.whatif.live_questions_lost}) == lost
    # Where the replay's context is the recorded one, the prompt is the provider's own count.
    assert [c.prompt_tokens for c in result.whatif.calls] == [c.prompt_tokens for c in result.baseline.calls]


def _comp_indexes(oracle: dict[str, Any]) -> set[int]:
    return {c["compaction_event_index"] for c in oracle["compactions"]}


def test_sqlite_order_places_each_compaction_after_the_event_adk_appended_it_after() -> None:
    _need(CORPUS / "token_threshold.json")
    oracle = _oracle("token_threshold")
    result = sim.simulate(
        load(str(CORPUS / "token_threshold.json")), sim.AdkPolicy(**oracle["compaction_config"])
    )
    # ev14 after U04's answer ev13 (post-invocation); ev24 between U07's response ev23 and its answer.
    assert [c.after_seq for c in result.whatif.compactions] == [13, 23]


def test_recorded_policy_is_inferred_for_a_sliding_window_session() -> None:
    _need(CORPUS / "sliding_window.json")
    led = load(str(CORPUS / "sliding_window.json"))
    pol, why = sim.recorded_policy(led)
    assert pol == sim.AdkPolicy(3, 1)
    assert "inferred" in why


def test_retention_zero_is_warned_and_a_larger_retention_keeps_the_question() -> None:
    _need(CORPUS / "retention_zero.json")
    led = load(str(CORPUS / "retention_zero.json"))
    zero = sim.simulate(led, sim.adk_token(500, 0))
    assert "retention_zero" in {w.code for w in zero.warnings}
    assert zero.whatif.live_questions_lost
    four = sim.simulate(led, sim.adk_token(500, 4))
    assert "retention_zero" not in {w.code for w in four.warnings}
    assert four.whatif.live_questions_lost == []
    assert four.whatif.compactions  # it still compacts, just not the turn in progress


def test_retention_below_one_tool_round_is_warned() -> None:
    _need(CORPUS / "token_threshold.json")
    led = load(str(CORPUS / "token_threshold.json"))
    codes = {w.code for w in sim.simulate(led, sim.adk_token(1200, 2)).warnings}
    assert "retention_below_tool_round" in codes
    codes = {w.code for w in sim.simulate(led, sim.adk_token(1200, 6)).warnings}
    assert "retention_below_tool_round" not in codes


# ---------------------------------------------------------------------------------------- seed 003 shape


def adk_session(
    turns: int, *, answer_chars: int = 400, rounds: int = 1, response_chars: int = 0, usage: bool = False
) -> dict[str, Any]:
    """A deterministic ADK `session.model_dump()`: each turn a question, `rounds` function calls
    each with its response, and an answer; one invocation per turn. With `usage`, every model
    event records `prompt_token_count` = the characters of everything before it / 4 + 50 (as the
    ADK corpus's fake model counts, the session never compacting)."""
    events: list[dict[str, Any]] = []
    t = 1767225600.0
    words = [
        "context",
        "window",
        "token",
        "budget",
        "summary",
        "ledger",
        "session",
        "event",
        "compaction",
        "range",
    ]

    def text(n: int, k: int) -> str:
        out, i = [], k
        while sum(map(len, out)) + len(out) < n:
            out.append(words[i % len(words)])
            i += 7
        return " ".join(out)[:n]

    chars = 0

    def ev(inv: str, author: str, role: str, parts: list[dict[str, Any]]) -> None:
        nonlocal t, chars
        t += 0.125
        um: dict[str, Any] = {}
        if usage and author != "user" and role == "model":
            um = {"usage_metadata": {"prompt_token_count": chars // 4 + 50, "candidates_token_count": 10}}
        chars += len(json.dumps(parts))
        events.append(
            um
            | {
                "id": f"ev-{len(events):05d}",
                "invocation_id": inv,
                "author": author,
                "timestamp": t,
                "content": {"role": role, "parts": parts},
                "actions": {},
            }
        )

    for k in range(turns):
        inv = f"e-{k:04d}"
        t += 30.0
        ev(inv, "user", "user", [{"text": f"[U{k + 1:03d}] " + text(90, k)}])
        for r in range(rounds):
            cid = f"adk-call-{k:04d}-{r:02d}"
            result: Any = text(response_chars, k + r) if response_chars else k + 1
            ev(
                inv,
                "assistant",
                "model",
                [{"function_call": {"id": cid, "name": "add", "args": {"a": k, "b": r}}}],
            )
            ev(
                inv,
                "assistant",
                "user",
                [{"function_response": {"id": cid, "name": "add", "response": {"result": result}}}],
            )
        ev(inv, "assistant", "model", [{"text": text(answer_chars, k + 3)}])
    return {
        "app_name": "gen",
        "user_id": "u",
        "id": "gen-160",
        "state": {},
        "events": events,
        "last_update_time": t,
    }


@pytest.fixture(scope="module")
def long_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("gen") / "gen160.json"
    p.write_text(json.dumps(adk_session(160)))
    return p


def _tail(xs: list[int], n: int = 20) -> list[int]:
    return xs[-n:]


def test_seed_003_tail_retention_alone_holds_the_prompt_flat(long_session: Path) -> None:
    led = load(str(long_session))
    result = sim.simulate(led, sim.adk_token(1000, 10), sim.SummarySize(tokens=130))
    prompts = [c.prompt_tokens for c in result.whatif.calls]
    assert len(result.whatif.calls) == 320
    # Bounded: never far above the threshold, and the last 80 turns no higher than turns 20-40.
    assert max(prompts) < 1000 + 400
    assert max(prompts[-160:]) <= max(prompts[40:80]) + 50
    assert result.whatif.holes == []
    assert result.whatif.live_questions_lost == []
    # Each summary seeds the next: one rolling summary in the prompt, never a pile of them.
    assert all(c.seeded_from is not None for c in result.whatif.compactions[1:])
    assert max(c.summaries for c in result.whatif.calls) == 1


def test_seed_003_a_short_sliding_interval_with_a_large_retention_grows(long_session: Path) -> None:
    led = load(str(long_session))
    both = sim.AdkPolicy(compaction_interval=2, overlap_size=1, token_threshold=1000, event_retention_size=10)
    result = sim.simulate(led, both, sim.SummarySize(tokens=130))
    prompts = [c.prompt_tokens for c in result.whatif.calls]
    # Tail retention never finds a window: every compaction is the sliding window's.
    assert {c.trigger for c in result.whatif.compactions} == {"sliding_window"}
    assert len(result.whatif.compactions) >= 70
    # Partially overlapping summaries all stay in the prompt, so it grows without bound.
    assert prompts[-1] > 5 * 1000
    assert prompts[-1] > prompts[len(prompts) // 2] + 3000
    codes = {w.code for w in result.warnings}
    assert "sliding_starves_tail" in codes and "tail_starved" in codes
    # A long interval composes: the token path fires and the prompt is bounded again (seed 003's table).
    long_iv = sim.AdkPolicy(
        compaction_interval=10, overlap_size=1, token_threshold=1000, event_retention_size=10
    )
    bounded = sim.simulate(led, long_iv, sim.SummarySize(tokens=130))
    assert any(c.trigger == "token_threshold" for c in bounded.whatif.compactions)
    assert bounded.whatif.peak < 2000
    assert "sliding_starves_tail" not in {w.code for w in bounded.warnings}


@pytest.mark.parametrize(
    ("interval", "retention", "grows"),
    [(2, 10, True), (3, 10, True), (10, 10, False), (20, 2, False), (None, 10, False)],
)
def test_seed_003_interval_retention_table(
    long_session: Path, interval: int | None, retention: int, grows: bool
) -> None:
    """Seed 003's table (CompactionInterval / EventRetentionSize -> growing or bounded), same shape
    on the generated session: a short interval leaves the sliding window's partly overlapping
    summaries piling up; a long one (or none) lets tail retention bound the prompt."""
    led = load(str(long_session))
    pol = sim.AdkPolicy(interval, 1 if interval else None, 1000, retention)
    r = sim.simulate(led, pol, sim.SummarySize(tokens=130))
    prompts = [c.prompt_tokens for c in r.whatif.calls]
    if grows:
        assert prompts[-1] > 5000 and prompts[-1] > prompts[len(prompts) // 2] + 1500
        assert "summaries_accumulate" in {w.code for w in r.warnings}
    else:
        assert max(prompts[-160:]) < 1500
        assert "summaries_accumulate" not in {w.code for w in r.warnings}


def test_a_tool_loop_over_the_threshold_is_reported_as_a_storm(tmp_path: Path) -> None:
    """A 30-round tool loop over the threshold: ADK's pre-request path re-summarizes every couple
    of rounds (seed 003: the processor re-fires ahead of nearly every model call in a tool loop).
    ADK 2.13's gate does not stop it: the rolling seed makes each new range subsume the previous
    summary, so the range can always remove more than that summary's size."""
    p = tmp_path / "loop.json"
    p.write_text(json.dumps(adk_session(3, rounds=30, response_chars=200)))
    led = load(str(p))
    result = sim.simulate(led, sim.adk_token(1000, 2), sim.SummarySize(tokens=900))
    assert result.whatif.summarizer_calls >= 25
    assert "storm" in {w.code for w in result.warnings}
    assert result.whatif.peak < 1200  # each of them does shrink the prompt


def test_the_progress_gate_holds_back_summaries_that_cannot_pay_for_themselves(long_session: Path) -> None:
    """Sliding window, one invocation per summary, a summary bigger than an invocation: with ADK
    2.13's worth-compacting check a window waits until it can remove more than the last summary;
    without it every invocation is summarized and the prompt grows by a summary each time."""
    led = load(str(long_session))
    size = sim.SummarySize(tokens=1500)
    gated = sim.simulate(led, sim.adk_sliding(1, 0), size)
    ungated = sim.simulate(led, sim.adk_sliding(1, 0, progress_gate=False), size)
    assert ungated.whatif.summarizer_calls >= 150
    assert gated.whatif.summarizer_calls <= 20
    assert "no_progress" in {w.code for w in ungated.warnings}

    def useless(r: sim.Simulation) -> int:
        return sum(1 for c in r.whatif.compactions if c.prompt_after >= c.prompt_before)

    # Only the first (no evidence of a summary's size yet, ADK compacts on trust) grows the prompt.
    assert useless(gated) == 1
    assert useless(ungated) >= 150
    assert ungated.whatif.final > gated.whatif.final


def test_pi_policy_cuts_at_a_user_or_assistant_message_and_bounds_the_prompt(long_session: Path) -> None:
    led = load(str(long_session))
    pol = sim.PiPolicy(context_window=3000, reserve_tokens=1000, keep_recent_tokens=800)
    result = sim.simulate(led, pol, sim.SummarySize(tokens=200))
    assert result.whatif.compactions
    assert result.whatif.peak <= 3000
    assert result.whatif.holes == []
    events = {e.seq: e for e in sim.prepare(led).events}
    for c in result.whatif.compactions:
        first_kept = max(c.summarized_seqs) + 1
        assert events[first_kept].role in ("user", "assistant")  # never a tool result
    storm = sim.simulate(led, sim.PiPolicy(3000, 1000, 2500), sim.SummarySize(tokens=200))
    (w,) = [w for w in storm.warnings if w.code == "keep_recent_over_threshold"]
    assert "a storm" in w.message and "turns in a row" in w.message  # the replay does compact every turn
    assert len({c.turn for c in storm.whatif.compactions}) >= 100


def test_pi_warnings_say_what_the_replay_beside_them_shows() -> None:
    """Issue 12 point 4: contextWindow 16000 with the default reserve 16384 put a storm warning
    ("every turn compacts again") beside a replay with no compaction, and printed the threshold as
    "contextWindow - reserveTokens -384"."""
    led = load(str(SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"))
    r = sim.simulate(led, sim.PiPolicy(16_000, 16_384, 20_000))
    # Every turn ends over the (negative) threshold and everything fits in keepRecentTokens: pi
    # compacts all the same, summarizing nothing new (compaction.js:304-311 keeps its default cut,
    # prepareCompaction refuses only right after a compaction, :470), so the warning is a storm.
    assert len(r.whatif.compactions) == r.turns
    assert all(c.summarized_seqs == [] for c in r.whatif.compactions)
    (w,) = [w for w in r.warnings if w.code == "keep_recent_over_threshold"]
    assert "a storm" in w.message and f"{r.turns} of its compactions summarizing nothing new" in w.message
    assert "contextWindow − reserveTokens = 16,000 − 16,384 = -384" in w.message
    (over,) = [w for w in r.warnings if w.code == "over_window"]
    assert "never compacts" not in over.message and "16,000" in over.message
    # A configuration pi handles well has no warning, whatever it is called.
    fine = sim.simulate(led, sim.PiPolicy(16_000, 4_000, 2_000))
    assert fine.whatif.compactions and not [w for w in fine.warnings if w.code == "keep_recent_over_threshold"]


# ---------------------------------------------------------------------------------------- CLI


def test_cli_table_plot_and_json(long_session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "simulate",
            str(long_session),
            "--policy",
            "adk-token",
            "--token-threshold",
            "1000",
            "--event-retention-size",
            "0",
            "--summary-tokens",
            "130",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "summarizer calls" in out and "live questions lost" in out
    assert "prompt tokens before each model call" in out and "# what-if (adk-token)" in out
    assert "retention_zero" in out
    code = main(
        [
            "simulate",
            str(long_session),
            "--policy",
            "adk-both",
            "--compaction-interval",
            "2",
            "--token-threshold",
            "1000",
            "--event-retention-size",
            "10",
            "--summary-tokens",
            "130",
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["whatif"]["label"] == "adk-both"
    assert len(data["whatif"]["calls"]) == len(data["baseline"]["calls"]) == 320
    assert data["whatif"]["policy"]["compaction_interval"] == 2
    assert data["whatif"]["calls"][-1]["prompt_tokens"] > 5000
    assert {w["code"] for w in data["warnings"]} >= {"sliding_starves_tail"}


def test_cli_refuses_a_token_policy_without_a_threshold(
    long_session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", str(long_session), "--policy", "adk-token"]) == 2
    assert "--token-threshold" in capsys.readouterr().err


def test_cli_recorded_policy_replays_an_adk_corpus_session(capsys: pytest.CaptureFixture[str]) -> None:
    _need(CORPUS / "sliding_window.json")
    assert main(["simulate", str(CORPUS / "sliding_window.json"), "--policy", "recorded", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["whatif"]["summarizer_calls"] == data["baseline"]["summarizer_calls"] == 4
    assert "inferred" in data["recorded_policy_inferred_from"]


def test_cli_runs_as_a_subprocess(long_session: Path) -> None:
    p = subprocess.run(
        [sys.executable, "-m", "inspector", "simulate", str(long_session), "--policy", "adk-sliding"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert "adk-sliding" in p.stdout


def test_core_does_not_import_ui_libraries() -> None:
    src = (REPO / "inspector" / "analysis" / "simulate.py").read_text()
    for mod in ("textual", "rich", "httpx"):
        assert f"import {mod}" not in src and f"from {mod}" not in src


# ---------------------------------------------------------------------------------------- pi corpus

PI_CORPUS = SHARED / "peers" / "pi" / "corpus"


@pytest.mark.parametrize(
    ("scenario", "keep_recent"),
    [("normal", 3000), ("split_turn", 3000), ("errors_in_history", 5000), ("killed_mid_tool", 3000)],
)
def test_pi_replay_under_its_settings_makes_pis_own_cuts(scenario: str, keep_recent: int) -> None:
    """pi 0.73.1 (contextWindow 16384, reserveTokens 4096, keepRecentTokens as the corpus README
    says): the replay compacts after the same turn and keeps from the same first kept entry."""
    path = PI_CORPUS / f"{scenario}.jsonl"
    _need(path)
    led = load(str(path))
    sess = sim.prepare(led)
    result = sim.simulate(led, sim.PiPolicy(16384, 4096, keep_recent), session=sess)
    want = [(sess.events[c.after - 1].seq, sess.events[c.cut].seq) for c in sess.recorded]
    got = [(c.after_seq, max(c.summarized_seqs) + 1) for c in result.whatif.compactions]
    assert want and got == want
    # Where the replay's context is the recorded one, the prompt is the provider's own count.
    assert [c.prompt_tokens for c in result.whatif.calls] == [c.prompt_tokens for c in result.baseline.calls]


def test_pi_replay_assumes_the_summarizer_succeeds() -> None:
    """summarizer_500: pi's first attempts failed (HTTP 500) and it compacted turns later; the
    replay, which calls no summarizer, compacts at the first turn over the threshold."""
    path = PI_CORPUS / "summarizer_500.jsonl"
    _need(path)
    led = load(str(path))
    sess = sim.prepare(led)
    result = sim.simulate(led, sim.PiPolicy(16384, 4096, 3000), session=sess)
    real_after = sess.events[sess.recorded[0].after - 1].seq
    assert result.whatif.compactions[0].after_seq is not None
    assert result.whatif.compactions[0].after_seq < real_after


def test_baseline_counts_the_recorded_holes_and_the_replay_has_none() -> None:
    """ADR 0302's amnesiac fallback: the session as recorded lost 168 messages (the analysis's own
    count); replayed under pi's policy, with a summarizer that succeeds, nothing is lost."""
    led = load(str(REPO / "sample_sessions" / "pi" / "adr0302_amnesiac_fallback.jsonl"))
    result = sim.simulate(led, sim.PiPolicy(32_000, 4_000, 8_000))
    assert len(result.baseline.holes) == 168
    assert len(result.baseline.next_holes) == 168
    assert result.whatif.holes == []
    from inspector.analysis import analyze

    report = analyze(led)
    assert report.coverage_counts().get("hole") == 168


def test_every_real_session_format_replays_without_error() -> None:
    """Claude Code, Codex (checkpoints that replace history: the baseline's coverage is not
    modelled, and the JSON says so rather than reporting none), pi."""
    real = need_shared(SHARED / "real_sessions")
    files = sorted(real.glob("*/*.jsonl"))
    assert {f.parent.name for f in files} >= {"pi", "claude_code", "codex"}, f"real sessions missing in {real}"
    for f in files:
        led = load(str(f))
        result = sim.simulate(led, sim.PiPolicy(100_000, 16_384, 20_000))
        data = sim.simulation_json(result)
        assert len(data["whatif"]["calls"]) == len(data["baseline"]["calls"])
        assert all(c["prompt_tokens"] >= 0 for c in data["whatif"]["calls"])
        if led.format == "codex" and result.baseline.compactions:
            assert data["baseline"]["coverage_known"] is False and data["baseline"]["holes"] is None


@pytest.mark.parametrize("scenario", ["sliding_window", "multi_agent"])
def test_recorded_sliding_policy_is_the_one_the_corpus_was_made_with(scenario: str) -> None:
    _need(CORPUS / f"{scenario}.json")
    cfg = _oracle(scenario)["compaction_config"]
    pol, _ = sim.recorded_policy(load(str(CORPUS / f"{scenario}.json")))
    assert pol == sim.AdkPolicy(cfg["compaction_interval"], cfg["overlap_size"])


def test_cli_recorded_policy_refused_where_nothing_is_recorded(capsys: pytest.CaptureFixture[str]) -> None:
    path = REPO / "sample_sessions" / "pi" / "healthy_chained.jsonl"
    assert main(["simulate", str(path), "--policy", "recorded"]) == 2
    assert "--context-window" in capsys.readouterr().err


def test_a_policy_of_another_runtime_replays_too(long_session: Path) -> None:
    """pi's policy on an ADK session and ADK's on a pi session: a what-if across runtimes."""
    pi_led = load(str(REPO / "sample_sessions" / "pi" / "healthy_chained.jsonl"))
    r = sim.simulate(pi_led, sim.AdkPolicy(2, 1))
    assert r.whatif.compactions and len(r.whatif.calls) == len(r.baseline.calls)
    _need(CORPUS / "sliding_window.json")
    adk_led = load(str(CORPUS / "sliding_window.json"))
    r = sim.simulate(adk_led, sim.PiPolicy(2000, 500, 600))
    assert r.whatif.compactions
    # Before its first compaction the replay's prompt is the recorded one; after, the recorded
    # summaries it does not have are taken out of the price (all of them, not one).
    first = r.whatif.compactions[0].after_seq
    assert first is not None
    for b, w in zip(r.baseline.calls, r.whatif.calls, strict=True):
        if b.seq <= first and b.summaries == 0:
            assert w.prompt_tokens == b.prompt_tokens
    assert all(c.prompt_tokens > 0 for c in r.whatif.calls)


@pytest.mark.parametrize("scenario", ["token_threshold", "retention_zero", "tie_token"])
def test_recorded_token_policy_is_inferred_by_replay(scenario: str) -> None:
    """ADK stores no config in the session: the inferred one must make exactly ADK's compactions
    (moment and summarizer input), with the retention the corpus was made with."""
    _need(CORPUS / f"{scenario}.json")
    oracle = _oracle(scenario)
    cfg = oracle["compaction_config"]
    led = load(str(CORPUS / f"{scenario}.json"))
    pol, why = sim.recorded_policy(led)
    assert isinstance(pol, sim.AdkPolicy) and "inferred by replay" in why
    assert pol.event_retention_size == cfg["event_retention_size"] and pol.compaction_interval is None
    got = sim.simulate(led, pol).whatif.compactions
    assert [c.summarized_seqs for c in got] == [
        c["summarizer_input_event_indexes"] for c in oracle["compactions"]
    ]
    assert [c.when for c in got] == [c["when"] for c in oracle["compactions"]]


def test_cli_simulate_takes_the_window_the_repair_plan_takes(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 12 point 11: one resolution of the window (inspector.analysis.window): `plan` used the
    model table's 1,047,576 for gpt-4.1 while `simulate --policy pi` replayed at pi's 200,000."""
    adr = str(SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl")
    assert main(["plan", adr, "--strategy", "resummarize", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)["budgets"]["window"]
    assert planned == {"tokens": 1_047_576, "source": "model table (gpt-4.1)"}
    assert main(["simulate", adr, "--policy", "pi", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["whatif"]["policy"]["context_window"] == 1_047_576
    assert main(["simulate", adr, "--policy", "pi"]) == 0
    assert capsys.readouterr().out.startswith("contextWindow 1,047,576: from the model table (gpt-4.1)\n")
    assert main(["simulate", adr, "--policy", "pi", "--context-window", "16000"]) == 0
    assert capsys.readouterr().out.startswith("contextWindow 16,000: given with --context-window\n")
