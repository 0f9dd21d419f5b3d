#!/usr/bin/env bash
# CTest docker.runtime_libs: every shared library the topofit binary links is provided by a package the
# Dockerfile's runtime stage installs. Checked with
# `ldd` and `dpkg -S` on this machine, no registry or docker needed.
#
# usage: runtime_libs_test.sh <Dockerfile> <binary>      exit 0 pass, 1 fail, 77 skipped (no ldd/dpkg)
set -uo pipefail
dockerfile=${1:?usage: runtime_libs_test.sh <Dockerfile> <binary>}
binary=${2:?usage: runtime_libs_test.sh <Dockerfile> <binary>}
for tool in ldd dpkg; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "skipped: $tool not found (the library check needs a Debian system)"
    exit 77
  fi
done
[[ -x $binary ]] || { echo "FAIL: $binary is not an executable"; exit 1; }

# The runtime stage's packages: the words after `apt-get install` up to `&&`, options left out.
installed=$(awk '
  /^FROM / { runtime = ($0 ~ / AS runtime$/) }
  runtime && /apt-get install/ { listing = 1; sub(/.*apt-get install/, "") }
  listing {
    for (i = 1; i <= NF; i++) {
      if ($i == "&&") { listing = 0; break }
      if ($i != "\\" && $i !~ /^-/) print $i
    }
  }' "$dockerfile" | sort -u)
if [[ -z $installed ]]; then
  echo "FAIL: no apt-get install list in the runtime stage (FROM ... AS runtime) of $dockerfile"
  exit 1
fi

# The package owning a library path; Debian 12 merges /lib into /usr/lib, and dpkg knows one spelling.
owner() {
  local f=$1 p
  for candidate in "$f" "$(readlink -f "$f")" "/usr$f" "${f#/usr}"; do
    p=$(dpkg -S "$candidate" 2>/dev/null | head -1 | cut -d: -f1) && [[ -n $p ]] && { echo "$p"; return; }
  done
}

failures=0
libraries=$(ldd "$binary" | awk '/=>/ && $3 ~ /^\// { print $3 }' | sort -u)
count=0
for lib in $libraries; do
  count=$((count + 1))
  pkg=$(owner "$lib")
  if [[ -z $pkg ]]; then
    echo "FAIL: $lib belongs to no Debian package"
    failures=$((failures + 1))
  elif ! grep -qx "$pkg" <<<"$installed"; then
    echo "FAIL: $lib is in package $pkg, which the Dockerfile's runtime stage does not install"
    failures=$((failures + 1))
  fi
done
if ((count == 0)); then
  echo "FAIL: ldd names no library of $binary"
  exit 1
fi
if ((failures)); then exit 1; fi
echo "ok: the runtime stage provides all $count shared libraries of $binary"
