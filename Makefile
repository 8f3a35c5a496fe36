# The two commands a newcomer needs are `make demo` and `make test`; see README.md.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
CONTROLPLANE_BIN = $(shell bash hack/controlplane/build.sh --dir)

.PHONY: all demo lab explore replay recordings test unit lint bench parity soak outage controlplane cluster cluster-down check-go

all: lint test

check-go:
	@command -v $(GO) >/dev/null || { echo "no Go toolchain on PATH: install Go 1.26 from https://go.dev/dl" >&2; exit 1; }

## controlplane: build etcd, kube-apiserver, kcm, scheduler, kubectl and kwok once (cached outside the tree)
controlplane: check-go
	@bash hack/controlplane/build.sh >/dev/null

## test: unit and integration tests with the race detector, against a real control plane
test: controlplane
	KUBEINTERNALS_CONTROLPLANE_BIN=$(CONTROLPLANE_BIN) $(GO) test -race -count=1 -timeout 30m ./...
	$(GO) test -race -count=1 -tags replayonly ./examples/explore/
	cd promprovider && $(GO) test -race -count=1 ./...
	cd examples/workqueue-metrics && $(GO) test -race -count=1 ./...
	cd bench && $(GO) test -count=1 -bench '^$$' ./...

## unit: the tests that need no control plane (integration tests skip)
unit: check-go
	KUBEINTERNALS_CONTROLPLANE_BIN=/nonexistent $(GO) test -race -count=1 ./...
	$(GO) test -race -count=1 -tags replayonly ./examples/explore/
	cd promprovider && $(GO) test -race -count=1 ./...
	cd examples/workqueue-metrics && $(GO) test -race -count=1 ./...

## lint: gofmt, go vet, staticcheck, and the import rule for the root module
lint: check-go
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags replayonly ./examples/explore/
	cd bench && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...
	cd parity && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...
	cd promprovider && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...
	cd examples/workqueue-metrics && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) run $(STATICCHECK) -tags replayonly ./examples/explore/
	bash hack/check-imports.sh

## bench: our benchmarks beside client-go's (10 alternating rounds a side), ending with one Markdown table from benchstat; the quick profile by default, BENCH=full for the whole run, BENCH=regexp for some (bench/README.md)
bench: controlplane
	KUBEINTERNALS_CONTROLPLANE_BIN=$(CONTROLPLANE_BIN) bash hack/bench.sh

## parity: the differential tests against client-go (fixed seeds; PARITY_SEED=N replays one, PARITY_RUNS=N runs more), then every deliberate break in parity/breaks, which they must catch; see docs/parity.md
parity: check-go
	cd parity && $(GO) test -race -count=1 . ./internal/...
	cd parity && $(GO) run ./cmd/breaks

## soak: our informers beside client-go's on the control plane under writes and faults, sized by SOAK_OPS, SOAK_FAULTS, SOAK_APISERVER_RESTARTS, SOAK_ETCD_RESTARTS, SOAK_CHECKPOINTS, SOAK_SHARDS (defaults: the short soak CI runs; SOAK_SUMMARY=FILE keeps the tables), then sharded informers beside client-go's with the same ShardSelector; see docs/parity.md
soak: controlplane
	cd parity && KUBEINTERNALS_CONTROLPLANE_BIN=$(CONTROLPLANE_BIN) $(GO) test -race -count=1 -v -timeout 0 -run '^(TestSoak|TestShardsLikeClientGo)$$' ./soak/

## outage: seconds until each library's informer is current after a kube-apiserver outage (OUTAGE=5m, RUNS=3, INFORMERS=8 a library, FAULT=restart|refuse); see bench/README.md
outage: controlplane
	cd bench && KUBEINTERNALS_CONTROLPLANE_BIN=$(CONTROLPLANE_BIN) KUBEINTERNALS_OUTAGE=$(or $(OUTAGE),5m) \
		KUBEINTERNALS_OUTAGE_RUNS=$(or $(RUNS),3) KUBEINTERNALS_OUTAGE_INFORMERS=$(or $(INFORMERS),8) KUBEINTERNALS_OUTAGE_FAULT=$(or $(FAULT),restart) \
		$(GO) test -count=1 -v -timeout 0 -run '^TestOutageRecovery$$' ./controlplane

## demo: the main job on the cluster in $$KUBECONFIG, or else on the embedded local cluster (built only then)
demo: check-go
	@bash hack/with-cluster.sh $(GO) run ./examples/demo

## lab: every question in docs/lab.md answered by an experiment on the embedded cluster (or $$KUBECONFIG); NAME="a b" runs some
lab: check-go
	@bash hack/with-cluster.sh $(GO) run ./examples/lab $(NAME)

## explore: the pipeline live in the browser — foo-controller traced, buttons for changes and faults; prints the URL (ADDR=127.0.0.1:8077, PIPELINE=default|classic)
explore: check-go
	@bash hack/with-cluster.sh $(GO) run ./examples/explore -addr $(or $(ADDR),127.0.0.1:8077) -pipeline $(or $(PIPELINE),default)

## replay: the explorer's page from a recording, no cluster needed (FILE=docs/recordings/NAME.jsonl.gz, the demo's by default; ADDR as for explore)
replay: check-go
	$(GO) run -tags replayonly ./examples/explore -addr $(or $(ADDR),127.0.0.1:8077) -replay $(or $(FILE),docs/recordings/demo.jsonl.gz)

## recordings: run every lab scenario and the demo on the embedded cluster and rewrite their recordings in docs/recordings (what the explorer replays)
recordings: check-go
	@bash hack/with-cluster.sh $(GO) run ./examples/lab -record docs/recordings
	@bash hack/with-cluster.sh $(GO) run ./examples/demo -record docs/recordings

## cluster: a long-lived local cluster (Cluster profile); prints the export KUBECONFIG and PATH lines (its kubectl first), so eval "$$(make cluster)" works
cluster: controlplane
	@KUBEINTERNALS_CONTROLPLANE_BIN=$(CONTROLPLANE_BIN) $(GO) run ./internal/testrig/cmd/cluster up

## cluster-down: stop the cluster `make cluster` started
cluster-down: check-go
	@$(GO) run ./internal/testrig/cmd/cluster down
