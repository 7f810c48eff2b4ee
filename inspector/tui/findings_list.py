"""Findings list: every finding of the report, worst first, grouped by severity.

Each entry shows the severity (coloured), the code, the sentence, the role counts of a hole and
where it points. Enter or a click posts `FindingsList.Jump` with the records the finding points
at; the session view moves the timeline to the first of them.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from inspector.analysis.engine import Finding, Report
from inspector.analysis.findings import SEVERITIES, SEVERITY_RANK
from inspector.tui.model import SEVERITY_COLORS, finding_groups

ROLE_COLORS = {"user": "#e3b341", "assistant": "#79c0ff", "tool": "#a5d6ff", "system": "#d2a8ff"}
DIM = "#8b949e"
SEVERITY_NAMES = {"error": "Errors", "warning": "Warnings", "info": "Notes"}


def _where(report: Report, f: Finding) -> Text:
    """Where the finding points: `line 229`, `lines 59–227 · 168 records`, or nothing."""
    if not f.records:
        return Text("points at no single record", style=f"italic {DIM}")
    records = report.ledger.records
    lo = min(f.records)
    hi = max(f.records)
    first, last = records[lo].line, records[hi].line
    where = f"line {first}" if first == last else f"lines {first}–{last}"
    n = len(f.records)
    t = Text("→ ", style="#d2a8ff")
    t.append(where, style="bold")
    if n > 1:
        t.append(f" · {n:,} records", style=DIM)
    t.append(" · Enter to go there", style=f"italic {DIM}")
    return t


def _roles(by_role: dict[str, int]) -> Text:
    t = Text()
    for i, (role, n) in enumerate(by_role.items()):
        if i:
            t.append(" / ", style=DIM)
        t.append(f"{n:,} ", style="bold")
        t.append(role, style=ROLE_COLORS.get(role, ""))
    return t


def finding_prompt(report: Report, f: Finding, indent: bool = False) -> Group:
    """One finding; `indent` when it is listed under its group's row."""
    color = SEVERITY_COLORS.get(f.severity, "white")
    head = Text("  └ " if indent else "")
    head.append(f" {f.severity.upper()} ", style=f"bold #0d1117 on {color}")
    head.append(" ")
    head.append(f.code, style=f"bold {color}")
    parts = [head, Text(f.message)]
    if f.by_role:
        by = Text("by role: ", style=DIM)
        by.append_text(_roles(f.by_role))
        parts.append(by)
    parts.append(_where(report, f))
    parts.append(Text(""))  # air between findings
    return Group(*parts)


def group_prompt(report: Report, group: list[Finding], unfolded: bool) -> Group:
    """Repeated findings of one code as one row: the count, the first one's sentence, where they
    are, and Enter to unfold (or fold) them."""
    f = group[0]
    color = SEVERITY_COLORS.get(f.severity, "white")
    head = Text()
    head.append(f" {f.severity.upper()} ", style=f"bold #0d1117 on {color}")
    head.append(" ")
    head.append(f.code, style=f"bold {color}")
    head.append(f" ×{len(group):,}", style="bold")
    first = Text("first: ", style=DIM)
    first.append(f.message)
    named = [g.records for g in group if g.records]  # (each finding's min and max, not one list of them all)
    where = Text("→ ", style="#d2a8ff")
    if named:
        records = report.ledger.records
        lo, hi = records[min(map(min, named))].line, records[max(map(max, named))].line
        where.append(f"line {lo}" if lo == hi else f"lines {lo}–{hi}", style="bold")
        where.append(" · ", style=DIM)
    where.append("Enter to fold" if unfolded else f"Enter to show all {len(group):,}", style=f"italic {DIM}")
    return Group(head, first, where, Text(""))


