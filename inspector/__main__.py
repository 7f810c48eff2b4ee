"""`python -m inspector` is the `inspector` command."""

from inspector.cli.main import run

if __name__ == "__main__":
    run()
