#include "decision/annotation_value.h"

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "topology/quoted.h"

namespace topofit::decision {

absl::Status AnnotationError(absl::string_view key, absl::string_view value, absl::string_view detail) {
  return absl::InvalidArgumentError(absl::StrCat("annotation ", key, "=", topology::Quoted(value), ": ", detail));
}

absl::StatusOr<int> ParseCountAnnotation(absl::string_view key, absl::string_view value) {
  // Digits only: SimpleAtoi alone would also take a sign and surrounding spaces.
  int count = 0;
  if (value.empty() || !absl::c_all_of(value, absl::ascii_isdigit) || !absl::SimpleAtoi(value, &count) ||
      count < 1 || count > kMaxAnnotatedCount) {
    return AnnotationError(key, value, absl::StrCat("expected a whole number from 1 to ", kMaxAnnotatedCount));
  }
  return count;
}

}  // namespace topofit::decision
