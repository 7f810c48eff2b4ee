"""Analysis (DESIGN §4): pure functions from a Ledger to a Report. No UI, no I/O."""

from inspector.analysis import findings as _findings  # noqa: F401 - `analyze` imports it on its first call: loaded with the package, not then
from inspector.analysis.engine import (
    STATES,
    CheckpointView,
    ContextItem,
    Finding,
    Report,
    analyze,
)

# How `usage.group_usage` can group (here, so that the CLI's parser names them without importing
# the price table's models).
GROUPINGS = ("day", "project", "session", "model")

__all__ = ["GROUPINGS", "STATES", "CheckpointView", "ContextItem", "Finding", "Report", "analyze"]
