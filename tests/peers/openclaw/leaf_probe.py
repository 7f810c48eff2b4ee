"""What the real OpenClaw 2026.9.6 sends after `leaf` rows (its navigation controls), probe by probe.

OpenClaw writes a `leaf` row (`{type:"leaf", id, parentId, timestamp, targetId, appendParentId?,
appendMode?}`, `createLeafControl`, session-manager-DjC09C_X.mjs:612-622) when a user switches
branch or rewinds (`mutateSqliteSessionAtMessageInTransaction`, session-accessor-DLYTHSBj.mjs:
1311-1320) or a run moves its leaf (`appendLeafControl`, session-manager-DjC09C_X.mjs:1573-1588).
Its tree scan (`scanSessionTranscriptNavigation`, transcript-tree-3xvvNd9-.mjs:100-174) makes the
row's `targetId` the leaf, and the transcript index it rebuilds sends the path to that leaf.

Each probe is a copy of the OpenClaw peer corpus's `s1.sqlite` (`type_probe.BASE`) with rows
appended to session `s1` after its last one (seq 35, turn t8's answer): leaf rows and entries, as
`ROWS` lists them (ids: `L` the base's leaf, `T7`/`T7A`/`T8` turn t7's question and answer and turn
t8's question; new rows `f1`, `A`, `B`, ... carry markers). The base rows are never edited. One
probe is written by OpenClaw itself: `rewindSessionToMessage` (session-accessor-DLYTHSBj.mjs:1216)
run on a copy, which copies the session into a new one ending in its own leaf row.

Per probe, what OpenClaw's first agent request held: which of the turn tokens (`TOKENS`) and the
probe's markers were in it, in a fixed order, and how many messages (the system prompt, the
probe's prompt and the runtime-context carrier left out), or `refused`. inspector's prediction is
`analyze`'s next request.

    python -m tests.peers.openclaw.leaf_probe [--only NAME ...] [--record]

`--record` keeps OpenClaw's verdicts in `recorded_verdicts.json` (tests/peers/recorded.py; the
probes OpenClaw writes itself are never recorded: fresh ids each run). tests/test_openclaw_leaf_rule.py
holds inspector's prediction to the recorded verdict of every probe and resumes a few with the real
OpenClaw each run, whose verdicts must still be the recorded ones.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.formats.openclaw_writer import provide_octet_length
from tests.peers import recorded
from tests.peers.openclaw import type_probe as tp
from tests.peers.openclaw.generate import NODE, OPENCLAW, STORE_IN_HOME, offline_openclaw
from tests.peers.openclaw.resume import resume

# The base's ids (type_probe.BASE: seq -> id).
IDS = {
    "L": tp.LEAF,  # seq 35, turn t8's answer
    "T8": "f51abd3d",  # seq 34, turn t8's question (prefix: completed from the store)
    "T7A": "85b56ee8",  # seq 33, turn t7's answer
    "T7": "6d4c4ece",  # seq 32, turn t7's big question (zstd)
    "C3": "f5861ce0",  # seq 31, the last compaction
    "T5A": "feb3d717",  # seq 25, turn t5's answer (before the last compaction)
}
# What is searched for in what was sent, in this order (the base's history: its last compaction's
# summary, `type_probe.HISTORY_MARK`).
TOKENS = {
    "H": tp.HISTORY_MARK,
    "t5": "done with turn t5",
    "t7": "[turn:t7]",
    "t7a": "done with turn t7",
    "t8": "[turn:t8]",
    "t8a": "done with turn t8",
}
_ROW = dict[str, Any]


@dataclass(frozen=True)
class Probe:
    name: str
    rows: Callable[[str], list[_ROW]]  # the probe's marker tag (e.g. "007") -> the rows to append
    own: bool = False  # OpenClaw writes the rows itself (`rewind`): `rows` is not used
    stale: bool = False  # its transcript index marked for a rebuild (as after a row it did not append)


def _id(ref: str, tag: str) -> str | None:
    """A row id: a base id by its name, a new row's (`A` -> `A-007`), None for "null"."""
    if ref == "null":
        return None
    return IDS.get(ref, f"{ref}-{tag}")


def leaf(name: str, parent: str, target: str, **extra: str) -> Callable[[str], _ROW]:
    def make(tag: str) -> _ROW:
        o: _ROW = {"type": "leaf", "id": _id(name, tag), "parentId": _id(parent, tag), "timestamp": tp.WHEN, "targetId": _id(target, tag)}
        for k, v in extra.items():
            if v == "-":
                o.pop(k, None)
            else:
                o[k] = _id(v, tag) if k != "appendMode" else v
        return o

    return make


