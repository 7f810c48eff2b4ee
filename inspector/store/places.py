"""Where sessions live and which files in a tree are sessions (DESIGN §3 "where users have it").

One place for what the triage browser, `inspector scan`, `search` and `usage` walk: the default
places of every format, the walk itself, and how a sub-agent transcript names its parent session.
Each format's default places and non-session files come from the formats registry.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from glob import glob

from inspector.formats import registry


def default_place_patterns() -> tuple[str, ...]:
    """Every format's default places (`Format.default_places`), in registry order."""
    return registry.places()


def default_places() -> list[str]:
    """The default places that exist on this machine, as directories."""
    out: list[str] = []
    for pattern in default_place_patterns():
        out += [p for p in sorted(glob(os.path.expanduser(pattern))) if os.path.isdir(p)]
    return out


def not_a_session(name: str) -> bool:
    """Files a format names as not sessions (`Format.not_session_files`: OpenClaw's pre-compaction
    copies and trajectories, SQLite side files)."""
    return any(fnmatch.fnmatchcase(name, pat) for pat in registry.not_session_files())


def is_session_file(full: str, name: str) -> bool:
    """A line format's suffix, or a store's suffix and its content (`Format.looks_like_file`),
    unless a format names it as not a session."""
    if not_a_session(name):
        return False
    return any(
        name.endswith(f.suffixes) and (f.looks_like_file is None or f.looks_like_file(full)) for f in registry.REGISTRY
    )


@dataclass(slots=True, frozen=True)
class Found:
    """One path the walk produced: a session file, or a path given that does not exist."""

    path: str  # absolute, as reached (not resolved through symlinks)
    missing: bool = False


def session_files(paths: Iterable[str], cancelled: Callable[[], bool] = lambda: False) -> Iterator[Found]:
    """Every session file under `paths`, streamed in a stable order (directories sorted), each real
    file once. Symlinked directories are followed, each directory once by (device, inode), so a
    symlink loop ends the branch instead of the walk. A file given by name is taken whatever its
    name; a path that does not exist comes out as `missing`."""
    seen_files: set[tuple[int, int]] = set()
    seen_dirs: set[tuple[int, int]] = set()
    for p in paths:
        p = os.path.abspath(os.path.expanduser(p))
        if os.path.isdir(p):
            yield from _walk(p, seen_dirs, seen_files, cancelled)
        elif os.path.exists(p):
            if _first_time(p, seen_files):
                yield Found(p)
        else:
            yield Found(p, missing=True)


def _first_time(path: str, seen: set[tuple[int, int]]) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return True  # unreadable: let the row say why
    key = (st.st_dev, st.st_ino)
    if key in seen:
        return False
    seen.add(key)
    return True


def _walk(
    top: str, seen_dirs: set[tuple[int, int]], seen_files: set[tuple[int, int]], cancelled: Callable[[], bool]
) -> Iterator[Found]:
    stack = [top]
    while stack:
        if cancelled():
            return
        d = stack.pop()
        if not _first_time(d, seen_dirs):
            continue  # reached again through a symlink (a loop, or two links to one folder)
        try:
            with os.scandir(d) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue  # an unreadable folder holds nothing we can list
        subdirs: list[str] = []
        for e in entries:
            try:
                is_dir = e.is_dir(follow_symlinks=True)
            except OSError:
                continue
            if is_dir:
                subdirs.append(e.path)
            elif is_session_file(e.path, e.name) and _first_time(e.path, seen_files):
                yield Found(e.path)
        stack.extend(reversed(subdirs))  # depth first, in name order


def parent_session(path: str) -> str | None:
    """The parent session of a sub-agent transcript: Claude Code writes a sub-agent's run to
    `<project>/<session>/subagents/agent-*.jsonl` next to `<project>/<session>.jsonl`."""
    folder, name = os.path.split(path)
    if not (name.startswith("agent-") and name.endswith(".jsonl")) or os.path.basename(folder) != "subagents":
        return None
    session_dir = os.path.dirname(folder)
    return session_dir + ".jsonl"


def subagent_files(session: str) -> list[str]:
    """The sub-agent transcripts Claude Code wrote beside a session (`<session>/subagents/`)."""
    if not session.endswith(".jsonl"):
        return []
    folder = os.path.join(session[: -len(".jsonl")], "subagents")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if n.startswith("agent-") and n.endswith(".jsonl")]
