#!/usr/bin/env bash
# Runs every benchmark section under Bun and under Node 20 (through tsx), one
# process each; results land in bench/.data/results-{bun,node}.json.
# The first run generates bench/.data/tree unless NATIVES_BENCH_DIR is set.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d node_modules ] || [ ! -x .tools/bin/fd ] || [ ! -x .tools/bin/rg ]; then bash setup.sh; fi
bun run.ts
node --import tsx run.ts
