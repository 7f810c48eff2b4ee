"""`python -m tests.fuzz_live --cases 600 --seed S`: a damaged session followed as it grows, against reading it whole.

`inspector watch` and the app follow a growing session file (`live.incremental.Follower`): each look
parses only the appended lines and extends the ledger and the report, unless the append needs a
full read. Its contract is that the followed report always equals `analyze(load(...))` of the file's
complete lines. `tests/test_incremental.py` checks it on the clean corpus; here each case (half of
them adopting the ledger a load read first, as the app follows a session it opened) is a seed
of the fuzz corpus's line formats (`tests.fuzz.corpus`), damaged by one to three of the fuzz
campaign's mutations (`tests.fuzz.mutations`: cut, glued, reordered and duplicated lines, flipped
bytes, invalid UTF-8, wrong JSON types, ...), cut at a random line, followed, and grown back in
random batches (some ending mid-line, the agent still writing it); or a SQLite store of the corpus
(ADK, adk-go, maka, OpenClaw), damaged (its rows' JSON, its pages), cut after a random row of its
session and its rows inserted again in batches as its runtime inserts them. After every batch the followed
`analyze --json` and `context --json` must equal those of a fresh full read of the same bytes, or
both must refuse the file (the follower raises what `load` raises; the app keeps its last view).
Prints each disagreement and a summary; exits 1 when there is one. Deterministic by seed.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import sqlite3
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import orjson

from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import LoadError, load, openclaw_writer, registry
from inspector.ledger.jsontext import dumps
from inspector.live.incremental import GROWN, Follower
from tests import test_incremental_stores as stores
from tests.fuzz.mutations import Context, apply, choose
from tests.fuzz.side import campaign_main, progress, seeded_cases
from tests.test_incremental import followed_json, line_ends

# The corpus kinds a follower grows line by line, and the SQLite stores, grown by their rows (`_Rows`;
# a JSON dump is one value, read again whole).
LINE_KINDS = ("pi", "native", "claude_code", "codex", "nextclaw", "nextclaw_legacy")
KINDS = (*LINE_KINDS, "adk_db", "adk_go_db", "maka_db", "openclaw_db")
BATCHES = 12  # about this many looks per case (more lines make bigger batches)


def _full(path: Path, as_is: bool) -> tuple[str, bytes | str]:
    """A fresh full read (`analyze(load(...))`, as `followed_json` prints it) of the file's complete
    lines, from a copy of the same name (a NextClaw session's id is its file's name) when a line is
    still being written; `as_is`: of the whole file (a format read as a store, which the follower
    reads again whole on a change)."""
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    src = path
    if end != len(data) and not as_is:
        src = path.parent / "complete" / path.name
        src.parent.mkdir(exist_ok=True)
        src.write_bytes(data[:end])
    try:
        rep = analyze(load(str(src)))
    except LoadError as e:
        return "refused", str(e).replace(str(src), str(path))
    rep.ensure_tokens()
    out = dumps([analyze_json(rep), context_json(rep)], option=orjson.OPT_SORT_KEYS)  # (a lone surrogate: escaped)
    return "ok", out.replace(dumps(str(src))[1:-1], dumps(str(path))[1:-1])


def _look(fol: Follower) -> tuple[str, bytes | str, bool]:
    """The follower's look at the file: its report (or what it raised), and whether it grew the
    ledger from the appended lines rather than reading the file again."""
    try:
        up = fol.poll()
    except LoadError as e:
        return "refused", str(e), False
    if fol.report is None:
        return "refused", "no report", False
    return "ok", followed_json(fol), up is not None and up.whole == GROWN


def _batches(data: bytes, cut: int, rng: random.Random) -> list[int]:
    """Where each append after `cut` ends: a few lines at a time, some mid-line."""
    ends = [e for e in line_ends(data) if e > cut] or [len(data)]
    step = max(1, len(ends) // BATCHES)
    out: list[int] = []
    k = 0
    while k < len(ends):
        k = min(len(ends) - 1, k + rng.choice((1, 1, 2, 3, step)) - 1)
        end = ends[k]
        if rng.random() < 0.25:  # the agent is writing the next line
            end = min(len(data), end + rng.randrange(1, 40))
        out.append(end)
        k += 1
    if out[-1] < len(data):
        out.append(len(data))
    return out


def follow_case(data: bytes, path: Path, rng: random.Random, as_is: bool) -> tuple[str | None, int, int]:
    """Follow `data` as it is written to `path` from a random line on: the first disagreement (None:
    none), the looks taken and those that grew the ledger from the appended lines. `as_is`: the
    format is read as a store (NextClaw's), whose follower reads the file again whole on a change."""
    ends = line_ends(data)
    cut = ends[rng.randrange(len(ends))] if ends else len(data)
    path.write_bytes(data[:cut])
    fol = Follower(str(path))
    if rng.random() < 0.5:  # (as the app follows: from the ledger its own load read)
        with contextlib.suppress(LoadError):
            fol.adopt(load(str(path)))
    looks = grown = 0
    for end in [cut, *_batches(data, cut, rng)]:
        if end > cut:
            with path.open("ab") as f:
                f.write(data[cut:end])
            cut = end
        state, followed, was_grown = _look(fol)
        looks += 1
        grown += was_grown
        full = _full(path, as_is)
        if (state, followed) != full and not (state == full[0] == "refused"):
            return f"at byte {end} of {len(data)}: followed {state}, whole {full[0]}", looks, grown
    return None, looks, grown


def _store_look(fol: Follower, path: Path) -> tuple[str | None, bool]:
    """A look at the store, against a full read of it (None: the same), and whether it grew the
    ledger from the new rows."""
    state, followed, grown = _look(fol)
    try:
        full: tuple[str, bytes | str] = ("ok", stores.full_json(str(path)))
    except LoadError as e:
        full = ("refused", str(e))
    if (state, followed) != full and not (state == full[0] == "refused"):
        return f"followed {state}, whole {full[0]}", grown
    return None, grown


class _Rows:
    """How a store of one kind is cut after a row and grown again, as its runtime appends: its rows in
    append order (`rows`), the store left with the first `keep` (`cut`), rows inserted (`insert`)."""

    def __init__(self, path: str, kind: str) -> None:
        self.path, self.kind = path, kind
        self.cols: list[str] = []
        self.sid = load(path).session_id if kind == "openclaw_db" else None

    def rows(self) -> list[tuple[Any, ...]]:
        if self.kind == "maka_db":
            return stores.maka_rows(self.path)
        if self.kind == "openclaw_db":
            self.cols, rows = stores.transcript_rows(self.path, str(self.sid))
            return rows
        self.cols, rows = stores.event_rows(self.path)  # (ADK's and adk-go's events, by rowid)
        return rows

    def cut(self, rows: list[tuple[Any, ...]], keep: int) -> None:
        if self.kind == "maka_db":
            stores.maka_cut(self.path, keep)
            return
        with contextlib.closing(sqlite3.connect(self.path)) as con:
            if self.kind == "openclaw_db":
                at = rows[keep - 1][self.cols.index("seq")]
                con.execute("DELETE FROM transcript_events WHERE session_id=? AND seq>?", (self.sid, at))
            else:
                con.execute("DELETE FROM events WHERE rowid > ?", (rows[keep - 1][0],))
            con.commit()

    def insert(self, rows: list[tuple[Any, ...]]) -> None:
        if self.kind == "maka_db":
            stores.maka_insert(self.path, rows)
        elif self.kind == "openclaw_db":
            with contextlib.closing(sqlite3.connect(self.path)) as con:
                openclaw_writer.provide_octet_length(con)  # (its CHECKs' function, SQLite < 3.43)
                con.executemany(f"INSERT INTO transcript_events VALUES ({', '.join('?' * len(self.cols))})", rows)
                con.commit()
        else:
            stores.insert_rows(self.path, self.cols, rows)


def follow_store_case(src: Path, kind: str, work: Path, rng: random.Random) -> tuple[str | None, int, int]:
    """A store cut after a random row of its session (`_Rows`), followed, and its rows inserted again
    in random batches as its runtime inserts them (`test_incremental_stores`): after every look the
    followed report is a full read's. A store whose rows cannot be read, cut or written back (a
    damaged page, a table the damage took) is no case: (None, 0, 0)."""
    path = work / src.name
    shutil.copyfile(src, path)
    try:
        store = _Rows(str(path), kind)
        rows = store.rows()
        if len(rows) < 2:
            return None, 0, 0
        keep = rng.randrange(1, len(rows))
        store.cut(rows, keep)
    except (sqlite3.Error, LoadError, IndexError, ValueError):
        return None, 0, 0
    rest = rows[keep:]
    fol = Follower(str(path))
    what, _ = _store_look(fol, path)
    looks, grown = 1, 0
    while rest and what is None:
        n = rng.choice((1, 1, 2, 3, 7))
        try:
            store.insert(rest[:n])
        except sqlite3.Error:
            break
        rest = rest[n:]
        what, was_grown = _store_look(fol, path)
        looks += 1
        grown += was_grown
    if what is not None:
        what = f"{len(rest)} rows left: {what}"
    return what, looks, grown


def run(cases: int, seed: int, kinds: tuple[str, ...] = KINDS, quiet: bool = False) -> int:
    """The campaign; the number of disagreements (a crash counts as one)."""
    disagreements = looks = grown = 0
    t0 = time.perf_counter()
    for i, kind, seed_file, rng, scratch in seeded_cases(cases, seed, kinds, "fuzz-live-"):
        case = scratch / f"damaged{Path(seed_file.path).suffix}"
        (scratch / "store").mkdir()
        shutil.copyfile(seed_file.path, case)
        muts = choose(rng, kind, allow_huge=False)
        apply(case, muts, Context())
        followed = scratch / Path(seed_file.path).name  # (NextClaw's name is its session's)
        try:
            if kind in LINE_KINDS:
                what, n, g = follow_case(case.read_bytes(), followed, rng, registry.get(kind).is_store)
            else:
                what, n, g = follow_store_case(case, kind, scratch / "store", rng)
        except Exception as e:  # (reported: the campaign goes on)
            tb = traceback.extract_tb(e.__traceback__)[-1]
            what, n, g = f"crashed: {type(e).__name__} at {Path(tb.filename).name}:{tb.lineno}: {str(e)[:200]}", 0, 0
        followed.unlink(missing_ok=True)
        looks += n
        grown += g
        if what is not None:
            disagreements += 1
            print(f"case {i}: {kind}: {what}: {seed_file.name} {muts}", flush=True)
        if not quiet:
            progress(i, cases, disagreements, t0, 50)
    print(
        f"{cases} cases over {', '.join(kinds)}, seed {seed}: {looks} looks ({grown} grown from the appended lines), "
        f"{disagreements} disagreements"
    )
    return disagreements


def main(argv: list[str] | None = None) -> int:
    return campaign_main(argv, "python -m tests.fuzz_live", __doc__, KINDS, 600, run)


if __name__ == "__main__":
    sys.exit(main())
