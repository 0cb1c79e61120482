#!/usr/bin/env bash
# Installs the peers the benchmarks compare against, reproducibly and locally:
#   - ripgrep and fd from crates.io into bench/.tools/bin (pinned versions),
#   - the JS peers declared in bench/package.json (locked by bench/bun.lock),
#   - fzf from Debian packages when missing (optional, failure is ignored),
#   - with --real-trees, the real trees (bench/real-trees.ts: cargo vendor and
#     npm ci of pinned packages; run.ts otherwise builds them on first use).
# Safe to re-run: every step is skipped when its result is already there.
set -euo pipefail
cd "$(dirname "$0")"

RG_VERSION=15.2.0
FD_VERSION=10.5.0
TOOLS="$PWD/.tools"

install_crate() { # crate version binary
  local have=""
  if [ -x "$TOOLS/bin/$3" ]; then have="$("$TOOLS/bin/$3" --version | head -n1)"; fi
  if [[ "$have" == *" $2"* ]]; then
    echo "setup: $3 $2 already in $TOOLS/bin"
  else
    echo "setup: cargo install $1@$2 -> $TOOLS"
    cargo install --locked --quiet --root "$TOOLS" "$1@$2"
  fi
}

install_crate ripgrep "$RG_VERSION" rg
install_crate fd-find "$FD_VERSION" fd

echo "setup: bun install (bench/package.json)"
bun install --frozen-lockfile

if ! command -v fzf >/dev/null 2>&1; then
  echo "setup: fzf missing, trying apt-get (optional)"
  { apt-get install -y -qq fzf || { apt-get update -qq && apt-get install -y -qq fzf; }; } \
    >/dev/null 2>&1 || echo "setup: fzf not installed (fuzzy benches will skip it)"
fi
if [ "${1:-}" = "--real-trees" ]; then
  echo "setup: real trees (bench/real-trees.ts)"
  bun real-trees.ts
fi
echo "setup: done"
