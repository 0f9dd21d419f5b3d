#include "replay/workloads/csv_table.h"

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace topofit::sim {

absl::StatusOr<CsvTable> CsvTable::Read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path.string()));
  std::ostringstream contents;
  contents << in.rdbuf();

  CsvTable table;
  table.path_ = path.string();
  table.text_ = std::make_unique<const std::string>(std::move(contents).str());
  int line_number = 0;
  size_t expected_fields = 0;
  for (absl::string_view line : absl::StrSplit(absl::string_view(*table.text_), '\n')) {
    ++line_number;
    absl::ConsumeSuffix(&line, "\r");
    if (line.empty()) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
    if (table.header_.empty()) {
      for (absl::string_view name : fields) table.header_.emplace_back(name);
      expected_fields = fields.size();
      continue;
    }
    if (fields.size() != expected_fields) {
      return absl::InvalidArgumentError(absl::StrCat(table.path_, ":", line_number, ": ", fields.size(),
                                                     " fields, the header has ", expected_fields));
    }
    table.rows_.push_back(Row{line_number, std::move(fields)});
  }
  if (table.header_.empty()) return absl::InvalidArgumentError(absl::StrCat(table.path_, ": no header row"));
  return table;
}

bool CsvTable::HasColumn(absl::string_view name) const { return Column(name).ok(); }

absl::StatusOr<int> CsvTable::Column(absl::string_view name) const {
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return static_cast<int>(i);
  }
  return absl::NotFoundError(absl::StrCat(path_, ":1: no column \"", name, "\" (columns: ",
                                          absl::StrJoin(header_, ","), ")"));
}

absl::StatusOr<int64_t> CsvTable::Int(int row, int column) const {
  int64_t value = 0;
  if (!absl::SimpleAtoi(Field(row, column), &value)) {
    return RowError(row, absl::StrCat(header_[column], " \"", Field(row, column), "\" is not an integer"));
  }
  return value;
}

absl::Status CsvTable::RowError(int row, absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(path_, ":", rows_[row].line, ": ", message));
}

}  // namespace topofit::sim
