#include "bench/nvfp4_matmul/replay.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "bench/nvfp4_matmul/fill_random.cuh"
#include "harness/gpu_timing.h"
#include "harness/launch.h"
#include "harness/progress.h"
#include "kernels/nvfp4_matmul/dispatch.h"
#include "kernels/nvfp4_matmul/gemm_step.h"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "kernels/nvfp4_matmul/prefill_fused_prepack.cuh"

namespace nvfp4 {
namespace {

using nlohmann::json;

// Manifest limits: dimensions as the operator takes them (below 2^31), counts
// far above any model's and low enough that no product overflows.
constexpr int64_t kMaxDim = INT32_MAX;
constexpr int64_t kMaxCount = 1'000'000;

// Reads one manifest's fields, naming the file and the field in every error.
class ManifestReader {
 public:
  explicit ManifestReader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw std::invalid_argument("replay manifest " + origin_ + ": " + field + ": " + what);
  }
  [[noreturn]] void fail(const std::string& field, const json& value,
                         const std::string& what) const {
    std::string shown = value.dump();
    if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
    throw std::invalid_argument("replay manifest " + origin_ + ": " + field + " = " + shown + ": " +
                                what);
  }

  void only_known(const json& object, const std::string& where,
                  const std::vector<std::string>& known) const {
    for (const auto& item : object.items()) {
      if (std::find(known.begin(), known.end(), item.key()) == known.end()) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        fail(where + (where.empty() ? "" : ".") + item.key(),
             "unknown field (known: " + list + ")");
      }
    }
  }

  std::string string(const json& object, const std::string& where, const std::string& key,
                     bool required) const {
    const std::string field = where + (where.empty() ? "" : ".") + key;
    if (!object.contains(key)) {
      if (required) fail(field, "missing (required)");
      return "";
    }
    const json& v = object.at(key);
    if (!v.is_string()) fail(field, v, "must be a string");
    return v.get<std::string>();
  }

  int64_t integer(const json& object, const std::string& where, const std::string& key,
                  std::optional<int64_t> fallback, int64_t lo, int64_t hi) const {
    const std::string field = where + (where.empty() ? "" : ".") + key;
    if (!object.contains(key)) {
      if (!fallback) fail(field, "missing (required)");
      return *fallback;
    }
    const json& v = object.at(key);
    if (!v.is_number_integer()) fail(field, v, "must be an integer");
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi)) {
      fail(field, v, "must be at most " + std::to_string(hi));
    }
    const auto n = v.get<int64_t>();
    if (n < lo)
      fail(field, v, lo == 1 ? "must be positive" : "must be at least " + std::to_string(lo));
    if (n > hi) fail(field, v, "must be at most " + std::to_string(hi));
    return n;
  }

  bool boolean(const json& object, const std::string& where, const std::string& key,
               bool fallback) const {
    if (!object.contains(key)) return fallback;
    const json& v = object.at(key);
    if (!v.is_boolean()) fail(where + "." + key, v, "must be true or false");
    return v.get<bool>();
  }

  std::map<std::string, double> ms_by_route(const json& object, const std::string& where,
                                            const std::string& key) const {
    std::map<std::string, double> out;
    if (!object.contains(key)) return out;
    const std::string field = where + "." + key;
    const json& v = object.at(key);
    if (!v.is_object()) fail(field, v, "must be an object {route name: milliseconds}");
    for (const auto& item : v.items()) {
      const std::optional<Route> r = parse_route(item.key());
      if (!r) fail(field + "." + item.key(), "unknown route (see nvfp4-harness routes)");
      if (!item.value().is_number() || item.value().get<double>() <= 0) {
        fail(field + "." + item.key(), item.value(), "must be a positive number of milliseconds");
      }
      out[item.key()] = item.value().get<double>();
    }
    return out;
  }

 private:
  std::string origin_;
};

ReplayNode read_node(const ManifestReader& in, const json& j, std::size_t index) {
  std::string where = "nodes[" + std::to_string(index) + "]";
  if (!j.is_object()) in.fail(where, j, "must be an object {name, N, K, block_size, count, bias}");
  ReplayNode n;
  n.name = in.string(j, where, "name", true);
  if (n.name.empty()) in.fail(where + ".name", j.at("name"), "must not be empty");
  where += " (\"" + n.name + "\")";
  in.only_known(j, where, {"name", "N", "K", "block_size", "count", "bias"});
  n.N = in.integer(j, where, "N", std::nullopt, 1, kMaxDim);
  n.K = in.integer(j, where, "K", std::nullopt, 1, kMaxDim);
  n.block_size = in.integer(j, where, "block_size", 16, 1, kMaxDim);
  n.count = in.integer(j, where, "count", 1, 1, kMaxCount);
  n.bias = in.boolean(j, where, "bias", false);
  return n;
}

