#!/usr/bin/env bash
# Runs every test of sweepgate on a fresh Debian 12 machine with Rust: installs what the tests
# need, starts the local services they use, then formatting, lints and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export INSTA_UPDATE=no          # snapshots are compared, never rewritten, in this command
export RUST_BACKTRACE=1

bash scripts/install-deps.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --all-targets --locked -- -D warnings
echo "== cargo test"
cargo test --all-targets --locked --no-fail-fast
