"""`inspector watch [PATH...]`: follow the sessions agents are writing, and say when one gains a finding.

A terminal view (rich Live) of the watched sessions: format, records, tokens against the window,
last checkpoint, worst finding. A line is printed when a session gains a finding at or above
`--fail-on` (and when a file is deleted or can no longer be read); `--exec CMD` runs CMD with
that event as JSON on stdin; `--json` prints one JSON object per event instead of the view.
File events come from `watchfiles`; `--poll` (or a watcher that cannot start) compares sizes and
modification times every `--interval` seconds instead. A changed file is re-analysed through
`inspector.live.sessions.refresh`. Runs until interrupted (exit 0); 2 when no PATH exists.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from inspector.analysis.numbers import count
from inspector.cli import args as argtypes
from inspector.ledger.jsontext import dumps
from inspector.live.sessions import OK, SessionState, changes, refresh

HELP = "follow running sessions: a live view, and a line (or --exec, --json) when one gains a finding"
EXEC_TIMEOUT_S = 30.0
RESCAN_S = 5.0  # new session files under the watched folders are looked for this often


def add_parser(sub: Any) -> None:
    p = sub.add_parser("watch", help=HELP, description=HELP + ". Default places: as the triage browser finds them.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="session files or folders (default: every default place)")
    p.add_argument("--fail-on", choices=("error", "warning", "info"), default="warning", help="report findings of this severity or worse (default: warning)")
    p.add_argument("--exec", dest="exec_cmd", metavar="CMD", help="run CMD (through the shell) with each event as JSON on stdin")
    p.add_argument("--json", action="store_true", help="print one JSON object per event (no live view)")
    p.add_argument("--poll", action="store_true", help="poll sizes and modification times instead of file events")
    p.add_argument("--interval", type=argtypes.seconds, default=1.0, metavar="S", help="seconds between polls (default 1)")


# ------------------------------------------------------------------------------------ discovery


def roots_and_files(paths: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """(folders to watch, session files in them or named, paths that do not exist)."""
    from inspector.store.places import default_places, session_files  # the walk scan and triage use

    if not paths:
        paths = default_places()
    found = list(session_files(paths))
    files = [f.path for f in found if not f.missing]
    missing = [f.path for f in found if f.missing]
    roots = [os.path.abspath(p) for p in paths if os.path.isdir(p)]
    roots += [os.path.dirname(os.path.abspath(p)) for p in paths if os.path.isfile(p)]
    return sorted(set(roots)), files, missing


# ------------------------------------------------------------------------------------- reporting


def event_line(ev: dict[str, Any]) -> str:
    return f"{time.strftime('%H:%M:%S')}  {ev['message']}" if ev["event"] != "finding" else (
        f"{time.strftime('%H:%M:%S')}  {ev['file']}: {ev['severity']} {ev['message']}"
    )  # fmt: skip


def run_exec(cmd: str, ev: dict[str, Any]) -> None:
    try:
        done = subprocess.run(cmd, shell=True, input=dumps(ev), timeout=EXEC_TIMEOUT_S, capture_output=True)
    except subprocess.TimeoutExpired:
        print(f"inspector watch: --exec {cmd!r} did not finish in {EXEC_TIMEOUT_S:.0f} s", file=sys.stderr)
        return
    except OSError as e:
        print(f"inspector watch: --exec {cmd!r} could not start: {e}", file=sys.stderr)
        return
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip()[-300:]
        print(f"inspector watch: --exec {cmd!r} exited {done.returncode}{': ' + tail if tail else ''}", file=sys.stderr)


def table(states: Iterable[SessionState]) -> Any:
    from rich.table import Table

    t = Table(title="inspector watch", expand=True)
    for name in ("file", "format", "records", "tokens / window", "last checkpoint", "worst finding"):
        t.add_column(name, overflow="fold")
    for s in sorted(states, key=lambda s: -s.mtime_ns)[:50]:
        tokens = count(s.tokens) + (f" / {count(s.window)}" if s.window else "")
        worst = s.worst
        status = "" if s.status == OK else f"[{s.status}] "
        t.add_row(
            s.path, s.format, count(s.records), tokens,
            f"line {s.last_checkpoint_line}" if s.last_checkpoint_line else "-",
            status + (f"{worst.severity} {worst.key.code}" if worst else "healthy"),
        )  # fmt: skip
    return t


# ---------------------------------------------------------------------------------------- change


def poll_changes(files: Callable[[], list[str]], interval: float, stop: threading.Event) -> Iterator[set[str]]:
    """The polling fallback: the files whose size or mtime changed (or that vanished) since the last look."""
    seen: dict[str, tuple[int, int, int] | None] = {}
    while not stop.is_set():
        changed: set[str] = set()
        for p in files():
            try:
                st = os.stat(p)
                sig: tuple[int, int, int] | None = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)  # ctime: a chmod
            except OSError:
                sig = None
            if p in seen and seen[p] != sig:
                changed.add(p)
            seen[p] = sig
        yield changed
        stop.wait(interval)


def event_changes(roots: list[str], interval: float, stop: threading.Event) -> Iterator[set[str]]:
    import watchfiles

    for batch in watchfiles.watch(*roots, stop_event=stop, rust_timeout=int(interval * 1000), yield_on_timeout=True):
        yield {os.path.abspath(p) for _kind, p in batch}


class Watch:
    """The sessions watched and what is reported about them."""

    def __init__(self, args: argparse.Namespace, emit: Callable[[dict[str, Any]], None]) -> None:
        self.args = args
        self.emit = emit
        self.states: dict[str, SessionState] = {}

    def add(self, path: str, *, baseline: bool) -> None:
        new = refresh(None, path)
        self.states[path] = new
        if not baseline:
            self.report(changes(None, new, self.args.fail_on))

    def update(self, path: str) -> None:
        old = self.states.get(path)
        if old is None:
            return
        new = refresh(old, path)
        self.states[path] = new
        self.report(changes(old, new, self.args.fail_on))

    def report(self, events: list[dict[str, Any]]) -> None:
        for ev in events:
            self.emit(ev)
            if self.args.exec_cmd:
                run_exec(self.args.exec_cmd, ev)


def run(args: argparse.Namespace) -> int:
    roots, files, missing = roots_and_files(args.paths)
    for p in missing:
        print(f"inspector watch: {p}: no such file or directory", file=sys.stderr)
    if args.paths and len(missing) == len(args.paths):
        return 2
    live = None
    if args.json:

        def emit(ev: dict[str, Any]) -> None:
            sys.stdout.buffer.write(dumps(ev) + b"\n")
            sys.stdout.flush()
    else:
        from rich.console import Console
        from rich.live import Live

        console = Console()
        live = Live(console=console, auto_refresh=False) if console.is_terminal else None

        def emit(ev: dict[str, Any]) -> None:
            console.print(event_line(ev), markup=False, highlight=False, soft_wrap=True)

    w = Watch(args, emit)
    for p in files:
        w.add(p, baseline=True)
    stop = threading.Event()
    try:
        if live is not None:
            live.start()
            live.update(table(w.states.values()), refresh=True)
        watch_loop(w, roots, args, stop, live)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        if live is not None:
            live.stop()
    return 0


def watch_loop(w: Watch, roots: list[str], args: argparse.Namespace, stop: threading.Event, live: Any) -> None:
    source: Iterator[set[str]]
    if args.poll or not roots:
        source = poll_changes(lambda: list(w.states), args.interval, stop)
    else:
        try:
            source = event_changes(roots, args.interval, stop)
        except (ImportError, OSError) as e:  # no watcher here: poll
            print(f"inspector watch: file events unavailable ({e}); polling every {args.interval:g} s", file=sys.stderr)
            source = poll_changes(lambda: list(w.states), args.interval, stop)
    last_scan = time.monotonic()
    for changed in source:
        for p in sorted(changed):
            if p in w.states:
                w.update(p)
        if time.monotonic() - last_scan >= RESCAN_S or any(p not in w.states for p in changed):
            last_scan = time.monotonic()
            _, files, _ = roots_and_files(args.paths)
            for p in files:
                if p not in w.states:
                    w.add(p, baseline=False)
        if live is not None:
            live.update(table(w.states.values()), refresh=True)
