#include "suite.h"

#include <cstring>
#include <random>
#include <regex>
#include <stdexcept>
#include <vector>

#include "axpb.h"
#include "harness/sha256.h"
#include "reference.h"

namespace axpb {
namespace {

struct FamilyDef {
  const char* name;
  const char* aim;
  Route route;  // every case of the family must take it
  std::vector<Case> examples;
  Case (*draw)(std::mt19937_64& rng, uint64_t seed);
};

const std::vector<FamilyDef>& families() {
  static const std::vector<FamilyDef> defs = {
      {"vec4",
       "n % 4 == 0, aligned: the vec4 route",
       Route::vec4,
       {{4, 0, 1}, {8, 0, 1}, {4096, 0, 1}, {0, 0, 1}},
       [](std::mt19937_64& rng, uint64_t seed) {
         return Case{4 * static_cast<int64_t>(rng() % 2048 + 1), 0, seed};
       }},
      {"tail",
       "n % 4 != 0: the scalar route for the tail",
       Route::scalar,
       {{1, 0, 1}, {3, 0, 1}, {5, 0, 1}, {4095, 0, 1}},
       [](std::mt19937_64& rng, uint64_t seed) {
         return Case{4 * static_cast<int64_t>(rng() % 2048) + static_cast<int64_t>(rng() % 3 + 1),
                     0, seed};
       }},
      {"misaligned",
       "n % 4 == 0 but x, y not 16-byte aligned: the scalar route",
       Route::scalar,
       {{4, 1, 1}, {8, 2, 1}, {4096, 3, 1}},
       [](std::mt19937_64& rng, uint64_t seed) {
         return Case{4 * static_cast<int64_t>(rng() % 2048 + 1), static_cast<int>(rng() % 3 + 1),
                     seed};
       }},
  };
  return defs;
}

const FamilyDef& family_named(const std::string& name) {
  for (const FamilyDef& f : families()) {
    if (f.name == name) return f;
  }
  throw std::invalid_argument("axpb: no family \"" + name + "\" (vec4, tail, misaligned)");
}

// Inputs from the case's seed alone, so a case name reruns exactly.
struct Inputs {
  std::vector<float> x;
  float a, b;
};
Inputs make_inputs(const Case& c) {
  std::mt19937_64 rng(c.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(c.n));
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  Inputs in{std::vector<float>(static_cast<std::size_t>(c.n)), value(rng), value(rng)};
  for (float& v : in.x) v = value(rng);
  return in;
}

class AxpbSuite : public nvh::OperatorSuite {
 public:
  std::string name() const override { return "axpb"; }
  std::string tool() const override { return "axpb-harness"; }
  std::string routes_text() const override {
    std::string text;
    for (const RouteRow& r : route_table()) {
      text += std::string(r.name) + ":";
      for (const std::string& reason : r.reasons) text += " " + reason;
      text += "\n";
    }
    return text;
  }
  nvh::GateDeclaration gate_declaration() const override {
    nvh::GateDeclaration d{"axpb", {}, {}};
    for (const RouteRow& r : route_table()) d.routes.push_back({r.name, r.reasons});
    for (const FamilyDef& f : families()) d.families.push_back({f.name, {route_name(f.route)}});
    return d;
  }
  nvh::HardwareGates hardware_gates(const nvh::Backend&) const override { return {}; }

  std::vector<std::string> family_names() const override {
    std::vector<std::string> names;
    for (const FamilyDef& f : families()) names.push_back(f.name);
    return names;
  }
  std::string family_aim(const std::string& family) const override {
    return family_named(family).aim;
  }
  nvh::CaseGroup family_group(const std::string& family, int random, uint64_t seed) const override {
    const FamilyDef& f = family_named(family);
    nvh::CaseGroup g{f.name, {}, f.examples.size(), "", ""};
    for (const Case& c : f.examples) g.cases.push_back(c.name());
    std::mt19937_64 rng(seed);
    for (int i = 0; i < random; ++i) g.cases.push_back(f.draw(rng, rng() % 1000000).name());
    return g;
  }
  void check_case(const std::string& group, const std::string& case_name) const override {
    family_named(group);
    parse_case(case_name);
  }

  nvh::CaseResult run_case(nvh::Backend& backend, const std::string&,
                           const std::string& case_name) const override {
    const Case c = parse_case(case_name);
    const Inputs in = make_inputs(c);
    const std::size_t bytes = (static_cast<std::size_t>(c.n) + 4) * sizeof(float);
    float* x = static_cast<float*>(backend.allocate(bytes));
    float* y = static_cast<float*>(backend.allocate(bytes));
    backend.copy_in(x + c.offset, in.x.data(), in.x.size() * sizeof(float));
    backend.fill(y, 0xFF, bytes);  // NaN everywhere: an element left unwritten shows
    const Decision d = run(backend, {x + c.offset, y + c.offset, c.n, in.a, in.b});
    std::vector<float> got(in.x.size());
    backend.copy_out(got.data(), y + c.offset, got.size() * sizeof(float));
    backend.release(x);
    backend.release(y);
    const std::vector<float> want = reference(in.x, in.a, in.b);
    nvh::CaseResult r{nvh::Outcome::ok,
                      "",
                      route_name(d.route),
                      nvh::sha256_hex(got.data(), got.size() * sizeof(float)),
                      "",
                      0};
    if (std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) != 0) {
      r.outcome = nvh::Outcome::fail;
      r.detail = "y differs from the reference: SHA-256 " + r.digest + ", the reference's " +
                 nvh::sha256_hex(want.data(), want.size() * sizeof(float));
    }
    return r;
  }

  // Every case of a family takes the family's route.
  nvh::GroupJudgement judge_group(const nvh::CaseGroup& group,
                                  std::vector<nvh::CaseResult*>& results,
                                  const nvh::BackendDescription&, bool whole) const override {
    nvh::GroupJudgement j;
    if (!whole) return j;
    const std::string want = route_name(family_named(group.name).route);
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (results[i] && results[i]->outcome == nvh::Outcome::ok && results[i]->route != want) {
        j.failures.push_back({"route-targets", group.cases[i] + " took " + results[i]->route +
                                                   ", the family aims at " + want});
      }
    }
    return j;
  }
};

}  // namespace

std::string Case::name() const {
  return "n" + std::to_string(n) + "_off" + std::to_string(offset) + "_s" + std::to_string(seed);
}

Case parse_case(const std::string& name) {
  static const std::regex form("n(0|[1-9][0-9]{0,8})_off([0-3])_s(0|[1-9][0-9]{0,17})");
  std::smatch m;
  if (!std::regex_match(name, m, form)) {
    throw std::invalid_argument("axpb: case name " + name +
                                ": not of the form n<N>_off<0..3>_s<SEED> (e.g. n4096_off0_s1)");
  }
  return {std::stoll(m[1]), std::stoi(m[2]), std::stoull(m[3])};
}

const nvh::OperatorSuite& axpb_suite() {
  static const AxpbSuite suite;
  return suite;
}

}  // namespace axpb
