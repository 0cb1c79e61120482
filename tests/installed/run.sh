#!/usr/bin/env bash
# The packages as a user gets them: packed as published (scripts/pack.sh), installed with npm from the
# tarballs into an empty project outside the checkout (no workspace, no links, no TypeScript, no tsx),
# then used through their public API from plain Node and from Bun (use.mjs), and the MCP server started
# from its bin under Node and Bun and driven by the official SDK client (mcp.mjs). Last, with the platform
# package removed, the import must fail with ENOTSUP naming it (no-binary.mjs). Each tarball ships
# only what a user runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
checkout=$(cd "$here/../.." && pwd)
work=$(mktemp -d -t natives-installed-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "installed: $*" >&2; exit 1; }

"$checkout/scripts/pack.sh" "$work/tarballs"
# What ships: the license, the readme, the manifest, compiled modules with their declarations, the
# generated loader and a binary; never a source, test, bench or source map.
shipped='^package/(LICENSE|README\.md|package\.json|index\.cjs|index\.d\.cts|dist/[a-z-]+\.(js|d\.ts|cjs)|natives\.[a-z0-9-]+\.node)$'
for tarball in "$work"/tarballs/*.tgz; do
  tar -tzf "$tarball" | grep -x 'package/LICENSE' >/dev/null || fail "$(basename "$tarball") has no LICENSE"
  unexpected=$(tar -tzf "$tarball" | grep -Ev "$shipped" || true)
  [ -z "$unexpected" ] || fail "$(basename "$tarball") ships what it should not: $unexpected"
done
project="$work/project"
mkdir "$project"
cp "$here"/*.mjs "$here"/*.cjs "$project/"
echo '{"name": "natives-installed", "private": true, "type": "module"}' > "$project/package.json"
cd "$project"
# The MCP tests' client side (the official SDK client, ajv) comes from the registry like any user's.
npm install --no-audit --no-fund --prefer-offline --loglevel=error "$work"/tarballs/*.tgz @modelcontextprotocol/sdk@1 ajv@8

for absent in typescript tsx; do
  [ ! -e "node_modules/$absent" ] || fail "$absent was installed: the check would not prove plain Node"
done
if compgen -G 'node_modules/@natives/natives/*.node' >/dev/null; then
  fail "the main package carries a binary: it belongs in the platform package"
fi
platform_package=$(cd node_modules && echo @natives/natives-*)
[ -d "node_modules/$platform_package" ] || fail "no platform package was installed"

NODE_OPTIONS='' node use.mjs
bun use.mjs
# Subpaths load their domain alone; require() works where Node cannot require an ES module (before
# 20.19, or with that switched off, as here).
NODE_OPTIONS='' node subpaths.mjs
NODE_OPTIONS='' node --no-experimental-require-module require.cjs
# The MCP server from its bin, under Node and under Bun, every case through the SDK client; the
# inspector is the checkout's (a dev dependency: large, and a client like any other).
export MCP_INSPECTOR="$checkout/node_modules/.bin/mcp-inspector"
[ -x "$MCP_INSPECTOR" ] || fail "no MCP Inspector at $MCP_INSPECTOR (run bun install)"
NODE_OPTIONS='' node mcp.mjs node
NODE_OPTIONS='' node mcp.mjs bun
rm -rf "node_modules/$platform_package"
NODE_OPTIONS='' node no-binary.mjs "$platform_package"
bun no-binary.mjs "$platform_package"
