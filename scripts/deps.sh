#!/usr/bin/env bash
# Installs topofit's build dependencies from Debian's packages (nothing is downloaded at build time).
set -euo pipefail
packages=(
  build-essential cmake ninja-build ccache pkg-config
  libabsl-dev libboost-dev libboost-graph-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libsimdjson-dev
  catch2 libbenchmark-dev libcpp-httplib-dev libssl-dev libyaml-cpp-dev
  libsqlite3-dev  # the decision history (history/store.cc)
  libjemalloc-dev  # the servers' allocator (CMakeLists.txt: topofit_allocator)
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  clang libclang-rt-dev  # libFuzzer for scripts/fuzz.sh (fuzz/)
  gnuplot-nox  # draws `topofit bench --out`'s plots; the report's tests check the SVGs when it is there
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
