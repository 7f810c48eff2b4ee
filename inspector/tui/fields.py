"""A number-of-tokens field for the repair and simulate screens' forms.

Two things a plain `Input(type="integer")` gets wrong for these forms: an empty field is invalid
(Textual paints it red as soon as focus leaves it), though empty is the documented "take the
session's value or the default"; and it consumes every printable key, so a screen's one-letter
keys (`r` runs the repair) never reach the screen while a field has focus, although a letter can
never be part of a number. A `TokenField` accepts empty, consumes only what a number can hold and
grows to fit what it shows (its value, or the value its placeholder stands for).
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.widgets import Input

EDIT_DEBOUNCE = 0.5  # seconds of quiet typing in a field before the screen plans or replays again
NUMBER_CHARACTERS = frozenset("0123456789+-_")
CURSOR_CELLS = 1
MIN_CONTENT = 7


def content_width(*shown: str) -> int:
    """Cells of text a field needs to show the longest of these whole, the cursor after it."""
    return CURSOR_CELLS + max(MIN_CONTENT, *(len(s) for s in shown))


class TokenField(Input):
    def __init__(self, value: str = "", **kwargs: Any) -> None:
        super().__init__(value, type="integer", valid_empty=True, **kwargs)

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return character is not None and character in NUMBER_CHARACTERS

    async def _on_key(self, event: events.Key) -> None:
        if event.is_printable and event.character not in NUMBER_CHARACTERS:
            event.prevent_default()  # not Input's to insert (nor to stop): it goes on to the screen's keys

    def on_mount(self) -> None:
        self.call_after_refresh(self.fit)  # once its CSS (border, padding) applies

    def fit(self) -> None:
        """Size the field to its value and placeholder (called when either changes): its border
        and padding, then the text."""
        if self.is_mounted:
            self.styles.width = self.styles.gutter.width + content_width(self.value, self.placeholder)

    def watch_placeholder(self) -> None:
        self.fit()

    def watch_value(self) -> None:
        self.fit()
