# paimon-mysql-sync — see README.md. Caches: cargo target in ~/.cache/pms/target, Maven in ~/.m2.
SHELL := /bin/bash
export CARGO_TARGET_DIR ?= $(HOME)/.cache/pms/target
# Incremental caches grew the shared target dir by ~20 GB between runs and filled a disk; a clean
# debug build is only slightly slower without them.
export CARGO_INCREMENTAL ?= 0

.PHONY: demo test test-deps hdfs-jar flink-peer docs mdbook krew bench bench-scale bench-shapes bench-cut footprint api-load soak unit fixtures k8s-tools s3-server images prometheus-tools mysql8-server manifests build release bench-bin crds check clean

## Sync the bundled sample Paimon table into a throw-away local MariaDB (standalone worker). Builds
## only pms-worker, unoptimised (the demo profile: minutes from a fresh clone, where the release build
## takes half an hour); `make release` is the production build.
demo:
	$(TIMED) demo-build cargo build --profile demo -p pms-worker
	PMS_WORKER=$(CARGO_TARGET_DIR)/demo/pms-worker scripts/demo.sh

## Every test: unit tests, then integration tests on a real MariaDB and Paimon-Java-written tables,
## a kube-apiserver, an S3 server, and a real single-node cluster running the repo's images (root).
## (The quick smoke benchmark runs first and fails only on a gross regression; then `make demo`'s
## script, with the test build's worker.) What the tests need is built side by side (test-deps,
## make -j): cargo and Maven in front, the Go tools niced behind them.
## Each phase prints its time (scripts/timed.sh); .ci/run sums them up.
test:
	$(MAKE) --no-print-directory -j4 --output-sync=target test-deps
	$(TIMED) smoke-bench scripts/with-mariadb.sh $(TEST_BIN)/bench --smoke --size quick
	PMS_WORKER=$(TEST_BIN)/pms-worker $(TIMED) demo-script scripts/demo.sh >/dev/null
	$(TIMED) docs-book sh -c '$$(scripts/mdbook.sh) build docs'
	$(TIMED) release-dry-run sh -c 'rm -rf $(RELEASE_DRY_RUN) && scripts/release.sh binaries $(TEST_BIN) $(RELEASE_DRY_RUN) \
	  && scripts/release.sh chart $(RELEASE_DRY_RUN) && scripts/release.sh finish $(RELEASE_DRY_RUN)'
	PMS_RELEASE_DIR=$(RELEASE_DRY_RUN) PMS_PROMETHEUS_BIN=$$(scripts/prometheus-tools.sh) PMS_MYSQL8_BIN=$$(scripts/mysql8-server.sh) $(TIMED) tests \
	  scripts/with-k8s-cluster.sh scripts/with-mariadb.sh scripts/with-kube-apiserver.sh scripts/with-s3.sh scripts/with-hdfs.sh \
	  scripts/with-paimon-java.sh scripts/test-all.sh $(TEST_FEATURES)

test-deps: build fixtures hdfs-jar flink-peer k8s-tools s3-server images prometheus-tools mysql8-server mdbook

## Memory and MySQL connections of 50 small tables: one process for all, or one per table; and of
## 50, 200 and 1,000 tables with placement pooled, and one huge table among 50 small pooled ones.
footprint: fixtures
	cargo build --release -p pms-worker
	scripts/with-mariadb.sh cargo test --release -p pms-tests --test database_sync -- --ignored --nocapture --test-threads 1 footprint_

## The operator's API load: requests/s to the API server with 1, 50 and 200 idle syncs, by verb.
api-load: build k8s-tools
	scripts/with-kube-apiserver.sh cargo test -p pms-tests $(TEST_FEATURES) --test operator_e2e -- --ignored --nocapture --test-threads 1 operator_api_load

