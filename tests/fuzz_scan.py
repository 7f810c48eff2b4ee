"""`python -m tests.fuzz_scan --cases 300 --seed S`: many damaged sessions scanned at once, then changed.

`inspector scan` reads a tree of sessions in worker processes and keeps their rows in a persistent
index, so that a re-scan reads only what changed. Its unit tests hold it on clean trees and hand-made
cases; here each case is a tree of two to six files of the fuzz corpus (`tests.fuzz.corpus`, every
format: a store may hold several sessions), each as it is or damaged by the fuzz campaign's mutations,
in nested folders, scanned by one or two workers (`scan DIR --json`, through the command line in this
process). What must hold:

- no traceback, and an exit code of 0 or 2;
- every file of the tree that `analyze` reads as a session has its rows (a line format's file has
  them whatever it holds: a row naming why, when it cannot be read);
- each row says what `inspector analyze --json` says of that session read alone: its format and
  version, session id, records, messages, next request tokens and window, checkpoints, messages in
  holes, the counts of its findings by severity and its worst finding; an unreadable file's row has
  the error `analyze` exits 2 with;
- `usage --by session` gives each session without sub-agents the usage its row gives;
- a folder may also hold a named pipe, a socket, a link to a device or to nowhere (named like a
  session or a store) and a link back up the tree: nothing may block on them (a case that does
  is reported with where it blocked) and they take rows as `analyze` says;
- the tree is then changed as users' trees change (a session grows by a line, or is cut, replaced by
  another, deleted, or a new one appears; each with a new modification time) and scanned again with
  the same index: its rows must equal those of a scan with a new, empty index.

Prints each violation and a summary; exits 1 when there is one. Deterministic by seed.
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import json
import os
import random
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from inspector.cli.main import main as cli
from inspector.ledger.jsontext import printable
from tests.fuzz.corpus import KINDS, Seed, load_corpus, side_files
from tests.fuzz.mutations import Context, apply, choose
from tests.fuzz.side import campaign_main, environ, progress


def _command(argv: list[str], cache: Path | None = None) -> tuple[int | str, str, str]:
    """(exit code, or the crash as "crashed: ..."; its stdout; its stderr)."""
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()  # (scan writes to stdout's buffer)
    try:
        with environ("INSPECTOR_CACHE_DIR", str(cache) if cache else None), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 2
    except Exception as e:  # (reported: the campaign goes on)
        tb = traceback.extract_tb(e.__traceback__)[-1]
        return f"crashed: {type(e).__name__} at {Path(tb.filename).name}:{tb.lineno}: {str(e)[:200]}", _text(out), err.getvalue()
    return code, _text(out), err.getvalue()


def _text(out: io.TextIOWrapper) -> str:
    out.flush()
    buffer = out.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8")


def _place(seed: Seed, tree: Path, n: int, rng: random.Random, damage: bool) -> Path:
    """A copy of the seed (and its side files) somewhere in the tree, damaged or not."""
    folder = tree / rng.choice(("", "a", "a/b", "c"))
    folder.mkdir(parents=True, exist_ok=True)
    name = Path(seed.path).name
    path = folder / f"{n}-{name}" if not name.endswith(".metadata.json") else folder / name
    shutil.copyfile(seed.path, path)
    for side, mine in zip(side_files(Path(seed.path)), side_files(path), strict=True):
        if side.exists():
            shutil.copyfile(side, mine)
    if damage:
        apply(path, choose(rng, seed.kind, allow_huge=False), Context())
    return path


# What else a folder of sessions holds where a walk meets it: a named pipe, a socket, a device or
# a link to nowhere named like a session or a store, a link back up the tree. None is a session: a
# line format's name gets a row saying why (as `analyze` refuses it); a store's name gets none.
HANG_SECONDS = 600  # a case taking longer has blocked (the slowest take seconds)
SPECIAL_NAMES = ("pipe.jsonl", "session.db", "runtime.sqlite", "dump.json", "agent_main_s9.metadata.json")


def _place_special(tree: Path, rng: random.Random, n: int) -> str:
    """One entry that is not a regular file, somewhere in the tree (`n`: its own in the case)."""
    folder = tree / rng.choice(("", "a", "a/b", "c"))
    folder.mkdir(parents=True, exist_ok=True)
    kind = rng.choice(("pipe", "socket", "device", "dangling", "loop"))
    path = folder / f"{kind}{n}-{rng.choice(SPECIAL_NAMES)}"
    if kind == "pipe":
        os.mkfifo(path)
    elif kind == "socket":
        import socket

        with contextlib.closing(socket.socket(socket.AF_UNIX)) as sock:
            if len(str(path)) < 100:  # (a socket's path is at most 107 bytes)
                sock.bind(str(path))
    elif kind == "device":
        path.symlink_to("/dev/null")
    elif kind == "dangling":
        path.symlink_to(folder / "nowhere")
    else:
        path = folder / f"loop{n}"
        path.symlink_to(tree)
    return f"{kind} {path.relative_to(tree)}"


def _scan(tree: Path, cache: Path, workers: int) -> tuple[list[dict[str, Any]] | None, str]:
    code, out, err = _command(["scan", str(tree), "--json", "--no-progress", "--workers", str(workers)], cache)
    if isinstance(code, str):
        return None, code
    if code not in (0, 2):
        return None, f"scan exited {code}: {err.strip()[:300]}"
    return [json.loads(x) for x in out.splitlines() if x.strip()], ""


def _file(row: dict[str, Any]) -> str:
    """The file a row names: a store of several sessions names each as FILE#SESSION."""
    path = str(row["path"])
    head, sep, _ = path.rpartition("#")
    return head if sep and os.path.isfile(head) and not os.path.isfile(path) else path


