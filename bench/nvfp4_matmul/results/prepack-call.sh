#!/usr/bin/env bash
# Session of 2026-12-07 from 06:44 UTC: W's codes prepacked once for prefill_fused's wgmma kernel
# (prefill_fused_prepack.cuh) against the contract's order, one binary (replay --prepack; the
# bench's "prefill_fused prepacked" rows beside "prefill_fused" in the same run): the GPU tests of
# the prepack and the fused route, GPU = host; the 8K replay without / with / with / without
# --prepack and once on prefill_vec8 (ab-replays.sh's ab_replays, "new" being the binary with
# --prepack); the msweep rows of the replay's and the sweep's shapes at M = 128, 256, 512, twice;
# the prepack tests under compute-sanitizer. build/carry6/bin.tgz holds nvfp4-harness and
# kernels_tests, built at 386333f, whose replay took --prepack (replay prepacks by default since
# e1e31a9: --no-prepack). Usage (device): bash bench/nvfp4_matmul/results/prepack-call.sh TAG
set -uo pipefail
tag="${1:-prepack}"
cd "$(dirname "$0")/../../.."
ab_bins=build/carry6/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card
# base: the binary as is; new: the same binary, its replays with --prepack.
ab_one_binary new --prepack
t0=$SECONDS
timeout 200 /tmp/bin/kernels_tests --gtest_filter='*Prepack*:*Fused*cuda*:GpuAgainstHost.*' > "$OUT/tests.log" 2>&1
echo "== kernel tests rc=$? $((SECONDS - t0)) s"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|SKIPPED  \]" "$OUT/tests.log" | head -20
ab_replays
grep -h "prepacked .* weights" "$OUT"/replay-new-*.log
echo "== $((SECONDS - t0)) s"
ab_only=(--only "prefill_fused bias M" --only "prefill_fused prepacked bias M" --only "prepack_for_fused")
ab_bench base 1
ab_bench base 2
python3 - "$OUT/$card-$tag-base-1.json" "$OUT/$card-$tag-base-2.json" <<'PY'
import json, sys
runs = [{r["name"]: r for r in json.load(open(f))["rows"]} for f in sys.argv[1:]]
for name in runs[0]:
    if not name.startswith("prefill_fused bias "):
        continue
    shape = name[len("prefill_fused bias "):]
    pre = "prefill_fused prepacked bias " + shape
    if pre not in runs[0]:
        continue
    old = [r[name]["kernel_us"] for r in runs]
    new = [r[pre]["kernel_us"] for r in runs]
    once = [r["prepack_for_fused (one-time) " + shape]["kernel_us"] for r in runs]
    print("%-22s contract order %7.2f %7.2f  prepacked %7.2f %7.2f  new/old %.3f  prepack once %.1f us"
          % (shape, old[0], old[1], new[0], new[1], sum(new) / sum(old), sum(once) / len(once)))
PY
echo "== $((SECONDS - t0)) s"
ab_sanitizers 120 '*Prepack*cuda*' prepack
(cd "$OUT" && tar -czf logs.tgz *.log *replay*.json && rm -f *.log *replay*.json)
