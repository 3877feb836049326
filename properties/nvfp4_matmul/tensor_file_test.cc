#include "properties/nvfp4_matmul/tensor_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "harness/manifest.h"
#include "harness/safetensors.h"
#include "harness/sha256.h"
#include "harness/verify_driver.h"
#include "properties/nvfp4_matmul/case_lists.h"
#include "properties/nvfp4_matmul/families.h"
#include "properties/nvfp4_matmul/golden_manifests.h"
#include "properties/nvfp4_matmul/repro.h"
#include "properties/nvfp4_matmul/suite.h"

namespace nvfp4 {
namespace {

namespace fs = std::filesystem;

// The host executor, except that every download has its first byte flipped:
// a route that computes wrong bits, the same wrong bits every time. Verify's
// cases then fail with an output digest, which a repro must reproduce.
class FlipFirstDownloadedByte : public nvh::Backend {
 public:
  nvh::BackendKind kind() const override { return host_->kind(); }
  std::string arch() const override { return host_->arch(); }
  const nvh::DeviceCaps& caps() const override { return host_->caps(); }
  void* allocate(std::size_t bytes) override { return host_->allocate(bytes); }
  void release(void* p) noexcept override { host_->release(p); }
  void describe_allocation(void* a, std::size_t offset, std::size_t bytes,
                           const std::string& label) override {
    host_->describe_allocation(a, offset, bytes, label);
  }
  void copy_in(void* dst, const void* src, std::size_t bytes) override {
    host_->copy_in(dst, src, bytes);
  }
  void copy_out(void* dst, const void* src, std::size_t bytes) override {
    host_->copy_out(dst, src, bytes);
    if (bytes) static_cast<unsigned char*>(dst)[0] ^= 0x01;
  }
  void fill(void* dst, uint8_t byte, std::size_t bytes) override { host_->fill(dst, byte, bytes); }
  void synchronize() override { host_->synchronize(); }

