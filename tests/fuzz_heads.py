"""`python -m tests.fuzz_heads --cases 1200 --seed S`: every format's index-first read against its whole parse.

Each format reads a clean record from a light head decode (issue 15: index first, content on demand)
and leaves every other line, row or event to the whole parse, which says what is wrong with it. The
two must never disagree: a head path that takes what it should have left would lose a diagnostic.
The unit tests hold each head path to its whole parse on single mutated fields of made-up lines;
here each case is a real file of the fuzz corpus (`tests.fuzz.corpus`: the real sessions, the peer
corpora, the stores built from the seed runtimes' own types), damaged by one to three of the fuzz
campaign's mutations (`tests.fuzz.mutations`: cut, glued, reordered and duplicated lines, flipped
bytes, invalid UTF-8, wrong JSON types, deep nesting, damaged SQLite pages, ...), then read twice in
this process (whole, or in one case of three up to a line or row, as `--at LINE` reads it): as
`load` reads it, and with every head path off (`WHOLE`: the format's own switch, or
the bytes read by `load_bytes`, which builds from whole lines). The two ledgers must be the same
record for record (content and unknown fields read from the file too), diagnostic for diagnostic,
and so must their `analyze --json` and `context --json`; or both reads must refuse the file with
the same message. Prints each disagreement and a summary; exits 1 when there is one. Deterministic
by seed.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import random
import shutil
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import (
    LoadError,
    adk,
    adk_go,
    adk_heads,
    load,
    load_bytes,
    maka,
    nextclaw,
    nextclaw_legacy,
    openclaw_sqlite,
)
from inspector.ledger.jsontext import deep, dumps
from inspector.ledger.model import Ledger
from tests.fuzz.corpus import KINDS as CORPUS_KINDS
from tests.fuzz.corpus import SQLITE_KINDS, side_files
from tests.fuzz.mutations import Context, apply, choose
from tests.fuzz.side import campaign_main, progress, seeded_cases


@contextlib.contextmanager
def _patched(*changes: tuple[Any, str, Any]) -> Iterator[None]:
    """Module attributes set for the duration (a format's switch to its whole parse)."""
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in changes]
    for obj, name, value in changes:
        setattr(obj, name, value)
    try:
        yield
    finally:
        for obj, name, value in saved:
            setattr(obj, name, value)


def _from_bytes(path: Path, at: int | None) -> Ledger:
    """A line format read whole: its bytes given to `load_bytes`, which parses every line whole."""
    return load_bytes(path.read_bytes(), name=str(path), upto_line=at)


def _refused(_text: Any) -> Any:
    raise msgspec.ValidationError("the whole parse")


def _with(*changes: tuple[Any, str, Any]) -> Callable[[Path, int | None], Ledger]:
    def read(path: Path, at: int | None) -> Ledger:
        with _patched(*changes):
            return load(str(path), upto_line=at, fingerprint=False)

    return read


# Each corpus kind's whole parse: every head path of its format off (the switches its unit tests use).
_ADK_WHOLE = (
    (adk_heads, "head", lambda data: None),
    (adk_heads, "heads", lambda datas: [None] * len(datas)),
    (adk, "_indexed_events", lambda *a: None),
)
_ADK_GO_WHOLE = ((adk_go, "_row_head", lambda n, row, ts=None: None), (adk_go, "_export_head", lambda i, raw: None))
WHOLE: dict[str, Callable[[Path, int | None], Ledger]] = {
    "pi": _from_bytes,
    "native": _from_bytes,
    "claude_code": _from_bytes,
    "codex": _from_bytes,
    "adk_db": _with(*_ADK_WHOLE),
    "adk_json": _with(*_ADK_WHOLE),
    "openclaw_db": _with((openclaw_sqlite, "load", functools.partial(openclaw_sqlite.load, index=False))),
    "adk_go_db": _with(*_ADK_GO_WHOLE),
    "adk_go_json": _with(*_ADK_GO_WHOLE),
    "maka_db": _with((maka, "_decode_safe", _refused)),
    "nextclaw": _with((nextclaw, "_TRY_FAST", False), (nextclaw, "_LAZY", False)),
    "nextclaw_legacy": _with((nextclaw_legacy, "_HEADS", False)),
}
KINDS = tuple(k for k in CORPUS_KINDS if k in WHOLE)


_LEDGER_FIELDS = ("leaf_seq", "session_id", "header", "version", "migrated", "runtime_rejects_file", "settings", "runs",
                  "resolved_path", "instructions", "instructions_note")  # fmt: skip


