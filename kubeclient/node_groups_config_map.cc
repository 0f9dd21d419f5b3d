#include "kubeclient/node_groups_config_map.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "codec/bounded_json.h"
#include "codec/kube_json.h"
#include "kubeclient/ledger_annotations.h"
#include "server/logging.h"

namespace topofit::kubeclient {
namespace {

constexpr char kPublishKey[] = "node-groups";  // the publishing queue's one key

struct DecodedEntry {
  std::string group;
  kube::Node template_node;
  absl::Time seen;
  bool trusted = false;
};

absl::StatusOr<DecodedEntry> DecodeEntry(const nlohmann::json& entry) {
  if (!entry.is_object()) return absl::InvalidArgumentError("an entry is not an object");
  DecodedEntry out;
  const auto group = entry.find("nodeGroup");
  if (group == entry.end() || !group->is_string() || group->get<std::string>().empty()) {
    return absl::InvalidArgumentError("an entry has no nodeGroup");
  }
  out.group = group->get<std::string>();
  const auto seen = entry.find("seen");
  std::string error;
  if (seen == entry.end() || !seen->is_string() ||
      !absl::ParseTime(absl::RFC3339_full, seen->get<std::string>(), &out.seen, &error)) {
    return absl::InvalidArgumentError(absl::StrCat("node group ", out.group, ": seen is not an RFC 3339 time"));
  }
  if (const auto trusted = entry.find("trusted"); trusted != entry.end()) {
    if (!trusted->is_boolean()) return absl::InvalidArgumentError(absl::StrCat("node group ", out.group, ": trusted is not a boolean"));
    out.trusted = trusted->get<bool>();
  }
  const auto template_node = entry.find("template");
  if (template_node == entry.end()) return absl::InvalidArgumentError(absl::StrCat("node group ", out.group, ": no template"));
  absl::StatusOr<kube::Node> node = codec::NodeFromJson(*template_node);
  if (!node.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("node group ", out.group, ": template: ", node.status().message()));
  }
  out.template_node = *std::move(node);
  return out;
}

}  // namespace

NodeGroupsConfigMap::NodeGroupsConfigMap(KubeApi& kube, const server::Clock& clock, spdlog::logger& log,
                                         NodeGroupsConfigMapOptions options)
    : kube_(kube),
      clock_(clock),
      log_(log),
      options_(std::move(options)),
      publishing_(log, clock, "node_groups_publish", {{"configmap", options_.name}}),
      reading_(log, clock, "node_groups_read", {{"configmap", options_.name}}),
      templates_(options_.ttl, options_.max_groups, options_.on_evicted),
      publisher_(std::make_unique<CoalescingQueue>([this](const std::string&) { return Publish(); },
                                                   options_.publishing)) {}

NodeGroupsConfigMap::~NodeGroupsConfigMap() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (reader_.joinable()) reader_.join();
  publisher_->WaitIdle(options_.shutdown_grace);
  publisher_->Stop();
}

void NodeGroupsConfigMap::Record(const std::map<std::string, kube::Node>& templates, bool trusted) {
  bool publish = false;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = clock_.Now();
    templates_.Prune(now);
    for (const auto& [group, template_node] : templates) {
      if (!templates_.Record(group, template_node, now, trusted)) continue;
      const auto published = published_.find(group);
      publish = publish || published == published_.end() || now - published->second.seen > options_.ttl / 4 ||
                published->second.template_node != template_node || published->second.trusted != trusted;
    }
  }
  if (publish) publisher_->Add(kPublishKey);
}

std::map<std::string, ledger::NodeGroupTemplate> NodeGroupsConfigMap::Live() const {
  absl::MutexLock lock(&mu_);
  return templates_.Live(clock_.Now());
}

