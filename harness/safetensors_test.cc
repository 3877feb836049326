#include "harness/safetensors.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvh {
namespace {

// A file from its parts: the header's length as 8 little-endian bytes, the
// header text, the data buffer. Malformed files are written this way, byte
// for byte, since the writer refuses to make them.
std::string file_bytes(const std::string& header, const std::string& buffer,
                       uint64_t header_length) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header_length >> (8 * i)) & 0xFF));
  return out + header + buffer;
}
std::string file_bytes(const std::string& header, const std::string& buffer) {
  return file_bytes(header, buffer, header.size());
}

// Parsing must throw std::invalid_argument whose message holds each of `parts`.
void expect_rejected(const std::string& bytes, const std::vector<std::string>& parts) {
  try {
    parse_safetensors(bytes, "test.safetensors");
    ADD_FAILURE() << "accepted; expected a message with " << parts.front();
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("parse_safetensors: test.safetensors: ", 0), 0u) << what;
    for (const std::string& part : parts)
      EXPECT_NE(what.find(part), std::string::npos) << "missing " << part << " in: " << what;
  }
}

SafeTensorsFile sample() {
  SafeTensorsFile f;
  f.metadata = {{"format", "pt"}, {"block_size", "16"}};
  f.tensors["A"] = {"F16", {2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}};
  f.tensors["g"] = {"F32", {}, {0, 0, 0x80, 0x3E}};
  f.tensors["codes"] = {"U8", {1, 5}, {0x21, 0x43, 0x65, 0x87, 0xA9}};
  f.tensors["empty"] = {"BF16", {0, 4}, {}};
  return f;
}

TEST(Safetensors, RoundTripKeepsNamesDtypesShapesBytesAndMetadata) {
  const SafeTensorsFile f = sample();
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "nvh_safetensors_round_trip.safetensors")
          .string();
  write_safetensors(f, path);
  const SafeTensorsFile back = read_safetensors(path);
  EXPECT_EQ(back.metadata, f.metadata);
  ASSERT_EQ(back.tensors.size(), f.tensors.size());
  for (const auto& [name, t] : f.tensors) {
    const SafeTensor& b = back.tensors.at(name);
    EXPECT_EQ(b.dtype, t.dtype) << name;
    EXPECT_EQ(b.shape, t.shape) << name;
    EXPECT_EQ(b.data, t.data) << name;
  }
  std::filesystem::remove(path);
}

TEST(Safetensors, WriterPadsTheHeaderToEightBytesAndPacksTheBufferInNameOrder) {
  const std::string bytes = serialize_safetensors(sample());
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<uint8_t>(bytes[static_cast<std::size_t>(i)]);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes[8], '{');
  // A (12 bytes), codes (5), empty (0), g (4): 21 bytes of data after the header.
  ASSERT_EQ(bytes.size(), 8 + n + 21);
  EXPECT_EQ(static_cast<uint8_t>(bytes[8 + n]), 1);          // A's first byte
  EXPECT_EQ(static_cast<uint8_t>(bytes[8 + n + 12]), 0x21);  // then codes
  EXPECT_EQ(static_cast<uint8_t>(bytes[8 + n + 20]), 0x3E);  // g last
}

