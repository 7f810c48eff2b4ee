"""The summary protocol (seed 004): essential sections first, a completion marker, then optional
sections each closed by its own marker. Only closed sections are installable.

This module is shared by the analysis (is an installed summary complete?) and the repair engine
(what to ask for, what to install).
"""

from __future__ import annotations

import re

ESSENTIAL_SECTIONS: tuple[str, ...] = (
    "Active request",
    "Current work state",
    "Safety and user constraints",
    "Continuation contract",
)
ESSENTIAL_MARKER = "<!-- essential-complete -->"
_OPTIONAL_END = re.compile(r"<!-- end: ([^>]+?) -->")
_HEADING = re.compile(r"^## (.+?)\s*$", re.M)


def summary_completeness(summary: str) -> str | None:
    """None when the summary does not follow the protocol; otherwise one of
    `complete`, `optional_truncated` (essentials closed, an optional section left open) or
    `essential_incomplete` (cut before the essential marker: not installable)."""
    headings = _HEADING.findall(summary)
    if not any(h in ESSENTIAL_SECTIONS for h in headings):
        return None
    head, sep, tail = summary.partition(ESSENTIAL_MARKER)
    if not sep:
        return "essential_incomplete"
    if any(f"## {name}" not in head for name in ESSENTIAL_SECTIONS):
        return "essential_incomplete"
    opened = _HEADING.findall(tail)
    closed = set(_OPTIONAL_END.findall(tail))
    if any(h not in closed for h in opened):
        return "optional_truncated"
    return "complete"


def installable_part(summary: str) -> str | None:
    """The closed prefix of a protocol summary (essentials + closed optional sections), or None
    when the essential sections are incomplete."""
    state = summary_completeness(summary)
    if state is None or state == "complete":
        return summary
    if state == "essential_incomplete":
        return None
    head, sep, tail = summary.partition(ESSENTIAL_MARKER)
    keep = head + sep
    pos = 0
    for m in _OPTIONAL_END.finditer(tail):
        pos = m.end()
    return keep + tail[:pos]
