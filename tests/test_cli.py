"""The output contract (issue 2, point 6): human report, analyze --json, context --json, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from inspector.cli.main import main
from tests.conftest import SHARED

CORPUS = SHARED / "peers" / "pi" / "corpus"
KILLED = CORPUS / "killed_mid_tool.jsonl"
TRUNC = CORPUS / "truncated_summary.jsonl"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True, check=False)


def test_analyze_json_contract() -> None:
    p = _run("analyze", str(KILLED), "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    for key in ("format", "session_id", "records", "coverage", "checkpoints", "findings", "context", "summary"):
        assert key in out
    assert out["format"] == "pi" and out["session_id"] == "01a22c93-f972-744f-8d0b-510c34146515"
    assert out["records"] == 80
    assert set(out["coverage"]) >= {"live", "retained", "summarized", "excluded", "hole"}
    assert sum(out["coverage"].values()) == 76
    (cp,) = out["checkpoints"]
    assert cp["line"] == 72 and cp["boundary"]["found"] is True
    assert {"removes", "represents", "retains"} <= set(cp)
    assert out["context"]["messages"] == 26 and out["context"]["tokens"] > 0
    assert "window" in out["context"] and "tokenizer" in out["context"]


def test_findings_json_shape() -> None:
    out = json.loads(_run("analyze", str(TRUNC), "--json").stdout)
    f = out["findings"][0]
    assert set(f) >= {"code", "severity", "message", "records"}
    assert f["code"] == "truncated_summary" and f["records"][0]["line"] == 76


def test_context_json_at_line_shows_the_synthetic_result() -> None:
    p = _run("context", str(KILLED), "--json", "--at", "71")
    out = json.loads(p.stdout)
    msgs = out["messages"]
    assert out["at_line"] == 71
    synthetic = [m for m in msgs if m["synthetic"]]
    assert len(synthetic) == 1 and synthetic[0]["record_id"] is None and synthetic[0]["role"] == "tool"
    for m in msgs:
        assert {"role", "kind", "record_id", "tokens"} <= set(m)
        assert m["kind"] in ("summary", "message")
        if not m["synthetic"]:
            assert m["record_id"] is not None
    # matches what pi's own context builder says for the file at line 71
    assert len(msgs) == 69


def test_context_json_leads_with_the_summary() -> None:
    msgs = json.loads(_run("context", str(KILLED), "--json").stdout)["messages"]
    assert msgs[0]["kind"] == "summary" and msgs[0]["record_id"] == "15692570"
    assert all(m["kind"] == "message" for m in msgs[1:])


def test_fail_on(capsys: object) -> None:
    assert main(["analyze", str(TRUNC), "--fail-on", "warning"]) == 1
    assert main(["analyze", str(TRUNC), "--fail-on", "error"]) == 0
    assert main(["analyze", str(KILLED), "--fail-on", "warning"]) == 0


def test_usage_errors_exit_2() -> None:
    for args in (
        ("analyze",),
        ("analyze", str(KILLED), "--at", "0"),
        ("analyze", str(KILLED), "--fail-on", "x"),
        ("/no/such/session.jsonl",),
        (str(KILLED), "--window", "0"),
    ):
        p = _run(*args)
        assert p.returncode == 2, args
        assert "Traceback" not in p.stderr


def test_human_report_reads_in_ten_seconds() -> None:
    p = _run("analyze", str(TRUNC))
    assert p.returncode == 0
    lines = p.stdout.splitlines()
    assert "truncated_summary.jsonl" in lines[0]
    assert "warning" in p.stdout.split("Findings")[0]  # the summary line comes first
    assert "Coverage" in p.stdout and "summarized" in p.stdout and "Next request" in p.stdout


def test_help_explains() -> None:
    p = _run("--help")
    assert p.returncode == 0 and "analyze" in p.stdout and "context" in p.stdout and "hole" in p.stdout
    assert "triage browser" in p.stdout and "SESSION.jsonl" in p.stdout


def test_console_script_installed(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("inspector")
    assert exe.exists(), "the inspector console script is installed with the package"
    p = subprocess.run([str(exe), "context", str(KILLED)], capture_output=True, text=True, check=False)
    assert p.returncode == 0 and "What the model receives next" in p.stdout


def test_version_prints_the_installed_version() -> None:
    from importlib.metadata import version

    for args in (("--version",), ("--version", "analyze")):
        p = _run(*args)
        assert p.returncode == 0, args
        assert p.stdout.strip() == f"inspector {version('inspector')}"
        assert "Traceback" not in p.stderr