ReplayPublished read_published(const ManifestReader& in, const json& j) {
  if (!j.is_object())
    in.fail("published", j, "must be an object {source, prompt, dequant_ms, prefill_gpu_ms}");
  in.only_known(j, "published", {"source", "prompt", "dequant_ms", "prefill_gpu_ms"});
  ReplayPublished p;
  p.source = in.string(j, "published", "source", false);
  p.prompt = in.integer(j, "published", "prompt", 0, 0, kMaxDim);
  p.dequant_ms = in.ms_by_route(j, "published", "dequant_ms");
  p.prefill_gpu_ms = in.ms_by_route(j, "published", "prefill_gpu_ms");
  return p;
}

// A route that dequantizes into a scratch and then runs the GEMM step: two timed phases.
bool is_prefill_route(Route r) { return route_row(r).needs_scratch; }

std::string fixed(double v, int digits) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

std::string gigabytes(std::size_t bytes) {
  return fixed(static_cast<double>(bytes) / 1e9, 2) + " GB";
}

std::string billions(int64_t values) { return fixed(static_cast<double>(values) / 1e9, 3) + "e9"; }

std::string percent(double share) { return fixed(100.0 * share, 1) + "%"; }

Problem problem_of(const ReplayManifest& m, const ReplayNode& n, int64_t M) {
  Problem p;
  p.M = M;
  p.N = n.N;
  p.K = n.K;
  p.block_size = n.block_size;
  p.dtype = m.dtype;
  p.has_bias = n.bias;
  return p;  // device allocations are 256-byte aligned: every address mod 16 is 0
}

json phase_json(const PhaseTimes& t) {
  return {{"calls", t.calls},         {"dequant_ms", t.dequant_ms},
          {"gemm_ms", t.gemm_ms},     {"whole_ms", t.whole_ms},
          {"total_ms", t.total_ms()}, {"dequant_share", t.dequant_share()}};
}

}  // namespace

int64_t ReplayManifest::node_count() const {
  int64_t n = 0;
  for (const ReplayNode& node : nodes) n += instances(node);
  return n;
}

int64_t ReplayManifest::weight_values() const {
  int64_t n = 0;
  for (const ReplayNode& node : nodes) {
    const int64_t values = checked_mul(checked_mul(node.N, node.K, "replay weight values"),
                                       instances(node), "replay weight values");
    if (values > INT64_MAX - n)
      throw std::invalid_argument("replay weight values: the sum overflows 64 bits");
    n += values;
  }
  return n;
}

ReplayManifest parse_replay_manifest(const std::string& text, const std::string& origin) {
  const ManifestReader in(origin);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::invalid_argument("replay manifest " + origin + ": not valid JSON: " + e.what());
  }
  if (!j.is_object())
    in.fail("(top level)", j, "must be an object {name, dtype, note, repeat, nodes, published}");
  in.only_known(j, "", {"name", "dtype", "note", "repeat", "nodes", "published"});
  ReplayManifest m;
  m.origin = origin;
  m.name = in.string(j, "", "name", true);
  if (m.name.empty()) in.fail("name", j.at("name"), "must not be empty");
  m.note = in.string(j, "", "note", false);
  if (j.contains("dtype")) {
    const std::string dtype = in.string(j, "", "dtype", true);
    if (dtype != "bf16" && dtype != "fp16")
      in.fail("dtype", j.at("dtype"), "must be \"bf16\" or \"fp16\"");
    m.dtype = dtype == "fp16" ? DType::fp16 : DType::bf16;
  }
  m.repeat = in.integer(j, "", "repeat", 1, 1, kMaxCount);
  if (!j.contains("nodes")) in.fail("nodes", "missing (required)");
  const json& nodes = j.at("nodes");
  if (!nodes.is_array()) in.fail("nodes", nodes, "must be an array of nodes");
  if (nodes.empty()) in.fail("nodes", nodes, "must list at least one node");
  std::set<std::string> names;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    m.nodes.push_back(read_node(in, nodes[i], i));
    if (!names.insert(m.nodes.back().name).second) {
      in.fail("nodes[" + std::to_string(i) + "].name", nodes[i].at("name"),
              "used by an earlier node");
    }
  }
  if (j.contains("published")) m.published = read_published(in, j.at("published"));
  try {
    (void)m.weight_values();
  } catch (const std::invalid_argument&) {
    in.fail("nodes", "the weight count overflows 64 bits");
  }
  return m;
}

ReplayManifest read_replay_manifest(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::invalid_argument("replay manifest " + path + ": cannot be opened");
  std::ostringstream text;
  text << f.rdbuf();
  return parse_replay_manifest(text.str(), path);
}

std::vector<int64_t> chunk_rows(int64_t prompt, int64_t chunk) {
  if (prompt <= 0)
    throw std::invalid_argument("replay: --prompt = " + std::to_string(prompt) +
                                ": must be positive");
  if (chunk <= 0)
    throw std::invalid_argument("replay: --chunk = " + std::to_string(chunk) +
                                ": must be positive");
  std::vector<int64_t> rows(static_cast<std::size_t>(ceil_div(prompt, chunk)), chunk);
  rows.back() = prompt - (static_cast<int64_t>(rows.size()) - 1) * chunk;
  return rows;
}

