# Sourced by the A/B call scripts (bias-ab-call.sh, fused-ab-call.sh) from the repository root,
# with card, tag and OUT set: the 8K replay base / new / new / base, once on prefill_vec8 (base),
# then the msweep rows' old / new comparison of the bench runs base-{1,2} and new-{1,2}.
replay() {  # replay WHICH RUN
  timeout 60 /tmp/bin/nvfp4-harness-$1 replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 \
    --chunk 256 --json "$OUT/$card-$tag-replay-$1-$2.json" > "$OUT/replay-$1-$2.log" 2>&1
  python3 -c "
import json; d=json.load(open('$OUT/$card-$tag-replay-$1-$2.json')); print('replay $1 $2', round(d['total']['total_ms'],1), [(n['name'], round(n['total_ms'],1)) for n in d['node_types']])"
}
replays_and_comparison() {
  replay base 1; replay new 1; replay new 2; replay base 2
  timeout 60 /tmp/bin/nvfp4-harness-base replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 \
    --chunk 256 --route prefill_vec8 --json "$OUT/$card-$tag-replay-vec8.json" > "$OUT/replay-vec8.log" 2>&1
  python3 -c "
import json; d=json.load(open('$OUT/$card-$tag-replay-vec8.json')); print('replay prefill_vec8', round(d['total']['total_ms'],1))"
  python3 ci/device/bench-ab.py "$OUT/$card-$tag-base-1.json,$OUT/$card-$tag-base-2.json" \
    "$OUT/$card-$tag-new-1.json,$OUT/$card-$tag-new-2.json"
}