class FindingsList(OptionList):
    """The report's findings; Enter or click jumps to the records a finding points at."""

    DEFAULT_CSS = """
    FindingsList { height: 1fr; max-height: 100%; border: none; padding: 0 1; background: $surface; }
    FindingsList:focus { border: none; background-tint: $foreground 0%; }
    FindingsList > .option-list--option { padding: 0 1; }
    FindingsList > .option-list--option-highlighted { background: #1c3350; color: $foreground; text-style: none; }
    FindingsList:focus > .option-list--option-highlighted { background: #1f4a7a; color: $foreground; text-style: none; }
    """

    class Jump(Message):
        """The user picked a finding: go to the records it points at (file order)."""

        def __init__(self, seqs: list[int]) -> None:
            super().__init__()
            self.seqs = seqs

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.report: Report | None = None
        self.findings: list[Finding] = []
        self.unfolded: set[str] = set()  # "severity:code" of the groups shown finding by finding

    def on_mount(self) -> None:
        if self.report is None:
            self.set_report(None)

    def set_report(self, report: Report | None) -> None:
        self.report = report
        self.clear_options()
        if report is None:
            self.findings = []
            self.add_option(Option(Text("analysing…", style=f"italic {DIM}"), disabled=True))
            return
        self.findings = sorted(report.findings, key=lambda f: SEVERITY_RANK.get(f.severity, 9))
        if not self.findings:
            ok = Text("✓ No findings", style="bold #3fb950")
            ok.append(
                ": every message that left the context is represented, and the next request is valid.",
                style=DIM,
            )
            self.add_option(Option(ok, disabled=True))
            return
        self._fill()

    def _fill(self, highlight: str | None = None) -> None:
        """The options: severity titles, then each finding, or one row per group of repeated
        findings of one code (Enter unfolds it); `highlight` is the option id to land on."""
        report = self.report
        assert report is not None
        self.clear_options()
        options: list[Option | None] = []
        groups = finding_groups(self.findings)
        for sev in SEVERITIES:
            group = [(code, members) for code, members in groups if self.findings[members[0]].severity == sev]
            if not group:
                continue
            count = sum(len(members) for _, members in group)
            title = Text(
                f"{SEVERITY_NAMES.get(sev, sev)} · {count}",
                style=f"bold {SEVERITY_COLORS.get(sev, 'white')}",
            )
            options.append(Option(title, disabled=True))
            for code, members in group:
                if len(members) == 1:
                    options.append(Option(finding_prompt(report, self.findings[members[0]]), id=f"finding-{members[0]}"))
                    continue
                key = f"{sev}:{code}"
                unfolded = key in self.unfolded
                options.append(Option(group_prompt(report, [self.findings[i] for i in members], unfolded), id=f"group-{key}"))
                if unfolded:
                    options += [Option(finding_prompt(report, self.findings[i], indent=True), id=f"finding-{i}") for i in members]
        self.add_options(options)
        target = next((k for k, o in enumerate(self.options) if highlight is not None and o.id == highlight), None)
        if target is None:
            target = next((k for k, o in enumerate(self.options) if not o.disabled), None)
        if target is not None:
            self.highlighted = target

    def show_finding(self, f: Finding) -> None:
        """Highlight a finding (its group's row while the group is folded)."""
        if f not in self.findings:
            return
        i = self.findings.index(f)
        ids = {o.id for o in self.options}
        target = f"finding-{i}" if f"finding-{i}" in ids else f"group-{f.severity}:{f.code}"
        k = next((k for k, o in enumerate(self.options) if o.id == target), None)
        if k is not None:
            self.highlighted = k

    def finding_at(self, option_index: int) -> Finding | None:
        opt = self.get_option_at_index(option_index)
        if opt.id is None or not opt.id.startswith("finding-"):
            return None
        return self.findings[int(opt.id.removeprefix("finding-"))]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        opt_id = event.option.id or ""
        if opt_id.startswith("group-"):
            key = opt_id.removeprefix("group-")
            self.unfolded ^= {key}
            self._fill(highlight=opt_id)
            return
        f = self.finding_at(event.option_index)
        if f is None:
            return
        if not f.records:
            self.notify(f"{f.code} points at no single record.", timeout=3)
            return
        self.post_message(self.Jump(list(f.records)))