const char* replay_route_name(ReplayRoute r) {
  switch (r) {
    case ReplayRoute::natural:
      return "natural";
    case ReplayRoute::prefill_scalar:
      return "prefill_scalar";
    case ReplayRoute::prefill_vec8:
      return "prefill_vec8";
    case ReplayRoute::prefill_fused:
      return "prefill_fused";
  }
  return "?";
}

std::optional<ReplayRoute> parse_replay_route(std::string_view name) {
  for (ReplayRoute r : {ReplayRoute::natural, ReplayRoute::prefill_scalar,
                        ReplayRoute::prefill_vec8, ReplayRoute::prefill_fused}) {
    if (name == replay_route_name(r)) return r;
  }
  return std::nullopt;
}

const char* replay_phase_name(ReplayPhase p) {
  switch (p) {
    case ReplayPhase::dequant:
      return "dequant";
    case ReplayPhase::gemm:
      return "gemm";
    case ReplayPhase::whole:
      return "whole";
  }
  return "?";
}

namespace {

// Whether the replay keeps a prepacked copy of a node's codes.
bool prepacks(const ReplayOptions& o, const ReplayNode& n) {
  const bool fused_may_run =
      o.route == ReplayRoute::natural || o.route == ReplayRoute::prefill_fused;
  return o.prepack && fused_may_run && n.K % PrefillFusedPrepack::kStageK == 0;
}
bool any_prepacks(const ReplayManifest& m, const ReplayOptions& o) {
  return std::any_of(m.nodes.begin(), m.nodes.end(),
                     [&o](const ReplayNode& n) { return prepacks(o, n); });
}

}  // namespace

ReplayPlan plan_replay(const ReplayManifest& m, const ReplayOptions& o, const Caps& caps) {
  ReplayPlan plan;
  plan.options = o;
  plan.rows = chunk_rows(o.prompt, o.chunk);
  plan.caps = "sm_" + std::to_string(caps.sm) + (caps.wgmma ? " with wgmma" : "") + " (" +
              caps.backend + ")";
  int64_t max_n = 0, max_k = 0, max_nk = 0;
  for (const ReplayNode& n : m.nodes) {
    max_n = std::max(max_n, n.N);
    max_k = std::max(max_k, n.K);
    max_nk = std::max(max_nk, n.N * n.K);
    const int64_t per_instance = n.N * ceil_div(n.K, 2) * (prepacks(o, n) ? 2 : 1) +
                                 n.N * ceil_div(n.K, n.block_size) + (n.bias ? 2 * n.N : 0);
    plan.weight_bytes += static_cast<std::size_t>(per_instance * m.instances(n));
  }
  plan.scratch_bytes = static_cast<std::size_t>(max_nk) * 2;
  plan.activation_bytes =
      static_cast<std::size_t>(plan.rows.front() * (max_k + max_n)) * 2 + sizeof(float);

  for (int64_t M : plan.rows) {
    std::vector<Route> routes;
    for (const ReplayNode& n : m.nodes) {
      const Problem p = problem_of(m, n, M);
      Route r;
      if (o.route == ReplayRoute::natural) {
        r = select_route(p, caps, Options{}).route;
      } else {
        r = o.route == ReplayRoute::prefill_vec8    ? Route::prefill_vec8
            : o.route == ReplayRoute::prefill_fused ? Route::prefill_fused
                                                    : Route::prefill_scalar;
        const std::string failure = route_precondition_failure(r, p, caps);
        if (!failure.empty()) {
          throw std::invalid_argument(
              "replay: --route " + std::string(route_name(r)) + " cannot run node \"" + n.name +
              "\" (N = " + std::to_string(n.N) + ", K = " + std::to_string(n.K) +
              ", block_size = " + std::to_string(n.block_size) + ") of " + m.origin + ": " +
              failure);
        }
      }
      routes.push_back(r);
      plan.calls += m.instances(n);
      plan.steps += m.instances(n) * (is_prefill_route(r) ? 2 : 1);
    }
    plan.route.push_back(std::move(routes));
  }
  return plan;
}

