#!/usr/bin/env bash
# Every event name and field key passed to server::LogEvent in the sources is snake_case (server/logging.h):
# one convention, so a log pipeline's queries do not depend on which component wrote the line.
#   log_names_test.sh SOURCE_ROOT
set -euo pipefail
root=$1
cd "$root"
dirs=(agent cli scheduler expander kubeclient history server ledger decision)
# Each LogEvent(...) call up to its ");", on one line (NUL-separated).
calls=$(grep -Pzo --include='*.cc' -r 'LogEvent\((?:[^;]|;(?!\s*$))*?\);' "${dirs[@]}" | tr '\n' ' ' | tr '\0' '\n' || true)
count=$(grep -c 'LogEvent(' <<<"$calls" || true)
if [[ $count -lt 40 ]]; then
  echo "found only $count LogEvent calls: the pattern no longer matches the sources" >&2
  exit 1
fi
bad=$( { grep -Po 'LogEvent\([^,]+,\s*"\K[^"]*(?=")' <<<"$calls" | grep -v '^[a-z0-9_]*$' || true
         grep -Po '\{"\K[^"]+(?=", )' <<<"$calls" | grep -v '^[a-z0-9_]*$' || true; } | sort -u)
if [[ -n $bad ]]; then
  echo "event names or field keys that are not snake_case:" >&2
  echo "$bad" >&2
  exit 1
fi
echo "$count LogEvent calls, every event name and field key snake_case"
