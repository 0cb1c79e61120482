#!/usr/bin/env bash
# Set up a fresh machine (needs only Node 20 + npm and a Rust toolchain) and build everything:
# Bun (through npm), the JS dependencies, the N-API addon and the `natives` CLI (linked at target/natives).
set -euo pipefail
cd "$(dirname "$0")/.."

BUN_VERSION=1.4.5
need() { command -v "$1" >/dev/null || { echo "setup: '$1' is required but not installed" >&2; exit 2; }; }
need node; need npm; need cargo; need rustc

# Bun goes where npm puts global packages when this user may write there, else into target/tools
# (linked into target/tools/bin, which the scripts put first on PATH): no root needed.
export PATH="$PWD/target/tools/bin:$PATH"
if [ "$(bun --version 2>/dev/null || true)" != "$BUN_VERSION" ]; then
  global=$(npm prefix -g)
  if [ -w "$global/lib/node_modules" ] && [ -w "$global/bin" ]; then
    echo "setup: installing bun $BUN_VERSION through npm"
    npm i -g --allow-scripts=bun "bun@$BUN_VERSION" >/dev/null
  else
    echo "setup: installing bun $BUN_VERSION through npm into target/tools (the global prefix is not writable)"
    mkdir -p target/tools/bun
    # A project-scoped install takes its script permission from package.json, not the command line.
    echo '{"private": true, "allowScripts": {"bun": true}}' > target/tools/bun/package.json
    npm i --prefix target/tools/bun "bun@$BUN_VERSION" >/dev/null
    mkdir -p target/tools/bin
    ln -sf ../bun/node_modules/.bin/bun target/tools/bin/bun
  fi
fi

# Filesystems that clone files, for the build-cache pool's tests (they mount an image of one when run
# as root, and say why they skipped otherwise): btrfs-progs and xfsprogs, when root and apt-get are here.
missing=""
command -v mkfs.btrfs >/dev/null || missing="$missing btrfs-progs"
command -v mkfs.xfs >/dev/null || missing="$missing xfsprogs"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && [ -n "$missing" ]; then
  echo "setup: installing$missing (the pool's reflink and block-sharing tests)"
  # shellcheck disable=SC2086 # one word per package
  if ! apt-get install -y -qq $missing >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1 || true
    apt-get install -y -qq $missing >/dev/null 2>&1 \
      || echo "setup:$missing not installed; the pool's tests on them will say they skipped" >&2
  fi
fi

bun install --frozen-lockfile
# The addon is built for the host triple; the CLI uses the same --target so both share one build of the crates.
bun run --cwd packages/natives build
host=$(rustc -vV | sed -n 's/^host: //p')
cargo build --release --locked -p natives-cli --target "$host"
ln -sf "$host/release/natives" target/natives

# ripgrep, the reference the grep tests compare against (pinned; skipped when already there).
RG_VERSION=15.2.0
if [ "$(target/tools/bin/rg --version 2>/dev/null | head -n1)" != "ripgrep $RG_VERSION" ]; then
  echo "setup: installing ripgrep $RG_VERSION into target/tools"
  cargo install --quiet --locked --root target/tools ripgrep --version "$RG_VERSION"
fi
echo "setup: done (addon: packages/natives/$(cd packages/natives && ls *.node), CLI: target/natives)"
