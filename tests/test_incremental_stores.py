"""Following a database store from its last row (issue 17.1, the stores).

THE test: for seeded random cuts of every ADK SQLite store we have (SqliteSessionService,
DatabaseSessionService v1, the legacy v0 schema), the rows after the cut are inserted again in
random batches, as the runtime's own rows (every column, its rowid), and after every batch the
followed report equals a full analysis of the grown store, byte for byte (analyze_json and
context_json). Rows changed or deleted before the last seen one reload in full, with the reason.
"""

from __future__ import annotations

import glob
import os
import random
import shutil
import sqlite3
from typing import Any

import orjson
import pytest

from inspector.analysis import analyze
from inspector.analysis import incremental as incr
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import load
from inspector.live.incremental import GROWN, Follower

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED = os.path.join(os.path.dirname(REPO), "shared")
ADK_STORES = sorted(
    [*glob.glob(os.path.join(SHARED, "peers", "adk", "corpus", "*.db")), os.path.join(HERE, "data", "adk", "token_threshold.v0.db")]
)


def as_json(rep: Any) -> bytes:
    rep.ensure_tokens()
    return orjson.dumps([analyze_json(rep), context_json(rep)], option=orjson.OPT_SORT_KEYS)


def full_json(path: str) -> bytes:
    return as_json(analyze(load(path)))


def event_rows(path: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    con = sqlite3.connect(path)
    cur = con.execute("SELECT rowid, * FROM events ORDER BY rowid")
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    con.close()
    return cols, rows


def insert_rows(path: str, cols: list[str], rows: list[tuple[Any, ...]]) -> None:
    """The runtime's own rows, as its session service writes them: the event rows, then the
    session's update_time set to the last one's timestamp."""
    con = sqlite3.connect(path)
    names = ", ".join(["rowid", *cols[1:]])
    marks = ", ".join("?" * len(cols))
    con.executemany(f"INSERT INTO events ({names}) VALUES ({marks})", rows)
    ts = rows[-1][cols.index("timestamp")]
    at = dict(zip(cols, rows[-1], strict=True))
    con.execute(
        "UPDATE sessions SET update_time=? WHERE app_name=? AND user_id=? AND id=?",
        (ts, at["app_name"], at["user_id"], at["session_id"]),
    )
    con.commit()
    con.close()


def cut_copy(src: str, tmp: str, keep: int) -> tuple[str, list[str], list[tuple[Any, ...]]]:
    """A copy of `src` holding its first `keep` event rows (by rowid); the rest returned."""
    path = os.path.join(tmp, os.path.basename(src))
    shutil.copyfile(src, path)
    cols, rows = event_rows(path)
    con = sqlite3.connect(path)
    con.execute("DELETE FROM events WHERE rowid > ?", (rows[keep - 1][0],))
    con.commit()
    con.close()
    return path, cols, rows[keep:]


def grow_and_compare(src: str, tmp: str, rng: random.Random) -> tuple[int, int]:
    _, rows = event_rows(src)
    keep = rng.randrange(1, len(rows))
    path, cols, rest = cut_copy(src, tmp, keep)
    fol = Follower(path)
    fol.poll()
    assert as_json(fol.report) == full_json(path)
    batches = grown = 0
    while rest:
        n = rng.choice((1, 1, 1, 2, 3, 7))
        insert_rows(path, cols, rest[:n])
        rest = rest[n:]
        up = fol.poll()
        assert up is not None, f"{src}: {len(rest)} rows left: the insert was not seen"
        batches += 1
        grown += up.whole == GROWN
        assert as_json(fol.report) == full_json(path), f"{src}: {len(rest)} rows left"
    return batches, grown


@pytest.mark.parametrize("src", ADK_STORES, ids=os.path.basename)
def test_followed_adk_store_equals_full_analysis(src: str, tmp_path, monkeypatch) -> None:
    analyses = []
    real = incr.analyze
    monkeypatch.setattr(incr, "analyze", lambda *a, **k: analyses.append(1) or real(*a, **k))
    extended = 0
    total = grown = 0
    for seed in range(4):
        d = tmp_path / str(seed)
        d.mkdir()
        before = len(analyses)
        b, g = grow_and_compare(src, str(d), random.Random(f"{seed}:{os.path.basename(src)}"))
        total, grown = total + b, grown + g
        extended += g - (len(analyses) - before)
    assert grown > 0, "every growth was read in full"
    assert extended > 0, "every growth was analysed in full"
