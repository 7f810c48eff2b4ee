"""The inspector app: `inspector SESSION` opens the session view, `inspector DIR` (or no argument:
the default places) the triage browser. `create_app` is the factory the CLI and the tests use."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from functools import partial

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.command import DiscoveryHit, Hits
from textual.screen import Screen
from textual.system_commands import SystemCommandsProvider

# Where each format keeps its sessions by default (the triage browser looks here): one list with
# `inspector scan`, in the store layer, read from the formats registry.
from inspector.formats import split_selector
from inspector.store.places import default_place_patterns, default_places
from inspector.tui.help import HelpScreen, key_label
from inspector.tui.session import SESSION_KEYS, SessionScreen

# The repair, simulate and triage screens are imported when first needed: `inspector FILE` opens
# the session view only, and their modules (the compaction and simulation cores among them) were
# a quarter of a second of its start, before the file was read (issue 15.3).


def screen_keys(screen: Screen[object]) -> list[tuple[str, str, str]]:
    """The (key, action, description) list of the screen the palette was opened on."""
    if isinstance(screen, SessionScreen):
        return SESSION_KEYS
    from inspector.tui.repair import REPAIR_KEYS, RepairScreen
    from inspector.tui.simulate import SIMULATE_KEYS, SimulateScreen

    if isinstance(screen, RepairScreen):
        return REPAIR_KEYS
    if isinstance(screen, SimulateScreen):
        return SIMULATE_KEYS
    return []


class SessionCommands(SystemCommandsProvider):
    """The one palette provider: the screen's own commands first, in the order of its key list
    (Textual's system provider sorts its discovery page by name), then Textual's."""

    async def discover(self) -> Hits:
        for name, help_text, callback, discover in self.app.get_system_commands(self.screen):
            if discover:
                yield DiscoveryHit(name, callback, help=help_text)


class InspectorApp(App[None]):
    TITLE = "inspector"
    COMMANDS = {SessionCommands}
    BINDINGS = [Binding("f1", "help", "Help"), Binding("q", "quit", "Quit")]

    def __init__(
        self,
        targets: Iterable[str] = (),
        *,
        window: int | None = None,
        reserve: int | None = None,
        at_line: int | None = None,
        show_timings: bool = True,
        launched: float | None = None,
    ) -> None:
        super().__init__()
        self.show_timings = show_timings
        self.targets = list(targets)
        self.window = window
        self.reserve = reserve
        self.at_line = at_line
        # The first session screen reports the wait from here: the user's command (`process_started`,
        # passed by the console script), else the app's construction (an app made in a test).
        self.launched = time.perf_counter() if launched is None else launched

    def on_mount(self) -> None:
        targets = self.targets or default_places()
        if len(targets) == 1 and os.path.isfile(split_selector(targets[0])[0]):  # FILE#SESSION: a store's session
            self.push_screen(self.session_screen(targets[0], started=self.launched))
        else:
            from inspector.tui.triage import TriageScreen

            self.push_screen(TriageScreen(targets, searched=None if self.targets else default_place_patterns()))

    def session_screen(self, path: str, started: float | None = None) -> SessionScreen:
        return SessionScreen(path, window=self.window, reserve=self.reserve, at_line=self.at_line, started=started)

    def open_session(self, path: str) -> None:
        self.push_screen(self.session_screen(path))

    def open_target(self, path: str) -> None:
        """Open what the user typed: a file in the session view, a folder in the triage browser."""
        full = os.path.expanduser(path)
        if os.path.isdir(full):
            from inspector.tui.triage import TriageScreen

            self.push_screen(TriageScreen([full]))
        elif os.path.exists(full):
            self.open_session(full)
        else:
            self.notify(f"{path}: no such file or folder.", severity="error", timeout=5)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The screen's own actions (those its guard allows) before Textual's."""
        for key, action, desc in screen_keys(screen):
            target: App[None] | Screen[object] = self if action.startswith("app.") else screen
            name = action.removeprefix("app.")
            if target.check_action(name.split("(")[0], ()) is False:
                continue
            yield SystemCommand(desc, f"key: {key_label(key)}", partial(target.run_action, name))
        yield from super().get_system_commands(screen)

    def action_help(self) -> None:
        from inspector.tui.repair import REPAIR_HELP, REPAIR_KEYS, RepairScreen
        from inspector.tui.simulate import SIMULATE_HELP, SIMULATE_KEYS, SimulateScreen
        from inspector.tui.triage import TRIAGE_KEYS, TriageScreen

        if isinstance(self.screen, HelpScreen):
            return
        if isinstance(self.screen, RepairScreen):
            self.push_screen(HelpScreen(REPAIR_KEYS, about=("The repair screen", REPAIR_HELP)))
            return
        if isinstance(self.screen, SimulateScreen):
            self.push_screen(HelpScreen(SIMULATE_KEYS, about=("The simulate screen", SIMULATE_HELP)))
            return
        keys = TRIAGE_KEYS if isinstance(self.screen, TriageScreen) else SESSION_KEYS
        self.push_screen(HelpScreen(keys))


def create_app(targets: Iterable[str] = (), **kwargs: float | bool | None) -> InspectorApp:
    return InspectorApp(targets, **kwargs)  # type: ignore[arg-type]


STARTED_SANE_S = 60.0  # an older start than this is not the user's command (a long-lived caller)


def process_started(stat_path: str = "/proc/self/stat") -> float:
    """When this process started, on the `time.perf_counter` clock: the wait a user sees begins
    at their command, with the interpreter's start and the imports (a third of a second or more
    before the app exists; issue 15.2, "the header reports the time the user actually waited").
    Read from the kernel's start time of the process (Linux: clock ticks since boot, against
    CLOCK_BOOTTIME; within a tick, 10 ms); where it cannot be read, or is not sane, now."""
    now = time.perf_counter()
    try:
        with open(stat_path, "rb") as f:
            stat = f.read()
        ticks = int(stat[stat.rindex(b")") + 2 :].split()[19])  # field 22, after the command's name
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0.0 <= age <= STARTED_SANE_S else now
