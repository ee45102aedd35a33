# Images for the worker and the operator (the Helm chart's defaults:
# paimon-mysql-sync/pms-worker and paimon-mysql-sync/pms-operator).
#   docker build --target worker -t paimon-mysql-sync/pms-worker:0.1.0 .
#   docker build --target operator -t paimon-mysql-sync/pms-operator:0.1.0 .
# Not built in this repository's CI (no container engine there): `make images` writes the same
# images as OCI archives, which the real-cluster test runs.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Stripped: the release profile keeps line tables (debug = 1) for profiling, not for shipping.
RUN cargo build --release -p pms-worker -p pms-operator \
 && strip target/release/pms-worker target/release/pms-operator

FROM gcr.io/distroless/cc-debian12:nonroot AS worker
COPY --from=build /src/target/release/pms-worker /usr/local/bin/pms-worker
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/pms-worker"]

FROM gcr.io/distroless/cc-debian12:nonroot AS operator
COPY --from=build /src/target/release/pms-operator /usr/local/bin/pms-operator
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/pms-operator"]
