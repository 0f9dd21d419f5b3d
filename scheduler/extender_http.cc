#include "scheduler/extender_http.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codec/bounded_json.h"
#include "codec/extender_json.h"
#include "codec/ledger_json.h"
#include "server/bearer_token.h"

namespace topofit::scheduler {
namespace {

using server::HttpRequest;
using server::HttpResponse;

int HttpStatusFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument: return 400;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kFailedPrecondition: return 409;
    default: return 500;
  }
}

HttpResponse ErrorFor(const absl::Status& status) { return server::JsonError(HttpStatusFor(status), status.message()); }

HttpResponse Json(std::string body) { return HttpResponse{200, "application/json", std::move(body)}; }

// A filter reply's passing nodes are spliced in where they lie in the request, not copied into the body.
HttpResponse Json(codec::EncodedFilterResult encoded) {
  HttpResponse response{200, "application/json", std::move(encoded.text)};
  response.spliced = std::move(encoded.nodes);
  response.splice_at = encoded.nodes_at;
  return response;
}

// Decodes the body with `parse`, runs `verb`, encodes with `encode`; a failure at any step is a 4xx/5xx.
template <typename Parse, typename Verb, typename Encode>
HttpResponse Serve(const HttpRequest& request, Parse parse, Verb verb, Encode encode) {
  auto args = parse(request.body);
  if (!args.ok()) return ErrorFor(args.status());
  auto result = verb(*args);
  if (!result.ok()) return ErrorFor(result.status());
  return Json(encode(*result));
}

HttpResponse ReportPod(Extender& extender, const HttpRequest& request) {
  absl::StatusOr<nlohmann::json> parsed =
      codec::ParseBoundedJson(request.body, codec::kRequestJsonLimits, "pod report");
  if (!parsed.ok()) return ErrorFor(parsed.status());
  const nlohmann::json& body = *parsed;
  if (!body.is_object()) return server::JsonError(400, "expected a JSON object");
  const auto text = [&](const char* key) -> const nlohmann::json* {
    auto it = body.find(key);
    return it != body.end() && it->is_string() && !it->get_ref<const std::string&>().empty() ? &*it : nullptr;
  };
  const auto gpus = body.find("gpus");
  for (const char* key : {"uid", "namespace", "name", "node"}) {
    if (text(key) == nullptr) return server::JsonError(400, absl::StrCat(key, ": expected a non-empty string"));
  }
  // Range-checked as the JSON number it is: get<int>() would wrap 4294967297 to 1.
  if (gpus == body.end() || !gpus->is_number_integer() || gpus->get<int64_t>() < 0 ||
      gpus->get<int64_t>() > topology::kMaxGpusPerNode) {
    return server::JsonError(400, absl::StrCat("gpus: expected an integer from 0 to ", topology::kMaxGpusPerNode));
  }
  std::optional<topology::GpuSet> ids;
  if (const nlohmann::json* listed = text("gpuIds")) {
    absl::StatusOr<topology::GpuSet> parsed = topology::GpuSet::Parse(listed->get<std::string>(), topology::kMaxGpusPerNode);
    if (!parsed.ok()) return server::JsonError(400, absl::StrCat("gpuIds: ", parsed.status().message()));
    ids = *parsed;
  }
  const PodRef pod{body["uid"], body["namespace"], body["name"]};
  absl::Status observed = extender.PodReported(pod, body["node"].get<std::string>(), gpus->get<int>(), ids);
  if (!observed.ok()) return ErrorFor(observed);
  return server::JsonResponse(200, {{"pod", pod.key()}, {"recorded", true}});
}

}  // namespace

void RegisterExtenderRoutes(server::HttpServer& server, Extender& extender, std::string admin_token) {
  server.Handle("POST", "/filter", [&extender](const HttpRequest& request) {
    return Serve(request, [&](const std::string& body) { return extender.ParseArgs(body); },
                 [&](const codec::ExtenderArgs& a) { return extender.Filter(a); }, codec::EncodeFilterResult);
  });
  server.Handle("POST", "/prioritize", [&extender](const HttpRequest& request) {
    return Serve(request, [&](const std::string& body) { return extender.ParseArgs(body); },
                 [&](const codec::ExtenderArgs& a) { return extender.Prioritize(a); }, codec::SerializeHostPriorityList);
  });
  // Bind waits on the API server (a rate-limited client): on the blocking pool, so that a slow API server
  // cannot stall filter and prioritize.
  server.Handle(
      "POST", "/bind",
      [&extender](const HttpRequest& request) {
        return Serve(request, codec::ParseBindingArgs,
                     [&](const codec::ExtenderBindingArgs& a) { return extender.Bind(a); },
                     codec::SerializeBindingResult);
      },
      server::RouteOptions{.blocking = true});
  server.Handle("POST", "/preempt", [&extender](const HttpRequest& request) {
    return Serve(request, codec::ParsePreemptionArgs,
                 [&](const codec::ExtenderPreemptionArgs& a) { return extender.Preempt(a); },
                 codec::SerializePreemptionResult);
  });

  auto admin = [token = std::move(admin_token)](server::HttpHandler handler) {
    return server::RequireAdminToken(token, std::move(handler));
  };
  server.Handle("POST", "/admin/pods", admin([&extender](const HttpRequest& request) {
    return ReportPod(extender, request);
  }));
  server.Handle("DELETE", "/admin/pods/*", admin([&extender](const HttpRequest& request) {
    if (request.path_suffix.empty()) return server::JsonError(400, "DELETE /admin/pods/<uid>");
    const bool released = extender.PodDeleted(request.path_suffix);
    return server::JsonResponse(200, {{"uid", request.path_suffix}, {"released", released}});
  }));
}

void RegisterPreferencesRoute(server::HttpServer& server, const ledger::Ledger& ledger, std::string admin_token) {
  server.Handle("GET", "/preferences",
                server::RequireLoopbackOrAdminToken(std::move(admin_token), [&ledger](const HttpRequest&) {
                  return server::JsonResponse(200, codec::PreferencesToJson(ledger.Preferences()));
                }));
}

}  // namespace topofit::scheduler
