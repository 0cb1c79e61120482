#!/usr/bin/env bash
# Pack the packages as they are published, into OUT (default target/pack): @natives/natives, one
# @natives/natives-<platform> package per binary in ARTIFACTS (default: the one built here,
# packages/natives/*.node), @natives/coding-agent and @natives/mcp. The napi CLI does the napi part as a release
# does: `napi artifacts` puts each binary into its platform package (npm/<platform>, made by
# `napi create-npm-dirs`), and `napi pre-publish` pins their version and lists them as the main
# package's optionalDependencies. That runs on a staged copy of the main package, unpacked from its
# own tarball (so exactly what its `files` ship), and publishes nothing: the checkout is left as it is.
# Expects scripts/setup.sh to have run (the workspace installed, the addon built).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
out=$(realpath -m "${1:-target/pack}")
artifacts=$(realpath -m "${2:-packages/natives}")
napi="$repo/node_modules/.bin/napi"
# Run a step, showing its output only when it fails.
quiet() {
  local log
  log=$("$@" 2>&1) || { echo "$log" >&2; echo "pack: failed: $*" >&2; return 1; }
}

rm -rf "$out"
stage="$out/.stage"
mkdir -p "$stage/natives" "$stage/artifacts"

# npm pack compiles each package first (its prepack script), so dist/ is never stale.
(cd packages/natives && quiet npm pack --pack-destination "$stage")
tar -xzf "$stage"/natives-natives-*.tgz -C "$stage/natives" --strip-components=1
cp -R packages/natives/npm "$stage/natives/npm"
cp "$artifacts"/*.node "$stage/artifacts/"
quiet "$napi" artifacts --cwd "$stage/natives" --output-dir "$stage/artifacts"
quiet "$napi" pre-publish --cwd "$stage/natives" --tag-style npm --skip-optional-publish --no-gh-release

# The staged copies are packed as they are: their prepack (compiling) already ran above.
quiet npm pack --ignore-scripts --pack-destination "$out" "$stage/natives" "$stage"/natives/npm/*/
(cd packages/coding-agent && quiet npm pack --pack-destination "$out")
(cd packages/mcp && quiet npm pack --pack-destination "$out")
rm -rf "$stage"
for tarball in "$out"/*.tgz; do
  unpacked=$(tar -tzvf "$tarball" | awk '{ bytes += $3 } END { print bytes }')
  echo "pack: $(basename "$tarball"): $(stat -c %s "$tarball") bytes packed, $unpacked unpacked, $(tar -tzf "$tarball" | wc -l) files"
done
