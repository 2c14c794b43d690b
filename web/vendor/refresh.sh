#!/usr/bin/env bash
# Refresh the vendored msgpack codec of the browser client from the npm registry.
#   web/vendor/refresh.sh            the version in web/vendor/msgpack/VERSION
#   web/vendor/refresh.sh 3.1.4      another version (then run tests/web)
# It takes @msgpack/msgpack's ES module build (dist.esm/*.mjs, as published; no source
# maps or type files) and its LICENSE, and writes VERSION. Needs npm and tar.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dest="$here/msgpack"
version="${1:-$(cat "$dest/VERSION")}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
(cd "$scratch" && npm pack --silent "@msgpack/msgpack@$version" >/dev/null)
tar -xzf "$scratch"/msgpack-msgpack-*.tgz -C "$scratch"
pkg="$scratch/package"
test -f "$pkg/dist.esm/index.mjs" || { echo "no dist.esm/index.mjs in @msgpack/msgpack $version" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$dest"
(cd "$pkg/dist.esm" && find . -name '*.mjs' -print0 | while IFS= read -r -d '' f; do
  mkdir -p "$dest/$(dirname "$f")"
  cp "$f" "$dest/$f"
done)
cp "$pkg/LICENSE" "$dest/LICENSE"
node -e 'process.stdout.write(require(process.argv[1]).version + "\n")' "$pkg/package.json" > "$dest/VERSION"
echo "vendored @msgpack/msgpack $(cat "$dest/VERSION") into $dest"
