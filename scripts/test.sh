#!/usr/bin/env bash
# Run every test: lints and type-check, the end-to-end suite on the real addon under Bun, the Node 20
# load check, the packed packages installed from their tarballs and used from plain Node and Bun, then
# the Rust workspace tests (last, so their summary closes the output).
# Expects scripts/setup.sh to have run (the addon must be built).
set -euo pipefail
cd "$(dirname "$0")/.."
# The grep parity tests compare with the ripgrep that setup.sh installs here.
export PATH="$PWD/target/tools/bin:$PATH"

echo "== lint and type-check"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
node_modules/.bin/tsc -p tsconfig.json

echo "== bun test (end to end, real addon)"
bun test

echo "== node $(node --version): load the same addon"
node scripts/node-load-check.mjs
node --import tsx tests/node/smoke.ts
node --import tsx tests/node/text-smoke.ts
node --import tsx tests/node/agent-smoke.ts
node --import tsx tests/node/claims-smoke.ts
node --import tsx tests/node/lease-smoke.ts
node --import tsx tests/node/pool-smoke.ts
node --import tsx tests/node/worktrees-smoke.ts

echo "== the packages as published: packed, installed with npm into an empty project, used from node and bun"
tests/installed/run.sh

echo "== cargo test"
# Docs: no broken or private link (about 11 s of CPU for the workspace's crates).
RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --locked
# The addon turns on the library crates' `napi` feature; tested with the
# workspace, cargo would unify it into every crate's test binaries, which then
# need Node to link. So the addon's unit tests run on their own.
cargo test --workspace --exclude natives --locked
cargo test -p natives --locked
