# The rnx GitHub Action image: CUDA + PyTorch, rnx built against the image's own torch, run as a non-root user.
# Every build step lives in scripts/docker-build-steps.sh, which the test suite runs too.

# ---- build: compilers, -dev packages, torch in a virtual environment, the rnx build tree
FROM nvidia/cuda:13.0.0-devel-ubuntu24.04 AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV RNX_VENV=/opt/venv RNX_PREFIX=/opt/rnx RNX_BUILD_DIR=/tmp/rnx-build RNX_SRC=/src
WORKDIR /src
COPY scripts/docker-build-steps.sh scripts/action-entrypoint.sh /src/scripts/
COPY requirements.txt /src/
RUN scripts/docker-build-steps.sh build-deps python-deps
COPY . /src
RUN scripts/docker-build-steps.sh build smoke

# ---- runtime: the CUDA toolchain (for .cu/.cpp kernels), the same venv path, the installed binaries
FROM nvidia/cuda:13.0.0-devel-ubuntu24.04
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV RNX_VENV=/opt/venv RNX_PREFIX=/opt/rnx PATH=/opt/rnx/bin:/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY scripts/docker-build-steps.sh /usr/local/lib/rnx/docker-build-steps.sh
RUN /usr/local/lib/rnx/docker-build-steps.sh runtime-deps user
COPY --from=build /opt/venv /opt/venv
COPY --from=build /opt/rnx /opt/rnx
# uid 1001 is GitHub's runner user: the mounted workspace and file commands stay writable.
USER 1001
WORKDIR /github/workspace
ENTRYPOINT ["/opt/rnx/bin/rnx-action"]
