"""Record times: formats write them as ISO-8601 strings (pi, Claude Code, Codex, native) or as epoch
numbers (ADK: seconds as a float; some producers milliseconds). The analysis keeps what the file
says; what a person reads is always ISO-8601 UTC, whatever the format."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from inspector.ledger.quoting import quote

EPOCH_MS_ABOVE = 1e11  # a larger epoch number counts milliseconds (1e11 s is the year 5138)


def epoch_seconds(v: Any) -> float | None:
    """Seconds since the epoch of a record time (number or ISO string; naive means UTC)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v) / (1000.0 if v > EPOCH_MS_ABOVE else 1.0)
    if isinstance(v, str):
        try:
            d = _dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
        except ValueError:
            return None
        if d.tzinfo is None:
            d = d.replace(tzinfo=_dt.UTC)
        return d.timestamp()
    return None


TIME_CHARS = 64  # no runtime writes a longer time; a damaged one is shown cut


def iso_time(v: Any) -> str:
    """A record time as a person reads it: ISO-8601 UTC to the millisecond, like the formats that
    write strings ("2026-01-01T00:01:30.875Z"). A string is shown as written; "" when absent."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v if len(v) <= TIME_CHARS else v[:TIME_CHARS] + "…"
    secs = epoch_seconds(v)
    if secs is None:
        return quote(v)  # (a damaged line's list or object: shortened, however deep it nests)
    try:
        d = _dt.datetime.fromtimestamp(secs, _dt.UTC)
    except (OverflowError, OSError, ValueError):
        return str(v)
    return d.isoformat(timespec="milliseconds").replace("+00:00", "Z")
