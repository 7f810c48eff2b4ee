"""Writes inspector/formats/pi_windows.json: the context window of every model pi's built-in
registry knows (pi-ai's `models.generated.js` of the pinned pi in `.pi/`), by "provider/id", as
pi's `ModelRegistry.find(provider, modelId)` finds the model it resumes a session with.

    python -m tests.peers.pi_resume.model_windows          # rewrite the table
    python -m tests.peers.pi_resume.model_windows --check  # exit 1 when the table is stale

Read by node itself (the module is JavaScript), not parsed here. A model a user adds in their own
models.json is not in it: the analysis then knows no window unless `--window` gives one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PI_AI = REPO / ".pi" / "node_modules" / "@mariozechner" / "pi-ai"
TABLE = REPO / "inspector" / "formats" / "pi_windows.json"

_DUMP = """
import(process.argv[1]).then((m) => {
  const out = {};
  for (const [provider, models] of Object.entries(m.MODELS))
    for (const [id, model] of Object.entries(models))
      if (Number.isInteger(model.contextWindow) && model.contextWindow > 0) out[`${provider}/${id}`] = model.contextWindow;
  process.stdout.write(JSON.stringify(out));
});
"""


def table() -> dict[str, object]:
    version = json.loads((PI_AI / "package.json").read_text())["version"]
    got = subprocess.run(
        ["node", "-e", _DUMP, (PI_AI / "dist" / "models.generated.js").as_uri()], check=True, capture_output=True, text=True
    )
    windows = json.loads(got.stdout)
    return {"source": f"@mariozechner/pi-ai {version} dist/models.generated.js", "windows": dict(sorted(windows.items()))}


def main(argv: list[str]) -> int:
    new = json.dumps(table(), indent=0, sort_keys=False) + "\n"
    if "--check" in argv:
        stale = not TABLE.exists() or TABLE.read_text() != new
        print(f"{TABLE.relative_to(REPO)}: {'stale' if stale else 'up to date'}")
        return 1 if stale else 0
    TABLE.write_text(new)
    print(f"wrote {TABLE.relative_to(REPO)}: {len(json.loads(new)['windows'])} models")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