 private:
  std::unique_ptr<nvh::Backend> host_ = nvh::make_host_backend();
};

std::string temp_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("nvfp4_tensor_file_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Through the file's bytes, so the writer's and the reader's framing both count.
TensorCase through_file(const CaseSpec& spec, const CaseInputs& inputs) {
  return tensor_case_from(
      nvh::parse_safetensors(nvh::serialize_safetensors(tensor_file_of(spec, inputs)), "case"),
      "case");
}

TEST(TensorFile, RoundTripsACaseWithItsBiasBlockSizeAndOffsets) {
  CaseSpec spec = make_case("adhoc", 3, 7, 50, 13, DType::bf16, true);
  spec.a_offset = 2;
  spec.y_offset = 6;
  spec.scales_offset = 1;
  const CaseInputs in = make_inputs(spec);
  const TensorCase c = through_file(spec, in);
  EXPECT_EQ(c.spec.M, 3);
  EXPECT_EQ(c.spec.N, 7);
  EXPECT_EQ(c.spec.K, 50);
  EXPECT_EQ(c.spec.block_size, 13);
  EXPECT_EQ(c.spec.dtype, DType::bf16);
  EXPECT_TRUE(c.spec.bias);
  EXPECT_EQ(c.spec.a_offset, 2u);
  EXPECT_EQ(c.spec.y_offset, 6u);
  EXPECT_EQ(c.spec.scales_offset, 1u);
  EXPECT_EQ(c.spec.b_offset, 0u);
  EXPECT_EQ(c.inputs.A, in.A);
  EXPECT_EQ(c.inputs.W.packed, in.W.packed);
  EXPECT_EQ(c.inputs.W.scales, in.W.scales);
  EXPECT_EQ(std::memcmp(&c.inputs.W.global_scale, &in.W.global_scale, sizeof(float)), 0);
  EXPECT_EQ(c.inputs.bias, in.bias);
}

// An exact case: every route that accepts the shape must give the
// reference's bits, so every digest is the reference's.
TEST(TensorFile, RunsEveryRouteThatAcceptsTheShapeAndEachGivesTheReferenceBits) {
  const CaseSpec spec = make_case("adhoc", 4, 32, 128, 16, DType::fp16, true, /*exact=*/true);
  const CaseInputs in = make_inputs(spec);
  auto host = nvh::make_host_backend();
  const TensorRunReport report = run_tensor_case(*host, through_file(spec, in));
  ASSERT_TRUE(report.exact) << report.exact_why;
  EXPECT_FALSE(report.failed());
  ASSERT_EQ(report.runs.size(), kAllRoutes.size());
  const std::string natural = run_case(*host, spec, in).y_sha256;
  EXPECT_EQ(report.reference_sha256, natural);
  for (const RouteRun& r : report.runs) {
    const bool runs_here = r.route != Route::empty && r.route != Route::native_sm120;
    EXPECT_EQ(r.outcome, runs_here ? Outcome::ok : Outcome::not_supported)
        << route_name(r.route) << ": " << r.detail;
    EXPECT_EQ(r.y_sha256, runs_here ? natural : "") << route_name(r.route);
    EXPECT_EQ(r.natural, r.route == Route::gemv_mma) << route_name(r.route);
  }
  EXPECT_NE(report.runs[0].detail.find("M, N or K == 0"), std::string::npos)
      << report.runs[0].detail;
}

TEST(TensorFile, RunsOneRouteWhenAskedAndJudgesAnInexactCaseByTheBound) {
  const CaseSpec spec = make_case("adhoc", 9, 16, 64, 16, DType::bf16, false);
  auto host = nvh::make_host_backend();
  const TensorRunReport report =
      run_tensor_case(*host, through_file(spec, make_inputs(spec)), Route::prefill_scalar);
  ASSERT_EQ(report.runs.size(), 1u);
  EXPECT_FALSE(report.exact);
  EXPECT_EQ(report.runs[0].outcome, Outcome::ok) << report.runs[0].detail;
  EXPECT_EQ(report.runs[0].detail, "within the contract's bound of the fp64 reference");
  EXPECT_FALSE(report.failed());
}

TEST(TensorFile, WrongBitsFailAndAReportWithNoRouteRunFails) {
  const CaseSpec spec = make_case("adhoc", 2, 32, 128, 16, DType::fp16, false);
  const TensorCase c = through_file(spec, make_inputs(spec));
  FlipFirstDownloadedByte faulty;
  const TensorRunReport bad = run_tensor_case(faulty, c, Route::gemv_scalar);
  EXPECT_EQ(bad.runs[0].outcome, Outcome::fail);
  EXPECT_TRUE(bad.failed());
  auto host = nvh::make_host_backend();
  const TensorRunReport none = run_tensor_case(*host, c, Route::native_sm120);
  EXPECT_EQ(none.runs[0].outcome, Outcome::not_supported);
  EXPECT_TRUE(none.failed());
}

TEST(TensorFile, OutputsFileHoldsEachRouteThatRanOrTheOneAsY) {
  const CaseSpec spec = make_case("adhoc", 2, 32, 128, 16, DType::fp16, false);
  const TensorCase c = through_file(spec, make_inputs(spec));
  auto host = nvh::make_host_backend();
  const TensorRunReport all = run_tensor_case(*host, c);
  const nvh::SafeTensorsFile f = outputs_file(c, all, false);
  EXPECT_EQ(f.tensors.size(),
            5u);  // gemv_mma, gemv_scalar, prefill_fused, prefill_vec8, prefill_scalar
  const nvh::SafeTensor& y = f.tensors.at("Y.gemv_scalar");
  EXPECT_EQ(y.dtype, "F16");
  EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 32}));
  EXPECT_EQ(nvh::tensor_sha256("fp16", {2, 32}, y.data.data(), y.data.size()),
            f.metadata.at("Y.gemv_scalar.sha256"));
  const nvh::SafeTensorsFile one =
      outputs_file(c, run_tensor_case(*host, c, Route::prefill_vec8), true);
  ASSERT_EQ(one.tensors.size(), 1u);
  EXPECT_EQ(one.metadata.at("Y.route"), "prefill_vec8");
}

// ---------------------------------------------------------------------------
// What the file must hold: each wrong tensor is an error naming it and the value.

nvh::SafeTensorsFile good_file() {
  const CaseSpec spec = make_case("adhoc", 2, 8, 64, 16, DType::fp16, true);
  return tensor_file_of(spec, make_inputs(spec));
}

void expect_refused(const nvh::SafeTensorsFile& f, const std::string& message) {
  try {
    tensor_case_from(f, "in.safetensors");
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tensor_case_from: in.safetensors: " + message),
              std::string::npos)
        << e.what();
  }
}

