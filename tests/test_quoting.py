"""No diagnostic or LoadError echoes a file's raw control or binary bytes, or megabytes of it
(issue 11): every message that quotes file content goes through `ledger.quoting`."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.formats import LoadError, load
from inspector.ledger.quoting import escape, quote
from tests.bad_input_seeds import SEEDS, encode

HOSTILE = "\x1b[2J\x1b]0;owned\x07\x00\u202e" + "x" * 10_000  # clear screen, set title, NUL, bidi, long


def _clean(text: str) -> None:
    assert not any(c in text for c in "\x1b\x07\x00\u202e"), repr(text[:300])
    assert len(text) < 2_000, len(text)


def test_quote_and_escape() -> None:
    assert quote(HOSTILE).startswith("'\\x1b[2J\\x1b]0;owned\\x07\\x00\\u202e")
    _clean(quote(HOSTILE))
    _clean(quote({"k": [HOSTILE] * 50}))
    _clean(quote(HOSTILE.encode()))
    assert escape("plain text, ünïcode") == "plain text, ünïcode"


def _with(fmt: str, path: tuple[Any, ...], value: Any) -> Any:
    s = copy.deepcopy(SEEDS[fmt])
    holder = s
    for k in path[:-1]:
        holder = holder[k]
    holder[path[-1]] = value
    return s


CASES = [
    ("pi", (2, "id"), HOSTILE, (3, "id")),  # a duplicate id, quoted in its diagnostic
    ("native", (2, "id"), HOSTILE, (3, "id")),
    ("native", (1, "id"), HOSTILE, None),  # a message names an undefined run
    ("claude_code", (2, "parentUuid"), HOSTILE, None),  # a parent not found
    ("codex", (8, "payload", "message"), [HOSTILE], None),  # a compacted message that is no string
    ("adk", ("events", 1, "timestamp"), HOSTILE, None),  # not epoch seconds
]


@pytest.mark.parametrize(("fmt", "path", "value", "twin"), CASES)
def test_diagnostics_never_echo_raw_bytes(fmt: str, path: tuple[Any, ...], value: Any, twin: Any, tmp_path: Path) -> None:
    session = _with(fmt, path, value)
    if twin is not None:  # the same value in a second place (an id used twice)
        holder = session
        for k in twin[:-1]:
            holder = holder[k]
        holder[twin[-1]] = value
    f = tmp_path / ("s.json" if fmt == "adk" else "s.jsonl")
    f.write_bytes(encode(fmt, session))
    led = load(str(f))
    assert led.diagnostics, "the case should produce a diagnostic"
    for d in led.diagnostics:
        _clean(d.message)
    p = subprocess.run([sys.executable, "-m", "inspector", "analyze", str(f)], capture_output=True, text=True, check=False)
    assert "Traceback" not in p.stderr
    assert not any(c in p.stdout + p.stderr for c in "\x1b\x07\x00\u202e")


def test_a_load_error_never_echoes_raw_bytes(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text(json.dumps({"type": HOSTILE, "what": 1}) + "\n")
    with pytest.raises(LoadError) as e:
        load(str(f))
    _clean(str(e.value))
    glued = tmp_path / "g.jsonl"
    glued.write_text(json.dumps(SEEDS["pi"][0]) + "\n" + json.dumps({"type": HOSTILE}) + json.dumps({"type": HOSTILE}) + "\n")
    for d in load(str(glued)).diagnostics:
        _clean(d.message)
