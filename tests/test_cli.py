"""The output contract (issue 2, point 6): human report, analyze --json, context --json, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli.main import main
from tests.conftest import SAMPLES, SHARED

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


def test_a_repair_checkpoint_is_an_inspector_repair_in_the_table_and_the_json(tmp_path: Path) -> None:
    """The default repair of the ADR 0302 sample carries the summary and moves the boundary: the
    report names it for what it is, judged on what it did (no hole), in --json too (issue 12, point 6)."""
    fixed = tmp_path / "fixed.jsonl"
    assert main(["repair", str(SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"), "--strategy", "resummarize", "--out", str(fixed)]) == 0
    out = json.loads(_run("analyze", str(fixed), "--json").stdout)
    *_, fallback, repair = out["checkpoints"]
    assert repair["repair"] is True and repair["fallback"] is False and repair["carried_forward"] is True
    assert repair["status"] == "inspector repair: kept 223 messages raw, summary carried" and repair["status_tone"] == "ok"
    assert fallback["repair"] is False and fallback["status_tone"] == "error"
    assert fallback["status"] == "fallback: carried the previous summary forward (summarized nothing new)"
    env = {**os.environ, "COLUMNS": "200"}
    human = subprocess.run([sys.executable, "-m", "inspector", "analyze", str(fixed)], capture_output=True, text=True, env=env, check=False).stdout
    assert "inspector repair: kept 223 messages raw, summary carried" in human
    assert "carried previous summary" not in human


def test_one_number_style_and_a_fatal_load_error_is_not_skipped(tmp_path: Path) -> None:
    """Counts carry separators ("1,493 items", never "1493 items"); a file that is no session is
    refused in words that do not say "skipped" (issue 12, point 16)."""
    from inspector.analysis.numbers import count, nice_ticks

    assert [count(1493), count(22122.0), count(7), count(2.5)] == ["1,493", "22,122", "7", "2.5"]
    assert nice_ticks(22122) == [0, 5000, 10000, 15000, 20000, 25000]
    lines = [{"type": "ledger", "format": "inspector-ledger", "version": 1, "id": "s"}]
    for k in range(1493):
        lines.append({"type": "message", "id": f"m{k}", "ts": "2026-01-01T00:00:00Z", "role": "user" if k % 2 == 0 else "assistant",
                      "content": [{"type": "text", "text": "x"}]})
    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps(o) + "\n" for o in lines))
    out = json.loads(_run("analyze", str(big), "--json").stdout)
    assert "next request: 1,493 items" in out["summary"]
    readme = _run("analyze", str(Path(__file__).parents[1] / "README.md"))
    assert readme.returncode == 2 and "not a session ledger" in readme.stderr and "skipped" not in readme.stderr
def test_version_prints_the_installed_version() -> None:
    from importlib.metadata import version

    for args in (("--version",), ("--version", "analyze")):
        p = _run(*args)
        assert p.returncode == 0, args
        assert p.stdout.strip() == f"inspector {version('inspector')}"
        assert "Traceback" not in p.stderr


# What only some commands use: the session index and the price table (pydantic's models), the
# repair planner, the simulator, the report exporter and the package's metadata (`--version`).
ONLY_SOME_COMMANDS = (
    "pydantic", "inspector.store.index", "inspector.analysis.usage", "inspector.analysis.sessions",
    "inspector.compaction.plan", "inspector.analysis.simulate", "inspector.analysis.report_export", "importlib.metadata",
)  # fmt: skip


def test_the_parser_every_command_builds_imports_only_what_every_command_needs() -> None:
    code = (
        "import sys; from inspector.cli.main import build_parser; build_parser(); "
        f"print(' '.join(m for m in {ONLY_SOME_COMMANDS!r} if m in sys.modules))"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert p.stdout.split() == []


def test_usage_groupings_are_the_analysis_groupings() -> None:
    from inspector.analysis import usage
    from inspector.cli import usage as usage_cli

    assert usage_cli.GROUPINGS == usage.GROUPINGS


@pytest.mark.parametrize("sample", ["pi/adr0302_amnesiac_fallback.jsonl", "native/adr0302_amnesiac_fallback.jsonl"])
def test_only_repair_hashes_the_session_file(sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The write-back's fingerprint (sha256 of the bytes analysed) is taken for `repair` alone: a
    read-only command spends no CPU on it (issue 15: 0.4x the parse floor on a JSONL file)."""
    import inspector.formats as formats
    from inspector.formats import jsonl

    hashed: list[str] = []

    class CountingHasher(jsonl.PrefixHasher):
        def run(self) -> None:
            hashed.append(self.path)
            super().run()

    monkeypatch.setattr(formats, "PrefixHasher", CountingHasher)
    monkeypatch.setattr(formats, "hash_prefix", lambda p, n: (hashed.append(p), jsonl.hash_prefix(p, n))[1])
    path = str(SAMPLES / sample)
    for argv in (["analyze", path], ["analyze", path, "--json"], ["context", path, "--json"], ["plan", path, "--strategy", "recover"]):
        main(argv)
    assert hashed == []
    assert main(["repair", path, "--strategy", "recover", "--out", str(tmp_path / "fixed.jsonl")]) == 0
    assert hashed == [path]
