#!/usr/bin/env bash
# Issue 24's two sweep-service numbers (decision HE7), printed as Markdown rows:
#  1. peak RSS of planning a PR whose changelog entry points at a config with a 100k-value
#     `conc-list` (the matrix step `serve --pool` runs for a labeled PR, through `sweepgate plan`,
#     the same `launch`/`process` code with the same MAX_POINTS bound); target ≤ 128 MiB;
#  2. latency of an unrelated PR's close (the sweep service's cancel) while `squeue` hangs
#     (tests/sweep_service_hostile.rs prints it; the fake squeue hangs until released); target ≤ 2 s.
#
#   scripts/bench-hostile-sweeps.sh            (SWEEPGATE_BIN defaults to target/release/sweepgate)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bin="${SWEEPGATE_BIN:-$root/target/release/sweepgate}"
[ -x "$bin" ] || cargo build --release --quiet --bin sweepgate
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

repo="$tmp/repo"
cp -r fixtures/repo "$repo"
git -C "$repo" init -q
git -C "$repo" -c user.name=b -c user.email=b@b add -A
git -C "$repo" -c user.name=b -c user.email=b@b commit -qm base
python3 - "$repo/configs/amd-master.yaml" <<'PY'
import sys
path = sys.argv[1]
values = ", ".join(str(v) for v in range(1, 100001))
text = open(path).read()
text = text.replace("conc-list: [16, 32] }", "conc-list: [" + values + "] }", 1)
open(path, "w").write(text)
PY
cat >>"$repo/perf-changelog.yaml" <<'YAML'

- config-keys:
    - dsr1-fp8-mi355x-sglang
  description:
    - "100k concurrencies"
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/999
YAML
git -C "$repo" -c user.name=b -c user.email=b@b commit -qam head
size=$(wc -c <"$repo/configs/amd-master.yaml")

status=0
/usr/bin/time -f '%M %e' -o "$tmp/time" "$bin" plan --repo "$repo" --base HEAD~1 --head HEAD \
    --labels full-sweep-fail-fast --format json >"$tmp/out" 2>"$tmp/err" || status=$?
read -r kib secs < <(tail -1 "$tmp/time")
echo "| plan with a 100k-value conc-list (${size} B config) | peak RSS $((kib / 1024)) MiB | ${secs} s | exit ${status}: $(head -c 160 "$tmp/err" | tr '\n' ' ') |"

latency=$(cargo test --quiet --test sweep_service_hostile an_unrelated_prs_cancel -- --nocapture 2>&1 |
    sed -n 's/^cancel latency while squeue hangs: //p')
echo "| close of an unrelated PR while squeue hangs | ${latency:-not measured} | | |"
