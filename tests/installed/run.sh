#!/usr/bin/env bash
# The packages as a user gets them: packed as published (scripts/pack.sh), installed with npm from the
# tarballs into an empty project outside the checkout (no workspace, no links, no TypeScript, no tsx),
# then used through their public API from plain Node and from Bun (use.mjs). Last, with the platform
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
shipped='^package/(LICENSE|README\.md|package\.json|index\.cjs|index\.d\.cts|dist/[a-z-]+\.(js|d\.ts)|natives\.[a-z0-9-]+\.node)$'
for tarball in "$work"/tarballs/*.tgz; do
  tar -tzf "$tarball" | grep -x 'package/LICENSE' >/dev/null || fail "$(basename "$tarball") has no LICENSE"
  unexpected=$(tar -tzf "$tarball" | grep -Ev "$shipped" || true)
  [ -z "$unexpected" ] || fail "$(basename "$tarball") ships what it should not: $unexpected"
done
project="$work/project"
mkdir "$project"
cp "$here"/*.mjs "$project/"
echo '{"name": "natives-installed", "private": true, "type": "module"}' > "$project/package.json"
cd "$project"
npm install --no-audit --no-fund --prefer-offline --loglevel=error "$work"/tarballs/*.tgz

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
rm -rf "node_modules/$platform_package"
NODE_OPTIONS='' node no-binary.mjs "$platform_package"
bun no-binary.mjs "$platform_package"
