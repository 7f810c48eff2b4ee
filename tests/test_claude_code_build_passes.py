"""The Claude Code build visits only the records a pass concerns (issue 15): the checkpoints and tool
lines gathered as the lines are read (`_Reading.checkpoints`, `.tools`), and the leaf found from the
end (`_newest_chained`), must be what a pass over every record finds, on every real session, peer
corpus file and test fixture, every wrong-typed-field case of the bad-input seed and the seed with
each line cut in half or dropped; and the summaries attached from the boundaries alone are those
a walk over every record attaches."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

import inspector.formats.claude_code as cc
from inspector.formats import load
from inspector.formats.jsonl import LoadError
from tests.bad_input_seeds import SEEDS, encode, type_cases
from tests.conftest import REPO
from tests.golden_outputs import damaged_lines

SHARED = REPO.parent / "shared"
FILES = sorted((SHARED / "real_sessions" / "claude_code").glob("*.jsonl"))
FILES += sorted((SHARED / "peers" / "claude_code").rglob("*.jsonl"))
FILES += sorted((REPO / "tests" / "peers").glob("claude_code*/**/*.jsonl"))


def _shaped() -> Iterator[tuple[str, bytes]]:
    """The seed with two boundaries in a row before the summary (it is the second's), and with
    its newest lines glued to one another (Claude Code skips them: the leaf is an older line)."""
    seed = SEEDS["claude_code"]
    at = next(i for i, o in enumerate(seed) if o.get("subtype") == "compact_boundary")
    again = {**seed[at], "uuid": "u4b", "parentUuid": None}
    after = [{**o, "parentUuid": "u4b"} if o.get("parentUuid") == seed[at]["uuid"] else o for o in seed[at + 1 :]]
    yield "two boundaries in a row", encode("claude_code", [*seed[: at + 1], again, *after])
    lines = encode("claude_code", seed).splitlines(keepends=True)
    yield "the newest lines glued", b"".join([*lines[:-3], lines[-3].rstrip(b"\n"), lines[-2].rstrip(b"\n"), lines[-1]])
    yield "the newest lines glued, no summary", b"".join([*lines[:-3], lines[-3].rstrip(b"\n"), lines[-2]])


def _cases() -> Iterator[tuple[str, bytes]]:
    for p in FILES:
        yield p.name, p.read_bytes()
    yield from _shaped()
    yield from damaged_lines(encode("claude_code", SEEDS["claude_code"]))
    for label, session in type_cases("claude_code"):
        yield label, encode("claude_code", session)


CASES = list(_cases())


def _reference_leaf(records: list[Any], objs: list[dict[str, Any]]) -> tuple[Any, bool]:
    """What `_newest_chained` replaced: every chained line listed, the main thread's apart."""
    chained = [r for r, o in zip(records, objs, strict=True) if r.id is not None and r.runtime_visible and o.get("type") in cc._CHAINED]
    main = [r for r in chained if objs[r.seq].get("isSidechain") is not True]
    cands = main or chained
    return (cands[-1] if cands else None), bool(main)


def _reference_attach(records: list[Any], objs: list[dict[str, Any]]) -> None:
    """What `_attach_summaries` replaced: every record walked, the newest boundary pending."""
    pending = None
    for r, o in zip(records, objs, strict=True):
        if r.kind == "checkpoint":
            pending = r
            continue
        if pending is None or r.kind != "message":
            continue
        if o.get("type") == "user" and o.get("isCompactSummary") is True and r.message is not None:
            cc._attach_summary(pending, r, o)
        pending = None


def _summaries(records: list[Any]) -> list[tuple[Any, ...]]:
    return [(r.kind, r.role, r.checkpoint.summary if r.checkpoint else None) for r in records]


def _copy(r: Any) -> Any:
    out = msgspec.structs.replace(r)
    if r.checkpoint is not None:
        out.checkpoint = copy.copy(r.checkpoint)
    return out


def test_the_cases_exist() -> None:
    assert len(FILES) >= 4
    assert len(CASES) >= 100


@pytest.mark.parametrize("case", range(len(CASES)), ids=lambda i: CASES[i][0][:60])
def test_what_the_reading_gathers_is_what_every_record_says(case: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, data = CASES[case]
    path = tmp_path / "case.jsonl"
    path.write_bytes(data)
    real_build, real_attach = cc._build, cc._attach_summaries
    seen: list[int] = []

    def build(st: Any, p: str | None) -> Any:
        records, objs = st.records, st.objs
        assert st.checkpoints == [r.seq for r in records if r.kind == "checkpoint"]
        assert st.tools == [r.seq for r in records if r.kind == "message" and r.role == "tool"]
        got = cc._newest_chained(records, objs)
        want = _reference_leaf(records, objs)
        assert (got[0] is want[0], got[1]) == (True, want[1])
        seen.append(len(records))
        return real_build(st, p)

    def attach(records: list[Any], objs: list[dict[str, Any]], checkpoints: list[int] | None = None) -> None:
        # Both ways on copies of the records (the summary line turns into a meta record).
        a = [_copy(r) for r in records]
        b = [_copy(r) for r in records]
        c = [_copy(r) for r in records]
        real_attach(a, objs, checkpoints)
        real_attach(b, objs)
        _reference_attach(c, objs)
        assert _summaries(a) == _summaries(c)
        assert [(r.kind, r.role, r.checkpoint.summary if r.checkpoint else None) for r in a] == [
            (r.kind, r.role, r.checkpoint.summary if r.checkpoint else None) for r in b
        ]
        real_attach(records, objs, checkpoints)

    monkeypatch.setattr(cc, "_build", build)
    monkeypatch.setattr(cc, "_attach_summaries", attach)
    try:
        load(str(path), "claude_code")
    except LoadError:
        assert not data.strip()  # (an empty file)
    assert seen or not data.strip()
