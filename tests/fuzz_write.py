"""`python -m tests.fuzz_write --cases 600 --seed S`: repairs written into damaged sessions, then undone.

`repair --write` appends a checkpoint to the user's own session (DESIGN §5: locked, refused if the
file changed since it was analysed, backed up, verified by reading it back, undone by `undo`). The
writers' unit tests hold it on clean sessions and on hand-made refusals; here each case is a real
file of the fuzz corpus (`tests.fuzz.corpus`, every format), as it is (one case in four) or damaged
by one to three of the fuzz campaign's mutations (`tests.fuzz.mutations`), repaired in place by a random strategy and window with
the offline summarizer, then undone, all through the command line in this process
(`inspector.cli.main.main`). What must hold, whatever the damage:

- no traceback: every command exits 0, 1 or 2;
- a refused or failed repair leaves the session's bytes (and the files read beside it: a SQLite
  store's -wal and -journal, NextClaw's metadata) as they were, and takes no backup;
- a written one keeps every byte that was there: a JSON-lines session grows only at its end, and a
  database keeps every row of every table it had, unchanged; the session reads again, with no
  diagnostic about what was appended (the diagnostics of the lines that were there are the same),
  and its latest checkpoint is one more than before;
- `inspector undo` then restores the session: a file byte for byte (the side files too), a store's
  every table row for row (it deletes the rows the write inserted: the store's bytes, free pages
  and AUTOINCREMENT counters are SQLite's); and a second `undo` has nothing left to restore.

Prints each violation and a summary; exits 1 when there is one. Deterministic by seed.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from inspector.cli.main import main as cli
from inspector.formats import LoadError, load
from tests.fuzz.corpus import KINDS, SQLITE_KINDS, side_files
from tests.fuzz.mutations import Context, apply, choose
from tests.fuzz.side import campaign_main, seeded_cases

STRATEGIES = ("compact", "resummarize", "recover")
WINDOWS = (None, "4000", "16000", "64000", "200000")


def _command(argv: list[str]) -> tuple[int | str, str]:
    """(exit code, or the crash as "crashed: ..."; what it printed)."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = cli(argv)
    except SystemExit as e:  # argparse's own exits
        code = e.code if isinstance(e.code, int) else 2
    except Exception as e:  # (reported: the campaign goes on)
        tb = traceback.extract_tb(e.__traceback__)[-1]
        return f"crashed: {type(e).__name__} at {Path(tb.filename).name}:{tb.lineno}: {str(e)[:200]}", out.getvalue()
    return code, out.getvalue()


def _files(path: Path) -> dict[str, bytes | None]:
    """The session's bytes and those of every file read beside it (None: absent)."""
    return {str(p): (p.read_bytes() if p.exists() else None) for p in (path, *side_files(path))}


def _tables(path: Path) -> dict[str, list[tuple[Any, ...]]] | str:
    """Every table's rows by rowid (a store), or why the database cannot be read. Read from a copy
    (with its side files): even a read-only connection creates a -shm beside a WAL store."""
    with tempfile.TemporaryDirectory(prefix="fuzz-write-rows-") as tmp:
        copy = Path(tmp) / path.name
        for src, dst in zip((path, *side_files(path)), (copy, *side_files(copy)), strict=True):
            if src.exists():
                shutil.copyfile(src, dst)
        return _rows(copy)


