// The JSON header is parsed and written by nlohmann-json; the binary framing
// around it (the 8-byte length, the data buffer and its offsets) is written
// by hand here, because Debian packages no C++ safetensors library (the
// reference implementation is Rust, with Python bindings).
#include "harness/safetensors.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace nvh {
namespace {

using json = nlohmann::json;

// safetensors' own reader refuses headers above this (its MAX_HEADER_SIZE);
// a length past it is a corrupt or foreign file, not a header to allocate.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DtypeSize {
  const char* name;
  std::size_t bytes;
};

// Every dtype safetensors defines whose elements are whole bytes.
constexpr std::array<DtypeSize, 17> kDtypes = {{{"BOOL", 1},
                                                {"U8", 1},
                                                {"I8", 1},
                                                {"F8_E5M2", 1},
                                                {"F8_E4M3", 1},
                                                {"F8_E8M0", 1},
                                                {"I16", 2},
                                                {"U16", 2},
                                                {"F16", 2},
                                                {"BF16", 2},
                                                {"I32", 4},
                                                {"U32", 4},
                                                {"F32", 4},
                                                {"C64", 8},
                                                {"F64", 8},
                                                {"I64", 8},
                                                {"U64", 8}}};
// Defined by safetensors, but packed below a byte per element.
constexpr std::array<const char*, 3> kSubByteDtypes = {"F4", "F6_E2M3", "F6_E3M2"};

std::string dtype_names() {
  std::string out;
  for (const DtypeSize& d : kDtypes) out += (out.empty() ? "" : ", ") + std::string(d.name);
  return out;
}

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