def _message(build: Callable[[str], _ROW], name: str, parent: str) -> Callable[[str], _ROW]:
    """A message entry BUILD makes (its marker naming it), with its own id and parent."""

    def make(tag: str) -> _ROW:
        o = build(f"MARK-{name}-{tag}")
        o["id"], o["parentId"] = _id(name, tag), _id(parent, tag)
        return o

    return make


def user(name: str, parent: str) -> Callable[[str], _ROW]:
    return _message(tp._user, name, parent)


def answer(name: str, parent: str) -> Callable[[str], _ROW]:
    return _message(tp._assistant, name, parent)


def reset(name: str, parent: str) -> Callable[[str], _ROW]:
    def make(tag: str) -> _ROW:
        return {"type": "reset", "id": _id(name, tag), "parentId": _id(parent, tag), "timestamp": tp.WHEN, "reason": "reset"}

    return make


def rows(*makers: Callable[[str], _ROW]) -> Callable[[str], list[_ROW]]:
    return lambda tag: [m(tag) for m in makers]


PROBES: list[Probe] = [
    Probe("no leaf row", rows(user("A", "L"), answer("B", "A"))),
    Probe("switch to an earlier entry", rows(leaf("f1", "L", "T7A"))),
    Probe("switch, then a turn", rows(leaf("f1", "L", "T7A"), user("A", "T7A"), answer("B", "A"))),
    Probe("switch, then a turn under the leaf row", rows(leaf("f1", "L", "T7A"), user("A", "f1"), answer("B", "A"))),
    Probe("switch, a turn, then switch back", rows(leaf("f1", "L", "T7A"), user("A", "T7A"), answer("B", "A"), leaf("f2", "B", "L"))),
    Probe("switch, then an entry under the old tip", rows(leaf("f1", "L", "T7A"), user("A", "L"))),
    Probe("switch to a user question", rows(leaf("f1", "L", "T8"))),
    Probe("switch to before the last compaction", rows(leaf("f1", "L", "T5A"))),
    Probe("switch to the last compaction", rows(leaf("f1", "L", "C3"))),
    Probe("switch to the root (null)", rows(leaf("f1", "L", "null"))),
    Probe("several switches", rows(leaf("f1", "L", "T5A"), leaf("f2", "f1", "T8"), leaf("f3", "f2", "T7A"))),
    Probe("leaf naming an unknown id", rows(leaf("f1", "L", "X"))),
    Probe("leaf naming an unknown id, then a turn", rows(leaf("f1", "L", "X"), user("A", "f1"), answer("B", "A"))),
    Probe("leaf naming an invalid leaf", rows(leaf("f1", "L", "X"), leaf("f2", "f1", "f1"))),
    Probe("leaf naming a leaf row", rows(leaf("f1", "L", "T7A"), leaf("f2", "f1", "f1"))),
    Probe("leaf appendParentId unknown", rows(leaf("f1", "L", "T7A", appendParentId="X"))),
    Probe("leaf appendParentId, then an entry under it", rows(leaf("f1", "L", "T7A", appendParentId="L"), user("A", "L"))),
    Probe("leaf appendMode side, then an entry under it", rows(leaf("f1", "L", "T7A", appendParentId="L", appendMode="side"), user("A", "L"))),
    Probe("leaf appendMode unknown", rows(leaf("f1", "L", "T7A", appendMode="probe"))),
    Probe("leaf without parentId", rows(leaf("f1", "L", "T7A", parentId="-"))),
    Probe("leaf without targetId", rows(leaf("f1", "L", "T7A", targetId="-"))),
    Probe("leaf after a reset", rows(reset("R", "L"), leaf("f1", "R", "T7A"))),
    Probe("leaf after a reset, to its descendant", rows(reset("R", "L"), user("A", "R"), answer("B", "A"), leaf("f1", "B", "A"))),
    Probe("rewind by OpenClaw", rows(), own=True),
    Probe("rewind by OpenClaw, index stale", rows(), own=True, stale=True),
]  # fmt: skip


