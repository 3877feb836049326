// A file's text compiled into a binary at build time (nvfp4_embed_files in
// the top CMakeLists.txt, harness/embed_files.cmake). Tests that read the
// source tree read it this way: the test binaries also run on the GPU
// machine, built elsewhere, where the source tree they came from is not.
#pragma once

#include <cstddef>

namespace nvh {

struct EmbeddedFile {
  const char* path;  // e.g. "kernels/nvfp4_matmul/gemv_mma.cuh"
  const char* text;  // the whole file
};

}  // namespace nvh
