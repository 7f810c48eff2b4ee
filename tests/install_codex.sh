#!/usr/bin/env bash
# Install the pinned Codex CLI (npm @openai/codex 0.169.0, whose native musl binary comes as the
# optional dependency @openai/codex-linux-x64) into tests/peers/codex_resume/runtime/ (git-ignored),
# the way ../shared/peers/codex/setup.sh does, for the Codex acceptance test
# (tests/test_codex_accepts.py). Idempotent: a no-op when the pinned version is there. Without npm,
# or when npm cannot install it, it says so and exits 0: that test then fails naming the cause.
set -euo pipefail
cd "$(dirname "$0")/peers/codex_resume"
CODEX_VERSION="0.169.0"
PKG="@openai/codex"
BIN="runtime/node_modules/$PKG-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
if ! command -v npm >/dev/null; then
  echo "install_codex: npm not found: the Codex acceptance test will fail, naming this" >&2
  exit 0
fi
have=""
if [ -x "$BIN" ]; then
  have=$(env -i PATH=/usr/bin:/bin HOME=/nonexistent "$BIN" --version 2>/dev/null | awk '{print $NF}' || true)
fi
if [ "$have" != "$CODEX_VERSION" ]; then
  echo "install_codex: installing $PKG@$CODEX_VERSION into tests/peers/codex_resume/runtime/"
  mkdir -p runtime
  if ! npm install --prefix runtime --ignore-scripts --no-audit --no-fund --save-exact --loglevel=error \
      "$PKG@$CODEX_VERSION" >/dev/null; then
    echo "install_codex: npm could not install $PKG@$CODEX_VERSION (no registry?): the Codex acceptance test will fail" >&2
    exit 0
  fi
fi
if [ ! -x "$BIN" ]; then
  echo "install_codex: $BIN is missing after the install (not linux-x64?): the Codex acceptance test will fail" >&2
  exit 0
fi
echo "install_codex: $(env -i PATH=/usr/bin:/bin HOME=/nonexistent "$BIN" --version) in tests/peers/codex_resume/runtime/"
