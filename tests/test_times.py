"""Record times as a person reads them (issue 12 point 13): ADK writes epoch floats, the other
formats ISO strings; the app and the CLI's human report show ISO-8601 for all of them, while
`--json` keeps what its contract documents (the numbers, as the file has them)."""

from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console
from textual.widgets import Static

from inspector.cli.main import main
from inspector.ledger.times import epoch_seconds, iso_time
from inspector.tui.app import create_app
from inspector.tui.detail import DetailPane
from tests.conftest import SHARED, need_shared

TIE = SHARED / "peers" / "adk" / "corpus" / "tie_token.json"
EPOCH = re.compile(r"\b1[0-9]{9}\.[0-9]+\b")  # a raw epoch float, as ADK stores it


def test_iso_time_reads_every_way_a_format_writes_a_time() -> None:
    assert iso_time(1767225690.875) == "2026-01-01T00:01:30.875Z"  # ADK: epoch seconds
    assert iso_time(1767225690875) == "2026-01-01T00:01:30.875Z"  # epoch milliseconds
    assert iso_time("2026-09-14T08:02:11.417Z") == "2026-09-14T08:02:11.417Z"  # as written
    assert iso_time(None) == ""
    assert epoch_seconds("2026-01-01T00:01:30.875Z") == 1767225690.875
    assert epoch_seconds("2026-01-01T00:01:30.875") == 1767225690.875  # naive: UTC
    assert epoch_seconds(True) is None and epoch_seconds("yesterday") is None


def test_the_human_report_shows_adk_times_as_iso_and_json_keeps_the_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    need_shared(TIE)
    assert main(["analyze", str(TIE)]) == 0
    out = capsys.readouterr().out
    assert "2026-01-01T00:00:30.125Z" in out and "2026-01-01T00:01:30.875Z" in out  # the hole's range
    assert not EPOCH.search(out)
    assert main(["analyze", str(TIE), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    adk = doc["checkpoints"][0]["adk"]
    assert adk["start_timestamp"] == 1767225630.125 and adk["end_timestamp"] == 1767225690.875


@pytest.mark.anyio
async def test_the_detail_pane_shows_adk_times_as_iso() -> None:
    need_shared(TIE)
    app = create_app([str(TIE)], show_timings=False)
    async with app.run_test(size=(140, 40)) as pilot:
        for _ in range(400):
            await pilot.pause(0.025)
            pane = app.screen.query(DetailPane)
            if getattr(app.screen, "report", None) is not None and pane and pane.first().seq is not None:
                break
        await pilot.pause(0.3)
        console = Console(width=200, record=True, file=io.StringIO())
        for part in app.screen.query_one(DetailPane).query(Static):
            console.print(part.content)
        shown = console.export_text()
        assert re.search(r"time\s+2026-01-01T00:0\d:\d\d\.\d{3}Z", shown), shown
        assert not EPOCH.search(shown)


def test_a_time_that_is_a_deeply_nested_value_is_shown_shortened() -> None:
    """A damaged line's time can be a list nested 100,000 deep (the detail pane showed it by
    `str`, which hit the recursion limit: `python -m tests.fuzz --seed 912`, a Codex rollout):
    it is quoted, shortened."""
    v: list[object] = []
    for _ in range(100_000):
        v = [v]
    assert iso_time(v) == "[[[[...]]]]"
    assert iso_time({"at": 5}) == "{'at': 5}"