def _full_ids(con: sqlite3.Connection) -> None:
    """The base's ids in full (IDS holds prefixes)."""
    for k, v in IDS.items():
        if len(v) < 36:
            IDS[k] = con.execute("SELECT event_id FROM transcript_event_identities WHERE session_id=? AND event_id LIKE ?", (tp.SESSION, v + "%")).fetchone()[0]


def write_probe(base: Path, out: Path, i: int, p: Probe) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    shutil.copyfile(base, out)
    con = sqlite3.connect(out)
    try:
        provide_octet_length(con)
        con.execute("PRAGMA ignore_check_constraints=1")
        _full_ids(con)
        assert tp.read_row(con, tp.LEAF_SEQ)["id"] == tp.LEAF, "the base's leaf moved"
        for k, o in enumerate(p.rows(f"{i:03d}")):
            tp.write_row(con, tp.LEAF_SEQ + 1 + k, tp._plain(json.dumps(o).encode()))
        con.commit()
    finally:
        con.close()
    return out


# OpenClaw's own rewind (to turn t8's question: its leaf row then names turn t7's answer), run on a
# copy of the base in a throwaway HOME: the session key's current session becomes a new session
# holding the base's rows and the leaf row (session-accessor-DLYTHSBj.mjs:1299-1333).
REWIND_JS = """
const [dist, entryId] = process.argv.slice(1);
const m = await import(dist + "/session-accessor-DLYTHSBj.mjs");
const rewind = Object.values(m).find((f) => typeof f === "function" && f.name === "rewindSessionToMessage");
const res = await rewind({ agentId: "main", sessionKey: "agent:main:explicit:s1", entryId });
console.log(JSON.stringify({ status: res.status, sessionId: res.entry?.sessionId }));
"""


