"""Reading what was appended to a JSONL ledger, and the ledger it grows into (issue 17, point 1).

`complete_lines(data, offset, first_line)` parses the whole lines of appended bytes (a partial
last line, the agent mid-write, is left for the next read); `grown(led, new)` is the ledger with
the new records appended (the old ledger keeps its records). A format's
`extend` (base.LineExtender) maps the lines into records and refuses what only a full build gets
right; both live here so every line format extends a ledger the same way.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from inspector.formats.jsonl import RawLine, parse_line
from inspector.ledger.model import Ledger, Record


def complete_lines(data: bytes, offset: int, first_line: int) -> tuple[list[RawLine], int, int]:
    """The lines of `data` (read from byte `offset`; its first line is line `first_line`) that end
    with a newline: (parsed lines, blank ones left out; bytes they take; lines they count)."""
    end = data.rfind(b"\n") + 1
    out: list[RawLine] = []
    pos = 0
    n = 0
    while pos < end:
        nl = data.index(b"\n", pos) + 1
        rl = parse_line(data[pos:nl], first_line + n, offset + pos, False)
        if rl is not None:
            out.append(rl)
        n += 1
        pos = nl
    return out, end, n


def clean(lines: list[RawLine]) -> bool:
    """Every line read as one JSON object, nothing to diagnose: what `extend` can map alone. A line
    only JSON.parse's rules read (`lenient`: a lone surrogate escape) is not: a strict reader's
    runtime skips it (Codex, `codex_lines.json_skip_reason`), which the full build says."""
    return all(
        rl.diagnostic is None and not rl.lenient and len(rl.objects) == 1 and isinstance(rl.objects[0], dict) for rl in lines
    )


def named_ids(r: Record) -> list[str]:
    """The ids a record names: its parent's, and a checkpoint's (the first record it keeps, the last
    it summarizes, its explicit boundary, the ends of what it represents, what it retains)."""
    out = [r.parent_id] if r.parent_id is not None else []
    cp = r.checkpoint
    if cp is not None:
        out += (cp.first_kept_id, cp.summarized_through_id, cp.explicit_boundary)
        out += [end for pair in cp.explicit_represents or () for end in pair]
        out += cp.explicit_retains or ()
    return [x for x in out if type(x) is str]


def unresolved_ids(led: Ledger) -> set[str]:
    """The ids the ledger's records name (`named_ids`) that none of its records has: kept with the
    ledger (`Ledger.unresolved`), carried by `grown`."""
    held = led.unresolved
    if held is not None and held[0] == len(led.records):
        return held[1]
    by_id = led.by_id()
    parents = {r.parent_id for r in led.records}
    out = {x for x in parents if type(x) is str and x not in by_id}
    out.update(x for r in led.records if r.checkpoint is not None for x in named_ids(r) if x not in by_id)
    led.unresolved = (len(led.records), out)
    return out


def fresh_ids(led: Ledger, new: list[Record], named_apart: Collection[str] = ()) -> bool:
    """No new record takes an id a record before it has (a duplicate is diagnosed by the full
    build, naming both lines) or names: a parent written after its child, a record a checkpoint
    written before it keeps or represents, which the full build links (a path, a cycle, a coverage)
    where the records before were read without it. `named_apart`: ids the lines named that their
    records no longer do (Claude Code links its path's records to each other)."""
    by_id = led.by_id()
    named = unresolved_ids(led)
    seen: set[str] = set()
    named_here: set[str] = set()
    for r in new:
        if r.id is not None:
            if r.id in by_id or r.id in seen or r.id in named or r.id in named_here or r.id in named_apart:
                return False
            seen.add(r.id)
        named_here.update(x for x in named_ids(r) if x not in by_id and x not in seen)
    return True


def grown(led: Ledger, new: list[Record]) -> Ledger:
    """`led` with `new` appended: its id index extended, the leaf the last new record that is no
    header (every format's builder picks the leaf so). The old ledger keeps its records; its id
    index is shared and gains the new ids (copying 100k ids would cost more than the rest of an
    update; nothing asks the superseded ledger for an id only the new records have)."""
    by_id = led.by_id()
    for r in new:
        if r.id is not None and r.runtime_visible:
            by_id[r.id] = r.seq
    out = replace(led, records=led.records + new, diagnostics=list(led.diagnostics), _by_id=by_id)
    for r in reversed(new):
        if r.kind != "header":
            out.leaf_seq = r.seq
            break
    held = led.unresolved
    if held is not None and held[0] == len(led.records):
        named = {x for r in new for x in named_ids(r) if x not in by_id}
        taken = {r.id for r in new if r.id in held[1]}  # (none, where `fresh_ids` let them in)
        out.unresolved = (len(out.records), (held[1] - taken) | named if named or taken else held[1])
    return out