## Benchmarks against the raw MariaDB limits (BENCH_SIZE=quick|full|huge: 200k, 2M, 10M rows).
BENCH_SIZE ?= full
bench: bench-bin fixtures
	command -v perf >/dev/null || { echo "make bench draws flame graphs with perf: install Debian's linux-perf" >&2; exit 1; }
	command -v inferno-flamegraph >/dev/null || cargo install inferno --locked
	scripts/with-mariadb.sh $(CARGO_TARGET_DIR)/release/bench --size $(BENCH_SIZE) --flame docs/images
	scripts/with-mariadb.sh $(CARGO_TARGET_DIR)/release/bench --isolation
	scripts/with-mariadb.sh $(CARGO_TARGET_DIR)/release/bench --memory
	python3 -c "import matplotlib" 2>/dev/null || python3 -m pip install -q matplotlib
	python3 bench/plot.py $$(ls -t bench/results/*.csv | head -1)

## The full read by table size (200k and BENCH_SIZE), buckets (1, 4, 16) and slots (1, 2, 4), plotted.
bench-scale: bench-bin fixtures
	scripts/with-mariadb.sh $(CARGO_TARGET_DIR)/release/bench --scale --size $(BENCH_SIZE)
	python3 -c "import matplotlib" 2>/dev/null || python3 -m pip install -q matplotlib
	python3 bench/plot_scale.py $$(ls -t bench/results/*-scale.csv | head -1)

## The defaults by table shape (1/4/16 buckets, changelog producer none/input/lookup, 4 vs 30
## columns) and beside a busy core, plotted.
bench-shapes: bench-bin fixtures
	scripts/with-mariadb.sh scripts/with-paimon-java.sh $(CARGO_TARGET_DIR)/release/bench --shapes
	python3 -c "import matplotlib" 2>/dev/null || python3 -m pip install -q matplotlib
	python3 bench/plot_shapes.py $$(ls -t bench/results/*-shapes.csv | head -1)

## Savepoint latency and rescale time on a 2M-row table with changes flowing (PMS_CUT_ROWS=…).
bench-cut: build fixtures k8s-tools
	scripts/with-mariadb.sh scripts/with-kube-apiserver.sh cargo test -p pms-tests --test operator_e2e $(TEST_FEATURES) -- --ignored cut_timing --nocapture

## The random kill -9 loop, many iterations (PMS_SOAK_SEED=… reproduces a run).
soak: build fixtures
	PMS_SOAK_ITERATIONS=$${PMS_SOAK_ITERATIONS:-40} PMS_SOAK_RESTARTS=$${PMS_SOAK_RESTARTS:-20} \
	  scripts/with-mariadb.sh cargo test -p pms-tests --test delivery $(TEST_FEATURES) -- random_kill restarts --nocapture

## Unit tests only (no servers needed).
unit:
	cargo test --workspace --lib --bins $(TEST_FEATURES)

# Test builds carry the named crash points of the fault-injection suite (off in release builds).
TEST_FEATURES := --features pms-worker/failpoints
# The one build the tests, the smoke bench and the test images share (the dev profile, see Cargo.toml).
TEST_BIN := $(CARGO_TARGET_DIR)/debug
TIMED := scripts/timed.sh
# The release's packaging run on the test build (scripts/release.sh, all but the push); the
# real-cluster test installs the chart from its package, tests/tests/release.rs checks the rest.
RELEASE_DRY_RUN := $(CARGO_TARGET_DIR)/release-dry-run

## Everything the tests run: the workspace's binaries and every test executable.
build:
	$(TIMED) cargo-build sh -c 'cargo build --workspace --bins $(TEST_FEATURES) && cargo test --workspace --no-run $(TEST_FEATURES)'

release:
	cargo build --release -p pms-worker

bench-bin:
	cargo build --release -p pms-worker -p pms-tests --bins

## The Java reference writer/reader used by the tests.
fixtures:
	@$(TIMED) fixtures sh -c 'scripts/paimon-java.sh latest /nonexistent db t >/dev/null 2>&1; test -f tests/paimon-java/target/pms-paimon-fixtures.jar' \
	  || { echo "building the Paimon Java fixtures failed: run scripts/paimon-java.sh by hand to see why" >&2; exit 1; }

## The MiniDFSCluster jar the HDFS tests run (Maven; after the fixtures, which share ~/.m2).
hdfs-jar: fixtures
	@$(TIMED) hdfs-jar scripts/with-hdfs.sh --build-only

## The Flink job users run today (bench/flink), which the take-over test stops and replaces
## (after the fixtures: the Maven runs share ~/.m2).
flink-peer: hdfs-jar
	@$(TIMED) flink-peer scripts/flink-peer.sh build

## kube-apiserver, etcd, helm and the node's kubelet, controller-manager and scheduler, built from
## the Go module proxy, cached in ~/.cache/pms/k8s.
## The user guide (docs/) as a book in target/book; its links, the YAML and the commands it shows
## are checked by tests/tests/docs.rs (part of `make test` too), its field reference by pms-crds'.
docs: mdbook
	$(TIMED) docs-book sh -c '$$(scripts/mdbook.sh) build docs'
	cargo test -q -p pms-tests --test docs

## The release artifacts of this machine's platform from a release build (target/dist/: the
## binaries' archives, the chart package, SHA256SUMS, the krew manifest). The release workflow
## (.github/workflows/release.yml) makes every platform's and pushes them.
krew:
	cargo build --release -p pms-worker -p kubectl-pms
	scripts/release.sh binaries $(CARGO_TARGET_DIR)/release target/dist
	scripts/release.sh chart target/dist
	scripts/release.sh finish target/dist

mdbook:
	@nice $(TIMED) mdbook scripts/mdbook.sh >/dev/null

k8s-tools:
	PMS_K8S_NODE=1 $(TIMED) k8s-tools scripts/k8s-tools.sh >/dev/null

## The chart rendered with its defaults, for `kubectl apply -k deploy/` (a test keeps it current).
manifests: k8s-tools
	$$(scripts/k8s-tools.sh 2>/dev/null)/helm template pms charts/paimon-mysql-sync --namespace pms-system --include-crds > deploy/paimon-mysql-sync.yaml

## The worker and operator images the test cluster runs, as OCI archives (no container engine), in
## ~/.cache/pms/images, made from the test build's binaries (`scripts/images.sh` alone: release ones).
images: build
	$(TIMED) images scripts/images.sh $(TEST_BIN)

## prometheus and promtool for the monitoring tests (Debian's package unpacked, or the Go module proxy; cached).
prometheus-tools:
	$(TIMED) prometheus-tools scripts/prometheus-tools.sh >/dev/null

## The MySQL 8 dialect test server (go-mysql-server; tests/mysql8), built from the Go module proxy.
mysql8-server:
	$(TIMED) mysql8-server scripts/mysql8-server.sh >/dev/null

## The S3 server the S3 tests use (versitygw from the Go module proxy, ~2 min cold, cached).
s3-server:
	$(TIMED) s3-server scripts/s3-server.sh build >/dev/null

## Regenerate the CRD YAML from the Rust types (crds/ and the Helm chart's copy).
crds:
	cargo run -q -p pms-crds --bin crdgen > crds/paimonmysqlsync.yaml
	mkdir -p charts/paimon-mysql-sync/crds
	cp crds/paimonmysqlsync.yaml charts/paimon-mysql-sync/crds/paimonmysqlsync.yaml
	cargo run -q -p pms-crds --bin crdgen -- reference > docs/reference.md

check:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings

clean:
	cargo clean
