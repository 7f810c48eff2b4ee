"""Triage browser (placeholder until the full screen lands)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static


class TriageScreen(Screen[None]):
    def __init__(self, paths: list[str]) -> None:
        super().__init__()
        self.paths = paths

    def compose(self) -> ComposeResult:
        yield Static("triage: " + ", ".join(self.paths))
