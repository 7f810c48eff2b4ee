"""One case, in-process: materialize the mutated input, run the command, check the contract.

A case is a JSON-able dict:
    {"id": 7, "kind": "pi", "seed": PATH, "mutations": [[name, seed], ...], "argv": [...],
     "app": false, "special": null, "raw": null}
`argv` holds "{FILE}" and "{OUT}" placeholders. `raw` (the minimizer's) names a file to use as the
input instead of seed + mutations; `special` a non-regular input instead of a file (FIFO, ...).
The result lists the contract's violations, each with a `key` that deduplicates it: a crash by
exception type and innermost project frame, other violations by what was wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import sqlite3
import stat
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fuzz import mutations
from tests.fuzz.corpus import REPO, SIDECAR_SUFFIXES, SQLITE_KINDS, side_files

PROJECT = str(REPO / "inspector") + os.sep
APP_KEYS: tuple[str, ...] = ("n", "f", "t", "c", "3", "r", "escape", "s", "escape")
LINE_REF = re.compile(r"\b(line|row|event) \d+\b")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(slots=True)
class Violation:
    kind: str  # crash, exit_code, bad_json, input_changed, diagnostic, out_on_failure, stray_file, ...
    key: str  # what deduplicates it
    detail: str
    trace: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "key": self.key, "detail": self.detail, "trace": self.trace}


@dataclass(slots=True)
class Outcome:
    code: int | None = None
    stdout: bytes = b""
    stderr: str = ""
    violations: list[Violation] = field(default_factory=list)
    loads: list[tuple[str, Any]] = field(default_factory=list)  # (path, Ledger | LoadError message)


# ---------------------------------------------------------------------------------------- crashes


def location(exc: BaseException) -> str:
    """Exception type + the innermost frame in the project's own code (inspector/...)."""
    inner = exc
    while True:  # a Textual WorkerFailed wraps the loader's own exception
        nested = getattr(inner, "error", None)
        if not isinstance(nested, BaseException):
            break
        inner = nested
    frames = traceback.extract_tb(inner.__traceback__)
    mine = [f for f in frames if f.filename.startswith(PROJECT)]
    where = mine[-1] if mine else (frames[-1] if frames else None)
    place = f"{os.path.relpath(where.filename, REPO)}:{where.lineno}" if where is not None else "?"
    return f"{type(inner).__name__} at {place}"


def crash(exc: BaseException) -> Violation:
    inner = getattr(exc, "error", None)
    shown = inner if isinstance(inner, BaseException) else exc
    trace = "".join(traceback.format_exception(shown))
    if len(trace) > 20000:  # a RecursionError repeats one frame a thousand times
        trace = trace[:8000] + "\n  ...\n" + trace[-8000:]
    msg = str(shown)
    return Violation("crash", location(exc), f"{type(shown).__name__}: {msg[:300]}", trace)


# ---------------------------------------------------------------------------------------- input


def materialize(case: dict[str, Any], folder: Path) -> tuple[Path, mutations.Context]:
    ctx = mutations.Context()
    if case.get("special"):
        return mutations.make_special(case["special"], folder), ctx
    src = Path(case["raw"] or case["seed"])
    target = folder / Path(case["seed"]).name
    shutil.copyfile(src, target)
    _copy_sidecars(Path(case["seed"]), target)
    if case["raw"] is None:
        mutations.apply(target, [tuple(m) for m in case["mutations"]], ctx)
    elif case["kind"] in SQLITE_KINDS:
        mutations.apply(target, [tuple(m) for m in case["mutations"] if mutations.REGISTRY[m[0]].stage == 3], ctx)
    return target, ctx


def _copy_sidecars(seed: Path, target: Path) -> None:
    """The seed's sidecars (NextClaw's <id>.metadata.json) go with it; the minimizer's raw input keeps
    its seed's."""
    for src, dst in zip(side_files(seed), side_files(target), strict=True):
        if src.is_file() and any(src.name.endswith(s) for s in SIDECAR_SUFFIXES.values()):
            shutil.copyfile(src, dst)


def snapshot(path: Path) -> dict[str, Any]:
    """What must not change: the input's bytes and mtime (and the files read beside it: a
    database's -wal/-shm/-journal, a journal's metadata sidecar)."""
    out: dict[str, Any] = {}
    for p in (path, *side_files(path)):
        try:
            st = os.lstat(p)
        except OSError:
            out[p.name] = None
            continue
        digest = None
        if os.path.isfile(p) and not os.path.islink(p):
            with open(p, "rb") as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
        out[p.name] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return out


@contextlib.contextmanager
def write_lock(path: Path, wanted: bool) -> Any:
    """Another connection holding a write lock on the database (a live ADK process)."""
    if not wanted:
        yield
        return
    con = sqlite3.connect(path, isolation_level=None, timeout=0)
    try:
        with contextlib.suppress(sqlite3.DatabaseError):  # a corrupt file cannot be locked: run without
            con.execute("BEGIN EXCLUSIVE")
        yield
    finally:
        con.close()