// A JSON value as it appears in the file, shortened for a message.
std::string shown(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

// `where` is "read_safetensors: <path>" or "parse_safetensors: <source>".
[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument(where + ": " + what);
}

// Parses the header, rejecting a key given twice in one object (nlohmann
// would keep the last silently, hiding a tensor given twice).
json parse_header(const std::string& text, const std::string& where) {
  std::vector<std::set<std::string>> keys_seen;  // one per open object
  std::string duplicate;
  bool top_level = false;
  auto callback = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      keys_seen.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      keys_seen.pop_back();
    } else if (event == json::parse_event_t::key &&
               !keys_seen.back().insert(parsed.get<std::string>()).second && duplicate.empty()) {
      duplicate = parsed.get<std::string>();
      top_level = keys_seen.size() == 1;
    }
    return true;
  };
  json header;
  try {
    header = json::parse(text, callback);
  } catch (const json::parse_error& e) {
    fail(where, std::string("the header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty()) {
    fail(where, top_level
                    ? "tensor " + in_quotes(duplicate) + " is named more than once in the header"
                    : "key " + in_quotes(duplicate) +
                          " appears more than once in one object of the header");
  }
  if (!header.is_object()) fail(where, "the header is " + shown(header) + ", not a JSON object");
  return header;
}

// A non-negative whole number that fits int64 (JSON numbers parse as
// unsigned when non-negative and integral).
bool is_count(const json& v) {
  return v.is_number_unsigned() &&
         v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

struct Entry {
  std::string name;
  SafeTensor tensor;
  uint64_t begin = 0, end = 0;
};

Entry read_entry(const std::string& name, const json& info, const std::string& where) {
  const std::string tensor = "tensor " + in_quotes(name);
  if (!info.is_object())
    fail(where,
         tensor + " is " + shown(info) + ": must be an object with dtype, shape and data_offsets");
  Entry e;
  e.name = name;

  const auto dtype = info.find("dtype");
  if (dtype == info.end()) fail(where, tensor + " has no dtype");
  if (!dtype->is_string())
    fail(where, tensor + ": dtype = " + shown(*dtype) + ": must be a string");
  e.tensor.dtype = dtype->get<std::string>();
  const std::size_t element_bytes = safetensors_dtype_bytes(e.tensor.dtype);
  if (element_bytes == 0) {
    const bool sub_byte = std::find(kSubByteDtypes.begin(), kSubByteDtypes.end(), e.tensor.dtype) !=
                          kSubByteDtypes.end();
    fail(where,
         tensor + ": dtype = " + in_quotes(e.tensor.dtype) +
             (sub_byte ? ": a sub-byte dtype this reader does not take (store packed bytes as U8)"
                       : ": not a safetensors dtype (" + dtype_names() + ")"));
  }

  const auto shape = info.find("shape");
  if (shape == info.end()) fail(where, tensor + " has no shape");
  if (!shape->is_array())
    fail(where,
         tensor + ": shape = " + shown(*shape) + ": must be a list of non-negative whole numbers");
  uint64_t elements = 1;
  for (const json& d : *shape) {
    if (!is_count(d)) {
      fail(where, tensor + ": shape = " + shown(*shape) + ": dimension " + shown(d) +
                      " is not a non-negative whole number below 2^63");
    }
    e.tensor.shape.push_back(d.get<int64_t>());
    if (__builtin_mul_overflow(elements, d.get<uint64_t>(), &elements)) {
      fail(where, tensor + ": shape = " + shown(*shape) + ": the element count overflows 64 bits");
    }
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(elements, static_cast<uint64_t>(element_bytes), &bytes)) {
    fail(where, tensor + ": shape = " + shown(*shape) + ": " + std::to_string(elements) +
                    " elements of " + e.tensor.dtype + " overflow 64 bits of bytes");
  }

  const auto offsets = info.find("data_offsets");
  if (offsets == info.end()) fail(where, tensor + " has no data_offsets");
  if (!offsets->is_array() || offsets->size() != 2 || !is_count((*offsets)[0]) ||
      !is_count((*offsets)[1])) {
    fail(where, tensor + ": data_offsets = " + shown(*offsets) +
                    ": must be [begin, end], two non-negative whole numbers");
  }
  e.begin = (*offsets)[0].get<uint64_t>();
  e.end = (*offsets)[1].get<uint64_t>();
  if (e.end < e.begin)
    fail(where, tensor + ": data_offsets = " + shown(*offsets) + ": reversed (end before begin)");
  if (e.end - e.begin != bytes) {
    fail(where, tensor + ": data_offsets = " + shown(*offsets) + " hold " +
                    std::to_string(e.end - e.begin) + " bytes, but shape " + shown(*shape) +
                    " of " + e.tensor.dtype + " needs " + std::to_string(bytes));
  }
  return e;
}

std::map<std::string, std::string> read_metadata(const json& value, const std::string& where) {
  if (!value.is_object())
    fail(where, "__metadata__ = " + shown(value) + ": must be an object of strings");
  std::map<std::string, std::string> out;
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string())
      fail(where, "__metadata__ key " + in_quotes(key) + " = " + shown(v) + ": must be a string");
    out[key] = v.get<std::string>();
  }
  return out;
}

// The tensors, in buffer order, must tile [0, buffer_bytes) exactly.
void check_tiling(std::vector<Entry>& entries, uint64_t buffer_bytes, const std::string& where) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  uint64_t covered = 0;
  const Entry* previous = nullptr;
  for (const Entry& e : entries) {
    const std::string offsets =
        "data_offsets = [" + std::to_string(e.begin) + "," + std::to_string(e.end) + "]";
    if (e.end > buffer_bytes) {
      fail(where, "tensor " + in_quotes(e.name) + ": " + offsets +
                      ": past the end of the data buffer (" + std::to_string(buffer_bytes) +
                      " bytes)");
    }
    if (e.begin < covered) {
      fail(where, "tensor " + in_quotes(e.name) + ": " + offsets + " overlaps tensor " +
                      in_quotes(previous->name) + " (which ends at " + std::to_string(covered) +
                      ")");
    }
    if (e.begin > covered) {
      fail(where, "tensor " + in_quotes(e.name) + ": " + offsets + " leaves bytes [" +
                      std::to_string(covered) + "," + std::to_string(e.begin) +
                      ") of the data buffer to no tensor");
    }
    covered = e.end;
    previous = &e;
  }
  if (covered != buffer_bytes) {
    fail(where, "the data buffer has " + std::to_string(buffer_bytes) +
                    " bytes, but the tensors cover only [0," + std::to_string(covered) + ")");
  }
}

uint64_t read_le64(const std::string& bytes) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<uint8_t>(bytes[static_cast<std::size_t>(i)]);
  return n;
}

