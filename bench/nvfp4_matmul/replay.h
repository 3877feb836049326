// `nvfp4-harness replay MANIFEST`: a model's matmuls, replayed for a prompt
// the way a chunked prefill runs them, with the GPU time split into the
// prefill routes' phases (dequant, GEMM step) so the dequant share of a whole
// prefill can be measured, not guessed from one shape.
//
// The manifest (JSON) lists the model's MatMulBlockQuantizedFp4Weight nodes:
//   {
//     "name": "qwen_like_prefill",           required
//     "dtype": "bf16",                       "bf16" (default) or "fp16"
//     "note": "...",                         optional: where the shapes come from
//     "repeat": 42,                          optional (1): the node list is one
//                                            layer; the model is `repeat` layers
//     "nodes": [                             required, in model order
//       {"name": "qkv_proj", "N": 8192, "K": 5120,
//        "block_size": 16,                   optional (16)
//        "count": 1,                         optional (1): identical nodes in a row
//        "bias": false}                      optional (false)
//     ],
//     "published": {                         optional: numbers to compare against
//       "source": "...", "prompt": 8192,
//       "dequant_ms": {"prefill_scalar": 1750, "prefill_vec8": 409},
//       "prefill_gpu_ms": {"prefill_scalar": 3732, "prefill_vec8": 2394}}
//   }
// Every node instance (repeat x count of them) has its own weights, all
// resident on the GPU together, as a model's are.
//
// A replay of a P-token prompt in chunks of C calls every node instance once
// per chunk, in model order, chunk after chunk (chunk-major, as a prefill
// does), with M = C (the last chunk M = P - (chunks - 1) * C).
//
// Timing: each chunk's calls are queued behind a GPU hold
// (nvh::time_each_launch), the dequant and the GEMM step of every call each
// between their own pair of CUDA events, one synchronize per chunk; host
// launch overhead therefore cannot enter the GPU times. The bias lives in the
// GEMM step (gemm_step.h); when the GEMM step's variant runs it as a kernel
// of its own, its cost is estimated apart (with-bias minus no-bias GEMM step,
// medians) and reported beside the GEMM column, which includes it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "harness/backend.h"
#include "kernels/nvfp4_matmul/nvfp4_types.h"

namespace nvfp4 {

struct ReplayNode {
  std::string name;
  int64_t N = 0, K = 0, block_size = 16, count = 1;
  bool bias = false;
};

// Published measurements of the modelled workload, by route name.
struct ReplayPublished {
  std::string source;
  int64_t prompt = 0;
  std::map<std::string, double> dequant_ms, prefill_gpu_ms;
};

struct ReplayManifest {
  std::string origin;  // the file it was read from (error messages, report)
  std::string name, note;
  DType dtype = DType::bf16;
  int64_t repeat = 1;
  std::vector<ReplayNode> nodes;
  std::optional<ReplayPublished> published;

