"""Compaction planning and repair: the strategies, the cut, the summarizer's requests, the checkpoint."""

# The repair strategies (`plan.plan_repair`), here so that the CLI's parser names them without
# importing the planner.
STRATEGIES: tuple[str, ...] = ("compact", "resummarize", "recover")
