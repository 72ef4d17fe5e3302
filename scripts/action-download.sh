#!/usr/bin/env bash
# Installs the released sweepgate binary for the action's own ref and the runner's OS/arch.
#
# The release asset is `sweepgate-<target>.tar.gz` beside `sweepgate-<target>.tar.gz.sha256`
# (`<sha256>  <asset name>`), as .github/workflows/release.yml attaches them. Outcomes, written to
# GITHUB_OUTPUT (or stdout) as `found=` and `bin=`:
#   found=true  bin=<path>   the asset was downloaded, its checksum matched, the binary runs;
#   found=false              no release asset for this ref and platform (a branch or commit ref,
#                            an unsupported platform): the action builds from source instead;
#   exit 1 + ::error::       a checksum mismatch, a missing or malformed checksum file, a server
#                            error, a broken archive: never a silent fallback to an unverified binary.
#
# Inputs (environment):
#   SWEEPGATE_RELEASE_REPO      owner/name of the release (default GITHUB_ACTION_REPOSITORY)
#   SWEEPGATE_RELEASE_TAG       the action's ref (default GITHUB_ACTION_REF)
#   SWEEPGATE_RELEASE_BASE_URL  default ${GITHUB_SERVER_URL}/<repo>/releases/download
#   RUNNER_OS, RUNNER_ARCH      as GitHub sets them (Linux; X64 or ARM64)
#   SWEEPGATE_INSTALL_DIR       default ${RUNNER_TEMP}/sweepgate-bin
set -euo pipefail

fail() {
  echo "::error title=sweepgate download::$*"
  echo "error: $*" >&2
  exit 1
}

output() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "$1" >>"$GITHUB_OUTPUT"; else echo "$1"; fi
}

not_found() {
  echo "sweepgate: $*; the action builds it from source" >&2
  output "found=false"
  exit 0
}

repo="${SWEEPGATE_RELEASE_REPO:-${GITHUB_ACTION_REPOSITORY:-}}"
tag="${SWEEPGATE_RELEASE_TAG:-${GITHUB_ACTION_REF:-}}"
[ -n "$repo" ] || fail "the release repository is unknown (set SWEEPGATE_RELEASE_REPO or GITHUB_ACTION_REPOSITORY)"
[ -n "$tag" ] || not_found "the action's ref is unknown"
# A tag name as GitHub allows it in a URL path segment; anything else (a commit SHA, a branch
# with odd characters) has no release.
[[ "$tag" =~ ^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$ ]] || not_found "ref '$tag' is not a release tag"

case "${RUNNER_OS:-Linux}/${RUNNER_ARCH:-$(uname -m)}" in
  Linux/X64 | Linux/x86_64) target=x86_64-unknown-linux-musl ;;
  Linux/ARM64 | Linux/aarch64) target=aarch64-unknown-linux-musl ;;
  *) not_found "no release binary for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}" ;;
esac

base="${SWEEPGATE_RELEASE_BASE_URL:-${GITHUB_SERVER_URL:-https://github.com}/$repo/releases/download}"
# https only; plain http only to this machine (the test's fake release server).
case "$base" in
  https://*) proto='=https' ;;
  http://127.0.0.1:* | http://127.0.0.1/* | http://localhost:*) proto='=http' ;;
  *) fail "release base URL must be https: $base" ;;
esac

dir="${SWEEPGATE_INSTALL_DIR:-${RUNNER_TEMP:-/tmp}/sweepgate-bin}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Prints the HTTP status; the body goes to $2.
fetch() {
  curl --silent --show-error --location --proto "$proto" --proto-redir "$proto" \
    --retry 3 --retry-delay 2 --connect-timeout 20 --max-time 300 --max-filesize 104857600 \
    --output "$2" --write-out '%{http_code}' "$1" || true
}

# An action pinned by commit SHA (the safe way to use an action) runs the release of its
# Cargo.toml version only when that release was built from exactly this commit
# (sweepgate-commit.txt, attached by the release workflow); any other commit is built.
if [[ "$tag" =~ ^[0-9a-f]{40}$ ]]; then
  commit="$tag"
  manifest="${SWEEPGATE_ACTION_PATH:-${GITHUB_ACTION_PATH:-}}/Cargo.toml"
  version="$(sed -n 's/^version = "\([0-9A-Za-z.+-]*\)"$/\1/p' "$manifest" 2>/dev/null | head -n 1 || true)"
  [ -n "$version" ] || not_found "commit $commit: no version in $manifest"
  tag="v$version"
  code="$(fetch "$base/$tag/sweepgate-commit.txt" "$work/commit.txt")"
  [ "$code" = 200 ] || not_found "commit $commit: release $tag answered HTTP $code for sweepgate-commit.txt"
  [ "$(head -c 41 "$work/commit.txt" | tr -d '[:space:]')" = "$commit" ] ||
    not_found "commit $commit is not the commit release $tag was built from"
fi

asset="sweepgate-$target.tar.gz"

code="$(fetch "$base/$tag/$asset" "$work/$asset")"
case "$code" in
  200) ;;
  404) not_found "release $tag of $repo has no asset $asset" ;;
  *) fail "downloading $base/$tag/$asset answered HTTP $code" ;;
esac
code="$(fetch "$base/$tag/$asset.sha256" "$work/$asset.sha256")"
[ "$code" = 200 ] || fail "release $tag has $asset but its checksum file $asset.sha256 answered HTTP $code"

expected="$(head -c 200 "$work/$asset.sha256" | awk 'NR == 1 { print $1 }')"
[[ "$expected" =~ ^[0-9a-f]{64}$ ]] || fail "$asset.sha256 of release $tag holds no SHA-256 digest"
actual="$(sha256sum "$work/$asset" | awk '{ print $1 }')"
[ "$actual" = "$expected" ] || fail "checksum mismatch for $asset of release $tag: expected $expected, downloaded $actual"

mkdir -p "$dir"
tar -xzf "$work/$asset" -C "$work" sweepgate || fail "$asset of release $tag holds no sweepgate binary"
install -m 0755 "$work/sweepgate" "$dir/sweepgate"
"$dir/sweepgate" --version >/dev/null 2>&1 || fail "the downloaded sweepgate of release $tag does not run on this runner"
echo "sweepgate: release $tag ($asset, sha256 $actual)" >&2
output "found=true"
output "bin=$dir/sweepgate"
