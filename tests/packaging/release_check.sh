#!/usr/bin/env bash
# Build and check what a release publishes, into OUTDIR: the wheel and the sdist (`python -m build`, then
# `twine check --strict`: PyPI's own checks of the metadata and the description) and the VS Code extension
# (`npm run package`: the bundle, the server's wheel inside, `vsce package`, which refuses a manifest the
# Marketplace would). tests/packaging/test_release.py then checks the three files ($PYCAPSULE_RELEASE_DIST).
# One definition for both callers: .github/workflows/release.yml runs it on a tag and then publishes;
# tests/run.sh runs it on every CI run and publishes nothing.
# Built from a copy of the checkout's files as a fresh clone has them (tracked, or new and not ignored), so
# nothing ignored or left in the working tree gets in. Needs the `test` extra (build, setuptools and twine,
# pinned: no download) and the root package.json's node_modules (`npm ci`).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:?usage: tests/packaging/release_check.sh OUTDIR}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
(cd "$root" && git ls-files -z --cached --others --exclude-standard) | (cd "$root" && while IFS= read -r -d '' name; do
  if [[ -f "$name" ]]; then printf '%s\0' "$name"; fi
done) | (cd "$root" && xargs -0 cp --parents -t "$tree")
rm -f "$out"/*.whl "$out"/*.tar.gz "$out"/*.vsix

python3 -m build --no-isolation --outdir "$out" "$tree" >"$tree/build.log" 2>&1 || { tail -40 "$tree/build.log"; exit 1; }
python3 -m twine check --strict "$out"/*.whl "$out"/*.tar.gz

ln -s "$root/node_modules" "$tree/node_modules"
(cd "$tree" && npm run --silent package >"$tree/package.log" 2>&1) || { tail -40 "$tree/package.log"; exit 1; }
version="$(node -p 'require(process.argv[1]).version' "$tree/vscode-client/package.json")"
mv "$tree/pycapsule.vsix" "$out/pycapsule-$version.vsix"
ls -l "$out"
