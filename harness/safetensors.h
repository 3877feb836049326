// safetensors files (Hugging Face's tensor format), read and written, so that
// tensors dumped from a runtime (or by numpy, or by a failing case) can be fed
// to an operator. Operator-agnostic: names, dtypes, shapes and bytes only;
// what a tensor means is the operator's business.
//
// The format:
//   8 bytes   N, the header's length, unsigned little-endian
//   N bytes   a JSON object: {name: {"dtype": D, "shape": [d0, ...],
//             "data_offsets": [begin, end]}, ..., "__metadata__": {str: str}}
//             (optional "__metadata__"; may be padded with trailing spaces)
//   the rest  the data buffer; each tensor's bytes are [begin, end) of it,
//             row-major, little-endian. The tensors cover it exactly: no
//             overlap, no hole, nothing after the last one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace nvh {

// The bytes of one element of a safetensors dtype ("F16" -> 2, "F8_E4M3" -> 1);
// 0 for a name safetensors does not define, and for its sub-byte dtypes
// (F4, F6_E2M3, F6_E3M2), which this reader does not take.
std::size_t safetensors_dtype_bytes(std::string_view dtype);

struct SafeTensor {
  std::string dtype;           // as safetensors names it: "F16", "BF16", "U8", ...
  std::vector<int64_t> shape;  // [] is a scalar (one element)
  std::vector<uint8_t> data;   // row-major, little-endian: product(shape) * dtype bytes
};

struct SafeTensorsFile {
  std::map<std::string, std::string> metadata;  // "__metadata__"
  std::map<std::string, SafeTensor> tensors;    // by name; written in this order
};

// Reads and checks a whole file. Throws std::invalid_argument naming the
// function, the file and the bad value for a malformed file: a header length
// past the end of the file or above 100 MB (the limit safetensors' own reader
// has), a header that is not a JSON object, a missing or unknown dtype, a
// shape that is not a list of non-negative whole numbers, data_offsets that
// are not two whole numbers, are reversed, run past the buffer, overlap
// another tensor's or leave a hole, a byte size other than
// product(shape) * dtype bytes (overflow included), a name given twice, a
// "__metadata__" value that is not a string. An unreadable file throws too.
SafeTensorsFile read_safetensors(const std::string& path);

// The same for the bytes of a file; `source` names them in messages.
SafeTensorsFile parse_safetensors(const std::string& bytes, const std::string& source);

// The file's bytes: the header padded with spaces to a multiple of 8 bytes
// (as safetensors' own writer does), the tensors' data in name order. Throws
// std::invalid_argument naming the tensor for an unknown dtype, a negative
// dimension or a data size other than product(shape) * dtype bytes, and for
// the reserved name "__metadata__".
std::string serialize_safetensors(const SafeTensorsFile& file);

// serialize_safetensors to `path`; throws std::runtime_error naming the path
// when it cannot be written.
void write_safetensors(const SafeTensorsFile& file, const std::string& path);

}  // namespace nvh
