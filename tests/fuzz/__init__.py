"""A mutation fuzzer for every format and every command (issue 11).

    python -m tests.fuzz --cases 10000 --seed 1 --out fuzz-out
    python -m tests.fuzz --cases 1500 --formats adk_go_db,adk_go_json,maka_db,nextclaw --seed 1

Real session files of every format (`sample_sessions/`, `../shared/real_sessions/`,
`../shared/peers/*/corpus/`), and for the runtimes that cannot be run here (adk-go, maka, NextClaw)
stores built from their own types (`seeds.py`, written under `--out`/seeds), are mutated (seeded, deterministic: `mutations.py`) and run through
the CLI's own `main(argv)` and the app headless, in-process inside worker subprocesses (`worker.py`)
that the parent (`campaign.py`) feeds, times out, restarts and measures. Every case is checked
against the contract (`runner.py`): no traceback, exit 0/1/2, valid `--json`, the input unchanged,
every diagnostic naming its line (or row) and cause, `--out` only on success, no hang, bounded RSS.
Distinct crashes are deduplicated by location and written, minimized, to `--out`.
"""
