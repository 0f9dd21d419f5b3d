#include "decision/device_selector.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace topofit::decision {
namespace {

// Reads the expression left to right; each method consumes what it reads and says whether it could.
class Reader {
 public:
  explicit Reader(absl::string_view text) : rest_(text) {}

  bool AtEnd() {
    SkipSpace();
    return rest_.empty();
  }
  bool Take(absl::string_view token) {
    SkipSpace();
    if (!absl::StartsWith(rest_, token)) return false;
    rest_.remove_prefix(token.size());
    return true;
  }
  std::optional<std::string> String() {
    SkipSpace();
    if (rest_.empty() || (rest_[0] != '"' && rest_[0] != '\'')) return std::nullopt;
    const char quote = rest_[0];
    const size_t end = rest_.find(quote, 1);
    if (end == absl::string_view::npos) return std::nullopt;
    const absl::string_view value = rest_.substr(1, end - 1);
    if (value.find('\\') != absl::string_view::npos) return std::nullopt;  // escapes are not read
    rest_.remove_prefix(end + 1);
    return std::string(value);
  }
  std::optional<std::string> Identifier() {
    SkipSpace();
    size_t length = 0;
    while (length < rest_.size() && (absl::ascii_isalnum(rest_[length]) || rest_[length] == '_')) ++length;
    if (length == 0 || absl::ascii_isdigit(rest_[0])) return std::nullopt;
    std::string name(rest_.substr(0, length));
    rest_.remove_prefix(length);
    return name;
  }
  absl::string_view rest() const { return rest_; }

 private:
  void SkipSpace() {
    while (!rest_.empty() && absl::ascii_isspace(rest_[0])) rest_.remove_prefix(1);
  }
  absl::string_view rest_;
};

absl::Status Outside(absl::string_view expression, absl::string_view at) {
  return absl::InvalidArgumentError(absl::StrCat(
      "CEL selector \"", expression, "\" is outside what topofit judges (at \"", at.substr(0, 40),
      "\"): it reads only device.driver == \"...\" and device.attributes[\"<domain>\"].<name> == \"...\" joined by &&"));
}

}  // namespace

absl::StatusOr<DeviceSelector> ParseDeviceSelector(absl::string_view expression) {
  DeviceSelector selector;
  Reader reader(expression);
  do {
    const absl::string_view term = reader.rest();
    if (!reader.Take("device.")) return Outside(expression, term);
    if (reader.Take("driver")) {
      std::optional<std::string> value;
      if (!reader.Take("==") || !(value = reader.String())) return Outside(expression, term);
      if (selector.driver && *selector.driver != *value) {
        selector.driver = "";  // two drivers at once: no device has both
      } else {
        selector.driver = *std::move(value);
      }
      continue;
    }
    DeviceSelector::AttributeIs attribute;
    std::optional<std::string> domain;
    std::optional<std::string> name;
    std::optional<std::string> value;
    if (!reader.Take("attributes") || !reader.Take("[") || !(domain = reader.String()) || !reader.Take("]") ||
        !reader.Take(".") || !(name = reader.Identifier()) || !reader.Take("==") || !(value = reader.String())) {
      return Outside(expression, term);
    }
    selector.attributes.push_back({.domain = *std::move(domain), .name = *std::move(name), .value = *std::move(value)});
  } while (reader.Take("&&"));
  if (!reader.AtEnd()) return Outside(expression, reader.rest());
  return selector;
}

const kube::DeviceAttribute* QualifiedAttribute(const kube::SliceDevice& device, absl::string_view driver,
                                                absl::string_view domain, absl::string_view name) {
  if (auto it = device.attributes.find(absl::StrCat(domain, "/", name)); it != device.attributes.end()) {
    return &it->second;
  }
  if (domain != driver) return nullptr;
  if (auto it = device.attributes.find(name); it != device.attributes.end()) return &it->second;
  return nullptr;
}

bool SelectorMatches(const DeviceSelector& selector, absl::string_view driver, const kube::SliceDevice& device) {
  if (selector.driver && *selector.driver != driver) return false;
  for (const DeviceSelector::AttributeIs& wanted : selector.attributes) {
    const kube::DeviceAttribute* attribute = QualifiedAttribute(device, driver, wanted.domain, wanted.name);
    if (attribute == nullptr || attribute->string_value != wanted.value) return false;
  }
  return true;
}

}  // namespace topofit::decision
