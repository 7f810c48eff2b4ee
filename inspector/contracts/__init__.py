"""The models of every `--json` contract the command line prints, and the JSON Schemas generated
from them into inspector/schemas/ (`python -m inspector.contracts --write`).

Off the hot path: the commands build their documents as plain dicts (speed), these models state
what those documents hold, and tests/test_contracts.py checks the real output of every command
against the schemas. Field descriptions are the docs' words (docs/*-json.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"
SCHEMA_BASE = "https://inspector.invalid/schemas/"


@dataclass(frozen=True, slots=True)
class Contract:
    """One `--json` document: its schema file in inspector/schemas/, the model and a title."""

    file: str
    model: type[BaseModel]
    title: str

    def schema(self) -> dict[str, object]:
        schema = self.model.model_json_schema(by_alias=True)
        schema["$id"] = SCHEMA_BASE + self.file
        schema["title"] = self.title
        return schema

    @property
    def path(self) -> Path:
        return SCHEMA_DIR / self.file


def contracts() -> list[Contract]:
    """Every contract, in the order the docs present them (imported here, not at module load)."""
    from inspector.analysis.sessions import ScanRow
    from inspector.contracts import across, backups, hooks, live, repair, report, simulate

    return [
        Contract("analyze.schema.json", report.AnalyzeDocument, "inspector analyze --json (inspector.analyze/1)"),
        Contract("context.schema.json", report.ContextDocument, "inspector context --json (inspector.context/1)"),
        Contract("plan.schema.json", repair.PlanDocument, "inspector plan --json (inspector.plan/1)"),
        Contract("repair.schema.json", repair.RepairDocument, "inspector repair --json (inspector.repair/1)"),
        Contract("backups.schema.json", backups.BackupsDocument, "inspector backups --json"),
        Contract("undo.schema.json", backups.UndoDocument, "inspector undo --json"),
        Contract("simulate.schema.json", simulate.SimulationDocument, "inspector simulate --json"),
        Contract("scan-row.schema.json", ScanRow, "inspector scan --json line (inspector.scan/1)"),
        Contract("usage.schema.json", across.UsageDocument, "inspector usage --json (inspector.usage/1)"),
        Contract("search.schema.json", across.SearchDocument, "inspector search --json (inspector.search/1)"),
        Contract("watch-event.schema.json", live.WatchEvent, "inspector watch --json line"),
        Contract("hook-claude-code.schema.json", hooks.ClaudeCodeSessionStartAnswer, "inspector hook claude-code on SessionStart"),
        Contract("hook-pi.schema.json", hooks.PiHookAnswer, "inspector hook pi (inspector.hook.pi/1)"),
    ]


def contract(file: str) -> Contract:
    for c in contracts():
        if c.file == file:
            return c
    raise KeyError(file)


def schema_text(c: Contract) -> str:
    """The schema file's text: indented, ASCII, keys in the model's order, a final newline."""
    return json.dumps(c.schema(), indent=2) + "\n"
