# sweepgate's container image (issue 24 item 7): the binary, a non-root user, `--state` on a
# volume, HEALTHCHECK on /healthz. Linted by hadolint in scripts/lint-workflows.sh; the image
# itself is not built in this repository's test run (no container engine on the test machine).
#
#   docker build -t sweepgate .
#   docker run -v sweepgate-state:/var/lib/sweepgate -p 8080:8080 \
#     -v /etc/sweepgate:/etc/sweepgate:ro sweepgate --config /etc/sweepgate/sweepgate.toml

FROM rust:1.89-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin sweepgate

FROM debian:bookworm-slim
# ca-certificates for GitHub and the registries, git for `serve --pool` (it plans from a git
# checkout), openssh-client for ssh Slurm pools. Debian's security updates move these versions,
# so they are not pinned (DL3008); the base image tag is the pin.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates git openssh-client \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/sweepgate --create-home sweepgate
COPY --from=build /src/target/release/sweepgate /usr/local/bin/sweepgate
USER 10001
WORKDIR /var/lib/sweepgate
VOLUME ["/var/lib/sweepgate"]
ENV SWEEPGATE_LISTEN=0.0.0.0:8080 \
    SWEEPGATE_STATE=/var/lib/sweepgate/state.sqlite \
    SWEEPGATE_LOG_FORMAT=json
EXPOSE 8080
# bash's /dev/tcp: no curl in the image.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET /healthz HTTP/1.0\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
ENTRYPOINT ["/usr/local/bin/sweepgate", "serve"]
