#!/usr/bin/env bash
# Issue 24's numbers (decisions HE7, HE9), printed as Markdown rows:
#  1. peak RSS of planning a PR whose changelog entry points at a config with a 100k-value
#     `conc-list` (the matrix step `serve --pool` runs for a labeled PR, through `sweepgate plan`,
#     the same `launch`/`process` code with the same MAX_POINTS bound); target ≤ 128 MiB;
#  2. latency of an unrelated PR's close (the sweep service's cancel) while `squeue` hangs
#     (tests/sweep_service_hostile.rs prints it; the fake squeue hangs until released); target ≤ 2 s;
#  3. peak RSS and time of `sweepgate verify` on the green-sweep fixture with HOSTILE_VERIFY_MB
#     (default 40) MB of changed scripts named like the affected config's launcher (files of 400 KB
#     that start SGLang servers and source benchmark_lib.sh), without and with their diffs in
#     evidence.json (decision HE9); target ≤ 512 MiB, fast.
#
#   scripts/bench-hostile-sweeps.sh            (SWEEPGATE_BIN defaults to target/release/sweepgate)
set -euo pipefail
mb="${HOSTILE_VERIFY_MB:-40}"
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

for diffs in 0 1; do
    bundle="$tmp/bundle-$diffs"
    python3 - fixtures/bundles/green-sweep "$bundle" "$mb" "$diffs" <<'PY'
import json, os, shutil, sys
src, dst, total_mb, with_diffs = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4] == "1"
shutil.copytree(src, dst)
evidence = json.load(open(f"{dst}/evidence.json"))
block = ('export SGLANG_X_%d=1\nsource "$(dirname "$0")/../../benchmark_lib.sh"\n'
         'python3 -m sglang.launch_server --model-path $MODEL --tp 8 --ep 8 --mem-fraction-static 0.8 '
         '--chunked-prefill-size 16384 --max-running-requests 512 --cuda-graph-max-bs 512 --port $PORT &\n')
lines, size = [], 0
while size < 400 * 1024:
    lines.append(block % len(lines))
    size += len(lines[-1])
text = "#!/usr/bin/env bash\n" + "".join(lines)
count = int(total_mb * 1024 * 1024 / len(text))
folder = "benchmarks/single_node/fixed_seq_len"
names = [f"{folder}/dsr1_fp4_b200_sglang.sh"] + [f"{folder}/dsr1_fp4_b200_sglang_v{k}.sh" for k in range(count - 1)]
for k, name in enumerate(names):
    os.makedirs(os.path.dirname(f"{dst}/head/{name}"), exist_ok=True)
    open(f"{dst}/head/{name}", "w").write(text)
    changed = {"filename": name, "status": "modified" if k == 0 else "added"}
    if with_diffs:
        changed["patch"] = f"@@ -0,0 +1,{len(lines) + 1} @@\n" + "".join("+" + l + "\n" for l in text.splitlines())
    evidence["files"].append(changed)
json.dump(evidence, open(f"{dst}/evidence.json", "w"))
PY
    bytes=$(du -sb "$bundle/head" | cut -f1)
    status=0
    /usr/bin/time -f '%M %e' -o "$tmp/time" "$bin" verify --bundle "$bundle" --format json >"$tmp/out" 2>"$tmp/err" || status=$?
    read -r kib secs < <(tail -1 "$tmp/time")
    statuses=$(python3 - "$tmp/out" <<'PY' 2>/dev/null || echo "no report"
import json, sys
report = json.load(open(sys.argv[1]))
print(report["verdict"], " ".join("%s:%s" % (c["id"], c["status"]) for c in report["checks"] if c["status"] != "PASS"))
PY
)
    echo "| verify, ${bytes} B of head files, diffs in evidence.json: ${diffs} | peak RSS $((kib / 1024)) MiB | ${secs} s | exit ${status}: ${statuses} |"
done
