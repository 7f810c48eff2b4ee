"""Writes inspector/formats/pi_windows.json: what pi's built-in registry (pi-ai's
`models.generated.js` of the pinned pi in `.pi/`) says of every model it ships, by "provider/id",
as pi's `ModelRegistry.find(provider, modelId)` finds the model it resumes a session with: its
context window, its `api` and whether its `input` takes images. The window decides when pi
compacts first (`inspector/formats/pi_resume.py`); the api (with the provider and id) whether a
reply is another model's, and the input whether images are sent, when pi-ai's `transformMessages`
rewrites the next request (`inspector/formats/pi_transform.py`).

    python -m tests.peers.pi_resume.model_windows          # rewrite the table
    python -m tests.peers.pi_resume.model_windows --check  # exit 1 when the table is stale

Read by node itself (the module is JavaScript), not parsed here. One line a model,
`[window, api, image]`: the window (null: not a positive integer), the api as an index into `apis`,
1 when `input` holds "image". A model a user adds in their own models.json is not in it.
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
      out[`${provider}/${id}`] = {
        window: Number.isInteger(model.contextWindow) && model.contextWindow > 0 ? model.contextWindow : null,
        api: model.api, image: Array.isArray(model.input) && model.input.includes("image"),
        same: model.provider === provider && model.id === id,
      };
  process.stdout.write(JSON.stringify(out));
});
"""


def table() -> str:
    """The table's text."""
    version = json.loads((PI_AI / "package.json").read_text())["version"]
    got = subprocess.run(
        ["node", "-e", _DUMP, (PI_AI / "dist" / "models.generated.js").as_uri()], check=True, capture_output=True, text=True
    )
    models = json.loads(got.stdout)
    # (the registry keys a model by its own provider and id: `find` compares those)
    assert all(m["same"] for m in models.values()), "a model whose provider or id is not its key"
    apis = sorted({m["api"] for m in models.values()})
    rows = [f"{json.dumps(k)}: {json.dumps([m['window'], apis.index(m['api']), int(m['image'])])}" for k, m in sorted(models.items())]
    head = f'"source": {json.dumps(f"@mariozechner/pi-ai {version} dist/models.generated.js")},\n"apis": {json.dumps(apis)},\n'
    return "{\n" + head + '"models": {\n' + ",\n".join(rows) + "\n}\n}\n"


def main(argv: list[str]) -> int:
    new = table()
    if "--check" in argv:
        stale = not TABLE.exists() or TABLE.read_text() != new
        print(f"{TABLE.relative_to(REPO)}: {'stale' if stale else 'up to date'}")
        return 1 if stale else 0
    TABLE.write_text(new)
    print(f"wrote {TABLE.relative_to(REPO)}: {len(json.loads(new)['models'])} models")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
