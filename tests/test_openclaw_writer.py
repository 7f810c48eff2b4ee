"""OpenClaw's writer (issue 14): the rows a repair inserts into the real store OpenClaw 2026.9.6 wrote
(tests/peers/openclaw/corpus/s1.sqlite), judged by OpenClaw's own schema (its CHECKs, foreign keys)
and read back by our loader; the refusals; the unchanged-since-analysed state.

The writer's rows on their own are inserted here (`insert_checkpoint`, one transaction with foreign
keys on), so the schema judges exactly them; the write through the shared database write-back
(inspector/store/dbwrite.py: `repair --write`, `undo`) is tested below and in test_dbwrite.py.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import written_by_repair
from inspector.cli.main import main
from inspector.compaction.entries import WriteError, check_writable
from inspector.compaction.execute import RepairResult, repair
from inspector.compaction.plan import Budgets, plan
from inspector.formats import load, openclaw_writer, registry
from inspector.ledger.model import Ledger
from inspector.providers import make_provider

CORPUS = Path(__file__).parent / "peers" / "openclaw" / "corpus"
STORE = CORPUS / "s1.sqlite"
BUDGETS = ["--window", "32768", "--reserve", "4096"]  # the harness's model (generate.py)


def repaired(src: Path, dst: Path, strategy: str, keep_recent: int | None = None) -> tuple[Ledger, RepairResult]:
    """A copy of `src` and the repair (the offline extractive summarizer) planned on it."""
    shutil.copyfile(src, dst)
    led = load(str(dst))
    p = plan(analyze(led), strategy, Budgets(window=32768, reserve=4096, keep_recent=keep_recent))
    return led, repair(p, make_provider("extractive", model=None, base_url=None))


def insert_checkpoint(path: Path, led: Ledger, entry: dict[str, Any]) -> list[Any]:
    """The writer's rows inserted into the store in one transaction, after its state and refusal
    checks (what the shared write-back does)."""
    store = registry.get(led.format).writer.store  # type: ignore[union-attr]
    assert store is not None
    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute("PRAGMA foreign_keys=ON")
        con.execute("BEGIN IMMEDIATE")
        assert store.state(con, led) == led.store_state
        assert store.refusal(con, led) is None
        rows = store.rows(entry, None, led, con)  # type: ignore[arg-type]
        for row in rows:
            cols = list(row.values)
            con.execute(
                f"INSERT INTO {row.table}({', '.join(cols)}) VALUES({', '.join('?' * len(cols))})",
                [row.values[c] for c in cols],
            )
        con.execute("COMMIT")
    finally:
        con.close()
    return rows


def test_the_rows_pass_openclaws_schema_and_read_back_as_the_latest_checkpoint(tmp_path: Path) -> None:
    f = tmp_path / "s1.sqlite"
    led, res = repaired(STORE, f, "compact", 800)
    assert res.entry is not None and res.lines == [res.entry]
    last_seq = max(r.line for r in led.records)
    rows = insert_checkpoint(f, led, res.entry)
    assert [r.table for r in rows] == ["transcript_events", "transcript_event_identities"]
    ev = rows[0].values
    assert ev["seq"] == last_seq + 1 and ev["event_zstd"] is None and ev["navigation_json"] is None
    assert json.loads(ev["event_json"]) == res.entry and ev["event_utf8_bytes"] == len(ev["event_json"].encode())
    assert rows[1].values["event_id"] == res.entry["id"] and rows[1].values["parent_id"] == res.entry["parentId"]
    after = analyze(load(str(f)))
    # The index state still names the old leaf at the old indexed_seq: OpenClaw rebuilds such an
    # index before using it, so the leaf is the new entry (without the loader's rule it is not).
    assert after.ledger.records[after.ledger.leaf_seq].id == res.entry["id"]  # type: ignore[index]
    assert after.checkpoints[-1].record.id == res.entry["id"]
    assert after.context[0].kind == "summary" and res.summary is not None and res.summary in after.context[0].text
    assert not any(it.orphan for it in after.context)


def test_the_octet_length_shim_counts_bytes_as_sqlite_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenClaw's CHECKs call octet_length() (SQLite 3.43+); on an older SQLite the writer gives
    its connection this shim. It must count what SQLite counts (the UTF-8 bytes of a value's text,
    a blob's bytes: SQLite's own `length(CAST(x AS BLOB))` on any version), and with it in place,
    forced even where SQLite has its own, the rows pass the schema's CHECKs."""
    con = sqlite3.connect(":memory:")
    try:
        for v in ["", "x", "é", "日本語", "a\u0000b", 123, 2.5, b"\x00\xff", None]:
            (want,) = con.execute("SELECT length(CAST(? AS BLOB))", (v,)).fetchone()
            assert openclaw_writer._octet_length(v) == want, v
    finally:
        con.close()
    f = tmp_path / "s1.sqlite"
    led, res = repaired(STORE, f, "recover")
    assert res.entry is not None
    monkeypatch.setattr(
        openclaw_writer,
        "provide_octet_length",
        lambda con: con.create_function("octet_length", 1, openclaw_writer._octet_length, deterministic=True),
    )
    insert_checkpoint(f, led, res.entry)
    assert analyze(load(str(f))).checkpoints[-1].record.id == res.entry["id"]


