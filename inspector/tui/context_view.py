"""Next-request view (placeholder until the full widget lands)."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import Static

from inspector.analysis.engine import Report


class NextRequestView(Static):
    class Jump(Message):
        def __init__(self, seq: int) -> None:
            super().__init__()
            self.seq = seq

    def set_report(self, report: Report | None) -> None:
        if report is None:
            self.update("analysing…")
            return
        items = report.ensure_tokens()
        self.update("\n".join(f"{it.index} {it.role} {it.kind} {it.line} {it.tokens}" for it in items))
