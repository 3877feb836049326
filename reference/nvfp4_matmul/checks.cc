#include "checks.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace nvfp4::ref::detail {

void fail(const char* fn, const std::string& arg, const std::string& value,
          const std::string& what) {
  throw std::invalid_argument(std::string(fn) + ": " + arg + " = " + value + ": " + what);
}

std::string float_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string element_name(const char* name, int64_t i, int64_t j) {
  return std::string(name) + "[" + std::to_string(i) + "," + std::to_string(j) + "]";
}

void check_nonnegative(const char* fn, const char* arg, int64_t v) {
  if (v < 0) fail(fn, arg, std::to_string(v), "must be non-negative");
}

void check_positive(const char* fn, const char* arg, int64_t v) {
  if (v <= 0) fail(fn, arg, std::to_string(v), "must be positive");
}

int64_t checked_product(const char* fn, const char* a_name, int64_t a, const char* b_name,
                        int64_t b) {
  int64_t p = 0;
  if (__builtin_mul_overflow(a, b, &p)) {
    fail(fn, std::string(a_name) + "*" + b_name, std::to_string(a) + "*" + std::to_string(b),
         "overflows a 64-bit product");
  }
  return p;
}

int64_t checked_sum(const char* fn, const char* a_name, int64_t a, const char* b_name, int64_t b) {
  int64_t s = 0;
  if (__builtin_add_overflow(a, b, &s)) {
    fail(fn, std::string(a_name) + "+" + b_name, std::to_string(a) + "+" + std::to_string(b),
         "overflows a 64-bit sum");
  }
  return s;
}

int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

void check_size(const char* fn, const char* arg, std::size_t actual, int64_t expected,
                const char* expected_desc) {
  if (static_cast<uint64_t>(actual) != static_cast<uint64_t>(expected)) {
    fail(fn, std::string(arg) + ".size()", std::to_string(actual),
         std::string("must be ") + expected_desc + " = " + std::to_string(expected));
  }
}

void check_pointer(const char* fn, const char* arg, const void* p, int64_t count) {
  if (p == nullptr && count > 0) {
    fail(fn, arg, "nullptr", "must point to " + std::to_string(count) + " elements");
  }
}

void check_finite(const char* fn, const std::string& element, float v) {
  if (!std::isfinite(v)) fail(fn, element, float_text(v), "must be finite");
}

void check_code(const char* fn, const std::string& element, int code) {
  if (code < 0 || code > 15) fail(fn, element, std::to_string(code), "must be an E2M1 code 0..15");
}

void check_half(const char* fn, Half kind) {
  if (kind != Half::fp16 && kind != Half::bf16) {
    fail(fn, "kind", std::to_string(static_cast<int>(kind)), "must be Half::fp16 or Half::bf16");
  }
}

}  // namespace nvfp4::ref::detail