def _expected(doc: dict[str, Any]) -> dict[str, Any]:
    """What a scan row must say, from `analyze --json`."""
    worst = min(doc["findings"], key=lambda f: ("error", "warning", "info").index(f["severity"]), default=None)
    return {
        "format": doc["format"],
        "format_version": doc["format_version"],
        # (a row spells its texts printable, a lone surrogate as its escape: docs/scan-json.md)
        "session_id": printable(doc["session_id"]) if isinstance(doc["session_id"], str) else doc["session_id"],
        "records": doc["records"],
        "messages": doc["messages"],
        "context_tokens": doc["context"]["tokens"],
        "window": doc["context"]["window"],
        "checkpoints": len(doc["checkpoints"]),
        "holes": doc["coverage"]["hole"],
        "findings": doc["finding_counts"],
        "worst_code": worst["code"] if worst else None,
        "error": None,
    }


def _row_differs(row: dict[str, Any]) -> str | None:
    """How the row differs from `analyze` of its session alone (None: it does not)."""
    code, out, err = _command(["analyze", "--json", row["path"]])
    if isinstance(code, str):
        return f"analyze {code}"
    if code == 2:
        return None if row["error"] else f"analyze refuses it ({err.strip()[:160]}), scan reads it"
    if row["error"]:
        return f"scan says {row['error'][:160]}; analyze reads it (exit {code})"
    want = _expected(json.loads(out))
    got = {k: row.get(k) for k in want}
    diff = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
    return f"row vs analyze: {diff}"[:400] if diff else None


_SIDES = ("-wal", "-shm", "-journal", ".metadata.json")


def _skipped(tree: Path, rows: list[dict[str, Any]]) -> list[str]:
    """Files of the tree that no row names and that `analyze` reads as a session: a folder's walk
    passes over files that are no session (another program's database, a JSON file of its own), so
    a store damaged out of looking like one has no row; one that still reads must have its row."""
    named = {os.path.realpath(_file(r)) for r in rows}
    files = [p for p in tree.rglob("*") if p.is_file() and not p.name.endswith(_SIDES)]
    out = []
    for p in files:
        if os.path.realpath(p) not in named:
            code, _, _ = _command(["analyze", "--json", str(p)])
            if code != 2:
                out.append(f"{p.relative_to(tree)} (analyze exits {code})")
    return out


def _change(tree: Path, seeds: dict[str, list[Seed]], kinds: tuple[str, ...], rng: random.Random, n: int) -> str:
    """Change the tree as a user's changes: one of grow, cut, replace, delete, add. Each changed file
    gets a modification time of its own (an index keyed by size and time must see it)."""
    files = sorted(p for p in tree.rglob("*") if p.is_file() and not p.name.endswith(_SIDES))
    what = rng.choice(("grow", "cut", "replace", "delete", "add")) if files else "add"
    path = rng.choice(files) if files else None
    if what == "add" or path is None:
        path = _place(rng.choice(seeds[rng.choice(kinds)]), tree, n, rng, rng.random() < 0.5)
    elif what == "grow":
        data = path.read_bytes()
        lines = data.splitlines(keepends=True)
        with path.open("ab") as f:
            f.write(rng.choice(lines) if lines and not data.startswith(b"SQLite format 3") else b"\n")
    elif what == "cut":
        data = path.read_bytes()
        path.write_bytes(data[: rng.randint(0, len(data))])
    elif what == "replace":
        other = rng.choice(seeds[rng.choice(kinds)])
        shutil.copyfile(other.path, path)
    else:
        path.unlink()
        return f"delete {path.relative_to(tree)}"
    stamp = time.time() + n
    os.utime(path, (stamp, stamp))
    return f"{what} {path.relative_to(tree)}"


