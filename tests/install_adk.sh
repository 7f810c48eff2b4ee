#!/usr/bin/env bash
# Install the pinned google-adk 2.13 (the peers' runtime) into ./.adk-venv for the differential tests
# (tests/differential, tests/test_differential.py), the way ../shared/peers/adk/README.md says.
# Idempotent; without the package index it says so (those tests then fail, naming the cause).
set -euo pipefail
cd "$(dirname "$0")/.."
ADK_VERSION="2.13.0"
PEERS="../shared/peers/adk"
have=""
if [ -x .adk-venv/bin/python ]; then
  have=$(.adk-venv/bin/python -c "import google.adk; print(google.adk.__version__)" 2>/dev/null || true)
fi
if [ "$have" != "$ADK_VERSION" ]; then
  echo "install_adk: installing google-adk==$ADK_VERSION into .adk-venv/"
  python3 -m venv .adk-venv
  pins=(google-adk=="$ADK_VERSION" "sqlalchemy[asyncio]==2.1.9" greenlet==3.5.6 aiosqlite==0.22.1)
  cons=()
  if [ -f "$PEERS/constraints.txt" ]; then cons=(-c "$PEERS/constraints.txt"); fi
  if ! .adk-venv/bin/pip install -q "${pins[@]}" "${cons[@]}" >/dev/null 2>&1; then
    echo "install_adk: pip could not install google-adk==$ADK_VERSION (no index?): the differential test against the real ADK will fail, naming this" >&2
    exit 0
  fi
fi
echo "install_adk: google-adk $(.adk-venv/bin/python -c "import google.adk; print(google.adk.__version__)") in .adk-venv/"
