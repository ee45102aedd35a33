# Images for the worker and the operator (the Helm chart's defaults:
# ghcr.io/paimon-mysql-sync/pms-worker and ghcr.io/paimon-mysql-sync/pms-operator).
#   docker build --target worker -t ghcr.io/paimon-mysql-sync/pms-worker:0.1.0 .
#   docker build --target operator -t ghcr.io/paimon-mysql-sync/pms-operator:0.1.0 .
# The release workflow (.github/workflows/release.yml) builds the `*-prebuilt` targets instead:
# the same images from binaries its runners built natively per architecture
# (images/linux-<arch>/), for linux/amd64 and linux/arm64 in one push.
# Not built in this repository's CI (no container engine there): `make images` writes the same
# images as OCI archives (scripts/oci-image.py), which the real-cluster test runs.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Stripped: the release profile keeps line tables (debug = 1) for profiling, not for shipping.
RUN cargo build --release -p pms-worker -p pms-operator \
 && strip target/release/pms-worker target/release/pms-operator

# MIT's GSSAPI library and what it loads, which the worker's HDFS client opens at run time for
# Kerberos (source.kerberos); the C library is the base image's own.
FROM debian:bookworm-slim AS krb5
RUN apt-get update -qq && apt-get install -y -qq libgssapi-krb5-2 >/dev/null \
 && lib=$(ldconfig -p | awk '/libgssapi_krb5.so.2 / {print $NF; exit}') \
 && mkdir -p /krb5 \
 && for f in "$lib" $(ldd "$lib" | awk '/=> \// {print $3}' | grep -v -e '/libc.so' -e '/ld-linux'); do \
      cp --parents -L "$f" /krb5/; done

FROM gcr.io/distroless/cc-debian12:nonroot AS worker
COPY --from=krb5 /krb5/ /
COPY --from=build /src/target/release/pms-worker /usr/local/bin/pms-worker
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/pms-worker"]

FROM gcr.io/distroless/cc-debian12:nonroot AS operator
COPY --from=build /src/target/release/pms-operator /usr/local/bin/pms-operator
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/pms-operator"]

FROM gcr.io/distroless/cc-debian12:nonroot AS worker-prebuilt
ARG TARGETARCH
COPY --from=krb5 /krb5/ /
COPY images/linux-${TARGETARCH}/pms-worker /usr/local/bin/pms-worker
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/pms-worker"]

FROM gcr.io/distroless/cc-debian12:nonroot AS operator-prebuilt
ARG TARGETARCH
COPY images/linux-${TARGETARCH}/pms-operator /usr/local/bin/pms-operator
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/pms-operator"]
