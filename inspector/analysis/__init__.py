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

__all__ = ["STATES", "CheckpointView", "ContextItem", "Finding", "Report", "analyze"]