# ---------------------------------------------------------------------------------------- running


class _Loads:
    """Records every load the command makes: the ledger (for its diagnostics) or the LoadError."""

    MODULES = ("inspector.cli.main", "inspector.cli.simulate", "inspector.tui.session", "inspector.tui.triage")

    def __init__(self, out: list[tuple[str, Any]]) -> None:
        import inspector.formats as formats

        self.out = out
        self.real = formats.load
        self.saved: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> None:
        import importlib

        import inspector.formats as formats

        def load(path: str, *args: Any, **kwargs: Any) -> Any:
            try:
                led = self.real(path, *args, **kwargs)
            except formats.LoadError as e:
                self.out.append((path, str(e)))
                raise
            self.out.append((path, led))
            return led

        for name in (*self.MODULES, "inspector.formats"):
            mod = importlib.import_module(name)
            if getattr(mod, "load", None) is self.real:
                self.saved.append((mod, "load", self.real))
                mod.load = load  # type: ignore[attr-defined]

    def __exit__(self, *exc: object) -> None:
        for mod, name, value in self.saved:
            setattr(mod, name, value)


def run_cli(argv: list[str]) -> Outcome:
    """`inspector ARGV` through the CLI's own main(), stdout and stderr captured."""
    from inspector.cli.main import main

    res = Outcome()
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        with _Loads(res.loads):
            res.code = main(argv)
    except SystemExit as e:
        res.code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    except BaseException as e:
        res.violations.append(crash(e))
    finally:
        sys.stdout, sys.stderr = old
    out.flush()
    res.stdout = out.buffer.getvalue()  # type: ignore[attr-defined]
    res.stderr = err.getvalue()
    return res


def run_app(path: Path, wait: float) -> Outcome:
    """The app headless on one file: open, wait for the analysis (or its error), press the keys."""
    from textual.message import Message

    from inspector.tui.app import create_app
    from inspector.tui.session import SessionScreen

    res = Outcome(code=0)
    landed: list[str] = []

    def hook(msg: Message) -> None:
        if isinstance(msg, SessionScreen.Analyzed):
            landed.append("analyzed")
        elif isinstance(msg, SessionScreen.Failed):
            landed.append("failed")

    async def drive() -> None:
        app = create_app([str(path)], show_timings=False)
        try:
            async with app.run_test(size=(120, 36), message_hook=hook) as pilot:
                deadline = time.monotonic() + wait
                while not landed and app._exception is None and time.monotonic() < deadline:
                    await pilot.pause(0.05)
                if not landed and app._exception is None:
                    res.violations.append(
                        Violation("app_stuck", "app: no analysis and no error", f"nothing after {wait:.0f} s: still indexing")
                    )
                for key in APP_KEYS:
                    if app._exception is not None or not app.is_running:
                        break
                    await pilot.press(key)
                    await pilot.pause(0.05)
                if app._exception is None and app.is_running:
                    await pilot.pause(0.2)
        except BaseException as e:
            res.violations.append(crash(e))
            return
        if app._exception is not None:
            res.violations.append(crash(app._exception))

    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()  # Textual prints a crash's traceback on exit
    try:
        with _Loads(res.loads):
            asyncio.run(drive())
    finally:
        sys.stdout, sys.stderr = old
    return res


# ---------------------------------------------------------------------------------------- contract


def _norm(text: str, names: list[str]) -> str:
    """A message with its file names and numbers generalized, to deduplicate by."""
    for n in names:
        text = text.replace(n, "FILE")
    text = re.sub(r"0x[0-9a-f]+|\d+", "N", text)
    return text.split(" (")[0][:160]  # the cause in parentheses varies with the damage


def out_target(folder: Path, suffix: str, kind: str) -> Path:
    """Where `--out` points: a new path, or (to check the refusals) a device node, a directory,
    a path in a missing folder, an existing file."""
    folder.mkdir()
    path = folder / f"repaired{suffix}"
    if kind == "device":
        with contextlib.suppress(OSError):  # not allowed here: a new path instead
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 7))  # our own /dev/full
    elif kind == "directory":
        path.mkdir()
    elif kind == "missing_dir":
        path = folder / "missing" / path.name
    elif kind == "existing":
        path.write_bytes(b"not a session\n")
    return path


def _out_state(path: Path | None) -> tuple[set[str], int | None]:
    if path is None:
        return set(), None
    try:
        mode: int | None = os.lstat(path).st_mode
    except OSError:
        mode = None
    return {p.name for p in path.parent.iterdir()} if path.parent.is_dir() else set(), mode


