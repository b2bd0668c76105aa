# syntax=docker/dockerfile:1
# specprobe container image: build on Debian 12, ship one binary.
#
#   docker build --build-arg SPECPROBE_GIT_SHA=$(git rev-parse --short=12 HEAD) -t specprobe .
#   docker run --rm -v "$PWD:/work" -w /work specprobe check deploy/serve.yaml --gpu H100
#
# The runtime stage is debian:12-slim holding /usr/local/bin/specprobe (see docs/install.md for why
# not distroless): the binary links libstdc++, libgcc and yaml-cpp statically and needs only glibc;
# libcurl and the CA certificates are there for reading model metadata from the Hugging Face Hub
# (loaded at run time: without them the rest works and models named by Hub id stay unknown).
# To pick another base (no Hub look-ups then):
#   docker build --build-arg RUNTIME_BASE=gcr.io/distroless/cc-debian12 -t specprobe:distroless .
# tests/package/dockerfile_stages_test.sh runs the build stage's RUN steps as plain shell: keep
# RUN commands to relative paths and ${PREFIX}, one stage named "build", and COPY --from=build.
ARG RUNTIME_BASE=debian:12-slim
ARG PREFIX=/opt/specprobe

FROM debian:12 AS build
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
      libcli11-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev libcurl4-openssl-dev
WORKDIR /src
COPY . .
RUN cmake -S . -B build-docker -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPECPROBE_TESTS=OFF \
      -DSPECPROBE_KERNELS=${SPECPROBE_KERNELS} -DSPECPROBE_GIT_SHA=${SPECPROBE_GIT_SHA}
RUN cmake --build build-docker --target specprobe
RUN cmake --install build-docker --prefix ${PREFIX} --strip
# The binary must run on glibc 2.31+ and need no libstdc++: fail the build otherwise.
RUN bash tests/package/check_glibc_symbols.sh ${PREFIX}/bin/specprobe \
 && ${PREFIX}/bin/specprobe --version \
 && ${PREFIX}/bin/specprobe rules list >/dev/null

FROM ${RUNTIME_BASE} AS runtime
ARG PREFIX
ARG DEBIAN_FRONTEND=noninteractive
RUN if command -v apt-get >/dev/null; then \
      apt-get update -qq && apt-get install -y -qq --no-install-recommends libcurl4 ca-certificates \
      && rm -rf /var/lib/apt/lists/*; fi
COPY --from=build ${PREFIX}/bin/specprobe /usr/local/bin/specprobe
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/specprobe"]
CMD ["--help"]
