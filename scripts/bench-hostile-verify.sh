#!/usr/bin/env bash
# Issue 24's verify number (decision HE9), printed as Markdown rows: peak RSS and time of
# `sweepgate verify` on the green-sweep fixture with ~40 MB of changed scripts named like the
# affected config's launcher (100 files of 400 KB that start SGLang servers and source
# benchmark_lib.sh), with and without their diffs in evidence.json. Target: ≤ 512 MiB, fast.
#
#   scripts/bench-hostile-verify.sh [MB]      (SWEEPGATE_BIN defaults to target/release/sweepgate)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bin="${SWEEPGATE_BIN:-$root/target/release/sweepgate}"
[ -x "$bin" ] || cargo build --release --quiet --bin sweepgate
mb="${1:-40}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

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