std::string render_replay_plan(const ReplayManifest& m, const ReplayPlan& plan) {
  std::ostringstream o;
  o << "replay " << m.name << " (" << dtype_name(m.dtype) << ") from " << m.origin << "\n";
  o << "  " << (m.repeat > 1 ? std::to_string(m.repeat) + " x " : "") << m.nodes.size()
    << " node types = " << m.node_count() << " operator nodes, " << billions(m.weight_values())
    << " weight values\n";
  o << "  prompt " << plan.options.prompt << " tokens in chunks of " << plan.options.chunk << ": "
    << plan.rows.size() << " chunks (last " << plan.rows.back() << " rows), " << plan.calls
    << " calls, " << plan.steps << " timed GPU steps\n";
  std::map<std::string, int64_t> calls_by_route;
  for (std::size_t c = 0; c < plan.rows.size(); ++c) {
    for (std::size_t j = 0; j < m.nodes.size(); ++j)
      calls_by_route[route_name(plan.route[c][j])] += m.instances(m.nodes[j]);
  }
  o << "  route " << replay_route_name(plan.options.route) << " on " << plan.caps << ":";
  for (const auto& [route, calls] : calls_by_route) o << " " << route << " x " << calls;
  o << "\n  device memory: weights " << gigabytes(plan.weight_bytes)
    << (any_prepacks(m, plan.options)
            ? " (packed codes twice: also prepacked for prefill_fused; scales, bias)"
            : " (packed codes, scales, bias)")
    << ", scratch " << gigabytes(plan.scratch_bytes) << ", activations "
    << gigabytes(plan.activation_bytes) << " = " << gigabytes(plan.total_bytes()) << "\n";
  o << "  " << std::left << std::setw(20) << "node" << std::right << std::setw(8) << "N"
    << std::setw(8) << "K" << std::setw(7) << "block" << std::setw(7) << "count" << std::setw(10)
    << "instances" << std::setw(6) << "bias"
    << "  routes (chunk 1 .. last)\n";
  for (std::size_t j = 0; j < m.nodes.size(); ++j) {
    const ReplayNode& n = m.nodes[j];
    const std::string first = route_name(plan.route.front()[j]),
                      last = route_name(plan.route.back()[j]);
    o << "  " << std::left << std::setw(20) << n.name << std::right << std::setw(8) << n.N
      << std::setw(8) << n.K << std::setw(7) << n.block_size << std::setw(7) << n.count
      << std::setw(10) << m.instances(n) << std::setw(6) << (n.bias ? "yes" : "no") << "  "
      << (first == last ? first : first + " .. " + last) << "\n";
  }
  return o.str();
}

std::vector<ReplayStep> chunk_steps(const ReplayManifest& m, const ReplayPlan& plan,
                                    std::size_t chunk) {
  std::vector<ReplayStep> steps;
  const int64_t M = plan.rows.at(chunk);
  for (int64_t layer = 0; layer < m.repeat; ++layer) {
    for (std::size_t j = 0; j < m.nodes.size(); ++j) {
      const ReplayNode& n = m.nodes[j];
      const Route r = plan.route[chunk][j];
      for (int64_t copy = 0; copy < n.count; ++copy) {
        const ReplayStep s{static_cast<int>(j), layer * n.count + copy, M, r, ReplayPhase::dequant};
        if (is_prefill_route(r)) {
          steps.push_back(s);
          steps.push_back({s.node, s.instance, M, r, ReplayPhase::gemm});
        } else {
          steps.push_back({s.node, s.instance, M, r, ReplayPhase::whole});
        }
      }
    }
  }
  return steps;
}

void PhaseTimes::add(ReplayPhase phase, double us) {
  switch (phase) {
    case ReplayPhase::dequant:
      dequant_ms += us / 1000;
      break;
    case ReplayPhase::gemm:
      gemm_ms += us / 1000;
      ++calls;  // the call's last step
      break;
    case ReplayPhase::whole:
      whole_ms += us / 1000;
      ++calls;
      break;
  }
}

ReplayReport start_replay_report(const ReplayManifest& m, const ReplayPlan& plan) {
  ReplayReport r;
  r.model = m.name;
  r.origin = m.origin;
  r.note = m.note;
  r.dtype = dtype_name(m.dtype);
  r.route_mode = replay_route_name(plan.options.route);
  r.prompt = plan.options.prompt;
  r.chunk = plan.options.chunk;
  r.chunks = static_cast<int64_t>(plan.rows.size());
  r.last_chunk_rows = plan.rows.back();
  r.nodes = m.node_count();
  r.calls = plan.calls;
  r.weight_values = m.weight_values();
  r.device_bytes = plan.total_bytes();
  r.prepack = any_prepacks(m, plan.options);
  r.published = m.published;
  r.timing =
      "per chunk, every call's dequant and GEMM step queued behind a GPU hold, each between its "
      "own CUDA events; "
      "one synchronize per chunk";
  for (const ReplayNode& n : m.nodes) {
    ReplayNodeRow row;
    row.name = n.name;
    row.N = n.N;
    row.K = n.K;
    row.block_size = n.block_size;
    row.instances = m.instances(n);
    row.bias = n.bias;
    row.bias_placement = bias_placement("", n.bias);
    r.node_rows.push_back(row);
  }
  return r;
}

void record_step(ReplayReport& r, const ReplayStep& s, double us) {
  r.total.add(s.phase, us);
  r.by_route[route_name(s.route)].add(s.phase, us);
  r.node_rows.at(static_cast<std::size_t>(s.node)).t.add(s.phase, us);
}

bool bias_is_separate(const std::string& variant, bool has_bias) {
  return has_bias && variant.find('+') != std::string::npos;
}

std::string bias_placement(const std::string& variant, bool has_bias) {
  if (!has_bias) return "none";
  if (variant.empty()) return "in the GEMM step";
  if (bias_is_separate(variant, has_bias))
    return "separate kernel in the GEMM step (" + variant + ")";
  return "fused in GEMM (" + variant + ")";
}

