#include "kubeclient/buffered_shapes.h"

#include <algorithm>
#include <vector>

#include "codec/kube_json.h"
#include "kubeclient/capacity_buffers.h"

namespace topofit::kubeclient {
namespace {

// The object's namespace and name; nullopt without a name.
std::optional<BufferedShapes::Key> KeyOf(const nlohmann::json& object) {
  if (!object.is_object()) return std::nullopt;
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return std::nullopt;
  const auto name = metadata->find("name");
  if (name == metadata->end() || !name->is_string() || name->get_ref<const std::string&>().empty()) return std::nullopt;
  const auto ns = metadata->find("namespace");
  return BufferedShapes::Key{ns != metadata->end() && ns->is_string() ? ns->get<std::string>() : "",
                             name->get<std::string>()};
}

// The string at object[field].name, or "" when absent.
std::string RefName(const nlohmann::json& object, const char* field) {
  const auto ref = object.find(field);
  if (ref == object.end() || !ref->is_object()) return "";
  const auto name = ref->find("name");
  return name != ref->end() && name->is_string() ? name->get<std::string>() : "";
}

}  // namespace

bool BufferedShapes::ReadBuffer(const nlohmann::json& object, std::optional<Buffer>& buffer) {
  buffer.reset();
  if (!KeyOf(object)) return false;
  const auto spec = object.find("spec");
  if (spec == object.end() || !spec->is_object()) return false;
  const nlohmann::json empty = nlohmann::json::object();
  const auto status_it = object.find("status");
  const nlohmann::json& status = status_it != object.end() && status_it->is_object() ? *status_it : empty;
  // The strategy defaults to active capacity; CA copies the one it acts on into the status.
  const std::string strategy = spec->value("provisioningStrategy", std::string(kActiveCapacityStrategy));
  if (strategy != kActiveCapacityStrategy) return true;
  // CA resolves a scalableRef into a template of its own and names it in the status.
  std::string template_name = RefName(status, "podTemplateRef");
  if (template_name.empty()) template_name = RefName(*spec, "podTemplateRef");
  if (template_name.empty()) return true;
  const auto replicas_of = [](const nlohmann::json& fields) -> std::optional<int> {
    const auto replicas = fields.find("replicas");
    if (replicas == fields.end() || !replicas->is_number_integer()) return std::nullopt;
    return std::max(0, replicas->get<int>());
  };
  std::optional<int> replicas = replicas_of(status);
  if (!replicas) replicas = replicas_of(*spec);
  if (!replicas || *replicas == 0) return true;
  buffer = Buffer{std::move(template_name), *replicas};
  return true;
}

bool BufferedShapes::ReadTemplate(const nlohmann::json& object, std::optional<decision::GpuDemand>& demand) {
  demand.reset();
  if (!KeyOf(object)) return false;
  const auto tmpl = object.find("template");
  if (tmpl == object.end() || !tmpl->is_object()) return true;  // a template without a pod keeps nothing
  nlohmann::json pod = nlohmann::json::object();
  pod["metadata"] = tmpl->value("metadata", nlohmann::json::object());
  pod["spec"] = tmpl->value("spec", nlohmann::json::object());
  absl::StatusOr<kube::Pod> decoded = codec::PodFromJson(pod);
  if (!decoded.ok()) return false;
  absl::StatusOr<decision::GpuDemand> asked = decision::DemandOf(*decoded);
  if (asked.ok() && asked->wants_gpus()) demand = *std::move(asked);
  return true;
}

template <typename T>
ListWatcher::Sink BufferedShapes::SinkInto(std::map<Key, T> BufferedShapes::*store,
                                           bool (*read)(const nlohmann::json&, std::optional<T>&)) {
  // A LIST's pages gather here until it completes; the watcher calls one callback at a time.
  auto listing = std::make_shared<std::map<Key, T>>();
  ListWatcher::Sink sink;
  sink.on_list_page = [listing, read](std::vector<nlohmann::json> page, bool first) {
    if (first) listing->clear();
    int64_t undecodable = 0;
    for (const nlohmann::json& object : page) {
      std::optional<T> value;
      if (!read(object, value)) {
        ++undecodable;
      } else if (value) {
        listing->insert_or_assign(*KeyOf(object), *std::move(value));
      }
    }
    return undecodable;
  };
  sink.on_sync = [this, listing, store] {
    absl::MutexLock lock(&mu_);
    (this->*store).swap(*listing);
    listing->clear();
    Rebuild();
  };
  sink.on_event = [this, store, read](WatchEventType type, const nlohmann::json& object) {
    std::optional<T> value;
    if (!read(object, value)) return false;
    absl::MutexLock lock(&mu_);
    if (type == WatchEventType::kDeleted || !value) {
      (this->*store).erase(*KeyOf(object));
    } else {
      (this->*store).insert_or_assign(*KeyOf(object), *std::move(value));
    }
    Rebuild();
    return true;
  };
  return sink;
}

ListWatcher::Sink BufferedShapes::BufferSink() { return SinkInto(&BufferedShapes::buffers_, &ReadBuffer); }

ListWatcher::Sink BufferedShapes::TemplateSink() { return SinkInto(&BufferedShapes::templates_, &ReadTemplate); }

void BufferedShapes::Rebuild() {
  std::vector<decision::WarmShape> shapes;
  for (const auto& [key, buffer] : buffers_) {
    const auto demand = templates_.find({key.first, buffer.template_name});
    if (demand != templates_.end()) shapes.push_back({demand->second, buffer.replicas});
  }
  warm_ = std::make_shared<const decision::WarmCapacity>(std::move(shapes));
}

std::shared_ptr<const decision::WarmCapacity> BufferedShapes::Warm() const {
  absl::MutexLock lock(&mu_);
  return warm_;
}

}  // namespace topofit::kubeclient