def _rows(path: Path) -> dict[str, list[tuple[Any, ...]]] | str:
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.text_factory = bytes  # a damaged store's text is compared as the bytes it holds
        try:
            names = [r[0].decode("utf-8", "replace") for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            out: dict[str, list[tuple[Any, ...]]] = {}
            for n in names:
                q = '"' + n.replace('"', '""') + '"'
                try:
                    out[n] = db.execute(f"SELECT rowid, * FROM {q} ORDER BY rowid").fetchall()
                except sqlite3.Error:
                    out[n] = db.execute(f"SELECT * FROM {q}").fetchall()
            return out
        finally:
            db.close()
    except (sqlite3.Error, UnicodeDecodeError) as e:  # (SQLite's message may quote the damaged bytes)
        return f"unreadable: {e}"


def _kept(before: dict[str, list[tuple[Any, ...]]] | str, after: dict[str, list[tuple[Any, ...]]] | str) -> str | None:
    """What a write into a store lost of what was there (None: every row is there, unchanged)."""
    if isinstance(before, str):
        return None  # nothing readable was there to keep
    if isinstance(after, str):
        return f"the store is {after} after the write"
    for name, rows in before.items():
        now = set(after.get(name, []))
        gone = [r for r in rows if r not in now]
        if gone:
            return f"table {name}: {len(gone)} of {len(rows)} rows changed or gone (first: {str(gone[0])[:120]})"
    return None


def _reading(path: Path) -> tuple[list[tuple[Any, ...]], int] | str:
    """The session's diagnostics and checkpoints, or why it is refused."""
    try:
        led = load(str(path), fingerprint=False)
    except LoadError as e:
        return f"refused: {e}"
    diags = [(d.line, d.problem, d.message) for d in led.diagnostics]
    return diags, sum(1 for r in led.records if r.kind == "checkpoint")


def _argv(rng: random.Random, path: Path) -> list[str]:
    argv = ["repair", str(path), "--strategy", rng.choice(STRATEGIES), "--write"]
    window = rng.choice(WINDOWS)
    if window:
        argv += ["--window", window, "--reserve", str(int(window) // 8)]
    if rng.random() < 0.3:
        argv += ["--keep-recent", rng.choice(("1", "500", "4000"))]
    return argv


def _written(path: Path, kind: str, files: dict[str, bytes | None], tables: Any, read: Any) -> list[str]:
    """What a written repair broke (empty: nothing)."""
    problems: list[str] = []
    now = path.read_bytes()
    if kind in SQLITE_KINDS:
        lost = _kept(tables, _tables(path))
        if lost:
            problems.append(lost)
    elif not now.startswith(files[str(path)] or b""):
        problems.append("the write changed bytes that were there (not an append)")
    again = _reading(path)
    if isinstance(again, str):
        problems.append(f"the repaired session is {again}")
    elif not isinstance(read, str):
        # The last line, cut by the file's end, is a middle line once the write (a newline first)
        # follows it: the same line, said otherwise.
        cut = {d[0] for d in read[0] if d[1] == "truncated_line"}
        new = [d for d in again[0] if d not in read[0] and d[0] not in cut]
        if new:
            problems.append(f"diagnostics after the write that were not there before: {new[:3]}")
        if again[1] != read[1] + 1:
            problems.append(f"{read[1]} checkpoints before, {again[1]} after")
    return problems


def _undone(path: Path, kind: str, files: dict[str, bytes | None], tables: Any) -> list[str]:
    """What `undo` failed to restore (empty: every byte of a file, every row of a store)."""
    problems: list[str] = []
    code, said = _command(["undo", str(path)])
    if code != 0:
        return [f"undo exited {code}: {said.strip()[:300]}"]
    if kind in SQLITE_KINDS:
        after = _tables(path)
        if isinstance(after, dict):
            after.pop("sqlite_sequence", None)  # AUTOINCREMENT's high-water mark: not a session's row
        if isinstance(tables, dict):
            tables = {k: v for k, v in tables.items() if k != "sqlite_sequence"}
        if after != tables:
            problems.append(f"undo did not restore the store's rows: {_kept(tables, after) or 'rows left over'}")
    elif _files(path) != files:
        changed = [Path(p).name for p, b in _files(path).items() if files.get(p) != b]
        problems.append(f"undo did not restore the bytes of {', '.join(changed)}")
    code, said = _command(["undo", str(path)])
    if code == 0 or (isinstance(code, str) and code.startswith("crashed")):
        problems.append(f"a second undo exited {code}: {said.strip()[:200]}")
    return problems


def case(kind: str, seed_path: str, rng: random.Random, scratch: Path) -> tuple[list[str], str, list[str]]:
    """One case: (its violations, what the repair did, the argv)."""
    path = scratch / f"case{''.join(Path(seed_path).suffixes[-1:]) or '.jsonl'}"
    shutil.copyfile(seed_path, path)
    for side, mine in zip(side_files(Path(seed_path)), side_files(path), strict=True):
        if side.exists():
            shutil.copyfile(side, mine)
    if rng.random() < 0.75:  # one case in four repairs the file as it is
        apply(path, choose(rng, kind, allow_huge=False), Context())
    os.environ["INSPECTOR_DATA_DIR"] = str(scratch / "data")
    files, read = _files(path), _reading(path)
    tables = _tables(path) if kind in SQLITE_KINDS else None
    argv = _argv(rng, path)
    code, _ = _command(argv)
    if isinstance(code, str):
        return [code], "crashed", argv
    if code not in (0, 1, 2):
        return [f"repair exited {code}"], "?", argv
    backups = scratch / "data" / "backups"
    backed_up = backups.exists() and any(p.is_file() for p in backups.rglob("*"))
    if code != 0 or not backed_up:  # refused, failed, or nothing to write (a no-op exits 0)
        problems = [] if _files(path) == files else [f"a repair that exited {code} without a backup changed the session's bytes"]
        if backed_up:
            problems.append(f"a repair that exited {code} took a backup")
        return problems, f"exit {code}" if code else "nothing written", argv
    return _written(path, kind, files, tables, read) + _undone(path, kind, files, tables), "written", argv


def run(cases: int, seed: int, kinds: tuple[str, ...] = KINDS, quiet: bool = False) -> int:
    """The campaign; the number of cases with a violation."""
    bad = 0
    outcomes: dict[str, int] = {}
    t0 = time.perf_counter()
    saved = os.environ.get("INSPECTOR_DATA_DIR")
    try:
        for i, kind, seed_file, rng, scratch in seeded_cases(cases, seed, kinds, "fuzz-write-"):
            problems, outcome, argv = case(kind, seed_file.path, rng, scratch)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            if problems:
                bad += 1
                print(f"case {i}: {kind}: {seed_file.name} {' '.join(argv[2:])}: {'; '.join(problems)}", flush=True)
            if not quiet and (i + 1) % 50 == 0:
                print(f"  {i + 1}/{cases} cases, {bad} with violations ({time.perf_counter() - t0:.0f} s)", flush=True)
    finally:
        if saved is None:
            os.environ.pop("INSPECTOR_DATA_DIR", None)
        else:
            os.environ["INSPECTOR_DATA_DIR"] = saved
    tally = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
    print(f"{cases} cases over {', '.join(kinds)}, seed {seed} ({tally}): {bad} with violations")
    return bad


def main(argv: list[str] | None = None) -> int:
    return campaign_main(argv, "python -m tests.fuzz_write", __doc__, KINDS, 600, run)


if __name__ == "__main__":
    sys.exit(main())
