"""The seed corpus: real files of every format, found on disk and kept when inspector reads them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_sessions"

# The kinds of input a case starts from. `adk_db` and `adk_json` are the two ADK stores,
# `openclaw_db` OpenClaw's SQLite agent store; `special` is a non-regular input (a FIFO, a device,
# a directory, a symlink loop). The seeds of BUILT_KINDS (the runtimes that cannot be run here)
# are built from their own types by tests/fuzz/seeds.py; the others are files found on disk.
FOUND_KINDS: tuple[str, ...] = ("pi", "native", "claude_code", "codex", "adk_db", "adk_json", "openclaw_db")
BUILT_KINDS: tuple[str, ...] = ("adk_go_db", "adk_go_json", "maka_db", "nextclaw", "nextclaw_legacy")
KINDS: tuple[str, ...] = FOUND_KINDS + BUILT_KINDS
SQLITE_KINDS: frozenset[str] = frozenset({"adk_db", "openclaw_db", "adk_go_db", "maka_db"})  # the SQLite mutations apply
# Files a format reads beside its input (suffixes appended to the input's path, or replacing
# `.jsonl`): they are copied with the seed and must be unchanged after a run like the input itself.
SIDE_SUFFIXES: tuple[str, ...] = ("-wal", "-shm", "-journal")
SIDECAR_SUFFIXES: dict[str, str] = {".jsonl": ".metadata.json"}  # NextClaw's <id>.metadata.json


def side_files(path: Path) -> list[Path]:
    """The files beside `path` that a format reads with it (existing or not)."""
    out = [Path(f"{path}{s}") for s in SIDE_SUFFIXES]
    for suffix, sidecar in SIDECAR_SUFFIXES.items():
        if path.name.endswith(suffix):
            out.append(path.with_name(path.name[: -len(suffix)] + sidecar))
    return out
SPECIALS: tuple[str, ...] = ("fifo", "dev_null", "directory", "symlink_loop")


class CorpusError(Exception):
    """The corpus cannot be assembled (the checkout's sibling ../shared is missing)."""


@dataclass(frozen=True, slots=True)
class Seed:
    kind: str  # one of KINDS
    path: str  # absolute
    name: str  # a short label: the path relative to its corpus root

    @property
    def is_sqlite(self) -> bool:
        return self.kind in SQLITE_KINDS


def shared_dir() -> Path:
    """`../shared` next to the checkout (or $INSPECTOR_SHARED), as the tests expect it."""
    shared = Path(os.environ.get("INSPECTOR_SHARED", REPO.parent / "shared"))
    if not shared.is_dir():
        raise CorpusError(
            f"{shared} is missing: the fuzzer reads the real sessions and the peers' corpora from ../shared "
            "next to the checkout (or $INSPECTOR_SHARED)"
        )
    return shared


def candidate_files() -> list[Path]:
    """Every file that may be a session: the samples, the real sessions, the peers' corpora (and
    the OpenClaw store the repository's own harness made, the ADK voice session it builds, the stores
    the real adk-go wrote)."""
    shared = shared_dir()
    roots = [
        SAMPLES,
        shared / "real_sessions",
        *sorted((shared / "peers").glob("*/corpus")),
        REPO / "tests" / "peers" / "openclaw" / "corpus",
        REPO / "tests" / "peers" / "adk_resume" / "corpus",  # (a live session's speech: voice_corpus.py)
        REPO / "tests" / "peers" / "adk_go" / "corpus",  # (written by the real adk-go: its README)
    ]
    out: list[Path] = []
    for root in roots:
        if not root.is_dir():
            raise CorpusError(f"{root} is missing: the fuzzer's corpus expects it")
        out += sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json", ".db", ".sqlite"))
    return out


def kind_of(path: Path) -> str | None:
    """The seed kind of a file inspector reads cleanly enough to mutate, else None (the peers'
    request logs, oracles and notes are not sessions)."""
    from inspector.formats import LoadError, load

    try:
        led = load(str(path))
    except (LoadError, OSError, ValueError):
        return None
    if led.format == "adk":
        return "adk_db" if path.suffix == ".db" else "adk_json"
    if led.format == "openclaw":
        return "openclaw_db"
    if led.format == "adk_go":
        return "adk_go_db" if path.suffix == ".db" else "adk_go_json"
    if led.format == "maka":
        return "maka_db"
    return led.format if led.format in KINDS else None


def load_corpus(built: Path, kinds: tuple[str, ...] = KINDS) -> dict[str, list[Seed]]:
    """The seeds by kind (of `kinds`); every kind must have at least one. The built seeds are
    written under `built`."""
    from tests.fuzz.seeds import build_seeds

    by_kind: dict[str, list[Seed]] = {k: [] for k in kinds}
    if any(k in FOUND_KINDS for k in kinds):
        shared = shared_dir()
        for p in candidate_files():
            kind = kind_of(p)
            if kind in by_kind:
                base = REPO if p.is_relative_to(REPO) else shared
                by_kind[kind].append(Seed(kind, str(p), str(p.relative_to(base))))
    if any(k in BUILT_KINDS for k in kinds):
        for kind, p in build_seeds(built):
            if kind in by_kind:
                by_kind[kind].append(Seed(kind, str(p), f"built:{p.relative_to(built)}"))
    empty = [k for k, seeds in by_kind.items() if not seeds]
    if empty:
        raise CorpusError(f"no seed file of kind {', '.join(empty)} in the corpus")
    return by_kind
