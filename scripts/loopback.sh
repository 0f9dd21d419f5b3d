# Sourced by the scripts that stand topofit servers up on loopback (soak.sh, extender-rss.sh,
# refused-body-rss.sh).

# A TCP port free on 127.0.0.1 now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# write_kubeconfig FILE URL NAME: a kubeconfig whose one cluster is URL, its context, cluster, user and
# bearer token all NAME.
write_kubeconfig() {
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
current-context: $3
contexts: [{name: $3, context: {cluster: $3, user: $3}}]
clusters: [{name: $3, cluster: {server: "$2"}}]
users: [{name: $3, user: {token: $3}}]
EOF
}

# loopback_workspace: sets $work, a fresh temporary directory, and $pids, an empty list of the processes the
# script starts; on exit each of those is killed and waited for, and $work removed.
loopback_workspace() {
  work=$(mktemp -d)
  pids=()
  trap 'for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"' EXIT
}
