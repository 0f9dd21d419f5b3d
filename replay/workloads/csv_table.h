#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace topofit::sim {

// A comma-separated file with a header row, read whole, as the trace files are (a few MB at most).
// Fields are not quoted in any trace we read, so a comma always separates fields. Every error names the
// file and the line, so a bad trace row can be found at once.
class CsvTable {
 public:
  static absl::StatusOr<CsvTable> Read(const std::filesystem::path& path);

  // The index of a header column; NotFound (naming the file) when absent.
  absl::StatusOr<int> Column(absl::string_view name) const;
  bool HasColumn(absl::string_view name) const;

  int row_count() const { return static_cast<int>(rows_.size()); }
  absl::string_view Field(int row, int column) const { return rows_[row].fields[column]; }
  // The field as a decimal integer; InvalidArgument "<file>:<line>: ..." otherwise.
  absl::StatusOr<int64_t> Int(int row, int column) const;
  // "<file>:<line>: <message>" as InvalidArgument, for checks made by the caller.
  absl::Status RowError(int row, absl::string_view message) const;

 private:
  struct Row {
    int line = 0;  // 1-based line in the file
    std::vector<absl::string_view> fields;
  };
  CsvTable() = default;

  std::string path_;
  // Owns what every string_view points into; on the heap so that moving the table keeps them valid.
  std::unique_ptr<const std::string> text_;
  std::vector<std::string> header_;
  std::vector<Row> rows_;
};

}  // namespace topofit::sim