SafeTensorsFile parse(const std::string& bytes, const std::string& where) {
  if (bytes.size() < 8) {
    fail(where, "the file has " + std::to_string(bytes.size()) +
                    " bytes, fewer than the 8 of the header length");
  }
  const uint64_t header_bytes = read_le64(bytes);
  if (header_bytes > kMaxHeaderBytes) {
    fail(where, "header length " + std::to_string(header_bytes) + " is absurd (above " +
                    std::to_string(kMaxHeaderBytes) + " bytes)");
  }
  if (header_bytes > bytes.size() - 8) {
    fail(where, "header length " + std::to_string(header_bytes) +
                    " runs past the end of the file (" + std::to_string(bytes.size()) +
                    " bytes, so at most " + std::to_string(bytes.size() - 8) + ")");
  }
  const json header = parse_header(bytes.substr(8, header_bytes), where);
  const std::size_t buffer_start = 8 + header_bytes;

  SafeTensorsFile file;
  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      file.metadata = read_metadata(info, where);
    } else {
      entries.push_back(read_entry(name, info, where));
    }
  }
  check_tiling(entries, bytes.size() - buffer_start, where);
  for (Entry& e : entries) {
    e.tensor.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(buffer_start + e.begin),
                         bytes.begin() + static_cast<std::ptrdiff_t>(buffer_start + e.end));
    file.tensors.emplace(e.name, std::move(e.tensor));
  }
  return file;
}

}  // namespace

std::size_t safetensors_dtype_bytes(std::string_view dtype) {
  for (const DtypeSize& d : kDtypes) {
    if (dtype == d.name) return d.bytes;
  }
  return 0;
}

SafeTensorsFile parse_safetensors(const std::string& bytes, const std::string& source) {
  return parse(bytes, "parse_safetensors: " + source);
}

// The whole file in memory: the operator's tensors are uploaded whole anyway.
SafeTensorsFile read_safetensors(const std::string& path) {
  const std::string where = "read_safetensors: " + path;
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(where, std::string("cannot open for reading: ") + std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return parse(bytes.str(), where);
}

std::string serialize_safetensors(const SafeTensorsFile& file) {
  json header = json::object();
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : file.tensors) {
    const std::string where = "serialize_safetensors: tensor " + in_quotes(name);
    if (name == "__metadata__")
      throw std::invalid_argument(where + ": the name is reserved for the metadata");
    const std::size_t element_bytes = safetensors_dtype_bytes(t.dtype);
    if (element_bytes == 0)
      throw std::invalid_argument(where + ": dtype = " + in_quotes(t.dtype) +
                                  ": not a safetensors dtype");
    uint64_t bytes = element_bytes;
    for (int64_t d : t.shape) {
      if (d < 0)
        throw std::invalid_argument(where + ": dimension " + std::to_string(d) + " is negative");
      if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes)) {
        throw std::invalid_argument(where + ": the byte size overflows 64 bits");
      }
    }
    if (bytes != t.data.size()) {
      throw std::invalid_argument(where + ": holds " + std::to_string(t.data.size()) +
                                  " bytes, its shape and dtype " + t.dtype + " need " +
                                  std::to_string(bytes));
    }
    header[name] = {{"dtype", t.dtype},
                    {"shape", t.shape},
                    {"data_offsets", json::array({offset, offset + bytes})}};
    offset += bytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const json::type_error& e) {
    throw std::invalid_argument(
        std::string("serialize_safetensors: a name or metadata string is not UTF-8: ") + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // the buffer then starts 8-byte aligned
  std::string out;
  out.reserve(8 + text.size() + offset);
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((static_cast<uint64_t>(text.size()) >> (8 * i)) & 0xFF));
  out += text;
  for (const auto& entry : file.tensors)
    out.append(entry.second.data.begin(), entry.second.data.end());
  return out;
}

void write_safetensors(const SafeTensorsFile& file, const std::string& path) {
  const std::string bytes = serialize_safetensors(file);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    throw std::runtime_error("write_safetensors: " + path +
                             ": cannot write the file: " + std::strerror(errno));
}

}  // namespace nvh
