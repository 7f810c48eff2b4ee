"""OpenClaw accepts what we write (issue 14, point 3): the real OpenClaw 2026.9.6 resumes each
repaired store, and the first request it sends is the one `inspector context --json` predicted.

The store OpenClaw itself wrote (tests/peers/openclaw/corpus/s1.sqlite) is repaired on a copy with
each strategy that has work (the extractive summarizer) and written through the shared database
write-back (`install`: one transaction, backed up, verified); then `openclaw agent --local --session-id s1 --message …` runs one turn
on it against the scripted model (tests/peers/openclaw/resume.py). Its first request, less what
OpenClaw adds at send time (tests/test_openclaw.py's normalizations, each cited there), must be our
prediction followed by the new message: our summary to the character, then the kept records in
order, no orphaned result, no unanswered call. OpenClaw must then append its turn under our entry.

OpenClaw not installed (tests/peers/openclaw/install.sh, run by tests/install_runtimes.sh) fails
the test naming the cause.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.cli.main import main
from inspector.formats import load
from inspector.formats.openclaw_model import FAILED_TURN_MARKER
from inspector.store.writeback import install
from tests.peers.openclaw.resume import NotInstalled, resume
from tests.scope import probe_cases
from tests.test_openclaw import _predicted, _sent, _strip_dates
from tests.test_openclaw_writer import BUDGETS, STORE, repaired

# (label, strategy, keep-recent): each has work on the corpus store (checked below).
# compact-4000 (a wider kept tail) and resummarize-800 (the same record as compact's, its summary
# made anew) in the full probe campaign only (tests/scope.py).
_EVERY: tuple[tuple[str, str, int | None], ...] = (
    ("compact-800", "compact", 800),
    ("compact-4000", "compact", 4000),
    ("resummarize-800", "resummarize", 800),
    ("recover", "recover", None),
)
CASES = tuple(probe_cases(_EVERY, [c for c in _EVERY if c[0] not in ("compact-4000", "resummarize-800")]))
MESSAGE = "[turn:r1] are you still there?"


def _first_agent_request(reqs: list[dict[str, Any]]) -> dict[str, Any]:
    agent = [r for r in reqs if r["kind"] == "agent"]
    assert agent, [r["kind"] for r in reqs]
    msgs = agent[0]["body"]["messages"]
    return {"kind": "agent", "messages": msgs[1:] if msgs and msgs[0]["role"] == "system" else msgs}


def test_openclaw_resumes_every_repaired_store_as_predicted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    _check_accepts(tmp_path, capsys, STORE, CASES)


def test_openclaw_resumes_a_repaired_store_holding_failed_answers_as_predicted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The corpus store with a turn whose first answer the user aborted mid-stream (a text: sent as
    OpenClaw's failed-turn marker) and one cut short holding only reasoning (left out), then a
    clean answer: repaired, the marker goes where we predicted it, retained or summarized."""
    from tests.test_openclaw_failed_turns import TEXT, answer, append, turn

    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    src = tmp_path / "failed.sqlite"
    src.write_bytes(STORE.read_bytes())
    rows = turn(TEXT, "aborted")
    rows[-1:-1] = [answer("pl1", "pd1", [{"type": "thinking", "thinking": "hm", "thinkingSignature": ""}], "length")]
    rows[-1]["parentId"] = "pl1"
    append(src, [*rows, answer("pg1", "pc1", [{"type": "text", "text": "done."}], "stop")])
    report = analyze(load(str(src)))
    assert [it.text for it in report.context if it.record_id == "pd1"] == [FAILED_TURN_MARKER]
    every = (("failed-compact-800", "compact", 800), ("failed-recover", "recover", None))
    repaired_reports = _check_accepts(tmp_path, capsys, src, tuple(probe_cases(every, every[:1])))  # (tests/scope.py)
    for rep in repaired_reports:  # (each keeps the aborted answer raw: OpenClaw sent the marker where we said)
        assert [it.text for it in rep.context if it.record_id == "pd1"] == [FAILED_TURN_MARKER]


def _check_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], src: Path, strategies: tuple[tuple[str, str, int | None], ...]
) -> list[Any]:
    """Each strategy's repair of SRC, written back, resumed by OpenClaw: its first request is ours.
    The repaired stores' reports."""
    cases = []
    for label, strategy, keep in strategies:
        keep_args = ["--keep-recent", str(keep)] if keep is not None else []
        assert main(["plan", str(src), "--strategy", strategy, *keep_args, *BUDGETS, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["action"] != "noop", label
        f = tmp_path / f"{label}.sqlite"
        _led, res = repaired(src, f, strategy, keep)
        assert res.entry is not None, (label, res.status)
        install(res.plan.report, res.entry, lines=res.lines)  # the shared database write-back
        seq = next(r.line for r in load(str(f)).records if r.id == res.entry["id"])
        assert main(["context", str(f), "--json"]) == 0
        predicted_ids = [m["record_id"] for m in json.loads(capsys.readouterr().out)["messages"]]
        report = analyze(load(str(f)))
        assert predicted_ids == [it.record_id for it in report.context], label
        assert report.checkpoints[-1].record.id == res.entry["id"], label
        assert not any(it.orphan for it in report.context), label
        assert report.coverage_counts()["hole"] == 0 or strategy == "recover", label
        cases.append((label, f, seq, res.entry, report))

    def run(case: tuple[str, Path, int, dict[str, Any], Any]) -> tuple[int, list[dict[str, Any]]]:
        label, f, *_ = case
        return resume(f, "s1", MESSAGE, tmp_path / f"scratch-{label}")

    try:
        # The first run alone: a fresh install settles OpenClaw's package lifecycle on first use
        # (runs started together before that refuse: "package lifecycle is incomplete").
        results = [run(cases[0])]
        with ThreadPoolExecutor(max_workers=len(cases)) as pool:
            results += list(pool.map(run, cases[1:]))
    except NotInstalled as e:
        pytest.fail(f"{e} (tests/install_runtimes.sh installs it): OpenClaw's acceptance cannot be checked", pytrace=False)
    for (label, _f, seq, entry, report), (rc, reqs) in zip(cases, results, strict=True):
        assert rc == 0, (label, (tmp_path / f"scratch-{label}" / "openclaw.stderr.log").read_text()[-2000:])
        sent = _sent(_first_agent_request(reqs), {})
        predicted = _predicted(report)
        assert sent[-1]["role"] == "user" and sent[-1]["parts"][-1].endswith(MESSAGE), label
        _strip_dates(sent[:-1], predicted)
        assert sent[:-1] == predicted, label
        assert sent[0]["parts"] == [report.context[0].text], label  # our summary, as wrapped, to the character
        # OpenClaw kept our row and appended its turn under our entry (it took it as the leaf).
        stored = analyze(load(str(tmp_path / f"scratch-{label}" / "home" / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite")))
        ours = next(r for r in stored.ledger.records if r.id == entry["id"])
        assert ours.line == seq and ours.raw() == entry, label
        following = [r for r in stored.ledger.records if r.line > seq]
        assert following and following[0].parent_id == entry["id"], label
        assert stored.checkpoints[-1].record.id == entry["id"], label
    return [report for *_, report in cases]
