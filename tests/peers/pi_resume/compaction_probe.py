"""When the real pi compacts a session before the prompt it resumes with, against inspector's
`compacts_first` finding: one pi, many probes.

Each probe is a copy of the pi peer corpus's `normal.jsonl` (two compactions, then turns by the
fake model) whose last reply (the leaf, by `fake/fake-model`, the model the harness runs) is edited:
its usage put at or just over pi's threshold (the window less the 16,384-token reserve), its
totalTokens left out, its stop reason made an error or an abort, an error text that names a context
overflow or one that does not, a compaction appended after it. The installed pi (0.73.1) resumes
every copy in one process with auto-compaction on and a `WINDOW`-token model
(`resume.resume_many`); a probe's verdict is whether pi's first request after the prompt was its
summarizer's. inspector's is whether `analyze --window WINDOW` reports `compacts_first`.

    python -m tests.peers.pi_resume.compaction_probe     # both verdicts, side by side
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspector.formats.pi_resume import estimate_tokens
from tests.peers.pi_resume import resume, type_probe

WINDOW = 40_000
THRESHOLD = WINDOW - 16_384  # pi's default reserve (settings-manager.js:463)
_Edit = Callable[[dict[str, Any]], None]


def _usage(total: int | None, input_: int, output: int = 0) -> _Edit:
    def edit(m: dict[str, Any]) -> None:
        u = m["usage"]
        u.update(input=input_, output=output, cacheRead=0, cacheWrite=0)
        if total is None:
            u.pop("totalTokens", None)
        else:
            u["totalTokens"] = total

    return edit


def _stop(reason: str, error: str | None = None) -> _Edit:
    def edit(m: dict[str, Any]) -> None:
        m["stopReason"] = reason
        if error is not None:
            m["errorMessage"] = error

    return edit


def _both(*edits: _Edit) -> _Edit:
    def edit(m: dict[str, Any]) -> None:
        for e in edits:
            e(m)

    return edit


def _error_after(prev_total: Callable[[int], int]) -> _Edit:
    """The leaf an error that names no overflow; the reply before it (`_PREV`) given a usage of
    `prev_total(trailing)`, trailing pi's estimate of the messages after that reply."""

    def edit(m: dict[str, Any]) -> None:
        _stop("error", "500 internal server error")(m)
        _usage(0, 0)(m)

    edit.prev_total = prev_total  # type: ignore[attr-defined]
    return edit


_PREV = "8670dcff"  # the reply before the leaf (a tool call; its result between them)

# (name, the edit of the leaf's message, whether a compaction entry is appended after the leaf)
PROBES: list[tuple[str, _Edit, bool]] = [
    ("as written", lambda m: None, False),
    ("at the threshold", _usage(THRESHOLD, THRESHOLD - 60, 60), False),
    ("one over the threshold", _usage(THRESHOLD + 1, THRESHOLD - 59, 60), False),
    ("no totalTokens, the counts over", _usage(None, THRESHOLD - 59, 60), False),
    ("totalTokens 0, the counts over", _usage(0, THRESHOLD - 59, 60), False),
    ("totalTokens under, the counts over", _usage(100, THRESHOLD + 10, 60), False),
    ("aborted, over", _both(_usage(THRESHOLD + 1, THRESHOLD - 59, 60), _stop("aborted")), False),
    ("input over the window", _usage(WINDOW + 1, WINDOW + 1), False),
    ("overflow error", _both(_usage(0, 0), _stop("error", "400 prompt is too long: 250000 tokens > 200000 maximum")), False),
    ("overflow error, other words", _both(_usage(0, 0), _stop("error", "Error: context_length_exceeded")), False),
    ("rate limit naming too many tokens", _both(_usage(0, 0), _stop("error", "429 rate limit: too many tokens per minute")), False),
    ("error not an overflow", _both(_usage(0, 0), _stop("error", "500 internal server error")), False),
    ("over, then a compaction", _usage(THRESHOLD + 1, THRESHOLD - 59, 60), True),
    # An errored reply: pi estimates the context from the reply before it and what follows that.
    ("error, the estimate at the threshold", _error_after(lambda trailing: THRESHOLD - trailing), False),
    ("error, the estimate one over", _error_after(lambda trailing: THRESHOLD - trailing + 1), False),
    ("error, the reply before far over", _error_after(lambda trailing: WINDOW), False),
]