def write_own(base: Path, out: Path, scratch: Path, stale: bool) -> tuple[Path, str]:
    """OpenClaw's rewind on a copy of the base: (the store, the new session's id); STALE: its
    transcript index then marked for a rebuild (`needs_rebuild`: OpenClaw rebuilds it from the rows
    before it reads it, session-transcript-index-UaRlRUAw.mjs:403-406)."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    con = sqlite3.connect(base)
    _full_ids(con)
    con.close()
    with offline_openclaw(scratch, {"turns": {}}) as (env, ws, _raw):
        target = scratch / "home" / STORE_IN_HOME
        target.parent.mkdir(parents=True)
        shutil.copyfile(base, target)
        got = subprocess.run(
            [str(NODE), "--input-type=module", "-e", REWIND_JS, str(OPENCLAW.parent / "dist"), IDS["T8"]],
            cwd=ws, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        line = next((x for x in got.stdout.splitlines() if x.startswith("{")), None)
        assert line is not None, f"OpenClaw's rewind said nothing: {got.stderr[-800:]}"
        res = json.loads(line)
        assert res["status"] == "created", res
        out.parent.mkdir(parents=True, exist_ok=True)
        out.unlink(missing_ok=True)
        # (one file: OpenClaw's -wal checkpointed into it)
        subprocess.run([str(NODE), "-e", tp_vacuum(), str(target), str(out)], check=True)
    if stale:
        con = sqlite3.connect(out)
        con.execute("UPDATE session_transcript_index_state SET needs_rebuild=1 WHERE session_id=?", (res["sessionId"],))
        con.commit()
        con.close()
    return out, res["sessionId"]


def tp_vacuum() -> str:
    return (
        'const {DatabaseSync} = require("node:sqlite"); const [s, d] = process.argv.slice(1);'
        "const db = new DatabaseSync(s, {readOnly: true}); db.exec(`VACUUM INTO '${d}'`); db.close();"
    )


# ---------------------------------------------------------------------------------------- verdicts

REFUSED = tp.REFUSED


def _verdict(text: str, n: int, tag: str) -> str:
    found = [k for k, v in TOKENS.items() if v in text]
    found += [k for k in ("A", "B", "C") if f"MARK-{k}-{tag}" in text]
    return f"{' '.join(found) or '-'} {n}"


def verdict_of_request(messages: list[dict[str, Any]], i: int) -> str:
    prompt = tp.PROMPT.format(i=i)
    kept, seen = 0, []
    for m in messages:
        texts = tp._texts(m.get("content"))
        if m.get("role") == "system" or (m.get("role") == "user" and any(t.startswith(tp._CARRIER) for t in texts)):
            continue
        seen.append("\n".join(texts))
        if not (m.get("role") == "user" and any(prompt in t for t in texts)):
            kept += 1
    return _verdict("\n".join(seen), kept, f"{i:03d}")


def openclaw_verdict(store: Path, session: str, i: int, scratch: Path) -> tuple[str, str]:
    rc, reqs = resume(store, session, tp.PROMPT.format(i=i), scratch)
    agent = [r for r in reqs if r["kind"] == "agent"]
    if rc == 0 and agent:
        return verdict_of_request(agent[0]["body"]["messages"], i), ""
    log = (scratch / "openclaw.stderr.log").read_text(encoding="utf-8", errors="replace").splitlines()
    why = [x.strip() for x in log if tp._WHY.search(x)]
    return REFUSED, f"exit {rc}, {len(agent)} agent request(s): " + ("; ".join(why[-1:])[:400] if why else "(nothing on stderr)")


def predicted(f: Path, session: str, i: int) -> str:
    from inspector.analysis import analyze
    from inspector.formats import LoadError, load

    try:
        report = analyze(load(f"{f}#{session}"))
    except LoadError:
        return REFUSED
    if any(x.code in ("resume_refused", "request_fails", "broken_tree") for x in report.findings):
        return REFUSED
    text = "\n".join(tp._text(report, it) for it in report.context)
    return _verdict(text, tp.sent_count(report), f"{i:03d}")


RECORD = tp.RECORD
COMMAND = "python -m tests.peers.openclaw.leaf_probe --record"


def run(
    out: Path, only: Sequence[str] | None = None, workers: int = 2, live: Sequence[str] | None = None, record: bool = False
) -> list[tuple[Probe, str, str, str]]:
    """Every probe (or those named in ONLY): (probe, what OpenClaw sent, inspector's prediction,
    OpenClaw's reason when it sent nothing). LIVE: None resumes every probe with OpenClaw; else
    only those named in LIVE, every other one's verdict taken from `RECORD` (StaleRecord when it is
    not recorded for this very probe) and each live verdict must be the recorded one where there
    is one. A probe OpenClaw writes itself (`own`: fresh ids each time) has no record: with LIVE it
    runs only when named there. RECORD: keep every verdict OpenClaw gave in `RECORD`."""
    picked = [(i, p) for i, p in enumerate(PROBES) if only is None or p.name in only]
    if only is not None:
        missing = set(only) - {p.name for _, p in picked}
        assert not missing, f"no such probes: {sorted(missing)}"
    if live is not None:
        picked = [(i, p) for i, p in picked if not p.own or p.name in live]
    files: dict[int, tuple[Path, str]] = {}
    for i, p in picked:
        f = out / "probes" / f"leaf{i:03d}.sqlite"
        files[i] = write_own(tp.BASE, f, out / "own" / f"leaf{i:03d}", p.stale) if p.own else (write_probe(tp.BASE, f, i, p), tp.SESSION)
    keys = {i: tp.probe_key(files[i][0], files[i][1], tp.PROMPT.format(i=i)) for i, p in picked if not p.own}
    book = recorded.Record(RECORD, "leaf_probe")
    results: dict[int, tuple[str, str]] = {}
    if live is not None:
        got = recorded.recorded_verdicts(book, {p.name: keys[i] for i, p in picked if p.name not in live}, COMMAND)
        results = {i: got[p.name] for i, p in picked if p.name in got}
    todo = [it for it in picked if it[0] not in results]

    def one(item: tuple[int, Probe]) -> tuple[str, str]:
        i, _p = item
        return openclaw_verdict(files[i][0], files[i][1], i, out / "run" / f"leaf{i:03d}")

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for it, r in zip(todo, pool.map(one, todo), strict=True):
            results[it[0]] = r
    lived = {p.name: (keys[i], *results[i]) for i, p in todo if not p.own}
    if live is not None or record:
        recorded.settle(book, lived, record, COMMAND)
    elif moved := recorded.moved_verdicts(book, lived):  # (the command reports it; the tests fail on it)
        print(f"not as recorded in {RECORD.name}: {moved}", file=sys.stderr)
    return [(p, results[i][0], predicted(files[i][0], files[i][1], i), results[i][1]) for i, p in picked]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--keep", type=Path, help="write the probes' stores here (kept)")
    ap.add_argument("--record", action="store_true", help=f"keep OpenClaw's verdicts in {RECORD.name}, which the tests hold inspector to")
    a = ap.parse_args()
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        tp.report(run(a.keep or Path(tmp), a.only, a.workers, record=a.record), t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
