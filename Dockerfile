# syntax=docker/dockerfile:1
# specprobe container image: build on Debian 12, ship one binary.
#
#   docker build --build-arg SPECPROBE_GIT_SHA=$(git rev-parse --short=12 HEAD) -t specprobe .
#   docker run --rm -v "$PWD:/work" -w /work specprobe check deploy/serve.yaml --gpu H100
#
# The runtime stage is debian:12-slim holding /usr/local/bin/specprobe (see docs/install.md for why
# not distroless): the binary links libstdc++, libgcc and yaml-cpp statically and needs only glibc;
# libcurl and the CA certificates are there for reading model metadata from the Hugging Face Hub
# (loaded at run time: without them the rest works and models named by Hub id stay unknown). It
# runs as an unprivileged user (uid 10001; its cache under /tmp), and carries the OCI labels.
#
# The GPU variant embeds the probe kernels (built with nvcc in the CUDA devel image; the runtime
# image stays debian:12-slim: the kernels are in the binary and the driver comes from the host
# through the NVIDIA container toolkit):
#   docker build --build-arg BUILD_BASE=nvidia/cuda:13.0.1-devel-ubuntu24.04 \
#     --build-arg SPECPROBE_KERNELS=ON -t specprobe:cuda .
#   docker run --rm --gpus all -v "$PWD:/work" specprobe:cuda check deploy/serve.yaml
#
# Bases: the release workflow (.github/workflows/release.yml) resolves BUILD_BASE and
# RUNTIME_BASE to digests (NAME:TAG@sha256:...) when it builds, so a released image names the exact
# bases in its labels; pass digests the same way to pin a local build. To pick another runtime base
# (no Hub look-ups then):
#   docker build --build-arg RUNTIME_BASE=gcr.io/distroless/cc-debian12 -t specprobe:distroless .
# tests/package/dockerfile_stages_test.sh runs the build stage's RUN steps as plain shell: keep
# RUN commands to relative paths and ${PREFIX}, one stage named "build", and COPY --from=build.
ARG BUILD_BASE=debian:12
ARG RUNTIME_BASE=debian:12-slim
ARG PREFIX=/opt/specprobe

FROM ${BUILD_BASE} AS build
# OFF: debian:12 has no CUDA toolkit, so the probe kernels are not built and probes report
# "skip: built without probe kernels"; rules, checkpoint and GPU (Driver API) checks all work.
ARG SPECPROBE_KERNELS=OFF
ARG SPECPROBE_GIT_SHA=unknown
ARG PREFIX
ARG DEBIAN_FRONTEND=noninteractive
# The build dependencies of tests/setup.sh, without the test-only ones (Catch2, Python, clang).
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      cmake ninja-build g++ make binutils \
      libcli11-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev libjemalloc-dev libcurl4-openssl-dev
WORKDIR /src
COPY . .
RUN cmake -S . -B build-docker -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPECPROBE_TESTS=OFF \
      -DSPECPROBE_KERNELS=${SPECPROBE_KERNELS} -DSPECPROBE_GIT_SHA=${SPECPROBE_GIT_SHA}
RUN cmake --build build-docker --target specprobe specprobe_package_docs
RUN cmake --install build-docker --prefix ${PREFIX} --strip
# The binary must run on glibc 2.28+ and need no libstdc++: fail the build otherwise.
RUN bash tests/package/check_glibc_symbols.sh ${PREFIX}/bin/specprobe \
 && ${PREFIX}/bin/specprobe --version \
 && ${PREFIX}/bin/specprobe rules list >/dev/null

FROM ${RUNTIME_BASE} AS runtime
ARG PREFIX
ARG RUNTIME_BASE
ARG SPECPROBE_VERSION=0.1.0
ARG SPECPROBE_GIT_SHA=unknown
ARG SPECPROBE_CREATED=""
ARG SPECPROBE_SOURCE=https://github.com/specprobe/specprobe
ARG DEBIAN_FRONTEND=noninteractive
LABEL org.opencontainers.image.title="specprobe" \
      org.opencontainers.image.description="Pre-flight checker for speculative-decoding LLM serving configurations (vLLM, SGLang)" \
      org.opencontainers.image.version="${SPECPROBE_VERSION}" \
      org.opencontainers.image.revision="${SPECPROBE_GIT_SHA}" \
      org.opencontainers.image.created="${SPECPROBE_CREATED}" \
      org.opencontainers.image.source="${SPECPROBE_SOURCE}" \
      org.opencontainers.image.url="${SPECPROBE_SOURCE}" \
      org.opencontainers.image.documentation="${SPECPROBE_SOURCE}/blob/main/docs/install.md" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${RUNTIME_BASE}"
RUN if command -v apt-get >/dev/null; then \
      apt-get update -qq && apt-get install -y -qq --no-install-recommends libcurl4 ca-certificates \
      && rm -rf /var/lib/apt/lists/*; fi
COPY --from=build ${PREFIX}/bin/specprobe /usr/local/bin/specprobe
WORKDIR /work
# Not root: a checker of config files needs no privilege. A numeric user works on any base
# (distroless too); the Hub cache goes where that user may write.
USER 10001:10001
ENV HOME=/tmp XDG_CACHE_HOME=/tmp/.cache
ENTRYPOINT ["/usr/local/bin/specprobe"]
CMD ["--help"]
