"""The inspector app: `inspector SESSION` opens the session view, `inspector DIR` (or no argument:
the default places) the triage browser. `create_app` is the factory the CLI and the tests use."""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import partial
from glob import glob

from textual.app import App
from textual.binding import Binding
from textual.command import Hit, Hits, Provider

from inspector.formats import openclaw_sqlite
from inspector.tui.help import HelpScreen
from inspector.tui.repair import REPAIR_HELP, REPAIR_KEYS, RepairScreen
from inspector.tui.session import SESSION_KEYS, SessionScreen
from inspector.tui.simulate import SIMULATE_HELP, SIMULATE_KEYS, SimulateScreen
from inspector.tui.triage import TRIAGE_KEYS, TriageScreen

# Where each format keeps its sessions by default (the triage browser looks here).
DEFAULT_PLACES: tuple[str, ...] = (
    "~/.pi/agent/sessions",
    "~/.openclaw/agents/*/sessions",
    *openclaw_sqlite.DEFAULT_PLACES,  # OpenClaw 2026.8+: agents/<agent>/agent/openclaw-agent.sqlite
    "~/.claude/projects",  # Claude Code: <project>/<session>.jsonl, sub-agents in <session>/subagents/
    "~/.codex/sessions",  # Codex: YYYY/MM/DD/rollout-*.jsonl (the walk is recursive)
    ".adk",  # Google ADK (adk web / adk run): .adk/session.db under the agents folder (the cwd) ...
    "*/.adk",  # ... or under each agent's own folder (per-agent session stores)
)


def default_places() -> list[str]:
    out: list[str] = []
    for pattern in DEFAULT_PLACES:
        out += [p for p in sorted(glob(os.path.expanduser(pattern))) if os.path.isdir(p)]
    return out


class SessionCommands(Provider):
    """The command palette offers every action of the session view and the repair screen."""

    async def search(self, query: str) -> Hits:
        screen = self.screen  # the screen the palette was opened on (app.screen is the palette)
        if isinstance(screen, SessionScreen):
            keys = SESSION_KEYS
        elif isinstance(screen, RepairScreen):
            keys = REPAIR_KEYS
        elif isinstance(screen, SimulateScreen):
            keys = SIMULATE_KEYS
        else:
            return
        matcher = self.matcher(query)
        for key, action, desc in keys:
            score = matcher.match(desc)
            if score > 0:
                target = self.app if action.startswith("app.") else screen
                name = action.removeprefix("app.")
                yield Hit(score, matcher.highlight(desc), partial(target.run_action, name), help=f"key: {key}")


class InspectorApp(App[None]):
    TITLE = "inspector"
    COMMANDS = App.COMMANDS | {SessionCommands}
    BINDINGS = [Binding("f1", "help", "Help"), Binding("q", "quit", "Quit")]

    def __init__(
        self,
        targets: Iterable[str] = (),
        *,
        window: int | None = None,
        reserve: int | None = None,
        at_line: int | None = None,
        show_timings: bool = True,
    ) -> None:
        super().__init__()
        self.show_timings = show_timings
        self.targets = list(targets)
        self.window = window
        self.reserve = reserve
        self.at_line = at_line

    def on_mount(self) -> None:
        targets = self.targets or default_places()
        if len(targets) == 1 and os.path.isfile(targets[0]):
            self.push_screen(self.session_screen(targets[0]))
        else:
            self.push_screen(TriageScreen(targets))

    def session_screen(self, path: str) -> SessionScreen:
        return SessionScreen(path, window=self.window, reserve=self.reserve, at_line=self.at_line)

    def open_session(self, path: str) -> None:
        self.push_screen(self.session_screen(path))

    def action_help(self) -> None:
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


def create_app(targets: Iterable[str] = (), **kwargs: int | bool | None) -> InspectorApp:
    return InspectorApp(targets, **kwargs)  # type: ignore[arg-type]