TEST(TensorFileRefuses, AMissingTensor) {
  for (const char* name : {"A", "B", "weight_scale", "weight_scale_2"}) {
    nvh::SafeTensorsFile f = good_file();
    f.tensors.erase(name);
    expect_refused(
        f, std::string("no tensor \"") + name + "\" (the operator takes A, B, weight_scale");
  }
}

TEST(TensorFileRefuses, AnUnexpectedTensor) {
  nvh::SafeTensorsFile f = good_file();
  f.tensors["weight_scale2"] = f.tensors.at("weight_scale_2");
  expect_refused(f, "unexpected tensor \"weight_scale2\"");
}

TEST(TensorFileRefuses, WrongDtypes) {
  nvh::SafeTensorsFile f = good_file();
  f.tensors["A"].dtype = "F32";
  f.tensors["A"].shape = {1, 64};  // the same bytes
  expect_refused(f, "tensor A has dtype F32: must be F16 or BF16");
  f = good_file();
  f.tensors["B"].dtype = "I8";
  expect_refused(f, "tensor B has dtype I8: must be U8");
  f = good_file();
  f.tensors["weight_scale"].dtype = "I8";
  expect_refused(f, "tensor weight_scale has dtype I8: must be F8_E4M3 or U8");
  f = good_file();
  f.tensors["weight_scale_2"].dtype = "I32";
  expect_refused(f, "tensor weight_scale_2 has dtype I32: must be F32");
  f = good_file();
  f.tensors["bias"].dtype = "BF16";
  expect_refused(f, "tensor bias has dtype BF16: must be F16");
}

TEST(TensorFileRefuses, WrongShapes) {
  nvh::SafeTensorsFile f = good_file();
  f.tensors["A"].shape = {2, 8, 8};
  expect_refused(f, "tensor A has shape [2,8,8]: must be [M, K]");
  f = good_file();
  f.tensors["B"].shape = {16, 16};
  expect_refused(f,
                 "tensor B has shape [16,16]: must be [N, ceil(K/2)] with K = 64 (A's) = [16,32]");
  f = good_file();
  f.tensors["weight_scale"].shape = {4, 8};
  expect_refused(
      f,
      "tensor weight_scale has shape [4,8]: must be [N, ceil(K/block_size)] with N = 8, K = 64, "
      "block_size = 16 = [8,4]");
  f = good_file();
  f.metadata["block_size"] = "32";
  expect_refused(
      f,
      "tensor weight_scale has shape [8,4]: must be [N, ceil(K/block_size)] with N = 8, K = 64, "
      "block_size = 32 = [8,2]");
  f = good_file();
  f.tensors["weight_scale_2"].shape = {1, 1};
  expect_refused(f, "tensor weight_scale_2 has shape [1,1]: must be [] or [1]");
  f = good_file();
  f.tensors["bias"].shape = {2, 4};
  expect_refused(f, "tensor bias has shape [2,4]: must be [N] with N = 8 = [8]");
}

TEST(TensorFileRefuses, ADimensionTheOperatorCannotTake) {
  nvh::SafeTensorsFile f = good_file();
  f.tensors["A"].shape = {int64_t{1} << 31, 0};
  f.tensors["A"].data.clear();
  expect_refused(f, "tensor A: M = 2147483648: must be below 2^31");
}

TEST(TensorFileRefuses, BadMetadata) {
  nvh::SafeTensorsFile f = good_file();
  f.metadata["block_size"] = "sixteen";
  expect_refused(
      f, "__metadata__ block_size = \"sixteen\": must be a whole number from 1 to 2147483647");
  f = good_file();
  f.metadata["block_size"] = "0";
  expect_refused(f, "__metadata__ block_size = \"0\": must be a whole number from 1");
  f = good_file();
  f.metadata["offset_A"] = "256";
  expect_refused(f, "__metadata__ offset_A = \"256\": must be a whole number from 0 to 255");
}

TEST(TensorFile, AcceptsU8ScalesAScaleShapedOneAndNoBias) {
  nvh::SafeTensorsFile f = good_file();
  f.tensors["weight_scale"].dtype = "U8";
  f.tensors["weight_scale_2"].shape = {1};
  f.tensors.erase("bias");
  const TensorCase c = tensor_case_from(f, "in");
  EXPECT_FALSE(c.spec.bias);
  EXPECT_EQ(c.inputs.W.scales, f.tensors.at("weight_scale").data);
}

// ---------------------------------------------------------------------------
// Repro: a failing verify case leaves its inputs and digests, and `run
// --inputs` on those inputs, on the same (faulty) backend and route, gives the
// digest the case got.