std::string render_replay_table(const ReplayReport& r, std::size_t top_rows) {
  std::ostringstream o;
  o << "replay " << r.model << " (" << r.dtype << ") from " << r.origin << "\n";
  o << "  " << r.nodes << " operator nodes, " << billions(r.weight_values) << " weight values ("
    << gigabytes(r.device_bytes) << " on the device with scratch and activations)\n";
  o << "  prompt " << r.prompt << " tokens in " << r.chunks << " chunks of " << r.chunk << " (last "
    << r.last_chunk_rows << " rows): " << r.calls << " calls; route " << r.route_mode;
  if (!r.device.empty()) o << "; device " << r.device;
  if (r.prepack) {
    o << "\n  weights prepacked for prefill_fused's wgmma kernel once, before the timed chunks: "
      << fixed(r.prepack_ms, 2) << " ms of GPU time (not in the totals)";
  }
  o << "\n\n";

  const auto phase_cols = [&o](const PhaseTimes& t) {
    o << std::setw(12) << fixed(t.dequant_ms, 1) << std::setw(11) << fixed(t.gemm_ms, 1)
      << std::setw(11) << fixed(t.whole_ms, 1) << std::setw(11) << fixed(t.total_ms(), 1)
      << std::setw(9) << percent(t.dequant_share());
  };
  o << std::left << std::setw(16) << "route" << std::right << std::setw(8) << "calls"
    << std::setw(12) << "dequant ms" << std::setw(11) << "GEMM ms" << std::setw(11) << "whole ms"
    << std::setw(11) << "total ms" << std::setw(9) << "dq share"
    << "\n";
  for (const auto& [route, t] : r.by_route) {
    o << std::left << std::setw(16) << route << std::right << std::setw(8) << t.calls;
    phase_cols(t);
    o << "\n";
  }
  o << std::left << std::setw(16) << "all" << std::right << std::setw(8) << r.total.calls;
  phase_cols(r.total);
  o << "\n  (GEMM = the GEMM step, bias included; whole = calls of non-prefill routes, one kernel "
       "each;\n"
    << "   dq share = dequant ms / total ms, the share of the operator's GPU time)\n";
  bool any_bias = false;
  for (const ReplayNodeRow& row : r.node_rows) {
    if (!row.bias) continue;
    any_bias = true;
    o << "bias of " << row.name << ": " << row.bias_placement;
    if (row.bias_estimate_ms >= 0)
      o << ", about " << fixed(row.bias_estimate_ms, 1) << " ms of the GEMM column";
    o << "\n";
  }
  if (!any_bias) o << "bias: no node has one\n";
  o << "\n";

  std::vector<const ReplayNodeRow*> rows;
  for (const ReplayNodeRow& row : r.node_rows) rows.push_back(&row);
  std::stable_sort(rows.begin(), rows.end(), [](const ReplayNodeRow* a, const ReplayNodeRow* b) {
    return a->t.total_ms() > b->t.total_ms();
  });
  const std::size_t shown = std::min(top_rows, rows.size());
  o << "node types, top " << shown << " of " << rows.size() << " by GPU time:\n";
  o << std::left << std::setw(20) << "node" << std::right << std::setw(8) << "N" << std::setw(8)
    << "K" << std::setw(7) << "nodes" << std::setw(7) << "calls" << std::setw(12) << "dequant ms"
    << std::setw(11) << "GEMM ms" << std::setw(11) << "whole ms" << std::setw(11) << "total ms"
    << std::setw(9) << "dq share" << std::setw(9) << "of all"
    << "  bias\n";
  for (std::size_t i = 0; i < shown; ++i) {
    const ReplayNodeRow& row = *rows[i];
    o << std::left << std::setw(20) << row.name << std::right << std::setw(8) << row.N
      << std::setw(8) << row.K << std::setw(7) << row.instances << std::setw(7) << row.t.calls;
    phase_cols(row.t);
    o << std::setw(9) << percent(r.total.total_ms() > 0 ? row.t.total_ms() / r.total.total_ms() : 0)
      << "  " << (row.bias ? "yes" : "no") << "\n";
  }

  if (r.published) {
    const ReplayPublished& p = *r.published;
    o << "\npublished" << (p.source.empty() ? "" : " (" + p.source + ")");
    if (p.prompt) o << ", prompt " << p.prompt;
    o << ":\n";
    for (const auto& [route, ms] : p.dequant_ms) {
      o << "  dequant on " << route << ": " << fixed(ms, 0) << " ms";
      const auto gpu = p.prefill_gpu_ms.find(route);
      if (gpu != p.prefill_gpu_ms.end()) {
        o << " of " << fixed(gpu->second, 0) << " ms prefill GPU time ("
          << percent(ms / gpu->second) << ", attention and every other kernel in the denominator)";
      }
      const auto run = r.by_route.find(route);
      if (run != r.by_route.end() && run->second.dequant_ms > 0) {
        o << "; this run: " << fixed(run->second.dequant_ms, 1) << " ms ("
          << fixed(run->second.dequant_ms / ms, 2) << "x)";
      }
      o << "\n";
    }
    if (p.prompt && p.prompt != r.prompt) {
      o << "  (this run's prompt is " << r.prompt << " tokens, not the published " << p.prompt
        << ")\n";
    }
  }

  o << "\ntiming: " << r.timing << "\n";
  if (r.span_us > 0) {
    o << "  GPU busy in timed steps " << percent(r.busy_us / r.span_us) << " of the timed span ("
      << fixed((r.span_us - r.busy_us) / 1000, 1)
      << " ms between steps: launch gaps and event records)\n";
  }
  for (const std::string& w : r.warnings) o << "warning: " << w << "\n";
  return o.str();
}

