"""The Simulate screen (issue 7): replay the session under an editable compaction policy and plot
the prompt before each model call, the session's own record beside the what-if.

The replay itself is `inspector.analysis.simulate` (pure); this screen only edits a policy, runs
the replay in a worker thread when a parameter changes, and draws the result with
textual-plotext.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Checkbox, Footer, Input, Label, Select, Static

from inspector.analysis import simulate as sim
from inspector.analysis.numbers import count, nice_ticks
from inspector.analysis.window import ContextWindow, ledger_window
from inspector.formats import registry
from inspector.ledger.model import Ledger
from inspector.tui.fields import EDIT_DEBOUNCE, TokenField

SIMULATE_KEYS: list[tuple[str, str, str]] = [
    ("ctrl+r", "rerun", "Run the replay again"),
    ("f1", "app.help", "Help"),
    ("escape", "back", "Back to the session"),
]

SIMULATE_HELP = (
    "Pick a policy and edit its parameters: the session is replayed turn by turn under it and the plot "
    "shows the prompt before each model call (o: what the session recorded; the what-if in its own "
    "colour). The table counts compactions, summarizer calls, holes (events that left the prompt "
    "represented by no summary) and live questions lost (calls whose own turn's question was not in their "
    "prompt). The summarizer is not called: a simulated summary is 'summary tokens' big (blank: the "
    "session's own median summary, else 500). Warnings name configurations the seeds show broken: "
    "event_retention_size 0, a retention smaller than one tool round, a sliding interval that starves tail "
    "retention, storms."
)

# (field id, label, policies it belongs to)
FIELDS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("context_window", "contextWindow", ("pi",)),
    ("reserve_tokens", "reserveTokens", ("pi",)),
    ("keep_recent_tokens", "keepRecentTokens", ("pi",)),
    ("compaction_interval", "compaction_interval", ("adk-sliding", "adk-both")),
    ("overlap_size", "overlap_size", ("adk-sliding", "adk-both")),
    ("token_threshold", "token_threshold", ("adk-token", "adk-both")),
    ("event_retention_size", "event_retention_size", ("adk-token", "adk-both")),
    ("summary_tokens", "summary tokens", ("pi", "adk-sliding", "adk-token", "adk-both", "recorded")),
)
POLICY_NAMES = ("recorded", "pi", "adk-sliding", "adk-token", "adk-both")


def window_words(window: ContextWindow) -> str:
    """Where the contextWindow field's value came from, in the screen's words."""
    if window.tokens is None:
        return "pi's default: " + window.origin("")
    return window.origin("given when the app was started (--window)")


def initial_values(
    led: Ledger, sess: sim.Session, window: ContextWindow | None = None
) -> tuple[str, dict[str, int | None]]:
    """The policy the screen opens on: the recorded one when it can be inferred, else the
    session's runtime family with a threshold at half its peak prompt. The window is the one the
    repair screen plans with (`inspector.analysis.window`), else pi's default."""
    peak = max((e.prompt or 0 for e in sess.events), default=0)
    st = sess.settings
    win = window if window is not None else ledger_window(led)
    vals: dict[str, int | None] = {
        "context_window": win.tokens or sim.PI_CONTEXT_WINDOW,
        "reserve_tokens": st.get("reserve") or sim.PI_RESERVE_TOKENS,
        "keep_recent_tokens": st.get("keep_recent") or sim.PI_KEEP_RECENT_TOKENS,
        "compaction_interval": 3,
        "overlap_size": 1,
        "token_threshold": max(1, peak // 2) if peak else 50_000,
        "event_retention_size": 5,
        "summary_tokens": None,
    }
    pol, _ = sim.recorded_policy(led, sess)
    if isinstance(pol, sim.AdkPolicy):
        # The recorded values fill the fields, so switching to an ADK policy starts from them.
        for key, value in pol.params().items():
            if key in vals and value is not None:
                vals[key] = value
        return "recorded", vals
    if isinstance(pol, sim.PiPolicy):
        return "recorded", vals
    return registry.get(led.format).default_policy, vals


def policy_of(
    name: str, vals: dict[str, int | None], gate: bool, led: Ledger, sess: sim.Session
) -> tuple[sim.Policy | None, str]:
    def v(key: str, default: int) -> int:
        x = vals.get(key)
        return default if x is None else x

    if name == "recorded":
        return sim.recorded_policy(led, sess)
    if name == sim.PiPolicy.name:
        return sim.PiPolicy(
            v("context_window", 200_000), v("reserve_tokens", 16_384), v("keep_recent_tokens", 20_000)
        ), ""
    sliding = name in ("adk-sliding", "adk-both")
    token = name in ("adk-token", "adk-both")
    if sliding and v("compaction_interval", 3) < 1:
        return None, "compaction_interval must be at least 1"
    return (
        sim.AdkPolicy(
            v("compaction_interval", 3) if sliding else None,
            v("overlap_size", 1) if sliding else None,
            v("token_threshold", 50_000) if token else None,
            v("event_retention_size", 5) if token else None,
            progress_gate=gate,
        ),
        "",
    )


class SimulateScreen(Screen[None]):
    DEFAULT_CSS = """
    SimulateScreen #sim-title { height: auto; padding: 0 1; background: $panel; }
    SimulateScreen #sim-main { height: 1fr; }
    SimulateScreen #sim-form { width: 34; padding: 0 1; border-right: solid $primary-background; }
    SimulateScreen #sim-form Label { margin-top: 1; color: $text-muted; }
    SimulateScreen #sim-form Input { height: 3; }
    SimulateScreen #sim-form .source { color: $text-muted; text-style: italic; }
    SimulateScreen #sim-form .source.-irrelevant { display: none; }
    SimulateScreen #sim-form Input.-irrelevant { display: none; }
    SimulateScreen #sim-form Label.-irrelevant { display: none; }
    SimulateScreen #sim-right { width: 1fr; }
    SimulateScreen PlotextPlot { height: 2fr; min-height: 10; }
    SimulateScreen #sim-stats { height: 1fr; padding: 0 1; }
    """

    BINDINGS = [Binding(k, a, d, show=k != "f1") for k, a, d in SIMULATE_KEYS]

    def __init__(self, ledger: Ledger, *, window: int | None = None) -> None:
        super().__init__()
        self.ledger = ledger
        self.given_window = window  # the app's --window, over what the session says
        self.window: ContextWindow | None = None  # resolved with the session (in the worker)
        self.session: sim.Session | None = None
        self.result: sim.Simulation | None = None
        self._values: dict[str, int | None] = {}
        self._policy = "recorded"
        self._rerun_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(f"Simulate · {self.ledger.path}  (preparing the replay…)"), id="sim-title")
        with Horizontal(id="sim-main"):
            with VerticalScroll(id="sim-form"):
                yield Label("policy")
                yield Select([(n, n) for n in POLICY_NAMES], value="recorded", allow_blank=False, id="policy")
                for fid, label, _ in FIELDS:
                    yield Label(label, id=f"label-{fid}")
                    yield TokenField(id=fid, placeholder="session's" if fid == "summary_tokens" else "")
                    if fid == "context_window":
                        yield Static("", id="source-context_window", classes="source")
                yield Checkbox("progress gate (ADK 2.13)", value=True, id="progress_gate")
            with Vertical(id="sim-right"):
                # Imported here: plotext is only needed once this screen opens.
                from textual_plotext import PlotextPlot

                yield PlotextPlot(id="sim-plot")
                yield Static("", id="sim-stats")
        yield Footer()

    def on_mount(self) -> None:
        self.prepare()

    @work(thread=True, exclusive=True, group="prepare")
    def prepare(self) -> None:
        sess = sim.prepare(self.ledger)
        window = ledger_window(self.ledger, self.given_window)
        name, vals = initial_values(self.ledger, sess, window)
        self._land(self._prepared, sess, name, vals, window)

    def _prepared(
        self, sess: sim.Session, name: str, vals: dict[str, int | None], window: ContextWindow
    ) -> None:
        self.session = sess
        self.window = window
        self.query_one("#source-context_window", Static).update(window_words(window))
        self._policy = name
        self._values = dict(vals)
        with self.prevent(Input.Changed, Select.Changed):
            self.query_one("#policy", Select).value = name
            for fid, _, _ in FIELDS:
                v = vals.get(fid)
                self.query_one(f"#{fid}", Input).value = "" if v is None else str(v)
        self._show_fields()
        self.rerun()

    def _show_fields(self) -> None:
        for fid, _, policies in FIELDS:
            hide = self._policy not in policies
            self.query_one(f"#{fid}", Input).set_class(hide, "-irrelevant")
            self.query_one(f"#label-{fid}", Label).set_class(hide, "-irrelevant")
            if fid == "context_window":  # where the window came from: shown with its field
                self.query_one("#source-context_window", Static).set_class(hide, "-irrelevant")
        self.query_one("#progress_gate", Checkbox).display = self._policy.startswith("adk")

    @on(Select.Changed, "#policy")
    def _policy_changed(self, event: Select.Changed) -> None:
        self._policy = str(event.value)
        self._show_fields()
        self.rerun()

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        """Typing waits for a pause before the replay runs again (a replay per keystroke would run
        "1", "16", "160", ... each in turn)."""
        fid = event.input.id or ""
        text = event.value.strip()
        try:
            value = int(text) if text else None
        except ValueError:
            return
        if self._values.get(fid) == value:
            return
        self._values[fid] = value
        if fid == "context_window" and self.window is not None:
            typed = value is not None and value != self.window.tokens
            self.query_one("#source-context_window", Static).update(
                "typed here" if typed else window_words(self.window)
            )
        if self._rerun_timer is not None:
            self._rerun_timer.stop()
        self._rerun_timer = self.set_timer(EDIT_DEBOUNCE, self.rerun)

    @on(Input.Submitted)
    def _input_submitted(self, _event: Input.Submitted) -> None:
        self.rerun()  # Enter: at once

    @on(Checkbox.Changed, "#progress_gate")
    def _gate_changed(self, _event: Checkbox.Changed) -> None:
        self.rerun()

    def action_rerun(self) -> None:
        self.rerun()

    def action_back(self) -> None:
        self.app.pop_screen()

    def rerun(self) -> None:
        if self._rerun_timer is not None:
            self._rerun_timer.stop()
            self._rerun_timer = None
        if self.session is None:
            return
        gate = self.query_one("#progress_gate", Checkbox).value
        self._run(self._policy, dict(self._values), gate)

    @work(thread=True, exclusive=True, group="replay")
    def _run(self, name: str, vals: dict[str, int | None], gate: bool) -> None:
        assert self.session is not None
        pol, why = policy_of(name, vals, gate, self.ledger, self.session)
        if pol is None:
            self._land(self._show_error, why)
            return
        st = vals.get("summary_tokens")
        result = sim.simulate(self.ledger, pol, sim.SummarySize(tokens=st), session=self.session)
        self._land(self._show, result, why)

    def _land(self, show: Callable[..., None], *args: Any) -> None:
        """From a worker thread: show its result on this screen, if the screen is still open (the
        user may have closed it while the replay ran: its widgets are gone then)."""
        self.app.call_from_thread(self._if_open, show, *args)

    def _if_open(self, show: Callable[..., None], *args: Any) -> None:
        if self in self.app.screen_stack:
            show(*args)

    def _show_error(self, why: str) -> None:
        self.query_one("#sim-stats", Static).update(Text(f"No replay: {why}", style="yellow"))

    def _show(self, r: sim.Simulation, why: str) -> None:
        self.result = r
        w, b = r.whatif, r.baseline
        title = Text()
        title.append("Simulate", style="bold")
        title.append(
            f" · {r.session} · {r.format} · {r.events} events, {r.turns} turns · summary: {r.summary_size}"
        )
        if why:
            title.append(f"\nrecorded policy: {why}", style="dim")
        self.query_one("#sim-title", Static).update(title)
        from textual_plotext import PlotextPlot

        plot = self.query_one(PlotextPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        xs_b = list(range(1, len(b.calls) + 1))
        xs_w = list(range(1, len(w.calls) + 1))
        if xs_b:
            plt.plot(xs_b, [c.prompt_tokens for c in b.calls], label="recorded", marker="braille")
        if xs_w:
            plt.plot(xs_w, [c.prompt_tokens for c in w.calls], label=f"what-if ({w.label})", marker="braille")
        n = max(len(xs_b), len(xs_w))
        peak = max(b.peak, w.peak)
        off_scale: list[str] = []
        top = peak
        for label, y, color in limit_lines(r, self.window):
            if y <= LIMIT_SCALE * max(peak, 1):  # a 1M window would flatten a 20k session's plot
                if n:
                    plt.plot([1, n], [y, y], label=label, marker="braille", color=color)
                    top = max(top, y)
            else:
                off_scale.append(label)
        for label, series, mark, color in (
            ("recorded compaction", b, "o", "orange"),
            ("what-if compaction", w, "x", "red"),
        ):
            points = _compaction_calls(series)
            if points:
                plt.scatter([x for x, _ in points], [y for _, y in points], label=label, marker=mark, color=color)
        if top:
            ticks = nice_ticks(top)
            plt.yticks(ticks, [count(t) for t in ticks])
        if n:
            xt = [1, *(t for t in nice_ticks(n) if t > 1)]
            plt.xticks(xt, [count(t) for t in xt])
        plt.title("prompt tokens before each model call")
        plt.xlabel("model call")
        plot.refresh()
        self.query_one("#sim-stats", Static).update(_stats(r, tuple(off_scale)))


LIMIT_SCALE = 3  # a limit line is drawn when it is at most this many times the plot's peak


def limit_lines(r: sim.Simulation, window: ContextWindow | None) -> list[tuple[str, int, str]]:
    """(label, tokens, colour) of the limits the plot draws: the context window and the prompt
    size at which the what-if's policy compacts."""
    pol = r.whatif.policy
    out: list[tuple[str, int, str]] = []
    cw = pol.get("context_window")
    if cw is None and window is not None:
        cw = window.tokens
    if cw:
        out.append((f"context window {cw:,}", cw, "white"))
    if r.whatif.label == sim.PiPolicy.name and pol.get("context_window") is not None:
        t = pol["context_window"] - pol["reserve_tokens"]
        out.append((f"compaction threshold {t:,}", t, "yellow"))
    elif pol.get("token_threshold") is not None:
        out.append((f"token_threshold {pol['token_threshold']:,}", pol["token_threshold"], "yellow"))
    return out


def _compaction_calls(s: sim.Series) -> list[tuple[int, int]]:
    """(call number, prompt) of the first call after each compaction; one made after the last
    call (the session ends on it) is marked one call further, at the prompt it leaves."""
    out: list[tuple[int, int]] = []
    comps = sorted((c for c in s.compactions if c.after_seq is not None), key=lambda c: c.after_seq or 0)
    i = 0
    for n, call in enumerate(s.calls, start=1):
        while i < len(comps) and (comps[i].after_seq or 0) < call.seq:
            out.append((n, call.prompt_tokens))
            i += 1
    out += [(len(s.calls) + 1, c.prompt_after) for c in comps[i:]]
    return out


def _stats(r: sim.Simulation, off_scale: tuple[str, ...] = ()) -> Group:
    b, w = r.baseline, r.whatif
    # Fixed-width text rather than a rich Table: Textual renders a Table's column alignment
    # differently from rich, and the numbers must line up under their heading.
    rows: list[tuple[str, Any, Any]] = [
        ("model calls", len(b.calls), len(w.calls)),
        ("compactions", len(b.compactions), len(w.compactions)),
        ("summarizer calls", b.summarizer_calls, w.summarizer_calls),
        ("peak prompt tokens", f"{b.peak:,}", f"{w.peak:,}"),
        ("final prompt tokens", f"{b.final:,}", f"{w.final:,}"),
        ("holes (events)", len(b.holes) if b.coverage_known else "n/a", len(w.holes)),
        (
            "live questions lost (calls)",
            len(b.live_questions_lost) if b.coverage_known else "n/a",
            len(w.live_questions_lost),
        ),
    ]
    right = f"what-if ({w.label})"
    wide = max(14, len(right) + 2)
    t = Text()
    t.append(f"{'replay':30}{'recorded':>12}{right:>{wide}}\n", style="bold")
    for name, x, y in rows:
        t.append(f"{name:30}{x!s:>12}{y!s:>{wide}}\n")
    notes = Text()
    if off_scale:
        notes.append(f"\n{', '.join(off_scale)}: far above every prompt, not drawn", style="dim")
    for x in r.warnings:
        notes.append(f"\n! {x.code}: ", style="bold yellow")
        notes.append(x.message)
    return Group(t, notes)
