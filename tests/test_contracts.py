"""Every `--json` contract (inspector/contracts/): the committed schema file is the one its model
generates, the real output of the command on the sample sessions, the real sessions and a few
peer corpus files validates against it, and the schema rejects what the contract does not allow
(a wrong type, an unknown key), so these tests can fail."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from inspector.cli import hook
from inspector.cli.main import main
from inspector.contracts import Contract, contract, contracts, schema_text
from inspector.contracts.__main__ import main as contracts_main
from tests.conftest import SAMPLES, SHARED, need_shared

PEER_FILES = (
    "adk/corpus/sliding_window.json",
    "adk/corpus/token_threshold.db",
    "adk/corpus/tie_token.v1.db",
    "codex/corpus/auto_compact.jsonl",
    "claude_code/corpus/manual_compact.jsonl",
    "pi/corpus/split_turn.jsonl",
    "pi/corpus/truncated_summary.jsonl",
)


def sessions() -> list[Path]:
    """The sample sessions, every real session and the peer files above."""
    real = need_shared(SHARED / "real_sessions")
    out = sorted(SAMPLES.glob("*/*.jsonl")) + sorted(real.glob("*/*.jsonl"))
    return out + [need_shared(SHARED / "peers" / p) for p in PEER_FILES]


def ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name}" for p in paths]


@cache
def validator(file: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(contract(file).path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def valid(file: str, doc: Any) -> None:
    errors = sorted(validator(file).iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:10])


def rejected(file: str, doc: Any) -> bool:
    return not validator(file).is_valid(doc)


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str, refusal: bool = False) -> Any:
    """The document the command printed; None for a refusal (exit 2, a message and no document)
    where `refusal` allows one (a repair a format cannot install)."""
    code = main(list(argv))
    got = capsys.readouterr()
    if refusal and code == 2:
        assert got.err.startswith("inspector: ") and not got.out, got.err
        return None
    assert code in (0, 1), got.err
    return json.loads(got.out)


@pytest.fixture(autouse=True)
def _places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))


# ------------------------------------------------------------------------------ the schema files


@pytest.mark.parametrize("c", contracts(), ids=lambda c: c.file)
def test_the_committed_schema_is_the_models(c: Contract) -> None:
    assert c.path.read_text() == schema_text(c), "regenerate: python -m inspector.contracts --write"


def test_the_generator_names_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import inspector.contracts as mod

    for c in contracts():
        shutil.copy(c.path, tmp_path / c.file)
    monkeypatch.setattr(mod, "SCHEMA_DIR", tmp_path)
    assert contracts_main([]) == 0
    (tmp_path / "plan.schema.json").write_text("{}\n")
    assert contracts_main([]) == 1
    assert "plan.schema.json: differs from inspector.contracts.repair.PlanDocument" in capsys.readouterr().err
    assert contracts_main(["--write"]) == 0 and contracts_main([]) == 0


def test_every_schema_is_linked_from_its_docs_page() -> None:
    docs = Path(__file__).resolve().parents[1] / "docs"
    text = "\n".join(p.read_text() for p in docs.glob("*.md"))
    for c in contracts():
        assert f"inspector/schemas/{c.file}" in text, c.file


# --------------------------------------------------------------------------- analyze and context


@pytest.mark.parametrize("path", sessions(), ids=ids(sessions()))
def test_analyze_and_context_output_matches_the_schemas(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    valid("analyze.schema.json", cli_json(capsys, "analyze", str(path), "--json"))
    valid("context.schema.json", cli_json(capsys, "context", str(path), "--json"))


def _analyzed(name: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    return cli_json(capsys, "analyze", str(SAMPLES / "pi" / name), "--json")


def test_the_analyze_schema_rejects_what_the_contract_does_not_allow(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _analyzed("adr0302_amnesiac_fallback.jsonl", capsys)
    valid("analyze.schema.json", doc)
    for bad in (
        lambda d: d.update(unexpected=1),
        lambda d: d.update(records="12"),
        lambda d: d["findings"][0].update(severity="fatal"),
        lambda d: d["checkpoints"][0]["removes"]["by_role"].update(robot=1),
        lambda d: d["checkpoints"][0]["removes"].update(first_line=None),  # left out, never null
        lambda d: d["context"].pop("tokens"),
    ):
        assert rejected("analyze.schema.json", _mutated(doc, bad))


def test_the_context_schema_rejects_what_the_contract_does_not_allow(capsys: pytest.CaptureFixture[str]) -> None:
    doc = cli_json(capsys, "context", str(SAMPLES / "pi" / "orphan_tool_result_after_cut.jsonl"), "--json")
    for bad in (
        lambda d: d.update(schema="inspector.context/2"),
        lambda d: d["messages"][0].update(role="robot"),
        lambda d: d["messages"][0].update(extra=True),
    ):
        assert rejected("context.schema.json", _mutated(doc, bad))


def _mutated(doc: Any, change: Callable[[Any], object]) -> Any:
    d = copy.deepcopy(doc)
    change(d)
    return d


# ----------------------------------------------------------------------------- plan and repair

REPAIRABLE = [SAMPLES / f for f in ("pi/adr0302_amnesiac_fallback.jsonl", "pi/truncated_summary_loop.jsonl",
                                    "pi/healthy_chained.jsonl", "native/dangling_first_kept.jsonl",
                                    "native/live_question_summarized.jsonl")]  # fmt: skip


def repairable() -> list[Path]:
    real = need_shared(SHARED / "real_sessions")
    pi = [real / "pi" / n for n in ("pi-mono__compact@705ba5d4.jsonl", "pi-mono__session@d5dde00d.jsonl", "pi-mono__large-session.jsonl")]
    return [*REPAIRABLE, *pi, real / "claude_code" / "spotter__tool_heavy.jsonl",
            real / "codex" / "agent-sessions__codex_small.jsonl", need_shared(SHARED / "peers" / "adk/corpus/sliding_window.json")]  # fmt: skip


@pytest.mark.parametrize("strategy", ["compact", "resummarize", "recover"])
@pytest.mark.parametrize("path", repairable(), ids=ids(repairable()))
def test_plan_and_repair_output_matches_the_schemas(path: Path, strategy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flags = ("--strategy", strategy, "--window", "32000", "--json")  # small enough that the real sessions summarize
    valid("plan.schema.json", cli_json(capsys, "plan", str(path), *flags))
    for write in ((), ("--out", str(tmp_path / ("copy" + path.suffix)))):
        doc = cli_json(capsys, "repair", str(path), *flags, *write, refusal=True)
        if doc is not None:
            valid("repair.schema.json", doc)


def test_a_repair_written_in_place_names_its_backup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = tmp_path / "s.jsonl"
    shutil.copy(SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl", session)
    doc = cli_json(capsys, "repair", str(session), "--strategy", "resummarize", "--window", "64000", "--write", "--json")
    assert doc["backup"] and doc["after_source"] == "written file"
    valid("repair.schema.json", doc)


def test_the_plan_and_repair_schemas_reject_what_the_contracts_do_not_allow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(need_shared(SHARED / "real_sessions" / "pi" / "pi-mono__session@d5dde00d.jsonl"))
    flags = ("--strategy", "compact", "--window", "32000", "--json")
    plan = cli_json(capsys, "plan", path, *flags)
    repair = cli_json(capsys, "repair", path, *flags)
    valid("repair.schema.json", repair)
    assert plan["checkpoint"] is not None and plan["requests"] and repair["calls"]
    for bad in (
        lambda d: d.update(action="explode"),
        lambda d: d["checkpoint"]["boundary"].update(first_kept=3),
        lambda d: d["budgets"]["window"].update(unit="tokens"),
        lambda d: d["requests"][0].update(kind="final"),
    ):
        assert rejected("plan.schema.json", _mutated(plan, bad))
    for bad in (
        lambda d: d.update(status="done"),
        lambda d: d["calls"][0].update(accepted="yes"),
        lambda d: d["plan"].update(unexpected=1),
        lambda d: d.pop("backup"),
    ):
        assert rejected("repair.schema.json", _mutated(repair, bad))


# ------------------------------------------------------------------------------------- simulate


@pytest.mark.parametrize("path", sessions(), ids=ids(sessions()))
def test_simulate_output_matches_the_schema(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for policy in ("recorded", "pi", "adk-both"):
        args = ["simulate", str(path), "--policy", policy, "--json"]
        if policy == "adk-both":
            args += ["--compaction-interval", "3", "--overlap-size", "1", "--token-threshold", "20000", "--event-retention-size", "2"]
        code = main(args)
        got = capsys.readouterr()
        if code == 2 and policy == "recorded":  # a session that records no policy says so
            assert "inspector:" in got.err
            continue
        assert code == 0, got.err
        valid("simulate.schema.json", json.loads(got.out))


def test_the_simulate_schema_rejects_what_the_contract_does_not_allow(capsys: pytest.CaptureFixture[str]) -> None:
    doc = cli_json(capsys, "simulate", str(SAMPLES / "pi" / "healthy_chained.jsonl"), "--policy", "pi", "--json")
    assert doc["whatif"]["calls"]
    for bad in (
        lambda d: d["whatif"]["calls"][0].update(turn="1"),
        lambda d: d["whatif"]["policy"].update(context_window=None),
        lambda d: d["baseline"]["policy"].update(anything=1),
        lambda d: d.update(unexpected=1),
    ):
        assert rejected("simulate.schema.json", _mutated(doc, bad))


# ------------------------------------------------------------------------------ usage and search


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    for p in sessions():
        dest = root / p.parent.parent.name / p.parent.name / p.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(p, dest)
    return root


@pytest.mark.parametrize("by", ["day", "project", "session", "model"])
def test_usage_output_matches_the_schema(by: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = cli_json(capsys, "usage", str(_tree(tmp_path)), "--by", by, "--json")
    assert doc["groups"]
    valid("usage.schema.json", doc)
    assert rejected("usage.schema.json", _mutated(doc, lambda d: d["groups"][0].update(cost="$1")))
    assert rejected("usage.schema.json", _mutated(doc, lambda d: d["prices"].update(unexpected=1)))


def test_search_output_matches_the_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree(tmp_path)
    for query in ("the", "compaction", "error"):
        doc = cli_json(capsys, "search", query, str(root), "--json")
        assert doc["hits"]
        valid("search.schema.json", doc)
    assert rejected("search.schema.json", _mutated(doc, lambda d: d["hits"][0].update(line="3")))
    assert rejected("search.schema.json", _mutated(doc, lambda d: d["hits"][0].update(unexpected=1)))


# ---------------------------------------------------------------------------------------- watch


def watch_events(paths: list[Path]) -> Iterator[dict[str, Any]]:
    """What `watch --json` prints when each session appears, then when one vanishes and one turns
    unreadable (the CLI's own Watch, its emit collecting the events)."""
    import argparse
    import os

    from inspector.cli.watch import Watch

    got: list[dict[str, Any]] = []
    w = Watch(argparse.Namespace(fail_on="info", exec_cmd=None), got.append)
    for p in paths:
        w.add(str(p), baseline=False)
    os.unlink(paths[0])
    w.update(str(paths[0]))
    paths[1].write_bytes(b"\x00\x01 not a session at all\n" * 10)
    w.update(str(paths[1]))
    yield from got


def test_watch_events_match_the_schema(tmp_path: Path) -> None:
    copies = []
    for p in sessions():
        dest = tmp_path / f"{p.parent.name}__{p.name}"
        shutil.copy(p, dest)
        copies.append(dest)
    events = list(watch_events(copies))
    assert {e["event"] for e in events} >= {"finding", "deleted", "unreadable"}
    for ev in events:
        valid("watch-event.schema.json", json.loads(json.dumps(ev)))
    finding = next(e for e in events if e["event"] == "finding")
    assert rejected("watch-event.schema.json", {**finding, "severity": "fatal"})
    assert rejected("watch-event.schema.json", {**finding, "event": "moved"})
    assert rejected("watch-event.schema.json", {**next(e for e in events if e["event"] == "deleted"), "code": "hole"})


# ---------------------------------------------------------------------------------------- hooks


def _hook(capsys: pytest.CaptureFixture[str], argv: list[str], stdin: bytes | None = None) -> Any:
    code = hook.run(argv, stdin)
    got = capsys.readouterr()
    assert code == 0, got.err
    return json.loads(got.out) if got.out.strip() else None


def test_the_hook_answers_match_the_schemas(capsys: pytest.CaptureFixture[str]) -> None:
    answered = 0
    for path in sessions():
        if path.parent.name == "claude_code":
            event = {"session_id": "s", "transcript_path": str(path), "cwd": "/tmp", "hook_event_name": "SessionStart", "source": "resume"}
            doc = _hook(capsys, ["claude-code"], json.dumps(event).encode())
            if doc is not None:
                answered += 1
                valid("hook-claude-code.schema.json", doc)
                assert rejected("hook-claude-code.schema.json", {**doc, "continue": True})
        if path.parent.name == "pi":
            for argv in (["--event", "session_compact"], ["--event", "session_start", "--reason", "new"]):
                doc = _hook(capsys, ["pi", "--session", str(path), *argv])
                valid("hook-pi.schema.json", doc)
                assert rejected("hook-pi.schema.json", {**doc, "checked": "yes"})
    assert answered, "no Claude Code session gave the hook something to say"


# ------------------------------------------------------------------------------ backups and undo


def test_backups_and_undo_output_matches_the_schemas(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = tmp_path / "s.jsonl"
    shutil.copy(SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl", session)
    repair = ("repair", str(session), "--strategy", "resummarize", "--window", "64000", "--write", "--json")
    cli_json(capsys, *repair)
    listed = cli_json(capsys, "backups", str(session), "--json")
    assert len(listed["backups"]) == 1 and listed["backups"][0]["undone"] is None
    valid("backups.schema.json", listed)
    undone = cli_json(capsys, "undo", str(session), "--json")
    valid("undo.schema.json", undone)
    cli_json(capsys, *repair)
    (Path(listed["folder"]) / "broken.jsonl.json").write_text("{not json")
    listed = cli_json(capsys, "backups", str(session), "--json")
    assert listed["damaged"] and any(b["undone"] for b in listed["backups"])
    valid("backups.schema.json", listed)
    assert rejected("backups.schema.json", _mutated(listed, lambda d: d["backups"][0].update(size="12")))
    assert rejected("backups.schema.json", _mutated(listed, lambda d: d["damaged"][0].update(unexpected=1)))
    assert rejected("undo.schema.json", _mutated(undone, lambda d: d["restored"].pop("sha256")))


def test_undo_of_a_database_store_matches_the_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "token_threshold.db"
    shutil.copyfile(need_shared(SHARED / "peers" / "adk/corpus/token_threshold.db"), store)
    store.chmod(0o644)
    cli_json(capsys, "repair", str(store), "--strategy", "compact", "--keep-recent", "400", "--window", "8000",
             "--reserve", "1000", "--write", "--json")  # fmt: skip
    listed = cli_json(capsys, "backups", str(store), "--json")
    (backup,) = listed["backups"]  # the store's backup is listed, with the rows the write inserted
    assert backup["rows"] and backup["state_before"] != backup["state_after"] and backup["undone"] is None
    valid("backups.schema.json", listed)
    undone = cli_json(capsys, "undo", str(store), "--json")
    assert undone["restored"]["rows"]
    valid("undo.schema.json", undone)
    assert rejected("undo.schema.json", _mutated(undone, lambda d: d["restored"]["rows"][0].update(rowid="7")))