def check(
    case: dict[str, Any],
    target: Path,
    res: Outcome,
    regular: bool,
    out_path: Path | None = None,
    out_before: tuple[set[str], int | None] = (set(), None),
) -> None:
    argv: list[str] = case["argv"]
    cmd = case["label"]
    names = [str(target), target.name]
    v = res.violations
    if res.code is not None and res.code not in (0, 1, 2):
        v.append(Violation("exit_code", f"exit {res.code}: {cmd}", f"exit status {res.code}"))
    if "Traceback (most recent call last)" in res.stderr:
        v.append(Violation("crash", f"traceback printed: {cmd}", res.stderr[-2000:], res.stderr))
    if "--json" in argv and res.code in (0, 1):
        try:
            doc = json.loads(res.stdout)
        except ValueError as e:
            v.append(Violation("bad_json", f"--json output not JSON: {cmd}", str(e)))
            doc = None
        for f in (doc.get("findings") or []) if isinstance(doc, dict) else []:
            file_note = isinstance(f, dict) and isinstance(f.get("data"), dict) and f["data"].get("line") == 0
            if isinstance(f, dict) and f.get("code") == "malformed_line" and not file_note and not LINE_REF.search(str(f.get("message"))):
                v.append(Violation("diagnostic", f"malformed_line names no line: {_norm(str(f.get('message')), names)}", str(f.get("message"))))
    if CONTROL.search(res.stderr):
        v.append(Violation("diagnostic", f"raw control bytes on stderr: {cmd.split()[0]}", repr(res.stderr[:300])))
    for path, got in res.loads:
        if path != str(target):
            continue
        if isinstance(got, str):
            _check_load_error(got, target, case, regular, v)
        else:
            for d in got.diagnostics:
                if d.line == 0:
                    continue  # a note about the file as a whole (the session chosen, a -wal read, a lock)
                if not re.search(rf"\b(lines?|rows?|events?) (\d+(, |–| and ))*{d.line}\b", d.message):
                    v.append(Violation("diagnostic", f"diagnostic names no line: {d.problem}: {_norm(d.message, names)}", d.message))
    if out_path is not None:
        names_before, mode_before = out_before
        mode_after = _out_state(out_path)[1]
        if mode_before is None and mode_after is not None and res.code != 0:
            v.append(Violation("out_on_failure", f"--out written on exit {res.code}: {cmd}", str(out_path)))
        if mode_before is not None and not stat.S_ISREG(mode_before) and mode_after != mode_before:
            what = "a device node" if stat.S_ISCHR(mode_before) else "a non-regular file"
            v.append(Violation("out_replaced", f"--out replaced {what} with a file", f"exit {res.code}: {cmd}"))
        stray = sorted({p.name for p in out_path.parent.iterdir()} - names_before - {out_path.name}) if out_path.parent.is_dir() else []
        if stray:
            v.append(Violation("stray_file", f"files left next to --out: {cmd}", ", ".join(stray)))
        if re.search(r"\.inspector-\w+\.tmp", res.stderr):
            v.append(Violation("diagnostic", f"message names an internal temp file: {cmd}", res.stderr[:300]))


def _check_load_error(msg: str, target: Path, case: dict[str, Any], regular: bool, v: list[Violation]) -> None:
    names = [str(target), target.name]
    if target.name not in msg:
        v.append(Violation("diagnostic", f"load error names no file: {_norm(msg, names)}", msg))
    # A text file's problem is on a line; a database's on a row, unless the file as a whole is
    # unreadable (corrupt pages, no tables); a FIFO or a directory has no lines at all.
    if regular and case["kind"] not in SQLITE_KINDS and not LINE_REF.search(msg):
        v.append(Violation("diagnostic", f"load error names no line: {_norm(msg, names)}", msg))
    if len(set(re.findall(r"\bline (\d+)", msg))) > 1:  # "line 1: ... line 2973 column 27"
        v.append(Violation("diagnostic", f"load error names two lines: {_norm(msg, names)}", msg))


def run_case(case: dict[str, Any], work: Path, app_wait: float = 20.0) -> dict[str, Any]:
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        folder = Path(tmp)
        target, ctx = materialize(case, folder)
        regular = target.is_file() and not target.is_symlink()
        out_path = None
        argv = []
        for a in case["argv"]:
            if a.startswith("{OUT"):
                out_path = out_target(folder / "out", target.suffix or ".jsonl", a[5:-1] or "new")
                a = str(out_path)
            argv.append(str(target) if a == "{FILE}" else a)
        out_before = _out_state(out_path)
        with write_lock(target, ctx.hold_lock):  # (its own close may checkpoint a WAL: not ours to judge)
            before = snapshot(target)
            res = run_app(target, app_wait) if case["app"] else run_cli(argv)
            after = snapshot(target)
        check(case, target, res, regular, out_path, out_before)
        if case.get("special") != "dev_null" and after != before:  # others write to /dev/null
            res.violations.append(Violation("input_changed", f"input changed: {case['label']}", f"{target.name} differs after the run"))
    return {
        "id": case["id"],
        "code": res.code,
        "seconds": round(time.monotonic() - t0, 3),
        "violations": [x.as_dict() for x in res.violations],
    }
