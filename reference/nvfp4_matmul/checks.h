// reference/nvfp4_matmul/checks.h -- internal: argument checks shared by every public entry point.
//
// Every failure throws std::invalid_argument with the message
//   "<function>: <argument> = <value>: <what is wrong>"
// (CONTRIBUTING.md), so a caller sees which call, which argument and which value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "float16.h"

namespace nvfp4::ref::detail {

// Throws "fn: arg = value: what".
[[noreturn]] void fail(const char* fn, const std::string& arg, const std::string& value,
                       const std::string& what);

// Text for a float value in messages: "nan", "inf", "-inf", or up to 9 significant digits.
std::string float_text(double v);

// "name[i,j]": the element an error talks about.
std::string element_name(const char* name, int64_t i, int64_t j);

void check_nonnegative(const char* fn, const char* arg, int64_t v);
void check_positive(const char* fn, const char* arg, int64_t v);

// a*b for non-negative a, b; throws "fn: A*B = a*b: overflows a 64-bit product" on overflow.
int64_t checked_product(const char* fn, const char* a_name, int64_t a, const char* b_name,
                        int64_t b);

// a+b for non-negative a, b; throws "fn: A+B = a+b: overflows a 64-bit sum" on overflow.
int64_t checked_sum(const char* fn, const char* a_name, int64_t a, const char* b_name, int64_t b);

// ceil(a/b) for a >= 0, b > 0, without the a+b-1 overflow.
int64_t ceil_div(int64_t a, int64_t b);

// A buffer of `expected` elements (described as e.g. "N*K = 6") must have exactly that size.
void check_size(const char* fn, const char* arg, std::size_t actual, int64_t expected,
                const char* expected_desc);

// A pointer that must be read for `count` > 0 elements must not be null.
void check_pointer(const char* fn, const char* arg, const void* p, int64_t count);

// A float input that must be finite (quantizer inputs): "fn: W[3,17] = nan: must be finite".
void check_finite(const char* fn, const std::string& element, float v);

// An E2M1 code is a nibble: 0..15.
void check_code(const char* fn, const std::string& element, int code);

// Half is an enum class, but a cast can still produce a value outside it.
void check_half(const char* fn, Half kind);

}  // namespace nvfp4::ref::detail
