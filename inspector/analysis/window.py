"""The context window of a session's model: one resolution for every place that needs it (the
repair plan, the simulate screen and `inspector simulate`), naming where the number came from.

In order: the operator's value (a flag or a form field), the window the session records (a native
ledger header, Codex's `model_context_window`), the window of the newest model the session names
from a table of well-known models. Otherwise unknown: each caller says what it does then (a repair
plan refuses, since guessing could install a checkpoint the model cannot take; a what-if replay
falls back on the runtime's default and says so).
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.formats import registry
from inspector.ledger.model import Ledger

# Context windows of well-known models, by model-id prefix (longest match wins). Only used when
# neither the session nor the operator says.
MODEL_WINDOWS: dict[str, int] = {
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "claude-": 200_000,
    "gemini-2.5": 1_048_576,
}

GIVEN = "flag"  # the operator's value (a command-line flag, a field of the app's forms)
SESSION = "session"


@dataclass(frozen=True, slots=True)
class ContextWindow:
    tokens: int | None  # None: unknown
    source: str  # "flag" | "session" | "model table (<model id>)" | "" when unknown

    def origin(self, given: str) -> str:
        """Where the number came from, in words; `given`: how the operator gave it."""
        if self.tokens is None:
            return "the session does not record it, nor is its model in the table of known windows"
        if self.source == GIVEN:
            return given
        if self.source == SESSION:
            return "recorded in the session"
        return f"from the {self.source}"


def model_window(led: Ledger, path: list[int]) -> tuple[int, str] | None:
    """(window, model id) of the newest model the session names on its active path (else in its
    run headers), from the table of known models."""
    ids: list[str] = []
    for s in reversed(path):
        r = led.records[s]
        if r.role == "assistant" and r.kind == "message":
            m = r.message
            if m is not None and m.route is not None and m.route.model_id:
                ids.append(m.route.model_id)
                break
    ids += [h.route.model_id for h in sorted(led.runs.values(), key=lambda h: -h.seq) if h.route.model_id]
    for mid in ids:
        name = mid.rsplit("/", 1)[-1].lower()
        best = max((p for p in MODEL_WINDOWS if name.startswith(p)), key=len, default=None)
        if best is not None:
            return MODEL_WINDOWS[best], mid
    return None


def context_window(led: Ledger, path: list[int], given: int | None = None) -> ContextWindow:
    """The session's context window and where it came from (see the module docstring)."""
    if given is not None:
        return ContextWindow(given, GIVEN)
    if led.settings.window is not None:
        return ContextWindow(led.settings.window, SESSION)
    known = model_window(led, path)
    if known is not None:
        return ContextWindow(known[0], f"model table ({known[1]})")
    return ContextWindow(None, "")


def ledger_window(led: Ledger, given: int | None = None) -> ContextWindow:
    """`context_window` for a caller that holds the ledger but no analysis of it."""
    from inspector.analysis.engine import active_path

    path, _cycle = active_path(led, registry.get(led.format).runtime)
    return context_window(led, path, given)
