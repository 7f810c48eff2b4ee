"""benchmarks.first_paint's bound of point 3 (issue 15): Textual's own cost, beside the app's CPU
beyond the CLI's."""

from __future__ import annotations

import time
from typing import Any

from benchmarks import first_paint


def _result(app_cpu: float, cli_cpu: float, textual: float | None) -> dict[str, Any]:
    keys = ("first_paint", "landed", "rss", "scrolling", "header", "app_wall_le_cli", "app_cpu_le_cli")
    return {
        "file": "f.jsonl", "file_bytes": 10**6, "repeat": 1, "read_bytes_seconds": 0.01, "first_paint_seconds": 0.1,
        "analysed_seconds": 1.0, "header_ready_seconds": 1.0, "scroll_key_seconds_max": None,
        "scroll_key_seconds_median": None, "app_peak_rss_bytes": 1e8, "app_rss_at_landing_bytes": 1e8,
        "app_analysed_from_start_seconds": 1.0, "app_analysed_cpu_seconds": app_cpu, "cli_analyze_seconds": 1.0,
        "cli_analyze_cpu_seconds": cli_cpu, "cli_peak_rss_bytes": 1e8, "textual_one_widget_cpu_seconds": textual,
        "targets": {"first_paint_s": 1.0, "landed_s": 10.0, "rss_bytes": 1.5e9, "scroll_key_s": 0.1, "header_slack": 0.05},
        "pass": dict.fromkeys(keys, True), "errors": [],
    }  # fmt: skip


def _bound_line(r: dict[str, Any]) -> list[str]:
    return [line for line in first_paint.render(r) if "Textual's own" in line]


def test_the_apps_cpu_beyond_the_clis_is_set_beside_textuals_own_cost() -> None:
    assert _bound_line(_result(1.88, 1.51, 0.40)) == [
        "  the app's CPU beyond the CLI's +0.37 s; Textual's own (a one-widget app to its first paint, start included) 0.40 s: within it"
    ]
    assert _bound_line(_result(1.88, 1.51, 0.30))[0].endswith("0.30 s: beyond it")
    assert _bound_line(_result(3.60, 3.74, 0.30))[0].endswith("-0.14 s; Textual's own (a one-widget app to its first paint, start included) 0.30 s: within it")
    assert _bound_line(_result(1.88, 1.51, None)) == []  # (the worker failed: no figure, no verdict)


def test_textuals_own_cost_is_measured_to_a_painted_screen() -> None:
    cpu0 = time.process_time()
    r = first_paint._textual_floor(time.time(), 30.0)
    assert r["cpu"] is not None and cpu0 < r["cpu"] <= time.process_time()


def test_the_cores_each_kept_busy_are_set_beside_the_apps_wall_beyond_the_clis() -> None:
    r = _result(3.06, 2.61, 0.24)
    r["app_analysed_from_start_seconds"], r["cli_analyze_seconds"] = 2.03, 1.87
    line = [x for x in first_paint.render(r) if "cores busy" in x]
    assert line == [f"  cores busy on average, CPU over wall: app 1.51, CLI 1.40 of {first_paint.os.cpu_count()}; the app's wall beyond the CLI's +0.16 s"]
    r["app_analysed_from_start_seconds"] = None  # (the app never landed: no figure)
    assert not [x for x in first_paint.render(r) if "cores busy" in x]


def test_a_key_that_cannot_move_the_cursor_is_not_waited_for() -> None:
    """On a session shorter than the keys scroll (the cursor at its end or start), a key that
    cannot move the cursor is left out: waiting for its move timed out at 10 s, a false miss."""
    assert [k for k in ("pagedown", "end", "down", "pageup", "home", "up") if first_paint._moves(k, 199, 200)] == [
        "pageup", "home", "up"
    ]
    assert [k for k in ("pagedown", "end", "down", "pageup", "home", "up") if first_paint._moves(k, 0, 200)] == [
        "pagedown", "end", "down"
    ]
    assert not any(first_paint._moves(k, 0, 1) for k in first_paint.SCROLL_KEYS)