TEST(Repro, AFailingVerifyCaseWritesARepro_RunOnItGivesTheSameGotDigest) {
  const std::string dir = temp_dir("repro");
  nvh::VerifyOptions o;
  o.families = {"decode"};
  o.random_cases = 0;
  o.skip = {"primitives", "model", "golden"};
  o.seed = 7;
  o.out_dir = dir;
  std::ostringstream out;
  EXPECT_EQ(nvh::run_verify(
                nvfp4_suite(), [] { return std::make_unique<FlipFirstDownloadedByte>(); }, o, out),
            1)
      << out.str();
  const std::vector<CaseSpec>& cases = find_family("decode")->examples;
  ASSERT_FALSE(cases.empty());
  EXPECT_NE(out.str().find("wrote " + std::to_string(cases.size()) +
                           " repro folder(s) of failing cases under " + dir + "/repro"),
            std::string::npos)
      << out.str();

  const CaseSpec& spec = cases.front();
  const std::string repro = dir + "/repro/" + spec.name();
  const nlohmann::json j = nlohmann::json::parse(file_text(repro + "/repro.json"));
  EXPECT_EQ(j.at("case"), spec.name());
  EXPECT_EQ(j.at("family"), "decode");
  EXPECT_EQ(j.at("backend"), "host");
  EXPECT_EQ(j.at("seed"), 7);
  const std::string route = j.at("route"), got = j.at("got_sha256");
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(j.at("expected_sha256"), reference_digest(spec, make_inputs(spec)).sha256);
  EXPECT_NE(j.at("expected_sha256"), got);

  const std::string readme = file_text(repro + "/README.txt");
  EXPECT_NE(readme.find("nvfp4-harness run --inputs " + repro + "/inputs.safetensors --route " +
                        route + " --backend host"),
            std::string::npos)
      << readme;
  EXPECT_NE(readme.find("nvfp4-harness verify --case " + spec.family + "/" + spec.name() +
                        " --backend host --seed 7"),
            std::string::npos)
      << readme;

  FlipFirstDownloadedByte faulty;
  const TensorRunReport rerun =
      run_tensor_case(faulty, read_tensor_case(repro + "/inputs.safetensors"), *parse_route(route));
  ASSERT_EQ(rerun.runs.size(), 1u);
  EXPECT_EQ(rerun.runs[0].outcome, Outcome::fail);
  EXPECT_EQ(rerun.runs[0].y_sha256, got);
  // On a sound backend the same file passes: the repro's inputs are the case's.
  auto host = nvh::make_host_backend();
  EXPECT_FALSE(run_tensor_case(*host, read_tensor_case(repro + "/inputs.safetensors")).failed());

  // A run that passes leaves no repro behind, and clears the previous run's.
  std::ostringstream again;
  EXPECT_EQ(nvh::run_verify(
                nvfp4_suite(), [] { return nvh::make_host_backend(); }, o, again),
            0)
      << again.str();
  EXPECT_FALSE(fs::exists(dir + "/repro")) << again.str();
  fs::remove_all(dir);
}

// A golden case that differs: its expected digest is the golden manifest's.
TEST(Repro, AFailingGoldenCaseExpectsTheGoldenDigest) {
  const std::string dir = temp_dir("repro_golden");
  nvh::VerifyOptions o;
  o.families = {"empty"};
  o.random_cases = 0;
  o.skip = {"primitives", "model"};
  o.out_dir = dir;
  std::ostringstream out;
  EXPECT_EQ(nvh::run_verify(
                nvfp4_suite(), [] { return std::make_unique<FlipFirstDownloadedByte>(); }, o, out),
            1)
      << out.str();
  const nvh::Manifest golden = nvh::parse_manifest(kGoldenSeed8Host, "seed8.host.json");
  const CaseSpec spec = named_case_list("seed8").front();
  const nlohmann::json j =
      nlohmann::json::parse(file_text(dir + "/repro/" + spec.name() + "/repro.json"));
  EXPECT_EQ(j.at("family"), "golden");
  EXPECT_EQ(j.at("expected_sha256"), golden.cases.at(spec.name()));
  EXPECT_EQ(j.at("expected_from"), "properties/nvfp4_matmul/golden/seed8.host.json (built in)");
  EXPECT_FALSE(j.at("route").get<std::string>().empty());
  EXPECT_NE(j.at("got_sha256"), j.at("expected_sha256"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nvfp4
