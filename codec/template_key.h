#pragma once

// Node-group templates known again across BestOptions calls although their bytes change on every loop.
// cluster-autoscaler builds each group's template anew in every loop (from a running node of the group, or
// from the cloud provider's template when the group has none) and names it `template-node-for-<id>-
// <random>`, with the kubernetes.io/hostname label set to that name and a fresh uid; a template copied from a
// running node also carries that node's resourceVersion, images, addresses and managed fields, which change
// under it. None of that is what decisions read, but all of it is in the bytes: a cache keyed by the bytes
// found nothing, and decoding 500 templates was a quarter of a call.
//
// The key of a template is its bytes reduced to the fields the decoder reads (the fields proto/*.proto
// declares: the generated descriptors say which, so the key follows the schema as it grows; a map entry,
// a label or a quantity, is kept whole), without its per-loop identity: the name, uid, resourceVersion
// and hostname label. Templates are decoded without that
// identity (WithoutIdentity; nothing decides by it, and the ledger never kept it), so two templates of one
// key decode to the same node, and one object serves every call that sends it.
//
// Fields the schema does not declare are skipped at the wire level, as the protobuf parser skips them, and
// checked as it checks them (tags, wire types, lengths); bytes that use groups, or that the walk cannot
// read, have no key: they are decoded, never cached, and the decoder reports what is wrong with them.
// What is kept whole is not checked here: bytes under a key the cache holds have those parts byte for byte
// as the bytes it was decoded from, and bytes that do not decode are never put in it.

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "kube/objects.h"

namespace topofit::codec {

// The key of a core/v1 Node's bare protobuf bytes (a nodeBytesMap value); nullopt as said above.
std::optional<std::string> TemplateKeyOf(absl::string_view node_bytes);

// The bytes as sent without that identity alone, every other field kept byte for byte, unread ones too:
// found again without TemplateKeyOf's walk of every field, for the loops in which nothing of the node
// changed (CA copies a running node again every loop; the status it copies changes every few minutes, on
// each heartbeat the kubelet reports). Bytes with one such key differ only in their identity, so they decode
// to one node, as the bytes of one TemplateKeyOf do: one cache holds both keys, this one looked up first.
// nullopt where the identity cannot be read for sure (as for TemplateKeyOf: a group, an unusual name or
// labels entry); what lies deeper is kept as sent, not read, so some bytes TemplateKeyOf has no key for have
// this one, and decode alike all the same.
std::optional<std::string> SentKeyOf(absl::string_view node_bytes);

// `template_node` without its per-loop identity: what is left is what its key says.
kube::Node WithoutIdentity(kube::Node template_node);

}  // namespace topofit::codec
