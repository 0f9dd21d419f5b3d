#pragma once

// Reading counts from annotations the way every topofit annotation is read: a bad value is an
// InvalidArgument naming the annotation and its value, never a guess.

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace topofit::decision {

// Counts above this are not a gang or a domain anyone runs (the largest clusters hold tens of thousands of
// GPUs); such a value is a typo, and rejecting it keeps sums of counts far from overflow.
inline constexpr int kMaxAnnotatedCount = 100000;

// `annotation <key>="<value>": <detail>` as an InvalidArgument.
absl::Status AnnotationError(absl::string_view key, absl::string_view value, absl::string_view detail);

// A whole number from 1 to kMaxAnnotatedCount, in decimal; anything else is AnnotationError.
absl::StatusOr<int> ParseCountAnnotation(absl::string_view key, absl::string_view value);

}  // namespace topofit::decision
