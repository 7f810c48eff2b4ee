"""Findings list (placeholder until the full widget lands)."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import Static

from inspector.analysis.engine import Finding, Report


class FindingsList(Static):
    class Jump(Message):
        def __init__(self, seqs: list[int]) -> None:
            super().__init__()
            self.seqs = seqs

    def set_report(self, report: Report | None) -> None:
        self.findings: list[Finding] = list(report.findings) if report else []
        self.update("\n".join(f"{f.severity} {f.code} {f.message}" for f in self.findings))
