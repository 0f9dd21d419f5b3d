#include "kube/quantity.h"

#include <cstddef>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "topology/quoted.h"

namespace topofit::kube {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// What a suffix multiplies by: 10^decimal_exponent * 2^binary_exponent.
struct Scale {
  int64_t decimal_exponent = 0;
  int binary_exponent = 0;
};

bool ParseSuffix(absl::string_view suffix, size_t text_size, Scale* scale) {
  struct Named {
    absl::string_view suffix;
    Scale scale;
  };
  static constexpr Named kNamed[] = {
      {"", {0, 0}},    {"n", {-9, 0}},  {"u", {-6, 0}},  {"m", {-3, 0}},  {"k", {3, 0}},
      {"M", {6, 0}},   {"G", {9, 0}},   {"T", {12, 0}},  {"P", {15, 0}},  {"E", {18, 0}},
      {"Ki", {0, 10}}, {"Mi", {0, 20}}, {"Gi", {0, 30}}, {"Ti", {0, 40}}, {"Pi", {0, 50}}, {"Ei", {0, 60}},
  };
  for (const Named& named : kNamed) {
    if (suffix == named.suffix) {
      *scale = named.scale;
      return true;
    }
  }
  // A decimal exponent: "e3", "E-2", "e+6". Upstream reads it with strconv.ParseInt, so only an integer.
  if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return false;
  absl::string_view exponent = suffix.substr(1);
  const size_t first_digit = (exponent[0] == '+' || exponent[0] == '-') ? 1 : 0;
  if (first_digit == exponent.size()) return false;
  for (size_t i = first_digit; i < exponent.size(); ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(exponent[i]))) return false;
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(exponent, &value)) {
    // More digits than int64 holds: the value is 0 or overflows; clamping below decides which.
    value = exponent[0] == '-' ? std::numeric_limits<int64_t>::min() : kMax;
  }
  // Beyond +-(text size + 64) the result no longer depends on the exponent (it overflows, or rounds to
  // one thousandth), so clamping keeps the arithmetic below in range without changing any result.
  const int64_t bound = static_cast<int64_t>(text_size) + 64;
  scale->decimal_exponent = value > bound ? bound : (value < -bound ? -bound : value);
  scale->binary_exponent = 0;
  return true;
}

// Multiplies a big decimal number (most significant digit first, values 0..9) by 2.
void Double(std::string& digits) {
  int carry = 0;
  for (size_t i = digits.size(); i-- > 0;) {
    const int doubled = digits[i] * 2 + carry;
    digits[i] = static_cast<char>(doubled % 10);
    carry = doubled / 10;
  }
  if (carry != 0) digits.insert(digits.begin(), static_cast<char>(carry));
}

absl::Status NotAQuantity(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("not a quantity: ", topology::Quoted(text), " (", why, ")"));
}

}  // namespace

absl::StatusOr<int64_t> ParseQuantityMilli(absl::string_view text) {
  size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    negative = text[pos] == '-';
    ++pos;
  }
  // The mantissa's digits, integer and fraction together, as digit values; the point is remembered as
  // the number of fraction digits.
  std::string digits;
  size_t fraction_digits = 0;
  bool seen_point = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      digits.push_back(static_cast<char>(c - '0'));
      if (seen_point) ++fraction_digits;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (digits.empty()) return NotAQuantity(text, "expected a number");
  Scale scale;
  if (!ParseSuffix(text.substr(pos), text.size(), &scale)) {
    return NotAQuantity(text, absl::StrCat("unknown suffix ", topology::Quoted(text.substr(pos))));
  }

  // value = digits * 2^binary * 10^power, in thousandths of the unit.
  for (int i = 0; i < scale.binary_exponent; ++i) Double(digits);
  const int64_t power = scale.decimal_exponent + 3 - static_cast<int64_t>(fraction_digits);
  const size_t leading_zeros = digits.find_first_not_of('\0');
  if (leading_zeros == std::string::npos) return 0;  // every digit is zero
  digits.erase(0, leading_zeros);

  // Split at the decimal point: the integer part, and whether a non-zero fraction is cut off.
  const int64_t integer_length = static_cast<int64_t>(digits.size()) + power;
  bool rounded = false;
  if (power < 0) {
    const size_t kept = integer_length > 0 ? static_cast<size_t>(integer_length) : 0;
    rounded = digits.find_first_not_of('\0', kept) != std::string::npos;
    digits.resize(kept);
  }
  const auto out_of_range = [&] {
    return absl::OutOfRangeError(
        absl::StrCat("quantity ", topology::Quoted(text), " is too large: more than ", kMax, " thousandths"));
  };
  if (integer_length > 19) return out_of_range();  // at least 10^19 > 2^63 - 1
  uint64_t magnitude = 0;
  for (const char digit : digits) magnitude = magnitude * 10 + static_cast<uint64_t>(digit);
  for (int64_t i = 0; i < power; ++i) magnitude *= 10;  // at most 19 digits in all: fits in uint64
  // Rounding away from zero, as upstream's int64Amount scaling does.
  if (rounded) ++magnitude;
  if (magnitude > static_cast<uint64_t>(kMax)) return out_of_range();
  const int64_t value = static_cast<int64_t>(magnitude);
  return negative ? -value : value;
}

absl::StatusOr<int64_t> MilliToCount(int64_t milli) {
  if (milli % 1000 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("must be a whole number, found ", milli, "m"));
  }
  return milli / 1000;
}

absl::StatusOr<int64_t> ParseQuantityCount(absl::string_view text) {
  absl::StatusOr<int64_t> milli = ParseQuantityMilli(text);
  if (!milli.ok()) return milli.status();
  absl::StatusOr<int64_t> count = MilliToCount(*milli);
  if (!count.ok()) return absl::InvalidArgumentError(absl::StrCat(topology::Quoted(text), " ", count.status().message()));
  return count;
}

}  // namespace topofit::kube