  int64_t instances(const ReplayNode& node) const { return repeat * node.count; }
  int64_t node_count() const;     // operator nodes in the model: repeat x sum of counts
  int64_t weight_values() const;  // sum of N x K over every node instance
};

// Parses and checks a manifest; throws std::invalid_argument whose message
// names `origin`, the field and its value: "replay manifest m.json:
// nodes[2].K = 0: must be positive".
ReplayManifest parse_replay_manifest(const std::string& json_text, const std::string& origin);
ReplayManifest read_replay_manifest(const std::string& path);

// M of each chunk of a `prompt`-token prefill in chunks of `chunk` tokens.
std::vector<int64_t> chunk_rows(int64_t prompt, int64_t chunk);

enum class ReplayRoute : uint8_t { natural, prefill_scalar, prefill_vec8, prefill_fused };
const char* replay_route_name(ReplayRoute r);
std::optional<ReplayRoute> parse_replay_route(std::string_view name);

struct ReplayOptions {
  int64_t prompt = 8192;
  int64_t chunk = 256;
  ReplayRoute route = ReplayRoute::natural;
  // Each weight with K % 128 == 0 also prepacked once for prefill_fused's
  // wgmma kernel (prepack_for_fused), which then reads that copy, as a
  // runtime prepacks its constant weights at load; the prepacks' GPU time is
  // reported apart (one-time, not in the totals). Not where a forced
  // prefill_vec8 or prefill_scalar leaves prefill_fused no call.
  // (replay --no-prepack: the contract's order, for comparison.)
  bool prepack = true;
};

// What the replay will run: the chunks, and the route each node takes in each
// chunk (the dispatcher's choice, or the forced prefill route).
struct ReplayPlan {
  ReplayOptions options;
  std::vector<int64_t> rows;              // M per chunk
  std::vector<std::vector<Route>> route;  // [chunk][manifest node]
  std::string caps;                       // the device the routes were chosen for
  int64_t calls = 0;                      // operator calls: chunks x node_count
  int64_t steps = 0;                      // timed GPU steps (a prefill call is two)
  // Device memory the replay holds at once.
  // Packed codes (twice where prepacked) + scales + bias of every instance.
  std::size_t weight_bytes = 0;
  std::size_t scratch_bytes = 0;     // one dequant scratch, the largest node's [N, K]
  std::size_t activation_bytes = 0;  // A [chunk, max K] and Y [chunk, max N]
  std::size_t total_bytes() const { return weight_bytes + scratch_bytes + activation_bytes; }
};

// Throws std::invalid_argument naming the node when a forced route cannot run
// one (prefill_vec8 needs K % 8 == 0 and an even block_size).
ReplayPlan plan_replay(const ReplayManifest& manifest, const ReplayOptions& options,
                       const Caps& caps);
std::string render_replay_plan(const ReplayManifest& manifest, const ReplayPlan& plan);

// One timed GPU step of a replay.
enum class ReplayPhase : uint8_t {
  dequant,
  gemm,
  whole
};  // whole: a non-prefill route's call, untimed apart
const char* replay_phase_name(ReplayPhase p);

struct ReplayStep {
  int node = 0;          // index into manifest.nodes
  int64_t instance = 0;  // which of the node's repeat x count instances
  int64_t M = 0;
  Route route = Route::prefill_vec8;
  ReplayPhase phase = ReplayPhase::dequant;
};

// A chunk's steps in the order they run: layer by layer, node by node, each
// call's dequant before its GEMM step.
std::vector<ReplayStep> chunk_steps(const ReplayManifest& manifest, const ReplayPlan& plan,
                                    std::size_t chunk);

// GPU time per phase.
struct PhaseTimes {
  double dequant_ms = 0, gemm_ms = 0, whole_ms = 0;
  int64_t calls = 0;  // operator calls (a prefill call's two steps count once)
  void add(ReplayPhase phase, double us);
  double total_ms() const { return dequant_ms + gemm_ms + whole_ms; }
  // Dequant over all the operator's GPU time (dequant + GEMM step + whole
  // calls of non-prefill routes); 0 when nothing ran.
  double dequant_share() const { return total_ms() > 0 ? dequant_ms / total_ms() : 0; }
};

struct ReplayNodeRow {
  std::string name;
  int64_t N = 0, K = 0, block_size = 16, instances = 0;
  bool bias = false;
  PhaseTimes t;
  std::string gemm_variant;      // what run_gemm_step runs at the chunk's M ("" until known)
  std::string bias_placement;    // bias_placement() of that variant
  double bias_estimate_ms = -1;  // the separate bias kernel's estimated total; < 0: none measured
};

struct ReplayReport {
  std::string model, origin, dtype, device, route_mode, note;
  int64_t prompt = 0, chunk = 0, chunks = 0, last_chunk_rows = 0;
  int64_t nodes = 0, calls = 0, weight_values = 0;
  std::size_t device_bytes = 0;
  PhaseTimes total;
  std::map<std::string, PhaseTimes> by_route;  // route name -> its calls' times
  std::vector<ReplayNodeRow> node_rows;        // manifest order
  double busy_us = 0, span_us = 0;  // summed over chunks: timed steps vs first-to-last event
  bool prepack = false;
  double prepack_ms = 0;  // the one-time prepack of every weight (ReplayOptions::prepack)
  std::string timing;     // how the GPU times were taken, in words
  std::vector<std::string> warnings;
  std::optional<ReplayPublished> published;
};

// The report's fixed fields, before any time is recorded.
ReplayReport start_replay_report(const ReplayManifest& manifest, const ReplayPlan& plan);
// Adds one step's GPU time to the totals, its route and its node row.
void record_step(ReplayReport& report, const ReplayStep& step, double us);

// Where the bias of a GEMM step variant runs: "none" without bias; "fused in
// GEMM" when the variant is one kernel; else "separate kernel (variant)".
std::string bias_placement(const std::string& gemm_variant, bool has_bias);
bool bias_is_separate(const std::string& gemm_variant, bool has_bias);

// Text: header, per-route phases, per-node-type rows (the `top_rows` largest
// by GPU time), bias, the published comparison, warnings.
std::string render_replay_table(const ReplayReport& report, std::size_t top_rows = 10);
std::string render_replay_json(const ReplayReport& report);

// Runs the replay on a GPU; progress goes to `log`. Throws
// std::invalid_argument when the backend is not a GPU.
ReplayReport run_replay(nvh::Backend& backend, const ReplayManifest& manifest,
                        const ReplayOptions& options, std::ostream& log);

}  // namespace nvfp4