def test_the_state_changes_with_any_row_of_the_session(tmp_path: Path) -> None:
    f = tmp_path / "s1.sqlite"
    shutil.copyfile(STORE, f)
    led = load(str(f))
    assert led.store_state is not None and led.store_state.startswith("36:")
    con = sqlite3.connect(f)
    try:
        store = openclaw_writer.STORE
        assert store.state(con, led) == led.store_state
        openclaw_writer.provide_octet_length(con)
        con.execute("UPDATE transcript_events SET event_json=replace(event_json, 'FILE-42', 'FILE-43') "
                    "WHERE seq=(SELECT min(seq) FROM transcript_events WHERE event_json LIKE '%FILE-42%')")
        assert con.total_changes == 1
        assert store.state(con, led) != led.store_state
    finally:
        con.close()


def _refusal(f: Path, sql: str) -> str | None:
    led = load(str(f))
    con = sqlite3.connect(f)
    try:
        openclaw_writer.provide_octet_length(con)
        con.execute(sql)
        con.commit()
        return openclaw_writer.store_refusal(con, led)
    finally:
        con.close()


def test_refused_an_unknown_schema_a_missing_window_and_a_cold_session(tmp_path: Path) -> None:
    f = tmp_path / "s1.sqlite"
    shutil.copyfile(STORE, f)
    assert _refusal(f, "SELECT 1") is None
    why = _refusal(f, "UPDATE schema_meta SET schema_version=24")
    assert why is not None and "schema version 24" in why and "version 23" in why
    shutil.copyfile(STORE, f)
    why = _refusal(f, "DELETE FROM session_windows")
    assert why is not None and "no session_windows row" in why
    shutil.copyfile(STORE, f)
    why = _refusal(
        f,
        "INSERT INTO session_transcript_cold_archives(session_id, generation, archive_name, archive_sha256, event_count, "
        "raw_bytes, archive_bytes, last_seq, archived_at, storage) VALUES('s1', 'g', 'a.zst', '" + "0" * 64 + "', 1, 1, 1, 35, 0, 'file')",
    )
    assert why is not None and "cold storage" in why


