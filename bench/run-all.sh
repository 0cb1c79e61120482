#!/usr/bin/env bash
# Runs every benchmark section under Bun and under Node 20 (through tsx), one
# process each, then the watched-cache bench (watch.ts) and, under Bun, the
# agent peer (agent.ts); results land in bench/.data/results-{bun,node}.{json,md},
# bench/.data/watch-{bun,node}.json and bench/.data/agent-bun.{json,md}.
# The first run generates bench/.data/tree (unless NATIVES_BENCH_DIR is set) and
# the real trees (bench/real-trees.ts). Arguments (--quick) go to run.ts; the
# exit status is non-zero when a row's contenders did unequal work.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d node_modules ] || [ ! -x .tools/bin/fd ] || [ ! -x .tools/bin/rg ]; then bash setup.sh; fi
status=0
bun run.ts "$@" || status=$?
bun watch.ts || status=$?
bun agent.ts "$@" || status=$?
node --import tsx run.ts "$@" || status=$?
node --import tsx watch.ts || status=$?
exit "$status"
