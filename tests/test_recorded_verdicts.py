"""The recorded verdicts of a real runtime (tests/peers/recorded.py): a verdict is given only for
the very input it was recorded for, a live verdict that moved from the recorded one fails, and the
committed OpenClaw record covers every probe as the probes are written now."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.peers import recorded
from tests.peers.openclaw import leaf_probe, type_probe


def _store(path: Path, rows: list[tuple[int, str]], vacuum: bool = False) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (seq INTEGER PRIMARY KEY, body TEXT)")
    con.executemany("INSERT INTO t VALUES (?, ?)", rows)
    con.commit()
    if vacuum:
        con.execute("VACUUM")
    con.close()
    return path


def test_a_store_keys_by_its_rows_not_its_pages(tmp_path: Path) -> None:
    a = recorded.store_rows_key(_store(tmp_path / "a.sqlite", [(1, "x"), (2, "y")]))
    # The same rows inserted in another order, the file vacuumed: the same store to a reader.
    b = recorded.store_rows_key(_store(tmp_path / "b.sqlite", [(2, "y"), (1, "x")], vacuum=True))
    assert a == b
    assert recorded.store_rows_key(_store(tmp_path / "c.sqlite", [(1, "x"), (2, "z")])) != a
    # A damaged row's TEXT need not be UTF-8: keyed all the same, and apart from a clean one.
    bad = _store(tmp_path / "d.sqlite", [(1, "x")])
    con = sqlite3.connect(bad)
    con.execute("UPDATE t SET body = CAST(X'FF61' AS TEXT)")
    con.commit()
    con.close()
    assert recorded.store_rows_key(bad) not in (a, recorded.store_rows_key(_store(tmp_path / "e.sqlite", [(1, "x")])))
    assert recorded.key_of("ab", "c") != recorded.key_of("a", "bc")


def test_a_verdict_is_given_only_for_the_input_it_was_recorded_for(tmp_path: Path) -> None:
    book = recorded.Record(tmp_path / "r.json", "probes")
    book.put("p1", "k1", {"d": True}, "")
    book.put("p2", "k2", "refused", "exit 1")
    book.save()
    again = recorded.Record(tmp_path / "r.json", "probes")
    assert recorded.recorded_verdicts(again, {"p1": "k1", "p2": "k2"}, "cmd") == {"p1": ({"d": True}, ""), "p2": ("refused", "exit 1")}
    with pytest.raises(recorded.StaleRecord, match=r"\['p2', 'p3'\].*`cmd --only NAME"):
        recorded.recorded_verdicts(again, {"p1": "k1", "p2": "k2 changed", "p3": "k3"}, "cmd")
    # Another probe set in the same file is kept apart.
    other = recorded.Record(tmp_path / "r.json", "others")
    other.put("p1", "k1", "x", "")
    other.save()
    assert json.loads((tmp_path / "r.json").read_text())["probes"]["p1"]["verdict"] == {"d": True}


def test_a_live_verdict_must_still_be_the_recorded_one(tmp_path: Path) -> None:
    book = recorded.Record(tmp_path / "r.json", "probes")
    book.put("p1", "k1", "DCH 8", "")
    recorded.settle(book, {"p1": ("k1", "DCH 8", ""), "new": ("k9", "- 0", "")}, False, "cmd")  # (unrecorded: nothing to hold)
    with pytest.raises(recorded.StaleRecord, match="now -CH 6, recorded DCH 8"):
        recorded.settle(book, {"p1": ("k1", "-CH 6", "")}, False, "cmd")
    # Another input: the record says nothing of it.
    recorded.settle(book, {"p1": ("k2", "-CH 6", "")}, False, "cmd")
    # Recording keeps what the runtime said.
    recorded.settle(book, {"p1": ("k2", "-CH 6", "")}, True, "cmd")
    assert recorded.Record(tmp_path / "r.json", "probes").get("p1", "k2") == ("-CH 6", "")


def test_the_openclaw_record_covers_every_probe_as_written_now(tmp_path: Path) -> None:
    """Every probe's verdict is recorded for the store it writes today, with today's harness:
    a probe, its base or the harness changed without recording again fails here, naming the
    command, before the probe tests would."""
    for mod, name in ((type_probe, "type_probe"), (leaf_probe, "leaf_probe")):
        wanted = {}
        for i, p in enumerate(mod.PROBES):
            if getattr(p, "own", False):
                continue  # (OpenClaw writes it itself, fresh ids each time: resumed live, never recorded)
            f = mod.write_probe(type_probe.BASE, tmp_path / name / f"{i:03d}.sqlite", i, p)
            wanted[p.name] = type_probe.probe_key(f, type_probe.SESSION, type_probe.PROMPT.format(i=i))
        got = recorded.recorded_verdicts(recorded.Record(type_probe.RECORD, name), wanted, f"python -m tests.peers.openclaw.{name} --record")
        assert len(got) == len(wanted) >= 20