def _compaction(parent: str, first_kept: str) -> dict[str, Any]:
    return {
        "type": "compaction", "id": "pcmp0001", "parentId": parent, "timestamp": "2026-11-30T13:09:30.000Z",
        "summary": "PROBE SUMMARY", "firstKeptEntryId": first_kept, "tokensBefore": THRESHOLD + 1,
    }  # fmt: skip


def write_probes(out: Path, cwd: Path) -> list[Path]:
    """One copy of the base per probe (its header's cwd made CWD), its leaf's message edited."""
    lines = type_probe.BASE.read_bytes().splitlines()
    header = json.loads(lines[0])
    header["cwd"] = str(cwd)
    lines[0] = json.dumps(header).encode()
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for i, (_, edit, compacted) in enumerate(PROBES):
        entries = [json.loads(x) for x in lines[-3:]]
        prev, result, leaf = entries
        assert leaf["id"] == type_probe.LEAF and leaf["message"]["role"] == "assistant", "the base's leaf moved"
        assert prev["id"] == _PREV and result["message"]["role"] == "toolResult", "the reply before the leaf moved"
        edit(leaf["message"])
        total = getattr(edit, "prev_total", None)
        if total is not None:
            trailing = sum(estimate_tokens(e["message"]) for e in (result, leaf))
            _usage(total(trailing), 0)(prev["message"])
        mine = [*lines[:-3], *(json.dumps(e).encode() for e in entries)]
        if compacted:
            mine.append(json.dumps(_compaction(leaf["id"], leaf["parentId"])).encode())
        f = out / f"probe{i:03d}.jsonl"
        f.write_bytes(b"\n".join(mine) + b"\n")
        files.append(f)
    return files


def predicted(f: Path) -> bool:
    """Does inspector say pi compacts the session first (with the harness's window)?"""
    return any(x.code == "compacts_first" for x in _analysis(f, WINDOW).findings)


def run(out: Path) -> list[tuple[str, bool | str, bool]]:
    """Every probe: (name, whether pi compacted first, or why it sent nothing; inspector's prediction)."""
    files = write_probes(out / "probes", out / "run" / "ws")
    copies = out / "resumed"
    copies.mkdir(parents=True, exist_ok=True)
    for f in files:
        (copies / f.name).write_bytes(f.read_bytes())
    runs = resume.resume_many([copies / f.name for f in files], out / "run", window=WINDOW, compaction=True)
    return [
        (name, r.summarized_first if r.messages is not None or r.summarized_first else r.error, predicted(f))
        for (name, _, _), f, r in zip(PROBES, files, runs, strict=True)
    ]


def run_files(files: list[Path], window: int, out: Path) -> list[tuple[str, bool | str, bool]]:
    """Sessions as they are (their header's cwd made the harness's), resumed with a `window`-token
    model: (name, whether pi compacted first, or why it sent nothing; inspector's prediction)."""
    ws = out / "run" / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    copies = []
    for f in files:
        lines = f.read_bytes().splitlines()
        header = json.loads(lines[0])
        header["cwd"] = str(ws)
        lines[0] = json.dumps(header).encode()
        c = out / f.name
        c.write_bytes(b"\n".join(lines) + b"\n")
        copies.append(c)
    said = [any(x.code == "compacts_first" for x in _analysis(c, window).findings) for c in copies]
    runs = resume.resume_many(copies, out / "run", window=window, compaction=True)
    return [
        (f.name, r.summarized_first if r.messages is not None or r.summarized_first else r.error, ours)
        for f, ours, r in zip(files, said, runs, strict=True)
    ]


def _analysis(f: Path, window: int) -> Any:
    from inspector.analysis import analyze
    from inspector.formats import load

    return analyze(load(str(f)), window=window)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        rows = run(Path(tmp))
    for name, pi, ours in rows:
        mark = " " if pi == ours else "*"
        print(f"{mark} {name:40} pi: {pi!s:8} inspector: {ours}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
