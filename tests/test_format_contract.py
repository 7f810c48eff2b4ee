"""The Format contract (issue 13 part 1; docs/formats-contract.md): a new read-only format is its
module's `FORMAT = Format(...)` plus one registry line. Here a toy format is registered in a
fixture, and detection, loading, the analysis, `--format`, the help text, default places and the
triage walk all find it through the registry alone; an unknown format is an error, never another
format's rules."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from inspector.analysis import analyze
from inspector.cli.main import build_parser, main
from inspector.formats import LoadError, UnknownFormat, detect, load, load_bytes, registry
from inspector.formats.base import Format, Runtime
from inspector.formats.jsonl import RawLine, parse_bytes
from inspector.ledger.model import Block, Ledger, Message, Record

# ---------------------------------------------------------------------------------------- a toy format

TOY_NAME = "toy"


def _looks_like(o: Any) -> bool:
    return isinstance(o, dict) and o.get("toy") in ("user", "assistant")


def _build(lines: list[RawLine], path: str | None, _data: bytes | None) -> Ledger:
    records: list[Record] = []
    for rl in lines:
        for o in rl.objects:
            if _looks_like(o):
                msg = Message(o["toy"], [Block("text", str(o.get("text", "")))])
                records.append(Record(len(records), rl.line, "message", "toy", message=msg))
    return Ledger(path=path, format=TOY_NAME, session_id=None, header=None, records=records)


TOY = Format(
    name=TOY_NAME,
    label="Toy chat log",
    runtime=Runtime(
        name=TOY_NAME,
    ),
    looks_like=_looks_like,
    build=_build,
    suffixes=(".toylog",),
    default_places=("~/.toy/logs",),
    not_session_files=("*.toylog.bak",),
)

LINES = b'{"toy": "user", "text": "hello"}\n{"toy": "assistant", "text": "hi there"}\n'


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Format:
    """The toy format registered as a new adapter is: one more registry entry."""
    monkeypatch.setattr(registry, "REGISTRY", (*registry.REGISTRY, TOY))
    return TOY


def test_a_registered_format_is_detected_loaded_and_analysed(toy: Format, tmp_path: Path) -> None:
    lines, _, _ = parse_bytes(LINES, "x")
    assert detect(lines) == "toy"
    p = tmp_path / "chat.toylog"
    p.write_bytes(LINES)
    led = load(str(p))
    assert led.format == "toy" and len(led.records) == 2 and led.size == len(LINES)
    assert load_bytes(LINES).format == "toy"
    report = analyze(led)
    assert report.runtime is toy.runtime
    assert [it.role for it in report.context] == ["user", "assistant"]


def test_a_registered_format_is_offered_by_the_cli(toy: Format, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "chat.toylog"
    p.write_bytes(LINES)
    args = build_parser().parse_args(["analyze", str(p), "--format", "toy"])
    assert args.format == "toy"
    assert main(["analyze", str(p), "--format", "toy", "--json"]) == 0
    assert orjson.loads(capsys.readouterr().out)["format"] == "toy"
    help_text = " ".join((build_parser().format_help() + _sub_help("analyze")).split())  # unwrapped
    assert "Toy chat log" in help_text and "~/.toy/logs" in help_text and "toy}" in help_text
    # read only: no writer, so a repair is refused before anything runs (a plan writes nothing)
    assert "toy" not in registry.writable()
    assert main(["repair", str(p), "--strategy", "compact", "--window", "8000", "--write"]) == 2
    assert "toy sessions are read only" in capsys.readouterr().err


def _sub_help(cmd: str) -> str:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices[cmd].format_help()  # type: ignore[union-attr, index]


def test_a_registered_format_is_found_by_triage(toy: Format, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.tui.app import default_places
    from inspector.tui.triage import discover

    monkeypatch.setenv("HOME", str(tmp_path))
    logs = tmp_path / ".toy" / "logs"
    logs.mkdir(parents=True)
    (logs / "a.toylog").write_bytes(LINES)
    (logs / "a.toylog.bak").write_bytes(LINES)  # the format names it as not a session
    (logs / "notes.txt").write_text("not a session")
    assert str(logs) in default_places()
    _, files, missing = discover([str(logs)])
    assert [os.path.basename(f) for f in files] == ["a.toylog"] and missing == []


def test_the_registry_drives_the_format_list_without_the_toy() -> None:
    """Without the fixture the toy is nowhere: nothing else lists formats."""
    assert TOY_NAME not in registry.names()
    assert "~/.toy/logs" not in registry.places()


def test_an_unknown_format_is_an_error_not_a_fallback(tmp_path: Path) -> None:
    with pytest.raises(UnknownFormat, match="unknown format 'nope'"):
        registry.get("nope")
    led = load_bytes(LINES.replace(b"toy", b"x"), fmt="native")
    led.format = "nope"  # a ledger whose format nothing declares
    with pytest.raises(UnknownFormat):
        analyze(led)
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"type": "x"}\n')
    with pytest.raises(LoadError, match="nope"):
        load(str(p), fmt="nope")


def test_every_registered_format_declares_one_reading_family() -> None:
    for f in registry.REGISTRY:
        assert (f.looks_like is not None) != f.is_store, f.name
        if f.is_store:
            assert f.looks_like_file is not None, f"{f.name}: the folder walk needs a content test"
    assert len(set(registry.names())) == len(registry.REGISTRY)
    with pytest.raises(ValueError, match="either"):
        Format(name="half", label="half", runtime=TOY.runtime, looks_like=_looks_like)


def test_a_selector_on_a_single_session_file_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}\n')
    with pytest.raises(LoadError, match="holds one session"):
        load(f"{p}#abc")
