"""A footer that rebuilds its keys only when they changed (issue 15.2-3).

Textual's Footer recomposes every key's widget whenever the screen's bindings may have changed (a
focus change, a mount, `refresh_bindings`): about 0.1 s of the main thread each time, four or five
times while a big session loads (the main thread then holds the GIL the loading worker needs) and
once more at the first key after the analysis lands. The keys it shows only change when a binding
is enabled or disabled, or another widget's bindings take over: this one compares what it would
show with what it shows, and recomposes only on a difference.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.widgets import Footer


class SteadyFooter(Footer):
    _shown: tuple[Any, ...] | None = None

    def __init__(self, *, ready: bool = False) -> None:
        """`ready`: the screen's bindings are already what the footer shows (mounted with the
        view they belong to), so its first compose shows the keys, not an empty footer that the
        bindings' signal recomposes after the next refresh (a second layout of the screen)."""
        super().__init__()
        if ready:
            self.set_reactive(Footer._bindings_ready, True)

    def compose(self) -> ComposeResult:
        self._shown = self._keys()  # (a recompose for the same keys is skipped)
        yield from super().compose()

    def _keys(self) -> tuple[Any, ...]:
        """What `Footer.compose` reads: every active binding it would show, enabled or not, and
        the footer's own settings."""
        keys = tuple(
            (b.key, b.action, b.description, b.show, b.key_display, b.group, enabled, tooltip, b.tooltip)
            for (_, b, enabled, tooltip) in self.screen.active_bindings.values()
        )
        return (self._bindings_ready, self.show_command_palette, self.app.ENABLE_COMMAND_PALETTE, keys)

    async def recompose(self) -> None:
        if not self.is_attached:
            return
        keys = self._keys()
        if keys == self._shown:
            return
        self._shown = keys
        await super().recompose()
