#pragma once

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <optional>
#include <string>

namespace topofit::server::testing {

// The machine's first IPv4 address that is not loopback, if it has one: a test connecting to it is a peer
// beyond loopback (HttpRequest::from_loopback false) without leaving the machine.
inline std::optional<std::string> NonLoopbackAddress() {
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0) return std::nullopt;
  std::optional<std::string> found;
  for (ifaddrs* a = all; a != nullptr && !found; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    const in_addr ip = reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr;
    if ((ntohl(ip.s_addr) >> 24) == 127) continue;
    char text[INET_ADDRSTRLEN];
    if (::inet_ntop(AF_INET, &ip, text, sizeof(text)) != nullptr) found = text;
  }
  ::freeifaddrs(all);
  return found;
}

}  // namespace topofit::server::testing
