"""`python -m tests.peers.codex_resume.line_probe [ROLLOUT]`: what the real Codex does with one damaged line.

The last user message of a rollout (by default the Codex peer corpus's `auto_compact.jsonl`) is
damaged one way at a time (its text of another JSON type, an id of another type, invalid UTF-8, a
lone surrogate escape, a bare NaN, another object glued after it, the line cut short, a value
nested 100 or 126 deep beside its fields); each copy is resumed with the installed Codex
(`resume.resume`, the pinned CLI against the scripted model on 127.0.0.1), and the number of input
items of its first request is printed beside the number of messages `inspector context --json`
predicts, and the same two for the undamaged rollout. Codex parses each line whole into its own
types (serde_json) and skips one that fails: where its count falls by one and ours does not, we
read a line Codex drops. A report, not a test; exits 2 when Codex is not installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import REPO, SHARED
from tests.peers.codex_resume import resume as harness

_Damage = Callable[[dict[str, Any]], bytes]


def _field(o: dict[str, Any], text: str) -> bytes:
    """The line with `"x": <text>` (raw JSON text) among its payload's fields."""
    return json.dumps(o).replace('"role": "user"', f'"role": "user", "x": {text}', 1).encode()


def _with(o: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> bytes:
    o = json.loads(json.dumps(o))
    edit(o)
    return json.dumps(o).encode()


DAMAGE: dict[str, _Damage] = {
    "none": lambda o: json.dumps(o).encode(),
    "text of another type": lambda o: _with(o, lambda c: c["payload"]["content"][0].__setitem__("text", 5)),
    "id of another type": lambda o: _with(o, lambda c: c["payload"].__setitem__("id", 5)),
    "invalid UTF-8": lambda o: _field(o, '"@"').replace(b'"@"', b'"\xff\xfe"'),
    "lone surrogate escape": lambda o: _field(o, '"\\ud800"'),
    "bare NaN": lambda o: _field(o, "NaN"),
    "glued object": lambda o: json.dumps(o).encode() + b'{"a": 1}',
    "cut short": lambda o: json.dumps(o).encode()[:-5],
    "nested 100 deep": lambda o: _field(o, "[" * 100 + "]" * 100),
    "nested 126 deep": lambda o: _field(o, "[" * 126 + "]" * 126),
}


def _last_user(lines: list[bytes]) -> int:
    def is_user(raw: bytes) -> bool:
        o = json.loads(raw)
        p = o.get("payload") or {}
        return o.get("type") == "response_item" and p.get("type") == "message" and p.get("role") == "user"

    return max(i for i, raw in enumerate(lines) if is_user(raw))


def _ours(path: Path) -> int:
    run = subprocess.run(
        [sys.executable, "-m", "inspector", "context", "--json", str(path)], capture_output=True, text=True, cwd=REPO, check=True
    )
    return len(json.loads(run.stdout)["messages"])


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    src = Path(args[0]) if args else SHARED / "peers" / "codex" / "corpus" / "auto_compact.jsonl"
    if harness.installed_version() != harness.CODEX_VERSION:
        print(f"Codex {harness.CODEX_VERSION} is not installed: run tests/install_codex.sh", file=sys.stderr)
        return 2
    lines = src.read_bytes().splitlines()
    at = _last_user(lines)
    print(f"{src.name}, line {at + 1} damaged; first request's input items (Codex {harness.CODEX_VERSION}) and our messages")
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, damage) in enumerate(DAMAGE.items()):
            case = Path(tmp) / f"case{k}" / src.name
            case.parent.mkdir()
            case.write_bytes(b"\n".join([*lines[:at], damage(json.loads(lines[at])), *lines[at + 1 :]]) + b"\n")
            run = harness.resume(case, "continue", Path(tmp) / f"run{k}")
            theirs = len(run.requests[0]["input"]) if run.requests else None
            print(f"  {name:24} Codex {theirs!s:>4}   inspector {_ours(case):>4}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
