"""`inspector search`, `usage` and `export` (issue 18 points 3, 4, 5)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from inspector.analysis.sessions import SearchDocument
from inspector.analysis.usage import (
    PriceTable,
    PriceTableError,
    UsageItem,
    group_usage,
    load_prices,
    model_key,
    parse_price_table,
)
from inspector.cli.main import main
from inspector.ledger.model import Usage
from inspector.store.index import SessionIndex, file_identity, match_expression
from tests.conftest import SAMPLES, SHARED, need_shared
from tests.test_scan import tree


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))


# ------------------------------------------------------------------------------------ search


def test_search_names_session_line_and_role(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tree(tmp_path)
    assert main(["search", "bash", str(root), "--json", "--no-progress"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and all(h["kind"] in ("text", "tool", "summary") for h in hits)
    tool = next(h for h in hits if h["kind"] == "tool")
    assert tool["role"] == "assistant" and tool["path"].endswith(".jsonl")
    line = Path(tool["path"]).read_text().splitlines()[tool["line"] - 1]
    assert '"bash"' in line.lower() or "bash" in line  # the hit's line is where the call was written
    a, b = tool["marks"][0]
    assert tool["snippet"][a:b].lower() == "bash"


def test_search_finds_summaries_and_says_when_nothing_matches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tree(tmp_path)
    with SessionIndex() as index:
        from inspector.store.scan import Scanner

        list(Scanner(index, workers=1).rows([str(root)]))
        hits = index.search(match_expression("goal"), None)
    assert main(["search", "zzqxnotaword", str(root), "--no-progress"]) == 1
    assert main(["search", "NEAR(", str(root), "--fts", "--no-progress"]) == 2  # a malformed FTS5 query
    assert "FTS5" in capsys.readouterr().err
    amnesia_summary = [h for h in hits if h.kind == "summary" and h.path.endswith("adr0302_amnesiac_fallback.jsonl")]
    assert amnesia_summary and {h.role for h in amnesia_summary} == {"checkpoint"}
    assert {h.line for h in amnesia_summary} <= {37, 113, 229}  # the checkpoints' lines


def test_plain_words_are_literal_in_fts5() -> None:
    assert match_expression('rate-limit "x" compa*') == '"rate-limit" """x""" "compa"*'


def test_a_reindexed_session_leaves_no_stale_documents(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    shutil.copy(SAMPLES / "pi" / "healthy_chained.jsonl", f)
    from inspector.analysis.sessions import ScanRow

    with SessionIndex() as index:
        ident = file_identity(str(f))
        index.store(ident, ScanRow(path=str(f)), docs=[SearchDocument(1, "user", "text", "alpha beta")])
        index.store(ident, ScanRow(path=str(f)), docs=[SearchDocument(2, "user", "text", "gamma")])
        assert index.search('"alpha"') == []
        assert [h.line for h in index.search('"gamma"')] == [2]


# ------------------------------------------------------------------------------------ usage


def item(session: str, model: str | None, usage: Usage, parent: str | None = None, day: str = "2026-01-01",
         project: str | None = "/p") -> UsageItem:
    return UsageItem(session, parent, project, day, model, usage, 1)


def test_cost_from_the_table_unknown_never_zero() -> None:
    table = PriceTable.model_validate({
        "source": "test", "date": "2026-01-01",
        "models": {"m": {"input": 1.0, "output": 10.0, "cache_read": 0.1, "cache_write": 2.0}},
    })
    groups = group_usage([
        item("a", "m", Usage(1_000_000, 100_000, 2_000_000, 500_000)),
        item("b", "mystery", Usage(10, 10)),
    ], "session", table)
    a, b = sorted(groups, key=lambda g: g.key)
    assert a.cost == pytest.approx(1.0 + 1.0 + 0.2 + 1.0)
    assert b.cost is None and b.unpriced_models == {"mystery"}
    both = group_usage([item("a", "m", Usage(1_000_000)), item("b", "mystery", Usage(10))], "project", table)
    assert both[0].cost is None and both[0].cost_known == pytest.approx(1.0)  # partly unknown is unknown


def test_subagents_roll_up_into_their_parent() -> None:
    table = load_prices(None)
    groups = group_usage([
        item("/p/s.jsonl", "claude-sonnet-4-5", Usage(100, 10)),
        item("/p/s/subagents/agent-1.jsonl", "claude-sonnet-4-5-20250929", Usage(50, 5), parent="/p/s.jsonl",
             project="/elsewhere"),
    ], "session", table)
    assert len(groups) == 1
    g = groups[0]
    assert g.key == "/p/s.jsonl" and g.usage == Usage(150, 15) and g.subagents == {"/p/s/subagents/agent-1.jsonl"}
    assert g.cost is not None  # the dated name is the same model
    by_project = group_usage([
        item("/p/s.jsonl", "x", Usage(1)),
        item("/p/s/subagents/agent-1.jsonl", "x", Usage(1), parent="/p/s.jsonl", project="/elsewhere"),
    ], "project", table)
    assert [g.key for g in by_project] == ["/p"]


def test_model_names_normalize() -> None:
    assert model_key("anthropic/Claude-Sonnet-4-5-20250929") == "claude-sonnet-4-5"
    assert model_key("claude-opus-4-5@20251101") == "claude-opus-4-5"


def test_the_shipped_price_table_names_its_source_and_date() -> None:
    t = load_prices(None)
    assert t.source and t.date and "claude-sonnet-4-5" in t.models
    # every figure says where it was read (issue 18 point 4: the table was typed in from memory)
    assert all(p.source for p in t.models.values()), [m for m, p in t.models.items() if not p.source]
    # the models Claude Code records in the real sessions are priced
    assert {"claude-opus-4-6", "claude-haiku-4-5"} <= set(t.lookup())


def test_a_bad_price_table_is_refused_with_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "prices.json"
    bad.write_text('{"source": "x", "date": "2026-01-01", "models": {"m": {"input": -1, "output": 1, "cache_read": 0, "cache_write": 0}}}')
    with pytest.raises(PriceTableError, match=r"prices.json: models.m.input"):
        parse_price_table(bad.read_bytes(), str(bad))
    assert main(["usage", str(SAMPLES / "pi"), "--prices", str(bad), "--no-progress"]) == 2
    assert "models.m.input" in capsys.readouterr().err


def test_usage_command_rolls_up_a_claude_code_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tree(tmp_path)
    session = root / "claude" / "proj" / "sess.jsonl"
    assert main(["usage", str(session), "--json", "--no-progress"]) == 0  # the file alone brings its sub-agents
    doc = json.loads(capsys.readouterr().out)
    (g,) = doc["groups"]
    assert g["key"] == str(session) and g["subagents"] == 1
    assert g["subagent_usage"]["cache_read"] == 167_093  # the compaction sub-agent's recorded usage
    assert g["cost"] is not None and g["unpriced_models"] == []  # claude-opus-4-6 is in the shipped table
    assert doc["prices"]["date"]
    other = tmp_path / "other-prices.json"
    other.write_text('{"source": "x", "date": "2026-01-01", "models": {"m": {"input": 1, "output": 1, "cache_read": 0, "cache_write": 0}}}')
    assert main(["usage", str(session), "--json", "--no-progress", "--prices", str(other)]) == 0
    (g,) = json.loads(capsys.readouterr().out)["groups"]
    assert g["cost"] is None and g["unpriced_models"] == ["claude-opus-4-6"]  # not in that table: unknown, never 0
    assert main(["usage", str(root), "--by", "day", "--since", "2026-02-11", "--json", "--no-progress"]) == 0
    days = [g["key"] for g in json.loads(capsys.readouterr().out)["groups"]]
    assert days and all(d >= "2026-02-11" for d in days)


def test_usage_of_the_real_sessions_prices_what_it_knows(capsys: pytest.CaptureFixture[str]) -> None:
    pi = need_shared(SHARED / "real_sessions" / "pi")
    assert main(["usage", str(pi), "--by", "model", "--json", "--no-progress"]) == 0
    groups = {g["key"]: g for g in json.loads(capsys.readouterr().out)["groups"]}
    assert groups["claude-opus-4-5"]["cost"] > 0 and groups["claude-sonnet-4-5"]["cost"] > 0



def test_a_table_printed_into_a_pipe_keeps_its_names(tmp_path: Path) -> None:
    """Into a pipe or a file (no terminal width), `usage` and `scan` tables are wide enough for
    their names: rich's 80 columns cut every model and session name to a character or two."""
    import os
    import sys

    pi = need_shared(SHARED / "real_sessions" / "pi")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | {"XDG_CACHE_HOME": str(tmp_path)}
    for argv in (["usage", str(pi), "--by", "model", "--no-progress"], ["scan", str(pi), "--no-progress"]):
        out = subprocess.run([sys.executable, "-m", "inspector", *argv], capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode in (0, 1), out.stderr
        if argv[0] == "usage":
            assert "claude-opus-4-5" in out.stdout and "claude-sonnet-4-5" in out.stdout, out.stdout
        else:
            assert any(p.name[:24] in out.stdout for p in pi.glob("*.jsonl")), out.stdout


# ------------------------------------------------------------------------------------ export

AMNESIA = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"
SENTENCE = "168 messages (3 user / 34 assistant / 131 tool) fell into holes"


def test_markdown_and_html_hold_the_report(tmp_path: Path) -> None:
    md, page = tmp_path / "r.md", tmp_path / "r.html"
    assert main(["export", str(AMNESIA), "--markdown", str(md)]) == 0
    assert main(["export", str(AMNESIA), "--html", str(page)]) == 0
    for text in (md.read_text(), page.read_text()):
        assert SENTENCE in text and "inspector 0." in text and "amnesiac_fallback" in text
        assert "fallback: carried the previous summary forward" in text  # the checkpoints' status
    html = page.read_text()
    assert "<svg" in html and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "<script" not in html and "<link" not in html  # nothing to fetch


def test_redact_drops_text_keeps_structure(tmp_path: Path) -> None:
    full, red = tmp_path / "full.md", tmp_path / "red.md"
    assert main(["export", str(AMNESIA), "--markdown", str(full)]) == 0
    assert main(["export", str(AMNESIA), "--markdown", str(red), "--redact"]) == 0
    from inspector.formats import load

    led = load(str(AMNESIA))
    texts = [r.message.text() for r in led.records if r.message is not None and len(r.message.text()) > 30]
    snippets = [" ".join(t.split())[:40] for t in texts]
    assert any(s in " ".join(full.read_text().split()) for s in snippets)
    redacted = " ".join(red.read_text().split())
    assert not any(s in redacted for s in snippets)
    assert SENTENCE in redacted and "adr0302" not in redacted and "[redacted]" in redacted


def test_export_of_an_unreadable_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(tmp_path / "nope.jsonl"), "--html", str(tmp_path / "r.html")]) == 2
    assert "nope.jsonl" in capsys.readouterr().err


