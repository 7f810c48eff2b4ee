#!/usr/bin/env bash
# Install every pinned real runtime the tests use as their oracle (idempotent; each script says what
# it did, and what it could not install): pi 0.73.1 (npm) into .pi/, google-adk 2.13 (PyPI) into
# .adk-venv/, Claude Code 2.1.328 (npm) into tests/peers/claude_code_hook/runtime/, Codex 0.169.0 (npm) into
# tests/peers/codex_resume/runtime/, OpenClaw 2026.9.6 (npm, with node 24) into tests/peers/openclaw/runtime/.
set -euo pipefail
cd "$(dirname "$0")/.."
tests/install_pi.sh
tests/install_codex.sh
tests/install_adk.sh
tests/peers/claude_code_hook/install.sh
tests/peers/openclaw/install.sh
