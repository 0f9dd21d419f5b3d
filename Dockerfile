# topofit's image: one binary (`topofit extender|expander|serve|agent|bench|topo`) on Debian 12.
#
#   docker build -t ghcr.io/topofit/topofit:v0.1.0 .
#
# Build stage: the build dependencies from Debian's packages (scripts/deps.sh), the `topofit` target only.
# Runtime stage: only the shared libraries the binary links, as Debian runtime packages. CTest
# `docker.runtime_libs` checks that this list provides every library `ldd build/cli/topofit` names, so a new
# dependency cannot be forgotten here even where no registry is reachable. Runs as 65532 (non-root, the
# UID the manifests set) and needs no shell: the entrypoint is the binary itself.
FROM debian:12 AS build
WORKDIR /src
COPY scripts/deps.sh scripts/deps.sh
RUN scripts/deps.sh
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTOPOFIT_WERROR=ON \
    && ninja -C /build topofit \
    && strip /build/cli/topofit

FROM debian:12-slim AS runtime
# One package a line, between `install` and `&&`: tests/docker/runtime_libs_test.sh reads this list. libc6,
# libgcc-s1 and zlib1g are in the base image already; listed so that the check needs no knowledge of it.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        ca-certificates \
        libabsl20220623 \
        libbrotli1 \
        libc6 \
        libc-ares2 \
        libcpp-httplib0.11 \
        libfmt9 \
        libgcc-s1 \
        libgrpc++1.51 \
        libgrpc29 \
        libjemalloc2 \
        libprotobuf32 \
        libre2-9 \
        libsimdjson14 \
        libspdlog1.10 \
        libsqlite3-0 \
        libssl3 \
        libstdc++6 \
        libyaml-cpp0.7 \
        zlib1g \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/cli/topofit /usr/local/bin/topofit
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/topofit"]
CMD ["--help"]
