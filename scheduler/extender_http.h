#pragma once

#include <string>

#include "ledger/ledger.h"
#include "scheduler/extender.h"
#include "server/http_server.h"

namespace topofit::scheduler {

// kube-scheduler's extender verbs on `server` (POST /filter, /prioritize, /bind, /preempt: the verbs'
// default names in KubeSchedulerConfiguration), and the admin endpoints that feed pod lifecycle until a
// watch does:
//   POST   /admin/pods        {"uid","namespace","name","node","gpus","gpuIds"?}: a pod holds GPUs
//   DELETE /admin/pods/<uid>  the pod is gone: release its GPUs and preference
// Admin calls need `Authorization: Bearer <admin_token>`; with an empty token they answer 403.
//
// Request errors answer 4xx with {"error": ...} and change nothing: malformed JSON or wrong types 400; an
// oversized body is refused by the server (413). Unknown nodes are not request errors: they fail alone, in
// the reply (extender.h), and a refused bind is the reply's Error.
void RegisterExtenderRoutes(server::HttpServer& server, Extender& extender, std::string admin_token);

// GET /preferences: the ledger's pending preferences as JSON (the ops port); they name pods and their UIDs
// (what a bind needs), so only for callers on loopback or with `admin_token`
// (server::RequireLoopbackOrAdminToken).
void RegisterPreferencesRoute(server::HttpServer& server, const ledger::Ledger& ledger, std::string admin_token);

}  // namespace topofit::scheduler