def test_plan_shows_the_coverage_after_and_write_then_undo_restore_the_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the shared database write-back (inspector/store/dbwrite.py): one transaction adds
    our rows, the store re-reads with our entry as its latest checkpoint, `undo` takes exactly
    those rows out again."""
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    f = tmp_path / "s1.sqlite"
    shutil.copyfile(STORE, f)
    state = load(str(f)).store_state

    def count() -> int:
        con = sqlite3.connect(f)
        try:
            return con.execute("SELECT count(*) FROM transcript_events").fetchone()[0]
        finally:
            con.close()

    n = count()
    assert main(["plan", str(f), "--strategy", "compact", "--keep-recent", "800", *BUDGETS, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["action"] != "noop" and doc["after"] is not None and doc["after"]["holes"] == 0
    assert main(["repair", str(f), "--strategy", "recover", *BUDGETS, "--write"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert count() == n + 1
    led = load(str(f))
    assert led.store_state != state and written_by_repair(analyze(led).checkpoints[-1].record.checkpoint)
    assert main(["undo", str(f)]) == 0
    assert count() == n and load(str(f)).store_state == state


@pytest.mark.parametrize(
    ("fmt", "why"),
    [
        ("nextclaw", "metadata.checkpoint is version 1"),
        ("maka", "history_compact_checkpoint_recorded"),
    ],
)
def test_read_only_runtimes_refuse_saying_what_they_would_read_and_why_not_proven(fmt: str, why: str) -> None:
    name = registry.get(fmt).name
    led = Ledger(path="x", format=name, session_id="s", header=None, records=[])
    with pytest.raises(WriteError) as e:
        check_writable(led)
    assert why in str(e.value) and "here" in str(e.value) and "plan" in str(e.value)


def test_a_sequence_at_sqlites_largest_integer_refuses_the_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by `python -m tests.fuzz_write` (seed 11, cases 479 and 2021: a damaged row's seq at
    2**63 - 1): the next seq is past SQLite's integers and binding it crashed the write
    (OverflowError). The store cannot take the row: refused, nothing written, no backup kept."""
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    f = tmp_path / "s1.sqlite"
    shutil.copyfile(STORE, f)
    con = sqlite3.connect(f)
    con.execute("UPDATE transcript_events SET seq=9223372036854775807 WHERE seq=(SELECT max(seq) FROM transcript_events)")
    con.commit()
    con.close()
    before = f.read_bytes()
    capsys.readouterr()
    assert main(["repair", str(f), "--strategy", "recover", *BUDGETS, "--write"]) == 2
    err = capsys.readouterr().err
    assert "the store refused the rows (Python int too large to convert to SQLite INTEGER); nothing written" in err, err
    assert f.read_bytes() == before
    assert [p for p in (tmp_path / "data").rglob("*") if p.is_file()] == []


def test_after_a_leaf_row_the_checkpoint_hangs_under_the_trees_leaf(tmp_path: Path) -> None:
    """A session whose user switched branch (a leaf row naming turn t7's answer, OpenClaw's
    navigation): the compaction goes under that leaf, and reads back as the leaf, turn t8 (off the
    path) left out, as OpenClaw's tree scan reads it (openclaw_model.Scan)."""
    from tests.peers.openclaw import leaf_probe

    i, p = next((i, p) for i, p in enumerate(leaf_probe.PROBES) if p.name == "switch to an earlier entry")
    src = leaf_probe.write_probe(STORE, tmp_path / "probe.sqlite", i, p)
    f = tmp_path / "s1.sqlite"
    led, res = repaired(src, f, "compact", 800)
    assert res.entry is not None and res.entry["parentId"] == leaf_probe.IDS["T7A"]
    insert_checkpoint(f, led, res.entry)
    after = load(str(f))
    assert after.leaf_seq is not None and after.records[after.leaf_seq].id == res.entry["id"]
    texts = "\n".join(str(r.message.text()) for r in after.records if r.message is not None and r.seq in set(analyze(after).path))
    assert "[turn:t8]" not in texts


@pytest.mark.parametrize("value", [5, 2.5, "zstd?"])
def test_a_compressed_column_of_another_type_is_digested_not_a_crash(value: Any, tmp_path: Path) -> None:
    """Found by `python -m tests.fuzz_write` (seed 253, openclaw_db): a damaged row whose
    `event_zstd` holds a number or text (SQLite keeps any type) made the digest the app's and the
    writer's loads take (`hash_row`) raise a TypeError, so the app could not open the store. Now it
    is taken with its type named: the load's digest is the writer's, and a BLOB of the same bytes
    digests apart from it."""
    f = tmp_path / "s1.sqlite"
    shutil.copyfile(STORE, f)
    with sqlite3.connect(f) as con:  # (the table made lenient: a damaged page can hold such a value in a STRICT one)
        con.execute("PRAGMA writable_schema = ON")
        con.execute("UPDATE sqlite_master SET sql = rtrim(rtrim(sql), 'STRICT') WHERE name = 'transcript_events'")
    con.close()
    con = sqlite3.connect(f)
    try:
        con.execute("PRAGMA ignore_check_constraints = ON")
        seq = con.execute("SELECT max(seq) FROM transcript_events").fetchone()[0]
        con.execute("UPDATE transcript_events SET event_zstd=? WHERE seq=?", (value, seq))
        con.commit()
        led = load(str(f))  # (with its rows' digest, as the app and a write load a store)
        assert led.store_state is not None
        assert openclaw_writer.STORE.state(con, led) == led.store_state
        con.execute("UPDATE transcript_events SET event_zstd=? WHERE seq=?", (str(value).encode(), seq))
        con.commit()
        assert openclaw_writer.STORE.state(con, led) != led.store_state
    finally:
        con.close()
