"""Detail pane for the selected record (placeholder until the full pane lands)."""

from __future__ import annotations

from textual.widgets import Static

from inspector.analysis.engine import Report
from inspector.ledger.model import Ledger


class DetailPane(Static):
    def show(self, ledger: Ledger, report: Report | None, seq: int | None) -> None:
        if seq is None:
            self.update("")
            return
        rec = ledger.records[seq]
        m = rec.message
        self.update(f"line {rec.line} · {rec.kind} · {rec.role or rec.type}\n\n{m.text() if m else ''}")