CoalescingQueue::Outcome NodeGroupsConfigMap::Publish() {
  // Read, merge, write: the key is replaced whole, so what another writer added is read in first.
  const absl::StatusOr<bool> merged = Merge();
  if (!merged.ok() && !absl::IsInvalidArgument(merged.status())) {  // an unreadable key is overwritten
    publishing_.Failed(absl::StatusCodeToString(merged.status().code()), absl::ZeroDuration(), merged.status().message());
    return CoalescingQueue::Outcome::kRetry;
  }
  std::map<std::string, Published> publishing;
  std::string document = "[";
  size_t omitted = 0;
  {
    absl::MutexLock lock(&mu_);
    templates_.Prune(clock_.Now());
    // The groups seen last first, so that what does not fit is what CA offered longest ago.
    std::vector<std::pair<const std::string*, const ledger::NodeGroupTemplates::Entry*>> order;
    for (const auto& [group, entry] : templates_.entries()) order.emplace_back(&group, &entry);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second->seen > b.second->seen; });
    for (const auto& [group, entry] : order) {
      const std::string text = nlohmann::json{{"nodeGroup", *group},
                                              {"seen", LedgerTimeText(entry->seen)},
                                              {"trusted", entry->trusted},
                                              {"template", codec::NodeTemplateToJson(entry->template_node)}}
                                   .dump();
      const bool fits = document.size() + 1 + text.size() + 1 <= options_.max_bytes;  // a comma, the bracket
      publishing[*group] = {entry->template_node, entry->seen, entry->trusted, !fits};
      if (!fits) {
        ++omitted;
        continue;
      }
      if (document.size() > 1) document += ',';
      document += text;
    }
  }
  document += ']';
  if (omitted > 0) {
    server::LogEvent(log_, "node_groups_omitted",
                     {{"configmap", options_.name},
                      {"omitted", absl::StrCat(omitted)},
                      {"written", absl::StrCat(publishing.size() - omitted)},
                      {"max_bytes", absl::StrCat(options_.max_bytes)}},
                     spdlog::level::warn);
  }
  const absl::Status written = kube_.SetConfigMapEntry(options_.namespace_name, options_.name, kNodeGroupsKey, document);
  if (!written.ok()) {
    publishing_.Failed(absl::StatusCodeToString(written.code()), absl::ZeroDuration(), written.message());
    return CoalescingQueue::Outcome::kRetry;
  }
  publishing_.Succeeded();
  absl::MutexLock lock(&mu_);
  for (auto& [group, published] : publishing) {
    auto it = published_.find(group);
    if (it == published_.end() || it->second.seen <= published.seen) published_[group] = std::move(published);
  }
  return CoalescingQueue::Outcome::kDone;
}

absl::StatusOr<bool> NodeGroupsConfigMap::Merge() {
  absl::StatusOr<kube::StringMap> data = kube_.GetConfigMapData(options_.namespace_name, options_.name);
  if (!data.ok() && !absl::IsNotFound(data.status())) return data.status();
  std::vector<DecodedEntry> entries;
  if (data.ok()) {
    if (const auto text = data->find(kNodeGroupsKey); text != data->end()) {
      const absl::StatusOr<nlohmann::json> parsed = codec::ParseBoundedJson(
          text->second, codec::kObjectJsonLimits, absl::StrCat("configmap ", options_.name, ": ", kNodeGroupsKey));
      if (!parsed.ok()) return parsed.status();
      const nlohmann::json& document = *parsed;
      if (!document.is_array()) {
        return absl::InvalidArgumentError(
            absl::StrCat("configmap ", options_.name, ": ", kNodeGroupsKey, " is not a JSON array"));
      }
      for (const nlohmann::json& entry : document) {
        absl::StatusOr<DecodedEntry> decoded = DecodeEntry(entry);
        if (!decoded.ok()) {
          server::LogEvent(log_, "node_groups_bad_entry",
                           {{"configmap", options_.name}, {"error", std::string(decoded.status().message())}},
                           spdlog::level::warn);
          continue;
        }
        entries.push_back(*std::move(decoded));
      }
    }
  }
  absl::MutexLock lock(&mu_);
  std::set<std::string> in_api;
  for (const DecodedEntry& entry : entries) {
    in_api.insert(entry.group);
    if (!templates_.Record(entry.group, entry.template_node, entry.seen, entry.trusted)) continue;
    // It is in the API as read: nothing to publish for it until it changes or goes stale.
    published_[entry.group] = {entry.template_node, entry.seen, entry.trusted};
  }
  templates_.Prune(clock_.Now());
  // Published here, yet not in the API (another writer replaced the key without it): to be written again.
  bool missing = false;
  for (const auto& [group, entry] : templates_.entries()) {
    const auto published = published_.find(group);
    if (in_api.contains(group) || published == published_.end() || published->second.omitted) continue;
    published_.erase(group);
    missing = true;
  }
  return missing;
}

absl::Status NodeGroupsConfigMap::Refresh() {
  const absl::StatusOr<bool> missing = Merge();
  if (!missing.ok()) return missing.status();
  if (*missing) publisher_->Add(kPublishKey);
  return absl::OkStatus();
}

void NodeGroupsConfigMap::Start() {
  reader_ = std::thread([this] { Poll(); });
}

void NodeGroupsConfigMap::Poll() {
  while (true) {
    const absl::Status read = Refresh();
    if (read.ok()) {
      reading_.Succeeded();
    } else {
      reading_.Failed(absl::StatusCodeToString(read.code()), options_.poll_interval, read.message());
    }
    absl::MutexLock lock(&mu_);
    const auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
    if (mu_.AwaitWithTimeout(absl::Condition(&stop), options_.poll_interval)) return;
  }
}

bool NodeGroupsConfigMap::WaitPublished(absl::Duration timeout) const { return publisher_->WaitIdle(timeout); }

}  // namespace topofit::kubeclient