std::string render_replay_json(const ReplayReport& r) {
  json j;
  j["model"] = r.model;
  j["manifest"] = r.origin;
  j["note"] = r.note;
  j["dtype"] = r.dtype;
  j["device"] = r.device;
  j["route_mode"] = r.route_mode;
  j["prompt"] = r.prompt;
  j["chunk"] = r.chunk;
  j["chunks"] = r.chunks;
  j["last_chunk_rows"] = r.last_chunk_rows;
  j["nodes"] = r.nodes;
  j["calls"] = r.calls;
  j["weight_values"] = r.weight_values;
  j["device_bytes"] = r.device_bytes;
  j["timing"] = r.timing;
  j["busy_us"] = r.busy_us;
  j["span_us"] = r.span_us;
  j["prepack"] = r.prepack;
  j["prepack_ms"] = r.prepack_ms;
  j["total"] = phase_json(r.total);
  j["routes"] = json::object();
  for (const auto& [route, t] : r.by_route) j["routes"][route] = phase_json(t);
  j["node_types"] = json::array();
  for (const ReplayNodeRow& row : r.node_rows) {
    json n = phase_json(row.t);
    n["name"] = row.name;
    n["N"] = row.N;
    n["K"] = row.K;
    n["block_size"] = row.block_size;
    n["instances"] = row.instances;
    n["bias"] = row.bias;
    n["gemm_variant"] = row.gemm_variant;
    n["bias_placement"] = row.bias_placement;
    n["bias_estimate_ms"] = row.bias_estimate_ms >= 0 ? json(row.bias_estimate_ms) : json(nullptr);
    j["node_types"].push_back(n);
  }
  if (r.published) {
    j["published"] = {{"source", r.published->source},
                      {"prompt", r.published->prompt},
                      {"dequant_ms", r.published->dequant_ms},
                      {"prefill_gpu_ms", r.published->prefill_gpu_ms}};
  }
  j["warnings"] = r.warnings;
  return j.dump(2) + "\n";
}

// ---- the GPU run -----------------------------------------------------------

namespace {

// One node instance's weights, in device memory for the whole replay.
struct Weights {
  nvh::Buffer packed, scales, bias;
  nvh::Buffer prepacked;  // ReplayOptions::prepack: the codes in prefill_fused's wgmma order
};

void fill(nvh::Backend& b, const nvh::Buffer& buf, uint64_t seed, FillRandom::Mode mode,
          uint8_t lo = 0, uint8_t span = 0, nvh::HalfKind kind = nvh::HalfKind::bf16) {
  const int64_t bytes = static_cast<int64_t>(buf.bytes());
  const FillRandom::Params p{
      buf.data(), mode == FillRandom::Mode::halves ? bytes / 2 : bytes, seed, mode, lo, span, kind};
  if (p.count > 0) nvh::launch<FillRandom>(b, FillRandom::shape(p), p);
}

class Replayer {
 public:
  Replayer(nvh::Backend& b, const ReplayManifest& m, const ReplayPlan& plan)
      : b_(b), m_(m), plan_(plan) {}

  void allocate(std::ostream& log) {
    const nvh::HalfKind kind = half_kind(m_.dtype);
    int64_t max_n = 0, max_k = 0, max_nk = 0;
    try {
      for (std::size_t j = 0; j < m_.nodes.size(); ++j) {
        const ReplayNode& n = m_.nodes[j];
        max_n = std::max(max_n, n.N);
        max_k = std::max(max_k, n.K);
        max_nk = std::max(max_nk, n.N * n.K);
        std::vector<Weights> ws;
        for (int64_t i = 0; i < m_.instances(n); ++i) {
          const uint64_t seed = FillRandom::hash(j + 1, static_cast<uint64_t>(i)) * 4;
          Weights w;
          w.packed = nvh::Buffer(b_, static_cast<std::size_t>(n.N * ceil_div(n.K, 2)));
          w.scales = nvh::Buffer(b_, static_cast<std::size_t>(n.N * ceil_div(n.K, n.block_size)));
          fill(b_, w.packed, seed, FillRandom::Mode::bytes);
          // E4M3 0x30..0x3F: [0.5, 0.9375], finite and normal, as a quantizer's scales are.
          fill(b_, w.scales, seed + 1, FillRandom::Mode::byte_range, 0x30, 0x10);
          if (prepacks(plan_.options, n)) w.prepacked = nvh::Buffer(b_, w.packed.bytes());
          if (n.bias) {
            w.bias = nvh::Buffer(b_, static_cast<std::size_t>(n.N) * 2);
            fill(b_, w.bias, seed + 2, FillRandom::Mode::halves, 0, 0, kind);
          }
          ws.push_back(std::move(w));
        }
        weights_.push_back(std::move(ws));
      }
      const int64_t rows = plan_.rows.front();
      A_ = nvh::Buffer(b_, static_cast<std::size_t>(rows * max_k) * 2);
      Y_ = nvh::Buffer(b_, static_cast<std::size_t>(rows * max_n) * 2);
      scratch_ = nvh::Buffer(b_, static_cast<std::size_t>(max_nk) * 2);
      g_ = nvh::Buffer(b_, sizeof(float));
    } catch (const std::exception& e) {
      throw std::runtime_error("replay: allocating " + gigabytes(plan_.total_bytes()) +
                               " of device memory for " + m_.name + " failed: " + e.what());
    }
    fill(b_, A_, 0xA11CE, FillRandom::Mode::halves, 0, 0, kind);
    prepack(log);
    const float g = 1.0f / 64;  // weight_scale_2: keeps |W| well inside bf16 and fp16
    g_.upload(&g, sizeof g);
    b_.synchronize();
    log << "  filled " << gigabytes(plan_.weight_bytes) << " of weights on the device\n";
  }