// safetensors' own writer pads the header with spaces to 8 bytes; the
// reader takes the padding as JSON whitespace.
TEST(Safetensors, ReadsAHeaderPaddedWithSpaces) {
  const std::string header = R"({"x":{"dtype":"U16","shape":[2],"data_offsets":[0,4]}})";
  const SafeTensorsFile f =
      parse_safetensors(file_bytes(header + "      ", std::string("\x01\x00\x02\x00", 4)), "x");
  EXPECT_EQ(f.tensors.at("x").shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(f.tensors.at("x").data, (std::vector<uint8_t>{1, 0, 2, 0}));
}

TEST(Safetensors, RejectsAFileShorterThanTheHeaderLength) {
  expect_rejected("1234567", {"7 bytes, fewer than the 8"});
}

TEST(Safetensors, RejectsAHeaderLengthPastTheEndOfTheFile) {
  const std::string header = R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  expect_rejected(file_bytes(header, "A", 4000),
                  {"header length 4000 runs past the end of the file", "at most"});
}

TEST(Safetensors, RejectsAnAbsurdHeaderLength) {
  expect_rejected(file_bytes("{}", "", uint64_t{1} << 62),
                  {"header length 4611686018427387904 is absurd"});
}

TEST(Safetensors, RejectsAHeaderThatIsNotJson) {
  expect_rejected(file_bytes("{\"x\": ", ""), {"the header is not valid JSON"});
}

TEST(Safetensors, RejectsAHeaderThatIsNotAnObject) {
  expect_rejected(file_bytes("[1, 2]", ""), {"the header is [1,2], not a JSON object"});
}

TEST(Safetensors, RejectsATensorThatIsNotAnObject) {
  expect_rejected(file_bytes(R"({"x": 3})", ""), {"tensor \"x\" is 3: must be an object"});
}

TEST(Safetensors, RejectsAMissingDtype) {
  expect_rejected(file_bytes(R"({"x":{"shape":[1],"data_offsets":[0,1]}})", "A"),
                  {"tensor \"x\" has no dtype"});
}

TEST(Safetensors, RejectsAnUnknownDtype) {
  expect_rejected(file_bytes(R"({"x":{"dtype":"F17","shape":[1],"data_offsets":[0,1]}})", "A"),
                  {"tensor \"x\": dtype = \"F17\": not a safetensors dtype", "BF16"});
}

TEST(Safetensors, RejectsASubByteDtypeSayingSo) {
  expect_rejected(file_bytes(R"({"x":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}})", "A"),
                  {"dtype = \"F4\": a sub-byte dtype this reader does not take"});
}

TEST(Safetensors, RejectsADtypeThatIsNotAString) {
  expect_rejected(file_bytes(R"({"x":{"dtype":8,"shape":[1],"data_offsets":[0,1]}})", "A"),
                  {"tensor \"x\": dtype = 8: must be a string"});
}

TEST(Safetensors, RejectsAMissingShape) {
  expect_rejected(file_bytes(R"({"x":{"dtype":"U8","data_offsets":[0,1]}})", "A"),
                  {"tensor \"x\" has no shape"});
}

TEST(Safetensors, RejectsAShapeThatIsNotAList) {
  expect_rejected(file_bytes(R"({"x":{"dtype":"U8","shape":4,"data_offsets":[0,1]}})", "A"),
                  {"tensor \"x\": shape = 4: must be a list"});
}

TEST(Safetensors, RejectsANegativeDimension) {
  expect_rejected(file_bytes(R"({"x":{"dtype":"U8","shape":[2,-1],"data_offsets":[0,1]}})", "A"),
                  {"shape = [2,-1]: dimension -1 is not a non-negative whole number"});
}

TEST(Safetensors, RejectsAFractionalDimension) {
  expect_rejected(file_bytes(R"({"x":{"dtype":"U8","shape":[1.5],"data_offsets":[0,1]}})", "A"),
                  {"dimension 1.5 is not a non-negative whole number"});
}

TEST(Safetensors, RejectsAnElementCountThatOverflows) {
  expect_rejected(
      file_bytes(R"({"x":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,1]}})",
                 "A"),
      {"shape = [4294967296,4294967296]: the element count overflows 64 bits"});
}

TEST(Safetensors, RejectsAByteSizeThatOverflows) {
  expect_rejected(
      file_bytes(R"({"x":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,1]}})",
                 "A"),
      {"4611686018427387904 elements of F64 overflow 64 bits of bytes"});
}

TEST(Safetensors, RejectsMissingOffsets) {
  expect_rejected(file_bytes(R"({"x":{"dtype":"U8","shape":[1]}})", "A"),
                  {"tensor \"x\" has no data_offsets"});
}

TEST(Safetensors, RejectsOffsetsThatAreNotTwoWholeNumbers) {
  expect_rejected(file_bytes(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}})", "A"),
                  {"data_offsets = [0,1,2]: must be [begin, end]"});
  expect_rejected(file_bytes(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[-1,0]}})", "A"),
                  {"data_offsets = [-1,0]: must be [begin, end]"});
}

