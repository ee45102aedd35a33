#!/usr/bin/env bash
# Cargo's runner for the test binaries under scripts/test-all.sh: libtest reports each test's
# time (`--report-time`, behind `-Z unstable-options`, which RUSTC_BOOTSTRAP lets a stable
# toolchain's libtest take). Set only when the binaries run, so no build fingerprint changes.
binary=$1
shift
RUSTC_BOOTSTRAP=1 exec "$binary" "$@" -Z unstable-options --report-time
