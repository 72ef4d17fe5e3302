#!/usr/bin/env bash
# Runs every test of sweepgate on a fresh Debian 12 machine with Rust: installs what the tests
# need, starts the local services they use, then formatting, lints and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export INSTA_UPDATE=no          # snapshots are compared, never rewritten, in this command
export RUST_BACKTRACE=1

bash scripts/install-deps.sh

# A real local Slurm for tests/slurm_*.rs; they skip only when SWEEPGATE_SLURM is unset.
if [ "$(id -u)" -eq 0 ]; then
  eval "$(bash scripts/slurm-up.sh up)"
elif command -v sudo >/dev/null 2>&1; then
  eval "$(sudo bash scripts/slurm-up.sh up)"
else
  echo "warning: not root and no sudo: the Slurm tests will be skipped" >&2
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --all-targets --locked -- -D warnings
echo "== workflows and Dockerfile (actionlint, zizmor, hadolint)"
bash scripts/lint-workflows.sh
echo "== cargo test"
cargo test --all-targets --locked --no-fail-fast