TEST(Safetensors, RejectsReversedOffsets) {
  expect_rejected(file_bytes(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[1,0]}})", "A"),
                  {"tensor \"x\": data_offsets = [1,0]: reversed"});
}

TEST(Safetensors, RejectsOffsetsWhoseSizeIsNotTheShapes) {
  expect_rejected(
      file_bytes(R"({"x":{"dtype":"F16","shape":[2,2],"data_offsets":[0,6]}})", "ABCDEF"),
      {"data_offsets = [0,6] hold 6 bytes, but shape [2,2] of F16 needs 8"});
}

TEST(Safetensors, RejectsOffsetsPastTheBuffer) {
  expect_rejected(
      file_bytes(R"({"x":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", "AB"),
      {"tensor \"x\": data_offsets = [0,4]: past the end of the data buffer (2 bytes)"});
}

TEST(Safetensors, RejectsOverlappingTensors) {
  expect_rejected(file_bytes(R"({"x":{"dtype":"U8","shape":[3],"data_offsets":[0,3]},)"
                             R"("y":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})",
                             "ABCD"),
                  {"tensor \"y\": data_offsets = [2,4] overlaps tensor \"x\" (which ends at 3)"});
}

TEST(Safetensors, RejectsAHoleBetweenTensors) {
  expect_rejected(
      file_bytes(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                 R"("y":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})",
                 "ABCD"),
      {"tensor \"y\": data_offsets = [2,4] leaves bytes [1,2) of the data buffer to no tensor"});
}

TEST(Safetensors, RejectsBytesAfterTheLastTensor) {
  expect_rejected(file_bytes(R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", "ABC"),
                  {"the data buffer has 3 bytes, but the tensors cover only [0,2)"});
}

TEST(Safetensors, RejectsATensorNamedTwice) {
  expect_rejected(file_bytes(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                             R"("x":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                             "AB"),
                  {"tensor \"x\" is named more than once"});
}

TEST(Safetensors, RejectsMetadataThatIsNotStrings) {
  expect_rejected(file_bytes(R"({"__metadata__":{"block_size":16}})", ""),
                  {"__metadata__ key \"block_size\" = 16: must be a string"});
  expect_rejected(file_bytes(R"({"__metadata__":[1]})", ""),
                  {"__metadata__ = [1]: must be an object of strings"});
}

TEST(Safetensors, ReadNamesTheFileItCannotOpen) {
  const std::string path = "/nonexistent/folder/x.safetensors";
  try {
    read_safetensors(path);
    ADD_FAILURE() << "read a file that does not exist";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("read_safetensors: " + path + ": cannot open for reading"),
              std::string::npos)
        << e.what();
  }
}

TEST(Safetensors, WriterRefusesWhatItCannotWriteTruly) {
  SafeTensorsFile f;
  f.tensors["x"] = {"F16", {3}, {1, 2}};
  EXPECT_THROW(
      {
        try {
          serialize_safetensors(f);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find(
                        "tensor \"x\": holds 2 bytes, its shape and dtype F16 need 6"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      std::invalid_argument);
  f.tensors["x"] = {"F17", {1}, {1}};
  EXPECT_THROW(serialize_safetensors(f), std::invalid_argument);
  f.tensors.clear();
  f.tensors["__metadata__"] = {"U8", {1}, {1}};
  EXPECT_THROW(serialize_safetensors(f), std::invalid_argument);
}

}  // namespace
}  // namespace nvh
