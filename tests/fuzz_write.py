"""`python -m tests.fuzz_write --cases 1200 --seed S`: repairs written into damaged sessions, then undone.

`repair --write` appends a checkpoint to the user's own session (DESIGN §5: locked, refused if the
file changed since it was analysed, backed up, verified by reading it back, undone by `undo`). The
writers' unit tests hold it on clean sessions and on hand-made refusals; here each case is a real
file of the fuzz corpus (`tests.fuzz.corpus`, every format), as it is (one case in four) or damaged
by one to three of the fuzz campaign's mutations (`tests.fuzz.mutations`), repaired in place one to
three times in a row by a random strategy and window with the offline summarizer, then undone as
many times, all through the command line in this process (`inspector.cli.main.main`). What must
hold, whatever the damage:

- no traceback: every command exits 0, 1 or 2;
- a refused, failed or taken-back repair leaves the session as it was (a file's bytes and the files
  read beside it: a SQLite store's -wal and -journal, NextClaw's metadata; a store's rows, whose
  pages a write taken back rewrote) and no write open for `undo`;
- the backup folder holds nothing that `inspector backups` does not list;
- a written one keeps every byte that was there: a JSON-lines session grows only at its end, and a
  database keeps every row of every table it had, unchanged; the session reads again, with no
  diagnostic about what was appended (the diagnostics of the lines that were there are the same),
  and its latest checkpoint is one more than before;
- the session followed live meanwhile (`live.incremental.Follower`, as `inspector watch` and the app
  follow it; half of them from a ledger loaded first) reads after each repair and each undo as a
  full read does;
- each `inspector undo`, newest write first, restores the session as it stood before that write: a
  file byte for byte (the side files too), a store every table row for row (it deletes the rows the
  write inserted: the store's bytes, free pages and AUTOINCREMENT counters are SQLite's); and one
  more `undo` has nothing left to restore.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.cli.main import main as cli
from inspector.formats import LoadError, load
from inspector.live.incremental import Follower
from inspector.store.writeback import DamagedBackup, backup_entries
from tests import fuzz_live
from tests.fuzz.corpus import KINDS, SQLITE_KINDS, side_files
from tests.fuzz.mutations import Context, apply, choose
from tests.fuzz.side import campaign_main, environ, progress, seeded_cases
from tests.test_incremental_stores import full_json

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
        # A diagnostic of the same line and problem may word the repaired state: Claude Code's time
        # fallback continues from another line once the new boundary leaves the first unheld.
        said = {d[:2] for d in read[0]}
        new = [d for d in again[0] if d[:2] not in said and d[0] not in cut]
        if new:
            problems.append(f"diagnostics after the write that were not there before: {new[:3]}")
        if again[1] != read[1] + 1:
            problems.append(f"{read[1]} checkpoints before, {again[1]} after")
    return problems


@dataclass
class _State:
    """The session as it stood before one repair: its bytes (and side files'), its rows (a store)
    and its reading."""

    files: dict[str, bytes | None]
    tables: Any
    read: Any


def _state(path: Path, kind: str) -> _State:
    return _State(_files(path), _tables(path) if kind in SQLITE_KINDS else None, _reading(path))


def _backups(path: Path, scratch: Path) -> tuple[int, list[str]]:
    """(The session's backups still open, i.e. the writes `undo` would take back; the files of its
    backup folder that no listed backup accounts for)."""
    entries = backup_entries(str(path))
    listed = {p for b in entries for p in (b.path, b.meta_path)}
    folder = scratch / "data" / "backups"
    stray = [p.name for p in folder.rglob("*") if p.is_file() and str(p) not in listed] if folder.exists() else []
    return sum(1 for b in entries if isinstance(b, DamagedBackup) or b.undone is None), stray


def _unchanged(path: Path, kind: str, before: _State) -> bool:
    """The session as it was: a file's bytes, a store's rows (a write taken back leaves SQLite's
    pages rewritten)."""
    if kind in SQLITE_KINDS:
        return bool(_session_rows(_tables(path)) == _session_rows(before.tables))
    return _files(path) == before.files


def _repaired(path: Path, kind: str, rng: random.Random, scratch: Path, log: list[str]) -> tuple[list[str], _State | None]:
    """One `repair --write`: (its violations, the state before it when it wrote)."""
    before, (was_open, _) = _state(path, kind), _backups(path, scratch)
    argv = _argv(rng, path)
    log.append(" ".join(argv[2:]))
    code, said = _command(argv)
    if isinstance(code, str):
        return [code], None
    if code not in (0, 1, 2):
        return [f"repair exited {code}"], None
    now_open, stray = _backups(path, scratch)
    problems = [f"files in the backup folder no backup lists: {stray}"] if stray else []
    if code != 0 or now_open == was_open:  # refused, failed, taken back, or nothing to write (a no-op exits 0)
        log.append(f"exit {code}" if code else "nothing written")
        if not _unchanged(path, kind, before):
            problems.append(f"a repair that exited {code} and left no write to undo changed the session: {said.strip()[-200:]}")
        if now_open != was_open:
            problems.append(f"a repair that exited {code} left a write open to undo")
        return problems, None
    log.append("written")
    return problems + _written(path, kind, before.files, before.tables, before.read), before


def _session_rows(tables: Any) -> Any:
    """A store's rows but AUTOINCREMENT's high-water mark (not a session's row)."""
    return {k: v for k, v in tables.items() if k != "sqlite_sequence"} if isinstance(tables, dict) else tables


def _undone(path: Path, kind: str, before: _State) -> list[str]:
    """What `undo` failed to restore of the state before the newest write (empty: every byte of a
    file, every row of a store)."""
    code, said = _command(["undo", str(path)])
    if code != 0:
        return [f"undo exited {code}: {said.strip()[:300]}"]
    if kind in SQLITE_KINDS:
        after = _tables(path)
        if _session_rows(after) != _session_rows(before.tables):
            return [f"undo did not restore the store's rows: {_kept(before.tables, after) or 'rows left over'}"]
    elif _files(path) != before.files:
        changed = [Path(p).name for p, b in _files(path).items() if before.files.get(p) != b]
        return [f"undo did not restore the bytes of {', '.join(changed)}"]
    return []


def _follower(path: Path, adopt: bool) -> Follower:
    """The session followed live while it is repaired and undone (`inspector watch`, the app; half
    of them from the ledger a load read first, as the app follows a session it opened)."""
    fol = Follower(str(path))
    if adopt:
        with contextlib.suppress(LoadError):
            fol.adopt(load(str(path)))
    with contextlib.suppress(LoadError):
        fol.poll()
    return fol


def _followed_differs(fol: Follower, path: Path, kind: str) -> str | None:
    """How the followed report differs from a full read of the session now (None: it does not)."""
    state, followed, _ = fuzz_live._look(fol)
    if kind in SQLITE_KINDS:
        try:
            full: tuple[str, bytes | str] = ("ok", full_json(str(path)))
        except LoadError as e:
            full = ("refused", str(e))
    else:
        full = fuzz_live._full(path, kind not in ("pi", "native", "claude_code", "codex"))  # (a dump, a journal: whole)
    if (state, followed) != full and not (state == full[0] == "refused"):
        return f"the session followed live reads {state}, read whole {full[0]}, and they differ"
    return None


def case(kind: str, seed_path: str, rng: random.Random, scratch: Path) -> tuple[list[str], str, list[str]]:
    """One case: one to three repairs in a row, then as many undos, newest first, each back to the
    state before its write, and one more undo with nothing left. (Its violations, what the repairs
    did, what ran.)"""
    path = scratch / f"case{''.join(Path(seed_path).suffixes[-1:]) or '.jsonl'}"
    shutil.copyfile(seed_path, path)
    for side, mine in zip(side_files(Path(seed_path)), side_files(path), strict=True):
        if side.exists():
            shutil.copyfile(side, mine)
    if rng.random() < 0.75:  # one case in four repairs the file as it is
        apply(path, choose(rng, kind, allow_huge=False), Context())
    os.environ["INSPECTOR_DATA_DIR"] = str(scratch / "data")
    log: list[str] = []
    written: list[_State] = []
    fol = _follower(path, rng.random() < 0.5)
    for _ in range(rng.choice((1, 1, 2, 3))):
        problems, before = _repaired(path, kind, rng, scratch, log)
        if problems:
            return problems, "crashed" if problems[0].startswith("crashed") else log[-1], log
        if before is not None:
            written.append(before)
        if what := _followed_differs(fol, path, kind):
            return [f"after the repair, {what}"], log[-1], log
    for before in reversed(written):
        problems = _undone(path, kind, before)
        if problems:
            return problems, "written", log
        if what := _followed_differs(fol, path, kind):
            return [f"after the undo, {what}"], "written", log
    if written:
        code, said = _command(["undo", str(path)])
        if code == 0 or (isinstance(code, str) and code.startswith("crashed")):
            return [f"undo with nothing left exited {code}: {said.strip()[:200]}"], "written", log
    return [], f"{len(written)} written", log


def run(cases: int, seed: int, kinds: tuple[str, ...] = KINDS, quiet: bool = False) -> int:
    """The campaign; the number of cases with a violation."""
    bad = 0
    outcomes: dict[str, int] = {}
    t0 = time.perf_counter()
    with environ("INSPECTOR_DATA_DIR", None):  # (each case sets its own: put back after)
        for i, kind, seed_file, rng, scratch in seeded_cases(cases, seed, kinds, "fuzz-write-"):
            problems, outcome, argv = case(kind, seed_file.path, rng, scratch)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            if problems:
                bad += 1
                print(f"case {i}: {kind}: {seed_file.name} [{' | '.join(argv)}]: {'; '.join(problems)}", flush=True)
            if not quiet:
                progress(i, cases, bad, t0, 50, "with violations")
    tally = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
    print(f"{cases} cases over {', '.join(kinds)}, seed {seed} ({tally}): {bad} with violations")
    return bad


def main(argv: list[str] | None = None) -> int:
    return campaign_main(argv, "python -m tests.fuzz_write", __doc__, KINDS, 600, run)


if __name__ == "__main__":
    sys.exit(main())
