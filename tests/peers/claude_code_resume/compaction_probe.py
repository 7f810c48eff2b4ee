"""What the real Claude Code sends when a transcript's compaction lines are damaged: the whole request.

The peer corpus's `manual_compact.jsonl` holds one /compact: the boundary (line 52: a system line
`compact_boundary` with `compactMetadata`, `logicalParentUuid`), its summary (line 53:
`isCompactSummary`, its parent the boundary) and the message it preserved (line 43). Each probe
damages them one way (a field removed, of another type, naming nothing; the lines reordered or
removed), then Claude Code 2.1.328 resumes the copy (`harness.resume_many`, the pinned CLI against
the scripted Messages API on 127.0.0.1) and its first request is mapped back to the transcript's
lines block by block, as `tests/test_claude_code_accepts.py` maps a repaired file's: the items
sent, in order, must be exactly the items `inspector context --json` predicts.

    python -m tests.peers.claude_code_resume.compaction_probe     # prints each probe's verdict
"""

from __future__ import annotations

import copy
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import SHARED

BASE = SHARED / "peers" / "claude_code" / "corpus" / "manual_compact.jsonl"
BOUNDARY, SUMMARY, PRESERVED = 52, 53, 43  # (1-based lines of the base)
_Lines = list[dict[str, Any]]


@dataclass(frozen=True)
class Probe:
    name: str
    edit: Callable[[_Lines], _Lines]  # the base's line objects -> the damaged file's


def _at(line: int, fn: Callable[[dict[str, Any]], None]) -> Callable[[_Lines], _Lines]:
    def edit(objs: _Lines) -> _Lines:
        out = copy.deepcopy(objs)
        fn(out[line - 1])
        return out

    return edit


def _meta(fn: Callable[[dict[str, Any]], None]) -> Callable[[_Lines], _Lines]:
    return _at(BOUNDARY, lambda o: fn(o["compactMetadata"]))


def _pop(*keys: str) -> Callable[[dict[str, Any]], None]:
    def fn(o: dict[str, Any]) -> None:
        for k in keys:
            o.pop(k, None)

    return fn


def _put(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def fn(o: dict[str, Any]) -> None:
        o[key] = copy.deepcopy(value)

    return fn


def _without(line: int) -> Callable[[_Lines], _Lines]:
    return lambda objs: [o for i, o in enumerate(objs, 1) if i != line]


def _swap(a: int, b: int) -> Callable[[_Lines], _Lines]:
    def edit(objs: _Lines) -> _Lines:
        out = list(objs)
        out[a - 1], out[b - 1] = out[b - 1], out[a - 1]
        return out

    return edit


NOWHERE = "0e4d1a9e-0000-4000-8000-00000000dead"
PROBES: list[Probe] = [
    Probe("clean", lambda objs: objs),
    Probe("boundary without logicalParentUuid", _at(BOUNDARY, _pop("logicalParentUuid"))),
    Probe("boundary logicalParentUuid names nothing", _at(BOUNDARY, _put("logicalParentUuid", NOWHERE))),
    Probe("boundary with a parentUuid", _at(BOUNDARY, _put("parentUuid", "31f62534-deb9-47a8-967a-7771c3ce0590"))),
    Probe("boundary without compactMetadata", _at(BOUNDARY, _pop("compactMetadata"))),
    Probe("compactMetadata a string", _at(BOUNDARY, _put("compactMetadata", "x"))),
    Probe("no preservedMessages", _meta(_pop("preservedMessages"))),
    Probe("no preserved segment nor messages", _meta(_pop("preservedMessages", "preservedSegment"))),
    Probe("preserved uuids name nothing", _meta(lambda m: m["preservedMessages"].update(uuids=[NOWHERE], allUuids=[NOWHERE]))),
    Probe("preserved uuids a string", _meta(lambda m: m["preservedMessages"].update(uuids="31f62534-deb9-47a8-967a-7771c3ce0590"))),
    Probe("preserved uuids empty", _meta(lambda m: m["preservedMessages"].update(uuids=[], allUuids=[]))),
    Probe("preserved anchor names nothing", _meta(lambda m: m["preservedMessages"].update(anchorUuid=NOWHERE))),
    Probe("boundary subtype other", _at(BOUNDARY, _put("subtype", "compact_boundary_x"))),
    Probe("summary without isCompactSummary", _at(SUMMARY, _pop("isCompactSummary"))),
    Probe("summary isCompactSummary a string", _at(SUMMARY, _put("isCompactSummary", "true"))),
    Probe("summary content a list", _at(SUMMARY, lambda o: o["message"].update(content=[{"type": "text", "text": o["message"]["content"]}]))),
    Probe("summary content a number", _at(SUMMARY, lambda o: o["message"].update(content=5))),
    Probe("summary parent names nothing", _at(SUMMARY, _put("parentUuid", NOWHERE))),
    Probe("summary before the boundary", _swap(BOUNDARY, SUMMARY)),
    Probe("no boundary line", _without(BOUNDARY)),
    Probe("no summary line", _without(SUMMARY)),
    Probe("no preserved line", _without(PRESERVED)),
]


def write_probes(out: Path, base: Path = BASE) -> list[Path]:
    objs = [json.loads(x) for x in base.read_bytes().splitlines()]
    files = []
    for i, p in enumerate(PROBES):
        f = out / f"compaction{i:03d}.jsonl"
        f.write_bytes(b"".join(json.dumps(o).encode() + b"\n" for o in p.edit(objs)))
        files.append(f)
    return files


def run(out: Path) -> list[tuple[Probe, list[Any] | str, list[Any]]]:
    """Every probe: (probe, the items Claude Code sent or why it sent nothing, inspector's prediction)."""
    from inspector.analysis import analyze
    from inspector.analysis.export import context_json
    from inspector.formats import load
    from tests.test_claude_code_accepts import _harness, _predicted_item, _sent_items

    harness = _harness()
    files = write_probes(out)
    runs = harness.resume_many([str(f) for f in files], str(out / "resume"))
    rows: list[tuple[Probe, list[Any] | str, list[Any]]] = []
    for p, f, r in zip(PROBES, files, runs, strict=True):
        report = analyze(load(str(f)))
        predicted = context_json(report)["messages"]
        want = [_predicted_item(m) for m in predicted]
        try:
            got: list[Any] | str = _sent_items(harness, r.first_main(), r.transcript, report.ledger, predicted)[0]
        except harness.HarnessError:
            got = f"no request (rc {r.rc})"
        rows.append((p, got, want))
    return rows


def _items(v: list[Any] | str) -> str:
    return str([g[0][:10] for g in v]) if isinstance(v, list) else v


def main() -> int:
    from tests.peers.claude_code_resume.type_probe import print_verdicts

    with tempfile.TemporaryDirectory() as tmp:
        print_verdicts(run(Path(tmp)), _items)
    return 0


if __name__ == "__main__":
    sys.exit(main())
