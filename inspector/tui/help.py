"""Help screen: the session view's keys, the colours of the coverage states, and what a hole is."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from inspector.tui.model import STATE_COLORS

DIM = "#8b949e"

# What each colour of the timeline band and the minimap means (DESIGN §2).
STATE_MEANINGS: tuple[tuple[str, str], ...] = (
    ("live", "after the latest checkpoint: sent as it is"),
    ("retained", "before the boundary, but kept raw in the retained tail"),
    ("summarized", "taken out and represented by a summary (sum·k: checkpoint k's)"),
    ("excluded", "never sent by design: error / aborted replies, meta records"),
    ("hole", "taken out, represented by no summary, not retained: amnesia"),
    ("inactive", "on another branch of the tree: shown, never sent, never a hole"),
    ("checkpoint", "a compaction record: separator row with its ranges and shape"),
    ("pending", "the analysis is still running"),
)

# Keys that work everywhere, beside the session view's own list.
GLOBAL_KEYS: tuple[tuple[str, str], ...] = (
    ("↑ ↓ j k", "Move in the timeline"),
    ("PgUp PgDn", "Page up / down"),
    ("Home End", "First / last record"),
    ("Enter", "In a list: go to the record"),
    ("Tab", "Next pane"),
    ("Ctrl+P", "Command palette"),
    ("q", "Quit"),
)

HOLE_TEXT = (
    "A hole is a message that has left the model's context without being represented: a "
    "checkpoint removed it from the next request, no summary stands for it, and it is not in the "
    "retained tail. The file still holds it, so the transcript looks healthy, but the model will "
    "never see it again: that is amnesia. The usual cause is a fallback checkpoint that carried "
    "the previous summary forward instead of summarizing the messages it removed. The invariant "
    "this tool defends is that no message leaves the context without being represented."
)

_KEY_NAMES = {
    "slash": "/",
    "escape": "Esc",
    "f1": "F1",
    "enter": "Enter",
    "tab": "Tab",
    "right_square_bracket": "]",
    "left_square_bracket": "[",
}


def key_label(key: str) -> str:
    """How a binding key is written for people: `slash` is `/`, `N` is `Shift+N`."""
    names = []
    for k in key.split(","):
        k = k.strip()
        if k in _KEY_NAMES:
            names.append(_KEY_NAMES[k])
        elif len(k) == 1 and k.isupper():
            names.append(f"Shift+{k}")
        elif k.startswith("ctrl+"):
            names.append("Ctrl+" + k[5:].upper())
        else:
            names.append(k)
    return " ".join(names)


class HelpScreen(ModalScreen[None]):
    """Keys, legend, and the one idea to understand. Escape, F1 or q closes it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; background: $background 60%; }
    HelpScreen > #help-dialog {
        width: 92; max-width: 95%; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    HelpScreen #help-title { padding: 0 0 1 0; }
    HelpScreen #help-body { height: auto; max-height: 100%; }
    HelpScreen #help-body > Static { margin-bottom: 1; }
    HelpScreen #help-body > #help-hole { margin-bottom: 0; }
    """

    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def __init__(self, keys: list[tuple[str, str, str]], about: tuple[str, str] | None = None) -> None:
        super().__init__()
        self.keys = keys
        self.about = about  # (title, text): a screen's own explanation, shown first

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            yield Static(
                Text.assemble(("inspector · help", "bold"), ("   Escape, F1 or q closes this", DIM)),
                id="help-title",
            )
            with VerticalScroll(id="help-body"):
                if self.about is not None:
                    yield Static(Text.assemble((self.about[0] + "\n", "bold"), self.about[1]), id="help-about")
                yield Static(self._keys_table(), id="help-keys")
                yield Static(self._legend(), id="help-legend")
                yield Static(self._hole(), id="help-hole")

    def _keys_table(self) -> Table:
        """Every key in two side-by-side columns: the session view's, then the general ones."""
        rows = [(key_label(k), desc) for k, _action, desc in self.keys] + list(GLOBAL_KEYS)
        half = (len(rows) + 1) // 2
        t = _plain_table("Keys")
        for _ in range(2):
            t.add_column(style="bold #e3b341", no_wrap=True, justify="right", min_width=9)
            t.add_column(ratio=1)
        for i in range(half):
            left = rows[i]
            right = rows[i + half] if i + half < len(rows) else ("", "")
            t.add_row(left[0], left[1], right[0], right[1])
        return t

    def _legend(self) -> Table:
        t = _plain_table("Coverage states (the colour band of the timeline and the minimap)")
        t.add_column("", no_wrap=True, width=2)
        t.add_column("state", style="bold", no_wrap=True)
        t.add_column("means", ratio=1)
        for state, meaning in STATE_MEANINGS:
            color = STATE_COLORS.get(state, "#484f58")
            label = color if state not in ("inactive", "pending") else DIM  # dark swatches: readable label
            t.add_row(Text("  ", style=f"on {color}"), Text(state, style=f"bold {label}"), meaning)
        return t

    def _hole(self) -> Text:
        t = Text()
        t.append("What is a hole?\n", style="bold")
        t.append(HOLE_TEXT)
        return t


def _plain_table(title: str) -> Table:
    """A borderless, headerless table with a bold title: the help screen's one table style."""
    return Table(
        title=title, title_justify="left", title_style="bold", box=None, expand=True, show_header=False, padding=(0, 1)
    )