def snapshot(led: Ledger) -> dict[str, Any]:
    """Everything the loader decides, each record's content and unknown fields read (from the file,
    where the head path left them there), and the analysis's two reports."""
    recs = [
        (r.seq, r.line, r.kind, r.type, r.id, r.parent_id, r.timestamp, type(r.timestamp), r.runtime_visible, r.role,
         r.stop_reason, r.never_sent, r.source_role, r.call_ids, r.result_id, r.run_id, r.checkpoint, r.extra, r.message)
        for r in led.records
    ]  # fmt: skip
    report = analyze(led)
    return {
        "records": recs,
        "offsets": [(r.offset, r.length) for r in led.records],
        "diagnostics": [(d.line, d.problem, d.message, d.recovered, d.severity, d.seqs) for d in led.diagnostics],
        "ledger": [getattr(led, k) for k in _LEDGER_FIELDS] + [led.by_id()],
        "analyze": dumps(analyze_json(report)),  # (a lone surrogate: escaped)
        "context": dumps(context_json(report)),
    }


def _same(fast: dict[str, Any], whole: dict[str, Any]) -> list[str]:
    """What differs between the two reads' snapshots. A record's place in the file is compared where
    the whole parse kept it (a length): a format's whole parse may hold a record's content in memory
    instead (NextClaw's legacy journal: offset and length 0), which no report shows."""
    out = [k for k in fast if k != "offsets" and deep(operator.ne, fast[k], whole[k])]  # (values up to 1024 deep)
    offsets = zip(fast["offsets"], whole["offsets"], strict=False)
    if len(fast["offsets"]) != len(whole["offsets"]) or any(w[1] and f != w for f, w in offsets):
        out.append("offsets")
    return out


def _read(reader: Callable[[], Ledger]) -> tuple[str, Any]:
    """("ok", snapshot), ("refused", the message) or ("crashed", where and why: a finding either way)."""
    try:
        return "ok", snapshot(reader())
    except LoadError as e:
        return "refused", str(e)
    except Exception as e:  # (reported: the campaign goes on)
        tb = traceback.extract_tb(e.__traceback__)[-1]
        return "crashed", f"{type(e).__name__} at {Path(tb.filename).name}:{tb.lineno}: {str(e)[:200]}"


def _case(seed_path: str, kind: str, rng: random.Random, scratch: Path) -> tuple[Path, list[tuple[str, int]]]:
    path = scratch / f"case{''.join(Path(seed_path).suffixes[-1:]) or '.jsonl'}"
    shutil.copyfile(seed_path, path)
    for side, mine in zip(side_files(Path(seed_path)), side_files(path), strict=True):
        if side.exists():
            shutil.copyfile(side, mine)
    muts = choose(rng, kind, allow_huge=False)
    apply(path, muts, Context())
    return path, muts


def _at(path: Path, kind: str, rng: random.Random) -> int | None:
    """A case's `--at LINE` (a row, for a database): none in two cases of three, else any line of
    the file (or one past its last), any of a database's first rows."""
    if rng.random() < 2 / 3:
        return None
    if kind in SQLITE_KINDS:
        return rng.randint(1, 60)
    with path.open("rb") as f:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    return rng.randint(1, lines + 1)


def _differs(fast: tuple[str, Any], whole: tuple[str, Any]) -> str | None:
    """What differs between the two reads (None: nothing). Compared with a deeper recursion limit (a
    deeply nested unknown field is kept as it is), but read with the interpreter's own: inspector
    never raises it, and how deep its readers go before they refuse a value depends on it."""
    if "crashed" in (fast[0], whole[0]):
        return f"crashed ({fast[1] if fast[0] == 'crashed' else whole[1]})"
    if fast[0] != whole[0] or fast[0] == "refused":
        return None if deep(operator.eq, fast, whole) else "refusals differ"
    depth = sys.getrecursionlimit()
    sys.setrecursionlimit(max(depth, 20_000))
    try:
        keys = _same(fast[1], whole[1])
    finally:
        sys.setrecursionlimit(depth)
    return ", ".join(keys) + " differ" if keys else None


def run(cases: int, seed: int, kinds: tuple[str, ...] = KINDS, quiet: bool = False) -> int:
    """The campaign; the number of disagreements."""
    disagreements = 0
    t0 = time.perf_counter()
    for i, kind, seed_file, rng, scratch in seeded_cases(cases, seed, kinds, "fuzz-heads-"):
        path, muts = _case(seed_file.path, kind, rng, scratch)
        at = _at(path, kind, rng)
        fast = _read(functools.partial(load, str(path), upto_line=at, fingerprint=False))
        whole = _read(functools.partial(WHOLE[kind], path, at))
        what = _differs(fast, whole)
        if what is not None:
            disagreements += 1
            print(f"case {i}: {kind}: {what}: {seed_file.name} {muts}{f' --at {at}' if at else ''}", flush=True)
        if not quiet:
            progress(i, cases, disagreements, t0, 100)
    print(f"{cases} cases over {', '.join(kinds)}, seed {seed}: {disagreements} disagreements")
    return disagreements


def main(argv: list[str] | None = None) -> int:
    return campaign_main(argv, "python -m tests.fuzz_heads", __doc__, KINDS, 1200, run)


if __name__ == "__main__":
    sys.exit(main())
