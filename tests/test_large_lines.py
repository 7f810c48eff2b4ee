"""What one huge line may cost (issue 11): a 50 MB line loads, analyses and counts its next request
in bounded memory in every format; strings are read whole, a list of millions of items is read up
to `bounded.MAX_ITEMS` items and the rest named in a diagnostic."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.formats import bounded, load
from tests.bad_input_seeds import SEEDS, encode

SIZE = 50 << 20
RSS_LIMIT = 500 << 20

# Where each seed gets its huge content: a list of parts the adapter reads.
_PARTS: dict[str, tuple[Any, ...]] = {
    "pi": (4, "message", "content"),  # the tool result
    "native": (2, "content"),  # the user's message
    "claude_code": (2, "message", "content", 0, "content"),  # the tool result
    "codex": (5, "payload", "output"),  # the function call's output (a list of parts)
    "adk": ("events", 0, "content", "parts"),  # the user's event
}


def _huge(fmt: str, kind: str, size: int = SIZE) -> Any:
    session = copy.deepcopy(SEEDS[fmt])
    *where, last = _PARTS[fmt]
    holder = session
    for k in where:
        holder = holder[k]
    text_key = "text"
    part = "input_text" if fmt == "codex" else "text"  # (a part of a type Codex reads: it skips a line of another)
    if kind == "text":  # one huge string (with commas: prose)
        word = "lorem ipsum, dolor sit amet, "
        holder[last] = [{"type": part, text_key: (word * (size // len(word) + 1))[:size]}]
    else:  # millions of small objects
        holder[last] = [{"type": part, text_key: f"x{i}"} for i in range(size // 28)]
    return session


_CHILD = """
import json, resource, sys
from inspector.formats import load
from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
led = load(sys.argv[1])
report = analyze(led)
report.ensure_tokens()
json.dumps(analyze_json(report)); json.dumps(context_json(report))
longest = max((len(b.text) for r in led.records if r.message for b in r.message.blocks), default=0)
blocks = max((len(r.message.blocks) for r in led.records if r.message), default=0)
try:  # this process's own peak (ru_maxrss would include the forking test process's, on Linux)
    rss = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM:"))
except OSError:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
print(json.dumps({"rss": rss, "longest": longest,
                  "blocks": blocks, "diags": [[d.problem, d.message] for d in led.diagnostics]}))
"""


@pytest.mark.parametrize("kind", ["many", "text"])
@pytest.mark.parametrize("fmt", sorted(_PARTS))
def test_a_50_mb_line_costs_bounded_memory(tmp_path: Path, fmt: str, kind: str) -> None:
    f = tmp_path / ("s.json" if fmt == "adk" else "s.jsonl")
    f.write_bytes(encode(fmt, _huge(fmt, kind)))
    p = subprocess.run([sys.executable, "-c", _CHILD, str(f)], capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["rss"] < RSS_LIMIT, f"{fmt}/{kind}: peak RSS {out['rss'] >> 20} MB"
    notes = [m for problem, m in out["diags"] if problem in ("large_line", "large_value")]
    if kind == "text":
        assert out["longest"] >= SIZE - 100 and not notes  # a string is read whole, never cut
    else:
        assert out["blocks"] <= bounded.MAX_ITEMS + 10
        (note,) = notes
        assert f"after its first {bounded.MAX_ITEMS:,} items" in note and "not read" in note


@pytest.fixture
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same rules at a scale a unit test can afford."""
    monkeypatch.setattr(bounded, "LARGE_LINE_BYTES", 2_000)
    monkeypatch.setattr(bounded, "SMALL_VALUE_BYTES", 200)
    monkeypatch.setattr(bounded, "MAX_ITEMS", 10)
    monkeypatch.setattr(bounded, "PREFIX_BYTES", 1_000)


def _pi_with(tool_content: Any, tmp_path: Path, tail: bytes = b"") -> Path:
    s = copy.deepcopy(SEEDS["pi"])
    s[4]["message"]["content"] = tool_content
    f = tmp_path / "s.jsonl"
    f.write_bytes(encode("pi", s) + tail)
    return f


@pytest.mark.usefixtures("small_limits")
def test_many_items_keep_the_first_and_every_field_after_them(tmp_path: Path) -> None:
    f = _pi_with([{"type": "text", "text": f"part {i}"} for i in range(400)], tmp_path)
    led = load(str(f))
    rec = next(r for r in led.records if r.line == 5)
    assert rec.role == "tool" and rec.result_id == "c1"  # the fields after the content survive
    assert rec.message is not None and rec.message.blocks[0].text.startswith("part 0part 1")
    assert "part 9" in rec.message.blocks[0].text and "part 10" not in rec.message.blocks[0].text
    (d,) = [d for d in led.diagnostics if d.problem == "large_line"]
    assert d.line == 5 and "message.content after its first 10 items" in d.message


@pytest.mark.usefixtures("small_limits")
def test_a_long_text_full_of_commas_is_read_whole(tmp_path: Path) -> None:
    text = "a, b, " * 2_000
    led = load(str(_pi_with([{"type": "text", "text": text}], tmp_path)))
    rec = next(r for r in led.records if r.line == 5)
    assert rec.message is not None and rec.message.blocks[0].text == text
    assert not led.diagnostics


@pytest.mark.usefixtures("small_limits")
def test_a_bad_large_line_is_a_diagnostic_and_the_rest_loads(tmp_path: Path) -> None:
    big = json.dumps({"type": "message", "id": "z1", "parentId": "e8", "timestamp": "t",
                      "message": {"role": "user", "content": "x" * 5_000}}).encode()  # fmt: skip
    cases = [
        ("invalid_utf8", big[:100] + b"\xff" + big[100:] + b"\n"),
        ("malformed_json", big[:-2] + b",]\n"),
        ("truncated_line", big[:-3]),
        ("too_deep", b"[" * 3_000 + b"]" * 3_000 + b"\n"),
        # Found by the fuzz campaign (seed 108: a byte-order mark before a huge first line): a
        # traceback (json's own error, from the fallback that reads what orjson refuses).
        ("malformed_json", b"\xef\xbb\xbf" + big + b"\n"),
    ]
    for problem, line in cases:
        led = load(str(_pi_with([{"type": "text", "text": "ok"}], tmp_path, line)))
        # (the invalid byte falls in the key "content": pi reads the key with U+FFFD in it too, so
        # the message has no content, which pi-ai cannot send: said apart, `pi_sending`)
        # (a list read whole, deep values cut, is no entry object: said apart too)
        (d,) = [d for d in led.diagnostics if d.problem not in ("fails_on_send", "not_an_object")]
        assert d.problem == problem and d.line == 11, (problem, d)
        assert sum(1 for r in led.records if r.message is not None) >= 6
