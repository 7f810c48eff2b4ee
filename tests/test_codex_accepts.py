"""Codex resumes what we wrote (issue 14 §3): the real Codex CLI 0.169.0 rebuilds its history from
the `compacted` line a repair appends.

Every session is a rollout the real Codex wrote (`../shared/peers/codex/corpus/auto_compact.jsonl`)
and that rollout as it stood at the end of each of its turns (the first N lines: what Codex had
written then, one or two compactions of its own or none). Each is repaired in place
(`inspector repair --write`, the extractive summarizer) with each strategy that has something to
install; then `codex exec --json resume <thread id> "<prompt>"` runs on a scratch CODEX_HOME holding
the repaired rollout against a fake Responses API on 127.0.0.1 (tests/peers/codex_resume), and the
first request it sends must hold exactly what `inspector context --json` predicted on the repaired
file, item for item and text for text (the base instructions, our summary text, the kept items in order, no orphaned
output, no unanswered call), followed only by the new turn Codex adds (its re-injected context
messages, then the prompt).

The runtime is installed by tests/install_codex.sh; a missing one fails the test, naming the cause.
"""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.cli.main import main
from inspector.formats import load
from tests.conftest import SHARED
from tests.peers.codex_resume import resume as harness

PEER = SHARED / "peers" / "codex" / "corpus" / "auto_compact.jsonl"
PROMPT = "[R1] Carry on from the checkpoint."
STRATEGIES: tuple[tuple[str, ...], ...] = (
    ("compact",),
    ("resummarize",),
    ("recover",),  # (noop where it would remove nothing: plan.py `_recovery_changes_nothing`)
    ("compact", "--keep-recent", "100"),
    ("resummarize", "--keep-recent", "100"),
    ("recover", "--keep-recent", "100"),
)
# The new turn Codex adds after the resumed history: its context messages, re-injected because the
# checkpoint cleared the reference context (rollout_reconstruction.rs), then the prompt. A real
# rollout resumed in the harness also gets "# AGENTS.md instructions" (those it recorded no longer
# apply in the harness's work dir) and, where its model is not the harness's, "<model_switch>".
CONTEXT_PREFIXES = ("<environment_context>", "<skills_instructions>", "<permissions instructions>", "<user_instructions>", "<collaboration_mode>",
                    "# AGENTS.md instructions", "<model_switch>")


def _turn_ends(path: Path) -> list[int]:
    """The line counts at which the rollout ended a turn (`task_complete`)."""
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    return [i + 1 for i, o in enumerate(rows) if o.get("type") == "event_msg" and o["payload"].get("type") == "task_complete"]


def _sessions(tmp: Path) -> list[tuple[str, Path]]:
    out = []
    lines = PEER.read_bytes().splitlines(keepends=True)
    for n in _turn_ends(PEER):
        f = tmp / "src" / f"peer-auto_compact-{n}.jsonl"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(b"".join(lines[:n]))
        out.append((f.stem, f))
    return out


def _repaired(tmp: Path, sessions: list[tuple[str, Path]], capsys: pytest.CaptureFixture[str]) -> list[tuple[str, Path, Path]]:
    done = []
    for name, src in sessions:
        for strategy, *opts in STRATEGIES:
            args = ["--strategy", strategy, *opts]
            assert main(["plan", str(src), *args, "--json"]) == 0, name
            if json.loads(capsys.readouterr().out)["action"] == "noop":
                continue
            label = f"{name}.{strategy}{'-short' if opts else ''}"
            f = tmp / "repaired" / f"{label}.jsonl"
            f.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, f)
            code = main(["repair", str(f), *args, "--write", "--json"])
            res = json.loads(capsys.readouterr().out)
            assert code == 0, (label, res["reason"])
            assert res["backup"] and Path(res["backup"]).read_bytes() == src.read_bytes()
            done.append((label, src, f))
    return done


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(c["text"] for c in content or [] if isinstance(c, dict) and isinstance(c.get("text"), str))


