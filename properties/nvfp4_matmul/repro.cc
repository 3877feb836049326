#include "properties/nvfp4_matmul/repro.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "harness/safetensors.h"
#include "harness/sha256.h"
#include "properties/nvfp4_matmul/tensor_file.h"

namespace nvfp4 {
namespace {

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("write_repro: " + path.string() + ": cannot write the file");
}

// What `run --inputs` cannot reproduce of a case, so the README says so.
std::string caveats(const CaseSpec& spec) {
  std::string out;
  if (spec.options.simulated_caps) {
    out += "- The case made the dispatcher decide as on an sm_" +
           std::to_string(spec.options.simulated_caps->sm) +
           " device; `run --inputs` decides for the device it runs on.\n";
  }
  if (spec.options.native_opt_in)
    out += "- The case opted in to native_sm120; `run --inputs` forces each route instead.\n";
  return out;
}

std::string readme(const std::string& inputs, const CaseSpec& spec, const ReproInfo& info) {
  std::ostringstream o;
  o << spec.family << "/" << spec.name() << " FAILED on " << info.backend << " (" << info.arch
    << "), verify --seed " << info.seed << ":\n  " << info.detail << "\n\n"
    << "expected Y " << info.expected_sha256 << " (" << info.expected_from << ")\n"
    << "got      Y "
    << (info.got_sha256.empty() ? "none: the case gave no output" : info.got_sha256) << "\n\n"
    << "Rerun this one case:\n"
    << "  nvfp4-harness verify --case " << spec.family << "/" << spec.name() << " --backend "
    << info.backend << " --seed " << info.seed << "\n\n";
  if (info.route.empty()) {
    o << "Run its inputs on every route that accepts them (the case ended before it said which "
         "route it took):\n"
      << "  nvfp4-harness run --inputs " << inputs << " --backend " << info.backend << "\n";
  } else {
    o << "Run its inputs on the route it took, checked against the reference:\n"
      << "  nvfp4-harness run --inputs " << inputs << " --route " << info.route << " --backend "
      << info.backend << "\n"
      << "or on every route that accepts them (an exact case also fails when another route "
         "differs):\n"
      << "  nvfp4-harness run --inputs " << inputs << " --backend " << info.backend << "\n";
  }
  if (const std::string c = caveats(spec); !c.empty()) o << "\n" << c;
  return o.str();
}

}  // namespace

ExpectedDigest reference_digest(const CaseSpec& spec, const CaseInputs& inputs) {
  const Oracle oracle = make_oracle(spec, inputs);
  return {nvh::tensor_sha256(dtype_name(spec.dtype), {spec.M, spec.N}, oracle.y_rounded.data(),
                             oracle.y_rounded.size() * 2),
          oracle.exact
              ? "the reference's output; the case is exact, so every route must give it"
              : "the reference's fp64 output rounded to " + std::string(dtype_name(spec.dtype)) +
                    "; the case is not exact, so a route may differ from it within the contract's "
                    "bound"};
}

std::string write_repro(const std::string& out_dir, const CaseSpec& spec, const ReproInfo& info) {
  const std::filesystem::path dir = std::filesystem::path(out_dir) / "repro" / spec.name();
  std::filesystem::create_directories(dir);
  const std::string inputs = (dir / "inputs.safetensors").string();
  nvh::write_safetensors(
      tensor_file_of(spec, make_inputs(spec), {{"case", spec.name()}, {"family", spec.family}}),
      inputs);
  const nlohmann::json j = {{"case", spec.name()},
                            {"family", spec.family},
                            {"route", info.route},
                            {"backend", info.backend},
                            {"arch", info.arch},
                            {"seed", info.seed},
                            {"expected_sha256", info.expected_sha256},
                            {"expected_from", info.expected_from},
                            {"got_sha256", info.got_sha256},
                            {"detail", info.detail}};
  write_text(dir / "repro.json", j.dump(2) + "\n");
  write_text(dir / "README.txt", readme(inputs, spec, info));
  return dir.string();
}

}  // namespace nvfp4
