"""An OpenClaw agent database from before its SQLite transcripts is refused as what it is.

Real `openclaw-agent.sqlite` files committed to public repositories (94yifan/maclaw-skills, nine
agents; davidklan-png/bountymon) hold `schema_meta` (role 'agent', schema_version 1), auth profiles and
the memory index, and no transcript table: that OpenClaw kept each session as a JSONL file under
`agents/<agent>/sessions/`. inspector called them "not an ADK session store"; it now says where the
sessions are. (OpenClaw 2026.9.6 itself imports those JSONL files only in `openclaw doctor --fix`.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from inspector.formats import LoadError, load


def _agent_db(path: Path, version: int = 1, app: str | None = None) -> Path:
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE schema_meta (meta_key TEXT NOT NULL PRIMARY KEY, role TEXT NOT NULL, schema_version INTEGER NOT NULL,"
        " agent_id TEXT, app_version TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
        "CREATE TABLE auth_profile_store (store_key TEXT NOT NULL PRIMARY KEY, store_json TEXT NOT NULL, updated_at INTEGER NOT NULL);"
        "CREATE TABLE memory_index_state (id INTEGER PRIMARY KEY CHECK (id = 1), revision INTEGER NOT NULL);"
    )
    con.execute("INSERT INTO schema_meta VALUES ('primary', 'agent', ?, 'main', ?, 1781128914482, 1782443192897)", (version, app))
    con.commit()
    con.close()
    return path


def test_an_agent_database_without_transcripts_points_at_the_jsonl_files(tmp_path: Path) -> None:
    path = _agent_db(tmp_path / "openclaw-agent.sqlite")
    with pytest.raises(LoadError) as e:
        load(str(path))
    msg = str(e.value)
    assert "an OpenClaw agent database (schema 1) without transcripts" in msg and "sessions/<session id>.jsonl" in msg
    assert "ADK" not in msg


def test_another_database_with_a_schema_meta_is_not_taken_for_one(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE schema_meta (meta_key TEXT, role TEXT, schema_version INTEGER, app_version TEXT);"
                      "INSERT INTO schema_meta VALUES ('primary', 'gateway', 3, NULL);")  # fmt: skip
    con.close()
    with pytest.raises(LoadError) as e:
        load(str(path))
    assert "OpenClaw agent database" not in str(e.value)