def _sent(item: dict[str, Any]) -> tuple[Any, ...]:
    """A request input item as the comparison sees it."""
    t = item.get("type", "message")
    if t == "message":
        role = {"developer": "system"}.get(item["role"], item["role"])
        return ("message", role, _text(item.get("content")))
    if t in ("compaction", "compaction_summary") and isinstance(item.get("encrypted_content"), str):
        # (a server-side compaction's summary: inspector's summary item, a user message of its ciphertext)
        return ("message", "user", item["encrypted_content"])
    if t.endswith("_output"):
        return ("result", item.get("call_id"))
    if t.endswith("_call"):
        return ("call", item.get("call_id"))
    if t == "reasoning":  # (its summary's texts, then its content's)
        return ("reasoning", _text([*(item.get("summary") or []), *(item.get("content") or [])]))
    return (t,)


def predicted_items(f: Path, predicted: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """`inspector context --json`'s PREDICTED messages on the repaired file F, each item as the
    comparison sees it, with its full text (an AssertionError when the two readings disagree)."""
    report = analyze(load(str(f)))
    led = report.ledger
    assert len(report.context) == len(predicted), (f.name, len(report.context), len(predicted))
    out: list[tuple[Any, ...]] = []
    for m, it in zip(predicted, report.context, strict=True):
        if m["role"] == "tool":
            out.append(("result", m["tool_call_id"]))
        elif m.get("tool_call_ids"):
            out.append(("call", m["tool_call_ids"][0]))
        elif it.seq is not None and it.kind == "message":
            rec = led.records[it.seq]
            assert rec.message is not None and rec.id == m["record_id"], (f.name, m)
            if rec.type == "response_item:reasoning":  # (sent as a reasoning item: its summary, the reader's thinking)
                out.append(("reasoning", "\n".join(b.text or "" for b in rec.message.blocks if b.type == "thinking")))
            else:
                out.append(("message", m["role"], rec.message.text()))
        else:
            out.append(("message", m["role"], it.text))
    return out


def _predicted(f: Path, capsys: pytest.CaptureFixture[str], synthetic: bool = False) -> list[tuple[Any, ...]]:
    """`inspector context --json` on the repaired file, each item with its full text; SYNTHETIC:
    whether Codex's own "aborted" outputs for unanswered calls may be among them."""
    assert main(["context", str(f), "--json"]) == 0
    predicted = json.loads(capsys.readouterr().out)["messages"]
    for m in predicted:
        assert synthetic or not m["synthetic"], (f.name, m)  # Codex would send an "aborted" output of its own
    return predicted_items(f, predicted)


def resumed_as_predicted(f: Path, request: dict[str, Any], prompt: str, predicted: list[dict[str, Any]]) -> str | None:
    """What the first request Codex sent on resuming F (`request`, with the new turn's PROMPT) says
    against `inspector context --json`'s PREDICTED messages of F: None when it is as predicted,
    else the first difference. Every predicted item, in order and to the character (the base
    instructions, our summary, the kept items; Codex's own "aborted" output for a call left
    unanswered among them), then only the new turn: Codex's context messages and the prompt."""
    want = predicted_items(f, predicted)
    got = [_sent(it) for it in request["input"]]
    if got[: len(want)] != want:
        i = next((k for k, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
        sent, said = (got[i] if i < len(got) else None), (want[i] if i < len(want) else None)
        return f"item {i} of {len(want)} predicted: sent {str(sent)[:160]}, predicted {str(said)[:160]}"
    turn = got[len(want) :]
    if not turn or turn[-1] != ("message", "user", prompt):
        return f"the new prompt is not last: {[str(t)[:80] for t in turn]}"
    if not all(t[0] == "message" and t[2].lstrip().startswith(CONTEXT_PREFIXES) for t in turn[:-1]):
        return f"the new turn holds more than Codex's context messages: {[str(t)[:80] for t in turn[:-1]]}"
    return None


@pytest.fixture(scope="module")
def codex() -> Path:
    if not PEER.exists():
        pytest.fail(f"the Codex peer rollout is missing: {PEER} (the checkout expects ../shared next to it)")
    have = harness.installed_version()
    if have is None:
        pytest.fail(f"Codex {harness.CODEX_VERSION} is not installed at {harness.CODEX}: run tests/install_codex.sh (needs npm)", pytrace=False)
    if have != harness.CODEX_VERSION:
        pytest.fail(f"Codex {have} is installed, the judge is {harness.CODEX_VERSION}: run tests/install_codex.sh", pytrace=False)
    return harness.CODEX


def test_every_repaired_rollout_is_what_codex_resumes(
    codex: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    sessions = _sessions(tmp_path)
    assert len(sessions) == 4
    repaired = _repaired(tmp_path, sessions, capsys)
    assert {s for s, *_ in (n.split(".") for n, _, _ in repaired)} == {n for n, _ in sessions}
    assert len(repaired) >= 10

    def run(case: tuple[str, Path, Path]) -> harness.Resumed:
        label, _, f = case
        return harness.resume(f, PROMPT, tmp_path / "runs" / label)

    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(run, repaired))
    for (label, src, f), r in zip(repaired, runs, strict=True):
        assert r.returncode == 0 and r.requests, (label, r.stderr[-1500:])
        want = _predicted(f, capsys)
        # Exactly what was predicted, the base instructions included (session_meta's without the
        # update_plan tool's sections: 16,979 of the recorded 20,751 characters); then only the
        # new turn: Codex's context messages and the prompt.
        assert want[0][:2] == ("message", "system") and len(want[0][2]) == 16_979, label
        assert main(["context", str(f), "--json"]) == 0
        problem = resumed_as_predicted(f, r.requests[0], PROMPT, json.loads(capsys.readouterr().out)["messages"])
        assert problem is None, (label, problem)
        # Our checkpoint is what Codex resumed from: its summary, with nothing it replaced.
        report = analyze(load(str(f)))
        cp = report.checkpoints[-1]
        assert cp.record.type == "compacted" and cp.record.id == json.loads(f.read_bytes().splitlines()[-3])["id"], label
        assert ("message", "user", report.context[1].text) == want[1] and report.context[1].kind == "summary", label
        before = analyze(load(str(src)))
        holes = report.coverage_counts()["hole"]
        assert holes <= before.coverage_counts()["hole"] or ".recover" in label, label
        assert holes == 0 or ".resummarize" not in label, label
        assert not any(it.orphan for it in report.context), label


INCIDENTS = harness.HERE / "sessions"


def test_every_codex_incident_heals_as_codex_resumes_it(
    codex: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The incidents Codex 0.169 itself wrote (tests/peers/codex_resume/incidents.py: an empty
    summarizer reply, which Codex answers with a stale summary; a kill mid-tool, which leaves a
    call unanswered) are found, repaired with every strategy that has work, and resumed by Codex
    exactly as predicted, with no orphan; for the empty summary at least one strategy leaves no
    hole or unanswered call."""
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    sessions = [(f.stem, f) for f in sorted(INCIDENTS.glob("*.jsonl"))]
    assert {n for n, _ in sessions} == {"codex_empty_summary", "codex_killed_mid_tool"}
    for name, src in sessions:
        before = analyze(load(str(src)))
        found = before.coverage_counts()["hole"] + sum(len(it.unanswered) for it in before.context)
        assert found > 0, name
    repaired = _repaired(tmp_path, sessions, capsys)
    assert {n.split(".")[0] for n, _, _ in repaired} == {n for n, _ in sessions}
    healed: set[str] = set()
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(lambda c: harness.resume(c[2], PROMPT, tmp_path / "runs" / c[0]), repaired))
    for (label, _, f), r in zip(repaired, runs, strict=True):
        assert r.returncode == 0 and r.requests, (label, r.stderr[-1500:])
        want = _predicted(f, capsys, synthetic=True)
        got = [_sent(it) for it in r.requests[0]["input"]]
        assert got[: len(want)] == want, label
        assert got[len(want) :][-1] == ("message", "user", PROMPT), label
        report = analyze(load(str(f)))
        assert not any(it.orphan for it in report.context), label
        if report.coverage_counts()["hole"] == 0 and not any(it.unanswered for it in report.context):
            healed.add(label.split(".")[0])
    # Left open: every strategy keeps the killed call raw in its recent window, unanswered (Codex
    # then sends its own "aborted" output, as predicted above); no hole is left.
    assert healed == {"codex_empty_summary"}


# The usage recorded by a rollout that overflowed: past the harness's 100,000-token window (Codex
# compacts before a turn once the usage it holds reaches its auto-compact limit, below the window).
OVERFLOWED = 150_000


def _overflowed(src: Path, dst: Path) -> int:
    """SRC with its last `token_count`'s last usage raised to OVERFLOWED (what a session repaired
    because it overflowed records): DST; the line number changed."""
    rows = src.read_bytes().splitlines()
    k = max(i for i, x in enumerate(rows) if b'"token_count"' in x and json.loads(x)["payload"].get("info"))
    o = json.loads(rows[k])
    last = o["payload"]["info"]["last_token_usage"]
    last["input_tokens"], last["output_tokens"], last["total_tokens"] = OVERFLOWED - 100, 100, OVERFLOWED
    rows[k] = json.dumps(o, separators=(",", ":"), ensure_ascii=False).encode()
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(b"\n".join(rows) + b"\n")
    return k + 1


def test_a_repaired_overflowed_rollout_resumes_without_a_compaction_first(
    codex: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex 0.169 seeds the resumed session's usage from the rollout's last `token_count` and
    compacts before the turn when it is over its limit (codex_writer's module notes). A rollout
    whose last recorded usage overflowed (the peer rollout, its last usage raised to 150,000 tokens)
    is resumed as is with a compaction request first (the control: Codex reads the raised usage);
    repaired, the usage our `token_count` records after the checkpoint is the new history's, so
    Codex sends the turn first, exactly as `inspector context` predicts, and no compaction."""
    from tests.peers.codex_resume.fake_model import is_compaction

    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    src = tmp_path / "src" / "peer-overflowed.jsonl"
    _overflowed(PEER, src)
    cases = [("unrepaired", src)] + [(label, f) for label, _, f in _repaired(tmp_path, [(src.stem, src)], capsys)]
    assert {c[0].rsplit(".", 1)[-1] for c in cases} >= {"unrepaired", "compact-short", "recover"}, cases
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(lambda c: harness.resume(c[1], PROMPT, tmp_path / "runs" / c[0]), cases))
    for (label, f), r in zip(cases, runs, strict=True):
        assert r.returncode == 0 and r.requests, (label, r.stderr[-1500:])
        if label == "unrepaired":
            assert is_compaction(r.requests[0]), "Codex did not compact the overflowed rollout: the test proves nothing"
            continue
        assert not any(is_compaction(b) for b in r.requests), (label, [len(b["input"]) for b in r.requests])
        assert main(["context", str(f), "--json"]) == 0
        problem = resumed_as_predicted(f, r.requests[0], PROMPT, json.loads(capsys.readouterr().out)["messages"])
        assert problem is None, (label, problem)


def test_a_rollout_of_the_openai_provider_resumes_in_the_harness_as_predicted(codex: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Real rollouts name the built-in `openai` provider (session_meta, thread_settings_applied),
    and Codex 0.169 refuses to resume one under another ("Cannot change this thread's model
    provider from `openai` to `fake` on resume", no request): the harness resumes it with that
    provider pointed at the fake (`resume.config_for`). The peer rollout's first turn, its
    provider made `openai`, is resumed and sent as predicted."""
    name, first = _sessions(tmp_path)[0]
    src = tmp_path / "src" / f"{name}-openai.jsonl"
    src.write_bytes(first.read_bytes().replace(b'"model_provider":"fake"', b'"model_provider":"openai"').replace(b'"model_provider_id":"fake"', b'"model_provider_id":"openai"'))
    r = harness.resume(src, PROMPT, tmp_path / "run")
    assert r.returncode == 0 and r.requests, r.stderr[-1500:]
    assert main(["context", str(src), "--json"]) == 0
    assert resumed_as_predicted(src, r.requests[0], PROMPT, json.loads(capsys.readouterr().out)["messages"]) is None