  // Every prepacked copy written, each prepack between its own events.
  void prepack(std::ostream& log) {
    std::vector<std::pair<std::size_t, std::size_t>> todo;  // (node, instance)
    for (std::size_t j = 0; j < weights_.size(); ++j) {
      for (std::size_t i = 0; i < weights_[j].size(); ++i) {
        if (weights_[j][i].prepacked.data()) todo.emplace_back(j, i);
      }
    }
    if (todo.empty()) return;
    const nvh::LaunchTimes t =
        nvh::time_each_launch(b_, static_cast<int>(todo.size()), [&](int at) {
          const auto [j, i] = todo[static_cast<std::size_t>(at)];
          const ReplayNode& n = m_.nodes[j];
          const Weights& w = weights_[j][i];
          prepack_for_fused(b_, {w.packed.data(), {n.N, ceil_div(n.K, 2)}, ElemType::e2m1x2}, n.K,
                            w.prepacked.data());
        });
    prepack_ms_ = 0;
    for (double us : t.us) prepack_ms_ += us / 1000;
    log << "  prepacked " << todo.size() << " weights for prefill_fused in "
        << fixed(prepack_ms_, 2) << " ms of GPU time\n";
  }
  double prepack_ms() const { return prepack_ms_; }

  MatmulArgs args(const ReplayStep& s, bool with_bias = true) const {
    const ReplayNode& n = m_.nodes[static_cast<std::size_t>(s.node)];
    const Weights& w =
        weights_[static_cast<std::size_t>(s.node)][static_cast<std::size_t>(s.instance)];
    const ElemType t = elem_type(m_.dtype);
    MatmulArgs a;
    a.A = {A_.data(), {s.M, n.K}, t};
    a.B = {w.packed.data(), {n.N, ceil_div(n.K, 2)}, ElemType::e2m1x2};
    a.weight_scale = {w.scales.data(), {n.N, ceil_div(n.K, n.block_size)}, ElemType::e4m3};
    a.weight_scale_2 = {g_.data(), {}, ElemType::fp32};
    if (n.bias && with_bias) a.bias = {w.bias.data(), {n.N}, t};
    a.Y = {Y_.data(), {s.M, n.N}, t};
    a.scratch = {scratch_.data(), {n.N, n.K}, t};
    if (w.prepacked.data()) a.prepacked_B = {w.prepacked.data(), a.B.shape, ElemType::e2m1x2};
    a.block_size = n.block_size;
    return a;
  }

  GemmStepArgs gemm(const ReplayStep& s, bool with_bias = true) const {
    const ReplayNode& n = m_.nodes[static_cast<std::size_t>(s.node)];
    const Weights& w =
        weights_[static_cast<std::size_t>(s.node)][static_cast<std::size_t>(s.instance)];
    const void* bias = n.bias && with_bias ? w.bias.data() : nullptr;
    return GemmStepArgs{A_.data(), scratch_.data(), bias, Y_.data(), s.M, n.N, n.K, m_.dtype};
  }

  void run(const ReplayStep& s) {
    switch (s.phase) {
      case ReplayPhase::dequant:
        run_dequant(b_, s.route, args(s), scratch_.data());
        break;
      case ReplayPhase::gemm:
        run_gemm_step(b_, gemm(s));
        break;
      case ReplayPhase::whole: {
        // A forced prefill_fused past its crossover (--route prefill_fused);
        // where the dispatcher takes it anyway, forcing changes nothing.
        Options o;
        if (s.route == Route::prefill_fused) o.force_route = Route::prefill_fused;
        run_matmul(b_, args(s), o);
        break;
      }
    }
  }

  // One untimed run of every distinct (node, M, route) step: builds the
  // cuBLASLt plans, loads the kernels and grows the workspace before any
  // timed chunk, so none of that lands inside a hold.
  void warm_up() {
    std::set<std::tuple<int, int64_t, Route, ReplayPhase>> seen;
    for (std::size_t c = 0; c < plan_.rows.size(); ++c) {
      if (c != 0 && c + 1 != plan_.rows.size()) continue;  // only the first and last chunks differ
      for (const ReplayStep& s : chunk_steps(m_, plan_, c)) {
        if (seen.insert({s.node, s.M, s.route, s.phase}).second) run(s);
      }
    }
    b_.synchronize();
  }

