#!/usr/bin/env bash
# Install the pinned pi coding agent (the peers' runtime) into ./.pi for the pi acceptance tests
# (tests/test_pi_accepts.py), the way ../shared/peers/README.md says. Idempotent; without node it
# says so and does nothing (those tests then fail, naming the cause).
set -euo pipefail
cd "$(dirname "$0")/.."
PI_VERSION="0.73.1"
PKG="@mariozechner/pi-coding-agent"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install_pi: node/npm not found: the pi acceptance tests will fail, naming this"
  exit 0
fi
have=""
if [ -f ".pi/node_modules/$PKG/package.json" ]; then
  have=$(node -e "console.log(require('./.pi/node_modules/$PKG/package.json').version)")
fi
if [ "$have" != "$PI_VERSION" ]; then
  echo "install_pi: installing $PKG@$PI_VERSION into .pi/"
  if ! npm install --prefix .pi --no-audit --no-fund --save-exact --loglevel=error "$PKG@$PI_VERSION" >/dev/null; then
    # The rest of the suite still runs; tests/test_pi_accepts.py then fails saying pi is missing.
    echo "install_pi: npm could not install $PKG@$PI_VERSION (no registry?): the pi acceptance test will fail" >&2
    exit 0
  fi
fi
echo "install_pi: $PKG $(node -e "console.log(require('./.pi/node_modules/$PKG/package.json').version)") in .pi/"
