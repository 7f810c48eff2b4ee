#!/usr/bin/env bash
# Install every pinned real runtime the tests use as their oracle (idempotent; each script says what
# it did, and what it could not install): pi 0.73.1 (npm) into .pi/, google-adk 2.13 (PyPI) into
# .adk-venv/, Claude Code 2.1.328 (npm) into tests/peers/claude_code_hook/runtime/, Codex 0.169.0 (npm) into
# tests/peers/codex_resume/runtime/, OpenClaw 2026.9.6 (npm, with node 24) into tests/peers/openclaw/runtime/.
# The five are independent (own folders; npm's cache is safe to share), so they run side by side:
# mostly download and unpacking, they take the time of the slowest instead of the sum (CI's budget).
# Each one's output is printed whole, in this order, once all are done; the first failure's status
# is this script's.
set -euo pipefail
cd "$(dirname "$0")/.."
installers=(
  tests/install_pi.sh
  tests/install_codex.sh
  tests/install_adk.sh
  tests/peers/claude_code_hook/install.sh
  tests/peers/openclaw/install.sh
)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=()
for i in "${!installers[@]}"; do
  "${installers[$i]}" >"$logs/$i" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!installers[@]}"; do
  rc=0
  wait "${pids[$i]}" || rc=$?
  cat "$logs/$i"
  if [ "$rc" -ne 0 ]; then
    echo "install_runtimes: ${installers[$i]} failed (exit $rc)" >&2
    [ "$status" -ne 0 ] || status=$rc
  fi
done
exit "$status"
