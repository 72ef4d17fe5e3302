#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ with cargo-fuzz (libFuzzer, one job), seeding each corpus from
# the project's fixtures. A target stops after SECONDS (default 60) or, with --runs, after N
# executions, whichever comes first. Corpora and crash artifacts stay in fuzz/corpus and
# fuzz/artifacts (git-ignored). Prints one Markdown row per target: executions, seconds, exec/s
# and the result; exit 1 when any target crashed, timed out, ran out of memory or had an input
# slower than 1 s.
#
#   scripts/fuzz.sh [--runs N] [SECONDS] [TARGET...]
#   scripts/fuzz.sh --runs 10000000 3600         # the 10 M campaigns recorded in docs/fuzzing.md
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Safe Rust needs no
# AddressSanitizer (it halves throughput); debug assertions stay on so overflows are findings.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
runs=-1 # libFuzzer's "no limit"
if [ "${1:-}" = "--runs" ]; then
    runs="${2:?--runs needs a number of executions}"
    shift 2
fi
seconds="${1:-60}"
shift || true
fuzz="$root/fuzz"
all_targets=(signoff command codeowners policy_yaml srt_recipe webhook_event power_csv)
if [ "$#" -gt 0 ]; then targets=("$@"); else targets=("${all_targets[@]}"); fi

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz is missing: cargo install cargo-fuzz (and rustup toolchain install nightly)" >&2
    exit 2
fi

# seed TARGET FILE [PREFIX_BYTE]: copies FILE into the target's corpus, optionally behind one
# selector byte (targets that multiplex several inputs read it first).
seed() {
    local target="$1" file="$2" prefix="${3:-}" dir="$fuzz/corpus/$1"
    mkdir -p "$dir"
    [ -f "$file" ] || return 0
    local name
    name="seed-$(printf '%s' "$prefix$file" | sha256sum | cut -c1-16)"
    if [ -n "$prefix" ]; then
        { printf '%b' "\\x$prefix"; cat "$file"; } >"$dir/$name"
    else
        cp "$file" "$dir/$name"
    fi
}

seed_text() {
    local dir="$fuzz/corpus/$1"
    mkdir -p "$dir"
    printf '%b' "$2" >"$dir/seed-text-$(printf '%s' "$2" | sha256sum | cut -c1-16)"
}

seed_corpora() {
    cd "$root/fixtures"
    for f in signoff/*.md; do seed signoff "$f"; seed command "$f"; done
    seed_text command '/use 40714803265\n'
    # shellcheck disable=SC2016 # backticks are Markdown fences, not shell
    seed_text command '> /use 1\n```\n/use 2\n```\n/reuse-sweep-run 40714803265 trailing\n'
    seed_text command '<!-- /use 3 -->\n/use\n/use 12a\n/use 99999999999999999999999\n'
    for f in repo/.github/CODEOWNERS bundles/*/base/.github/CODEOWNERS; do seed codeowners "$f"; done
    seed policy_yaml repo/perf-changelog.yaml 00
    for f in repo/configs/*-master.yaml; do seed policy_yaml "$f" 01; done
    seed policy_yaml repo/configs/runners.yaml 02
    for f in recipes/*.yaml $(find repo bundles -path '*srt-slurm-recipes*' -name '*.yaml' | sort | head -50); do
        seed srt_recipe "$f"
    done
    seed_text srt_recipe 'base: &b {a: 1}\nbase: {b: 2}\noverride_x: *b\nzip_override_y: {a: [1, 2]}\n'
    # The first line `#ref PATH[:SELECTOR]` makes the target resolve with that selector.
    for selector in base override_x 'zip_override_y[1]' zip_override_y '*_y' '[!b]*'; do
        seed_text srt_recipe "#ref r.yaml:$selector\nbase: {name: n, a: {b: 1}}\noverride_x: {a: {b: null}}\nzip_override_y: {a: {b: [1, 2]}, c: [3]}\n"
    done
    for f in events/pull_request.*.json; do seed webhook_event "$f" 00; done
    seed webhook_event events/issue_comment.use.json 01
    seed_text power_csv 'timestamp, index, power.draw [W]\n2026/11/29 10:00:00.000, 0, 650.12 W\n2026/11/29 10:00:01.000, 0, 655.00 W\n'
    seed_text power_csv 'Timestamp,gpu,power_usage\n1700000000,0,700\n1700000030,0,710\n1700000061,0,705\n'
    seed_text power_csv '{"benchmark_start_time_unix": 1700000000, "benchmark_end_time_unix": 1700000060, "duration": 60, "completed": 10, "total_input_tokens": 100, "total_output_tokens": 100}'
    for f in $(find results -name '*.json' -o -name '*.csv' | sort | head -20); do seed power_csv "$f"; done
}

seed_corpora
cd "$fuzz"
# Build every target once, then run the binaries: a target's seconds are fuzzing only, and an
# edit to src/ during a campaign does not rebuild (and change) the code under test midway.
cargo +nightly fuzz build --sanitizer none --debug-assertions
bin="$fuzz/target/$(rustc +nightly -vV | sed -n 's/^host: //p')/release"
failed=0
printf '| target | executions | seconds | exec/s | result |\n|---|---:|---:|---:|---|\n'
for target in "${targets[@]}"; do
    log="$fuzz/artifacts/$target.log"
    started="$fuzz/artifacts/$target.started"
    mkdir -p "$fuzz/artifacts/$target"
    touch "$started"
    begin=$(date +%s)
    # -runs / -max_total_time bound the run (the first reached wins); -rss_limit_mb catches
    # unbounded allocation; -timeout makes an input slower than 10 s a crash, and
    # -report_slow_units saves any input slower than 1 s as slow-unit-* (also a finding).
    "$bin/$target" "corpus/$target" \
        -runs="$runs" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -report_slow_units=1 \
        -max_len=65536 -artifact_prefix="artifacts/$target/" -print_final_stats=1 >"$log" 2>&1 || true
    took=$(($(date +%s) - begin))
    executions=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    # Artifacts written by this run, counted by kind: crash, timeout, oom, slow (-unit).
    findings=$(find "$fuzz/artifacts/$target" -type f -newer "$started" -printf '%f\n' | sed 's/-.*//' | sort |
        uniq -c | awk '{printf "%s%s %s", sep, $1, $2; sep = ", "}')
    result=ok
    if [ -n "$findings" ]; then
        result="$findings (fuzz/artifacts/$target/, $log)"
        failed=1
    elif ! grep -q '^Done [0-9]* runs' "$log"; then
        result="stopped without a finding (see $log)"
        failed=1
    fi
    printf '| %s | %s | %s | %s | %s |\n' "$target" "${executions:-?}" "$took" "${rate:-?}" "$result"
done
exit "$failed"