def _chromium() -> str | None:
    for name in ("/usr/bin/chromium", "/usr/bin/chromium-browser", shutil.which("chromium") or ""):
        if name and Path(name).exists():
            return name
    return None


def test_the_html_renders_in_headless_chromium(tmp_path: Path) -> None:
    browser = _chromium()
    if browser is None:
        pytest.fail("chromium is not installed, so the report's rendering cannot be checked (apt-get install -y chromium; .ci/run installs it)", pytrace=False)
    page = tmp_path / "r.html"
    assert main(["export", str(AMNESIA), "--html", str(page)]) == 0
    with tempfile.TemporaryDirectory() as profile:
        got = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--no-first-run", f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=120,
        )
    dom = got.stdout
    assert got.returncode == 0, got.stderr[-2000:]
    assert 'id="header-sentence"' in dom and SENTENCE in dom
    assert '<svg' in dom and 'id="coverage-band"' in dom and "<rect" in dom


def test_export_refuses_a_destination_it_must_not_replace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A report is written as every file inspector makes: never through a link, into a pipe or over
    a device (the rename would replace them; a pipe with no reader would block), refused before
    the analysis runs; `-` is stdout."""
    import os

    pipe, link, real = tmp_path / "pipe", tmp_path / "link.md", tmp_path / "real.md"
    os.mkfifo(pipe)
    real.write_text("mine\n")
    link.symlink_to(real)
    for target, why in ((pipe, "is a named pipe, not a regular file"), (link, "is a symbolic link to"), (Path("/dev/null"), "is a character device")):
        assert main(["export", str(AMNESIA), "--markdown", str(target)]) == 2
        assert why in capsys.readouterr().err
    assert pipe.is_fifo() and link.is_symlink() and real.read_text() == "mine\n"
    assert main(["export", str(AMNESIA), "--markdown", "-"]) == 0
    assert SENTENCE in capsys.readouterr().out


def test_a_report_gets_the_mode_a_new_file_gets(tmp_path: Path) -> None:
    """Not a backup's private 0600: the umask's mode for a new report, the old one's when replaced."""
    import os
    import stat

    new, old = tmp_path / "new.md", tmp_path / "old.md"
    old.write_text("x")
    old.chmod(0o640)
    umask = os.umask(0o022)
    try:
        assert main(["export", str(AMNESIA), "--markdown", str(new)]) == 0
        assert main(["export", str(AMNESIA), "--markdown", str(old)]) == 0
    finally:
        os.umask(umask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o644 and stat.S_IMODE(old.stat().st_mode) == 0o640
    assert SENTENCE in old.read_text()


@pytest.mark.parametrize("kind", ["file", "store"])
def test_a_repaired_copy_is_as_private_as_the_session(kind: str, tmp_path: Path) -> None:
    import os
    import shutil
    import stat

    from tests.conftest import SHARED

    src = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl" if kind == "file" else SHARED / "peers" / "adk" / "corpus" / "token_threshold.db"
    session = tmp_path / src.name
    shutil.copyfile(src, session)
    args = ["--strategy", "compact", "--keep-recent", "400", "--window", "8000", "--reserve", "1000"]
    for mode in (0o600, 0o640):
        session.chmod(mode)
        out = tmp_path / f"copy-{mode:o}{src.suffix}"
        umask = os.umask(0o022)
        try:
            assert main(["repair", str(session), *args, "--out", str(out)]) == 0
        finally:
            os.umask(umask)
        assert stat.S_IMODE(out.stat().st_mode) == mode


def test_a_read_only_store_is_copied_read_only_and_written_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only store (0444) is what `--out` is for: its copy is as private as it, read-only too,
    but takes that mode only once its rows are in: SQLite opens the copy to insert them, which a
    user who is not root cannot do in a read-only file (root can: so the open is watched here)."""
    import shutil
    import sqlite3
    import stat

    from inspector.store import dbwrite
    from tests.conftest import SHARED

    session = tmp_path / "s.db"
    shutil.copyfile(SHARED / "peers" / "adk" / "corpus" / "token_threshold.db", session)
    session.chmod(0o444)
    out = tmp_path / "copy.db"
    opened: list[int] = []
    real_connect = sqlite3.connect

    def connect(target: object, *a: object, **k: object) -> sqlite3.Connection:
        copy = Path(str(target))
        if str(copy).startswith(str(out)) and copy.exists():  # (the copy being written, under its temporary name)
            opened.append(stat.S_IMODE(copy.stat().st_mode))
        return real_connect(target, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(dbwrite.sqlite3, "connect", connect)
    args = ["--strategy", "compact", "--keep-recent", "400", "--window", "8000", "--reserve", "1000"]
    assert main(["repair", str(session), *args, "--out", str(out)]) == 0
    assert opened and all(m & stat.S_IWUSR for m in opened), [oct(m) for m in opened]
    assert stat.S_IMODE(out.stat().st_mode) == 0o444
