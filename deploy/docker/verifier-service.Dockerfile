# verifier-service: the gRPC verifier. Build from the repository root:
#   docker build -f deploy/docker/verifier-service.Dockerfile -t portcullis/verifier-service:0.1.0 .
# Needs BuildKit (the default builder since Docker 23) for the ccache cache mount.

# The base, pinned by digest (debian:bookworm-slim, multi-platform index). Refresh it with
#   docker buildx imagetools inspect debian:bookworm-slim
# and keep both Dockerfiles on the same digest; scripts/check-deploy rejects an unpinned FROM.
ARG DEBIAN_IMAGE=debian:bookworm-slim@sha256:3783cc01769c7b2b1b83a5c5ad96c815348e28ed7da68e2e3687004faa906251

# ---- build: the same Debian packages as scripts/lib/common.sh (PORTCULLIS_PACKAGES) less the
# ones only tests and local runs use (postgresql-15, nodejs, git, curl, procps, ca-certificates).
FROM ${DEBIAN_IMAGE} AS build
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      g++ cmake ninja-build pkg-config ccache \
      libgrpc++-dev libgrpc-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev \
      libssl-dev libpqxx-dev libc-ares-dev libcurl4-openssl-dev libboost1.81-dev libboost-json1.81-dev \
      libgumbo-dev libicu-dev libspdlog-dev prometheus-cpp-dev libgtest-dev libgmock-dev \
      libbenchmark-dev libcbor-dev libgoogle-perftools-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The release preset (RelWithDebInfo); debug info is stripped from the shipped binary below.
RUN --mount=type=cache,target=/root/.cache/ccache \
    cmake --preset release \
 && cmake --build build/release --target verifier-service \
 && strip --strip-debug -o /verifier-service build/release/verifier-service/verifier-service

# ---- runtime: only the shared libraries the binary links (and CA certificates for https fetches).
FROM ${DEBIAN_IMAGE} AS runtime
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      ca-certificates \
      libabsl20220623 libgrpc++1.51 libgrpc29 libprotobuf32 libssl3 libpqxx-6.4 libc-ares2 libcurl4 \
      libboost-json1.81.0 libgumbo1 libicu72 libspdlog1.10 libprometheus-cpp-core1.0 libcbor0.8 \
      libtcmalloc-minimal4 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /verifier-service /usr/local/bin/verifier-service
# Fail the build, not the pod, when a library is missing.
RUN ldd /usr/local/bin/verifier-service > /tmp/ldd.txt \
 && if grep 'not found' /tmp/ldd.txt; then exit 1; fi \
 && rm /tmp/ldd.txt
# Container defaults: listen on every interface (the binary defaults to loopback).
ENV GRPC_LISTEN=0.0.0.0:50051
EXPOSE 50051
# A fixed non-root UID:GID (no passwd entry needed); the manifests run as the same 65532.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/verifier-service"]
