"""`python -m inspector.contracts --write`: generate every contract's JSON Schema into
inspector/schemas/; `--check` (the default) says which files differ from their models (exit 1)."""

from __future__ import annotations

import argparse
import sys

from inspector.contracts import contracts, schema_text


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m inspector.contracts", description=__doc__)
    p.add_argument("--write", action="store_true", help="write the schema files (default: check them)")
    args = p.parse_args(argv)
    stale = []
    for c in contracts():
        text = schema_text(c)
        current = c.path.read_text(encoding="utf-8") if c.path.exists() else None
        if current == text:
            continue
        if args.write:
            c.path.write_text(text, encoding="utf-8")
            print(f"wrote {c.path}")
        else:
            stale.append(c.path)
            print(f"{c.path}: differs from {c.model.__module__}.{c.model.__name__} (python -m inspector.contracts --write)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
