"""Small modal screens of the session view: a one-line prompt (go to line, open another file) and
the full text of one record or one item of the next request."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static, TextArea

DIM = "#8b949e"


class PromptScreen(ModalScreen[str | None]):
    """One question, one line of answer: Enter returns it, Escape returns None."""

    DEFAULT_CSS = """
    PromptScreen { align: center middle; background: $background 60%; }
    PromptScreen > #prompt-dialog {
        width: 72; max-width: 95%; height: auto; border: round $primary; background: $surface; padding: 0 1;
    }
    PromptScreen #prompt-hint { color: $text-muted; }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, *, value: str = "", placeholder: str = "", hint: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.placeholder = placeholder
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-dialog"):
            yield Static(Text(self.title_text, style="bold"), id="prompt-title")
            yield Input(value=self.value, placeholder=self.placeholder, id="prompt-input")
            yield Static(Text(self.hint or "Enter: go · Escape: cancel", style=DIM), id="prompt-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class FullTextScreen(ModalScreen[None]):
    """A text shown whole (the timeline and the next-request list cut it): scrollable, selectable,
    copied with `y`. Escape or q closes it."""

    DEFAULT_CSS = """
    FullTextScreen { align: center middle; background: $background 60%; }
    FullTextScreen > #full-dialog {
        width: 95%; height: 90%; border: round $primary; background: $surface; padding: 0 1;
    }
    FullTextScreen #full-title { height: auto; }
    FullTextScreen TextArea { height: 1fr; border: none; }
    """

    BINDINGS = [
        Binding("escape,q", "dismiss", "Close"),
        Binding("y", "copy", "Copy all"),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="full-dialog"):
            yield Static(
                Text.assemble(
                    (self.title_text, "bold"),
                    (f"  · {len(self.text):,} characters · y copies it all · Escape or q closes this", DIM),
                ),
                id="full-title",
            )
            yield TextArea(self.text, read_only=True, soft_wrap=True, show_line_numbers=False, id="full-text")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.text)
        self.notify(f"Copied {len(self.text):,} characters.", timeout=2)
