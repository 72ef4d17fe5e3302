#!/usr/bin/env bash
# Lints the release workflow, action.yml and the README's workflow snippet with actionlint and
# zizmor, and the Dockerfile with hadolint (installed in a venv by scripts/install-deps.sh). zizmor runs offline and fails on any
# finding above "low"; each accepted finding is explained where it is suppressed.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${SWEEPGATE_TOOLS_VENV:-$PWD/target/tools-venv}"

# The README's `<!-- workflow: NAME -->` blocks become workflow files of a scratch repository.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/.github/workflows"
cp .github/workflows/*.yml "$scratch/.github/workflows/"
awk -v dir="$scratch/.github/workflows" '
  /^<!-- workflow: [A-Za-z0-9._-]+ -->$/ { name = $3; next }
  name != "" && /^```yaml$/ { file = dir "/" name; inblock = 1; next }
  inblock && /^```$/ { inblock = 0; name = ""; close(file); count++; next }
  inblock { print > file }
  END { if (count == 0) { print "no <!-- workflow: --> block in README.md" > "/dev/stderr"; exit 1 } }
' README.md
cp action.yml "$scratch/action.yml"

echo "== actionlint"
(cd "$scratch" && "$venv/bin/actionlint" -no-color .github/workflows/*.yml)
echo "== zizmor (offline, findings above low fail)"
"$venv/bin/zizmor" --offline --min-severity=medium --no-progress "$scratch"
echo "== hadolint (Dockerfile; the image is not built here: no container engine on the test machine)"
"$venv/bin/hadolint" Dockerfile