  // The GEMM step's variant per node (at the full chunk's M, and the last
  // chunk's when it differs), and for a bias run as a kernel of its own, its
  // cost: with-bias minus no-bias GEMM step, medians of 20 launches.
  void describe_gemm(ReplayReport& r) {
    for (std::size_t j = 0; j < m_.nodes.size(); ++j) {
      ReplayNodeRow& row = r.node_rows[j];
      // M -> chunks in which this node takes a prefill route.
      std::map<int64_t, int64_t> prefill_chunks;
      for (std::size_t c = 0; c < plan_.rows.size(); ++c) {
        if (is_prefill_route(plan_.route[c][j])) ++prefill_chunks[plan_.rows[c]];
      }
      std::string variants;
      double estimate_ms = 0;
      bool separate = false;
      for (const auto& [M, chunks] : prefill_chunks) {
        const ReplayStep s{static_cast<int>(j), 0, M, Route::prefill_vec8, ReplayPhase::gemm};
        const std::string v = gemm_step_variant(b_, gemm(s));
        if (variants.find(v) == std::string::npos) variants += (variants.empty() ? "" : " / ") + v;
        if (!bias_is_separate(v, row.bias)) continue;
        separate = true;
        const double with =
            nvh::time_launches(b_, 3, 20, [&](int) { run_gemm_step(b_, gemm(s, true)); }).median_us;
        const double without = nvh::time_launches(b_, 3, 20, [&](int) {
                                 run_gemm_step(b_, gemm(s, false));
                               }).median_us;
        estimate_ms +=
            std::max(0.0, with - without) * static_cast<double>(chunks * row.instances) / 1000;
      }
      row.gemm_variant = variants;
      row.bias_placement = bias_placement(variants, row.bias);
      if (separate) row.bias_estimate_ms = estimate_ms;
      if (variants.find("gemmex") != std::string::npos) {
        r.warnings.push_back(row.name + ": the GEMM step falls back to " + variants +
                             ", which synchronizes per call; its times include host gaps");
      }
    }
  }

 private:
  nvh::Backend& b_;
  const ReplayManifest& m_;
  const ReplayPlan& plan_;
  std::vector<std::vector<Weights>> weights_;
  nvh::Buffer A_, Y_, scratch_, g_;
  double prepack_ms_ = 0;
};

}  // namespace

ReplayReport run_replay(nvh::Backend& backend, const ReplayManifest& m, const ReplayOptions& o,
                        std::ostream& log) {
  if (backend.kind() != nvh::BackendKind::cuda) {
    throw std::invalid_argument(
        "replay: backend = " + backend.name() +
        ": a replay times a GPU; run it on a machine with one (--dry-run prints the plan "
        "without one)");
  }
  const ReplayPlan plan = plan_replay(m, o, device_caps(backend));
  log << render_replay_plan(m, plan);
  ReplayReport r = start_replay_report(m, plan);
  r.device = backend.caps().device_name + " (" + backend.arch() + ")";

  Replayer replayer(backend, m, plan);
  replayer.allocate(log);
  r.prepack_ms = replayer.prepack_ms();
  replayer.warm_up();
  replayer.describe_gemm(r);

  nvh::Progress progress("replay " + m.name + " " + replay_route_name(o.route),
                         static_cast<uint64_t>(plan.calls));
  int64_t done = 0;
  for (std::size_t c = 0; c < plan.rows.size(); ++c) {
    const std::vector<ReplayStep> steps = chunk_steps(m, plan, c);
    const nvh::LaunchTimes t =
        nvh::time_each_launch(backend, static_cast<int>(steps.size()),
                              [&](int i) { replayer.run(steps[static_cast<std::size_t>(i)]); });
    for (std::size_t i = 0; i < steps.size(); ++i) {
      record_step(r, steps[i], t.us[i]);
      r.busy_us += t.us[i];
      if (steps[i].phase != ReplayPhase::dequant) ++done;
    }
    r.span_us += t.span_us;
    progress.update(static_cast<uint64_t>(done),
                    "chunk " + std::to_string(c + 1) + "/" + std::to_string(plan.rows.size()) +
                        ", dequant " + fixed(r.total.dequant_ms, 1) + " ms");
  }
  progress.finish("dequant " + fixed(r.total.dequant_ms, 1) + " ms of " +
                  fixed(r.total.total_ms(), 1) + " ms");
  // Back-to-back kernels leave a few microseconds between them even when
  // queued; far more than that means the host did not keep the queue full.
  if (r.span_us > 0 && r.busy_us < 0.8 * r.span_us) {
    r.warnings.push_back("the GPU was idle " + percent(1 - r.busy_us / r.span_us) +
                         " of the timed span: the host fell behind the queued work, so step times "
                         "may hold host gaps");
  }
  return r;
}

}  // namespace nvfp4
