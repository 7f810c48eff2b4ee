"""`inspector plan` and `inspector repair` (issue 4): human and JSON output, progress, exit codes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli.main import COMMANDS, build_parser, main
from tests.conftest import SAMPLES

ADR = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"
LOOP_PI = SAMPLES / "pi" / "compaction_loop_nothing_summarized.jsonl"


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    e = {**os.environ, "COLUMNS": "120", **(env or {})}
    return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True, check=False, env=e)


def test_plan_and_repair_are_commands() -> None:
    assert {"plan", "repair"} <= set(COMMANDS)
    sub = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(COMMANDS) <= set(sub)


def test_plan_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(ADR), "--strategy", "resummarize", "--keep-recent", "3000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["schema"] == "inspector.plan/1" and out["strategy"] == "resummarize" and out["action"] == "summarize"
    assert out["budgets"]["keep_recent"] == {"tokens": 3000, "source": "flag"}
    assert out["budgets"]["reserve"] == {"tokens": 16384, "source": "pi default"}
    (req,) = out["requests"]
    assert req["from"]["line"] == 59 and req["prompt_tokens"] <= req["budget"] and req["file_list"] is True
    cp = out["checkpoint"]
    assert cp["boundary"]["first_kept"]["line"] > req["to"]["line"]
    assert cp["represents"]["count"] == cp["removes"]["count"]
    assert out["before"]["holes"] == 168 and out["after"]["holes"] == 0
    assert out["after"]["finding_counts"]["error"] == 0


def test_plan_human_output() -> None:
    p = _run("plan", str(ADR), "--strategy", "resummarize", "--keep-recent", "3000")
    assert p.returncode == 0, p.stderr
    for text in ("Budgets", "Summarizer requests (1)", "Checkpoint it would install", "Before / after", "pi default", "holes"):
        assert text in p.stdout


def test_the_default_plan_on_the_adr_sample_says_why_no_summarizer_is_called() -> None:
    """The 168 hole messages fit the retained tail, so the plan keeps them raw: it says that, not
    "nothing new to summarize", and labels the room for summary and tail as a budget (issue 12,
    points 8 and 12)."""
    out = _run("plan", str(ADR), "--strategy", "resummarize", env={"COLUMNS": "200"}).stdout
    assert out.splitlines()[1].startswith("the 168 hole messages fit in the window: kept raw, no summarizer call")
    assert "nothing new to summarize" not in out and "no_new_history" not in out
    assert "summary + tail budget │ 1,031,164 │ window − reserve − summary wrapper" in out


def test_repair_writes_a_copy_and_compares_before_and_after(tmp_path: Path) -> None:
    out = tmp_path / "fixed.jsonl"
    p = _run("repair", str(ADR), "--strategy", "resummarize", "--keep-recent", "3000", "--out", str(out), "--progress")
    assert p.returncode == 0, p.stderr
    assert out.exists()
    # Built, written to a copy: nothing is installed into the session (issue 12, point 7).
    head = p.stdout.splitlines()[0]
    assert head.startswith("built") and "written to a copy" in head and "installed" not in p.stdout
    assert "after (written file)" in p.stdout and "untouched" in p.stdout
    assert "1/1" in p.stderr  # rich progress: request i of N
    a = _run("analyze", str(out), "--json")
    report = json.loads(a.stdout)
    assert report["coverage"]["hole"] == 0


def test_repair_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "fixed.jsonl"
    assert main(["repair", str(ADR), "--strategy", "recover", "--out", str(out), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["schema"] == "inspector.repair/1" and d["status"] == "recovered" and d["out"] == str(out)
    assert d["after_source"] == "written file" and d["entry"]["type"] == "compaction"
    assert d["failure_reason"] in ("summary_provider", "summary_budget", "no_new_history", "checkpoint_oversized")
    assert d["plan"]["action"] == "recover"


def test_repair_without_out_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = sorted(p.name for p in SAMPLES.glob("*/*"))
    assert main(["repair", str(ADR), "--strategy", "resummarize", "--keep-recent", "3000", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["status"] == "built" and d["out"] is None and d["after_source"] == "simulated"
    assert sorted(p.name for p in SAMPLES.glob("*/*")) == before
    # Said in one word for built and one for installed (issue 12, point 7).
    human = _run("repair", str(ADR), "--strategy", "resummarize").stdout
    assert human.startswith("built  ·  not installed (no --out or --write)") and "Checkpoint built" in human


def test_usage_and_configuration_errors_exit_2(tmp_path: Path) -> None:
    p = _run("plan", str(LOOP_PI), "--strategy", "compact")
    assert p.returncode == 2 and "--window" in p.stderr
    p = _run("plan", str(ADR))
    assert p.returncode == 2 and "--strategy" in p.stderr
    env = {k: "" for k in ("OPENAI_API_KEY", "INSPECTOR_OPENAI_API_KEY")}
    p = _run("repair", str(ADR), "--strategy", "compact", "--provider", "openai", "--model", "gpt-4.1",
             "--config", str(tmp_path / "none.toml"), env=env)
    assert p.returncode == 2 and "openai" in p.stderr
    p = _run("repair", str(ADR), "--strategy", "recover", "--out", str(ADR))
    assert p.returncode == 2 and "session file itself" in p.stderr


def test_a_repair_that_fails_open_exits_1(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on: the summarizer cannot be reached
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "o.jsonl"
    p = _run("repair", str(ADR), "--strategy", "resummarize", "--keep-recent", "3000", "--provider", "openai",
             "--model", "gpt-4.1", "--base-url", f"http://127.0.0.1:{port}/v1", "--timeout", "5", "--out", str(out),
             "--json", env={"OPENAI_API_KEY": "sk-test-not-a-key"})
    assert p.returncode == 1, p.stderr
    d = json.loads(p.stdout)
    assert d["status"] == "failed" and d["outcome"] == "network" and d["entry"] is None
    assert not out.exists()
    assert "sk-test-not-a-key" not in p.stdout + p.stderr


def test_a_plan_names_the_runtime_whose_contiguous_tail_quotes_the_active_request(tmp_path: Path) -> None:
    """The plan's "active request" row named pi for every runtime (a Claude Code plan said "pi keeps a
    contiguous tail")."""
    from tests.test_claude_code import _jsonl, _line

    objs = [_line("user", "u0", None, "an earlier question " + "word " * 200), _line("assistant", "a0", "u0", [{"type": "text", "text": "done " * 200}])]
    objs.append(_line("user", "u1", "a0", "THE ACTIVE REQUEST " + "detail " * 50))
    parent = "u1"
    for k in range(6):
        call = _line("assistant", f"c{k}", parent, [{"type": "tool_use", "id": f"t{k}", "name": "Read", "input": {"k": k}}], stop="tool_use")
        res = _line("user", f"r{k}", f"c{k}", [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "output " * 300}])
        objs += [call, res]
        parent = f"r{k}"
    f = tmp_path / "cc.jsonl"
    f.write_bytes(_jsonl(objs))
    r = _run("plan", str(f), "--strategy", "recover", "--window", "1200", "--reserve", "256")
    assert r.returncode == 0, r.stderr
    row = next(line for line in r.stdout.splitlines() if "active request" in line and "quoted verbatim" in line)
    assert "claude_code keeps a contiguous tail" in row and "pi keeps" not in r.stdout, r.stdout