def _usage_differs(tree: Path, cache: Path, workers: int, rows: list[dict[str, Any]]) -> list[str]:
    """`usage --by session` against the scan's rows: a session without sub-agents has the usage
    its row gives (a session with them has theirs rolled into it, not in its row)."""
    code, out, err = _command(["usage", str(tree), "--by", "session", "--json", "--no-progress", "--workers", str(workers)], cache)
    if isinstance(code, str):
        return [f"usage {code}"]
    if code not in (0, 2):
        return [f"usage exited {code}: {err.strip()[:200]}"]
    by_path = {r["path"]: r for r in rows if not r["error"]}
    out_of_line = []
    for g in json.loads(out)["groups"]:
        row = by_path.get(g["key"])
        if row is not None and not g["subagents"] and g["usage"] != row["usage"]:
            out_of_line.append(f"usage of {Path(g['key']).name}: {g['usage']}, its scan row {row['usage']}")
    return out_of_line


def _key(row: dict[str, Any]) -> tuple[str, str]:
    return row["path"], str(row["session_id"])


def _rescan_differs(tree: Path, warm: Path, cold: Path, workers: int) -> str | None:
    a, why = _scan(tree, warm, workers)
    b, why_b = _scan(tree, cold, workers)
    if a is None or b is None:
        return why or why_b
    if sorted(a, key=_key) != sorted(b, key=_key):
        old = {_key(r): r for r in a}
        new = {_key(r): r for r in b}
        keys = sorted(set(old) | set(new))
        first = next(k for k in keys if old.get(k) != new.get(k))
        fields = [f for f in (new.get(first) or old.get(first) or {}) if (old.get(first) or {}).get(f) != (new.get(first) or {}).get(f)]
        return f"the re-scan's rows differ from a fresh index's: {first[0].rsplit('/', 1)[-1]}#{first[1]}: {fields[:6]}"
    return None


def case(seeds: dict[str, list[Seed]], kinds: tuple[str, ...], rng: random.Random, scratch: Path) -> tuple[list[str], list[str]]:
    """One case: (its violations, what it did)."""
    tree = scratch / "tree"
    log: list[str] = []
    for n in range(rng.randint(2, 6)):
        seed = rng.choice(seeds[rng.choice(kinds)])
        damage = rng.random() < 0.6
        _place(seed, tree, n, rng, damage)
        log.append(f"{seed.name}{' damaged' if damage else ''}")
    for n in range(rng.choice((0, 0, 1, 2))):
        log.append(_place_special(tree, rng, n))
    workers = rng.choice((1, 2))
    rows, why = _scan(tree, scratch / "index", workers)
    if rows is None:
        return [why], log
    problems = [f"no row for {p}" for p in _skipped(tree, rows)]
    for row in rows:
        what = _row_differs(row)
        if what:
            problems.append(f"{Path(row['path']).name}: {what}")
    problems += _usage_differs(tree, scratch / "index", workers, rows)
    for n in range(rng.randint(1, 3)):
        log.append(_change(tree, seeds, kinds, rng, 100 + n))
        what = _rescan_differs(tree, scratch / "index", scratch / f"fresh{n}", workers)
        if what:
            problems.append(f"after {log[-1]}: {what}")
            break
    return problems, log


def run(cases: int, seed: int, kinds: tuple[str, ...] = KINDS, quiet: bool = False) -> int:
    """The campaign; the number of cases with a violation."""
    import tempfile

    bad = 0
    rng = random.Random(seed)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz-scan-") as tmp:
        seeds = load_corpus(Path(tmp) / "built", kinds=kinds)
        for i in range(cases):
            scratch = Path(tmp) / "case"
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir()
            faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)  # (a blocked read: reported, not waited out)
            problems, log = case(seeds, kinds, rng, scratch)
            faulthandler.cancel_dump_traceback_later()
            if problems:
                bad += 1
                print(f"case {i}: [{' | '.join(log)}]: {'; '.join(problems)[:1500]}", flush=True)
            if not quiet:
                progress(i, cases, bad, t0, 25, "with violations")
    print(f"{cases} cases over {', '.join(kinds)}, seed {seed}: {bad} with violations")
    return bad


def main(argv: list[str] | None = None) -> int:
    return campaign_main(argv, "python -m tests.fuzz_scan", __doc__, KINDS, 300, run)


if __name__ == "__main__":
    sys.exit(main())
