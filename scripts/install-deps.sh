#!/usr/bin/env bash
# Installs the system packages sweepgate's build and tests need, when missing (Debian 12).
set -euo pipefail

need=()
command -v git >/dev/null 2>&1 || need+=(git)
command -v cc >/dev/null 2>&1 || need+=(gcc)
# jq: the canary acceptance test runs upstream's canary-select rule in jq, as the workflow does.
command -v jq >/dev/null 2>&1 || need+=(jq)
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
