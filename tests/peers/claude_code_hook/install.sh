#!/usr/bin/env bash
# Install the pinned Claude Code CLI (npm @anthropic-ai/claude-code, whose native binary comes as the
# optional dependency @anthropic-ai/claude-code-linux-x64) into ./runtime (git-ignored, ~360 MB),
# the way ../shared/peers/claude_code/setup.sh does. Idempotent: a no-op when the pinned version is
# there. Install scripts are not run (the harness runs the native binary directly). Without npm, or
# when npm cannot install it, it says so and exits 0: tests/test_hook_claude_code.py then fails
# naming the cause.
set -euo pipefail
cd "$(dirname "$0")"
CLAUDE_CODE_VERSION="2.1.328"
PKG="@anthropic-ai/claude-code"
BIN="runtime/node_modules/$PKG-linux-x64/claude"
if ! command -v npm >/dev/null; then
  echo "install: npm not found: the Claude Code hook test cannot run here" >&2
  exit 0
fi
have=""
if [ -x "$BIN" ] && [ -f "runtime/node_modules/$PKG/package.json" ]; then
  have=$(node -p "require('./runtime/node_modules/$PKG/package.json').version" 2>/dev/null || true)
fi
if [ "$have" != "$CLAUDE_CODE_VERSION" ]; then
  echo "install: $PKG@$CLAUDE_CODE_VERSION into tests/peers/claude_code_hook/runtime/"
  mkdir -p runtime
  if ! npm install --prefix runtime --ignore-scripts --no-audit --no-fund --save-exact --loglevel=error \
      "$PKG@$CLAUDE_CODE_VERSION" >/dev/null; then
    echo "install: npm could not install $PKG@$CLAUDE_CODE_VERSION (no registry?): the hook test will fail" >&2
    exit 0
  fi
fi
if [ ! -x "$BIN" ]; then
  echo "install: $BIN is missing after the install (not linux-x64?): the hook test will fail" >&2
  exit 0
fi
echo "install: claude $(env -i PATH=/usr/bin:/bin HOME="$(mktemp -d)" "$BIN" --version) in tests/peers/claude_code_hook/runtime/"
