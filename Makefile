# fedbayes — the two commands:
#   make notebook   installs what is missing, then serves Jupyter with the GoNB kernel and notebooks/
#   make test       installs what is missing, then go vet, go test and every notebook headless
# Everything installs from Debian's apt, the Go module proxy and npm only, and is idempotent.

SHELL := /bin/bash
.DEFAULT_GOAL := help

REPO  := $(CURDIR)
BUILD := $(REPO)/.build
BIN   := $(BUILD)/bin
GO    ?= go
PORT  ?= 8888

export GOMLX_NO_AUTO_INSTALL := 1
export JUPYTER_PATH := $(BUILD)/jupyter

NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))

.PHONY: help setup system tools kernel kernel-install test-kernel charts data xla notebook notebook-banner strip-notebooks test test-go test-fallback test-race test-notebooks test-slurm test-fuzz test-interrupt test-explorer bench bench-step bench-round bench-ab bench-jobs bench-torch reproduce ground-truth gpu-bundle test-gpu-check vet fmt clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/\$$\$$/$$/g' | awk -F':.*## ' '{printf "  make %-17s %s\n", $$1, $$2}'

setup: system tools kernel charts data ## install everything the notebooks and tests need (idempotent)

system: ## Debian packages: Jupyter Notebook, nbconvert, Chromium, OpenBLAS
	@kernels/install system

tools: ## build gonb, goimports and the fedbayes command into .build/bin
	@kernels/install tools

kernel: tools ## write the "Go (fedbayes)" kernel spec under .build/jupyter
	@kernels/install kernel

kernel-install: tools ## install the "Go (fedbayes)" kernel for your own Jupyter (jupyter kernelspec install --user), for notebooks in any folder
	@kernels/install user-kernel

charts: ## ECharts from npm into the cache, for offline charts and figures
	@kernels/install charts

data: tools ## install the datasets from Debian packages into the data cache ($$FEDBAYES_DATA)
	@$(BIN)/fedbayes data install

xla: tools ## install an XLA plugin with go-xla's installer (XLA=cpu|cuda, default cpu; FROM=FILE installs a plugin you have)
	@if [ -n "$${FROM:-}" ]; then $(BIN)/fedbayes backend install -from "$$FROM"; \
	else $(BIN)/fedbayes backend install "$${XLA:-cpu}"; fi

notebook: notebook-banner setup ## the main job: serve Jupyter on localhost with notebooks/ open (PORT=8888, or the next free one)
	@$(BIN)/fedbayes doctor || true
	@port=$(PORT); \
	while /usr/bin/python3 -c 'import socket,sys; s=socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1])))' $$port 2>/dev/null; [ $$? -ne 0 ]; do \
	  echo "fedbayes: port $$port is taken, trying $$((port+1))"; port=$$((port+1)); done; \
	echo "fedbayes: starting Jupyter Notebook on http://127.0.0.1:$$port/ (the URL with its token follows)"; \
	cd notebooks && exec /usr/bin/python3 -m notebook --no-browser --ip=127.0.0.1 --port=$$port --NotebookApp.port_retries=0 \
	  --notebook-dir="$(REPO)/notebooks" --MultiKernelManager.default_kernel_name=fedbayes \
	  $$( [ "$$(id -u)" = 0 ] && echo --allow-root )

notebook-banner:
	@echo "fedbayes: checking what the notebooks need (the first time this installs Debian packages, builds gonb and the fedbayes command and installs the data: a few minutes; later runs take seconds)"

strip-notebooks: ## remove outputs and execution counts from notebooks/*.ipynb (run before committing a notebook)
	@/usr/bin/python3 kernels/strip-notebooks $(NOTEBOOKS)

test: setup test-go test-fallback test-race test-fuzz test-slurm test-notebooks test-kernel test-interrupt test-explorer test-gpu-check ## the tests: go vet, go test (OpenBLAS, fallback, race), fuzzing, a Slurm sweep, every notebook headless, Kernel > Interrupt, the GPU check on pure Go

test-go: vet
	FEDBAYES_REQUIRE_BROWSER=1 FEDBAYES_REQUIRE_BLAS=1 $(GO) test -timeout 40m ./...

# The pure-Go path without OpenBLAS: SimpleGo's own kernels (as on a machine without the library),
# and a build of the compute package without cgo; the scalar loops that stand in for the AVX2 ones
# (FEDBAYES_SIMD=off, as on a CPU without AVX2), with OpenBLAS (as on arm64) and without it (as a
# CGO_ENABLED=0 build on such a CPU); and the non-amd64 build of the compute package.
test-fallback:
	FEDBAYES_BLAS=off $(GO) test -count=1 -timeout 20m ./fedbayes/simplegoplus ./fedbayes/models ./fedbayes/engine
	FEDBAYES_SIMD=off $(GO) test -count=1 -timeout 20m ./fedbayes/simplegoplus/... ./fedbayes/models
	FEDBAYES_BLAS=off FEDBAYES_SIMD=off $(GO) test -count=1 -timeout 20m ./fedbayes/simplegoplus ./fedbayes/models
	CGO_ENABLED=0 $(GO) vet ./fedbayes/simplegoplus/...
	CGO_ENABLED=0 GOARCH=arm64 $(GO) vet ./fedbayes/simplegoplus/...

# The race detector over the compute package and a subset of the engine and model tests that trains
# and resumes federated runs (the whole suite under -race takes too long for CI).
test-race:
	$(GO) test -race -count=1 -timeout 20m ./fedbayes/simplegoplus
	$(GO) test -race -count=1 -timeout 20m -run 'TestVectorizedMatchesSequential|TestRunLearnsAndRecords|TestResumeAfterKill|TestClientsMatchSeparateModels|TestConvClientsForward|TestTrainerControls' ./fedbayes/engine ./fedbayes/models

test-notebooks: setup
	@FEDBAYES_FAST=1 kernels/run-notebooks $(NOTEBOOKS)

test-slurm: ## a sweep through a real two-node Slurm cluster in network namespaces, one node killed mid-task (one node on localhost where two cannot start, loudly; SKIPPED when Slurm cannot start)
	@kernels/slurm-test

FUZZTIME ?= 10s
FUZZ_TARGETS := ./fedbayes/engine:FuzzParseSpec ./fedbayes/data:FuzzReadIDX ./fedbayes/data:FuzzReadCIFARBinary \
  ./fedbayes/data:FuzzReadMAT ./fedbayes/data:FuzzLoadCSV ./fedbayes/cmd/fedbayes:FuzzAggregateArgs \
  ./fedbayes/results:FuzzParseRows ./fedbayes/results:FuzzUnpackRecords ./fedbayes/cluster:FuzzRenderScript \
  ./fedbayes/results:FuzzReadersStrict ./fedbayes/results:FuzzDropRecord ./fedbayes/internal/strictjson:FuzzDecodeFile

# Go 1.26's fuzz coordinator can report "context deadline exceeded" when -fuzztime runs out while a
# worker is mid-input (go.dev/issue/75804, fixed in Go 1.27): such a run wrote no failing input and
# is reported as a flake, not a failure. A failing input (written under testdata/fuzz) always fails.
test-fuzz: ## run every Go fuzz target for FUZZTIME each (default 10s); crashers land in the package's testdata/fuzz
	@set -e; mkdir -p $(BUILD); for t in $(FUZZ_TARGETS); do \
	  echo "== $${t#*:} ($${t%%:*}, $(FUZZTIME))"; log=$(BUILD)/fuzz-$${t#*:}.log; \
	  if $(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s "$${t%%:*}" >$$log 2>&1; then tail -2 $$log; \
	  elif grep -q 'context deadline exceeded' $$log && ! grep -q 'Failing input written' $$log && ! grep -q 'panic:' $$log; then \
	    tail -4 $$log; echo "   (the fuzz coordinator's deadline race, go.dev/issue/75804: no failing input; not a failure)"; \
	  else cat $$log; exit 1; fi; \
	done

test-kernel: setup ## the kernel as `make kernel-install` installs it, in a folder outside the repository: a notebook imports fedbayes, Tab completion and Shift-Tab docs (gopls)
	@/usr/bin/python3 kernels/check-kernel

test-interrupt: setup ## Kernel > Interrupt during Run All of notebook 02, headless: a clean stop in the training cell, no later cell runs, no panics
	@/usr/bin/python3 kernels/check-interrupt

test-explorer: setup ## notebook 01's live explorer in headless Chromium through Jupyter and the kernel: live after 120 s, table = controls after 50 fast key presses, reload frees the kernel
	@/usr/bin/python3 kernels/check-explorer

vet:
	$(GO) vet ./...

reproduce: tools charts data ## run the papers' presets (BUDGET=medium|reduced|full, PAPERS=000,..., PRESETS=names, JOBS=2 worker processes, REPORT_ONLY=1, RECORDS=docs/reproduction/records) and write the report
	$(BUILD)/bin/fedbayes reproduce -budget $${BUDGET:-medium} -jobs $${JOBS:-2} $${PAPERS:+-papers $$PAPERS} $${PRESETS:+-presets $$PRESETS} $${REPORT_ONLY:+-report-only} \
	  -results $${RESULTS:-results/reproduce-$${BUDGET:-medium}} -records "$${RECORDS-docs/reproduction/records}" -o $${OUT:-docs/reproduction.md}

ground-truth: tools ## every aggregation rule against the exact global posterior (linear regression) and an HMC reference (logistic), one round: docs/ground-truth.md and results/ground-truth/ (about a minute; HMC cached)
	$(BIN)/fedbayes ground-truth -o results/ground-truth -doc docs/ground-truth.md

bench: ## benchmarks (go test -bench, COUNT runs each); ends with one summary line per benchmark
	@mkdir -p $(BUILD)
	@$(GO) run ./fedbayes/internal/benchsummary -kernels
	set -o pipefail; $(GO) test -run '^$$' -bench "$${BENCH:-.}" -benchtime=$${BENCHTIME:-20x} -count=$${COUNT:-5} \
	  -timeout 90m $${PKGS:-./fedbayes/...} | tee $(BUILD)/bench.txt
	@echo "== summary (median of $${COUNT:-5} runs) =="
	@$(GO) run ./fedbayes/internal/benchsummary < $(BUILD)/bench.txt
	@$(GO) run ./fedbayes/internal/benchsummary -kernels

bench-step: ## one training step at batch 64 (MLP, LeNet, Bayesian, CNN3, ResNet-20), then PyTorch on the same models
	@mkdir -p $(BUILD)
	@$(GO) run ./fedbayes/internal/benchsummary -kernels
	set -o pipefail; $(GO) test -run '^$$' -bench 'Step$$' -benchtime=$${BENCHTIME:-40x} -count=$${COUNT:-5} \
	  -timeout 60m ./fedbayes/models | tee $(BUILD)/bench-step.txt
	@$(MAKE) --no-print-directory bench-torch
	@echo "== summary (median of $${COUNT:-5} runs; pytorch on one thread) =="
	@cat $(BUILD)/bench-step.txt $(BUILD)/bench-torch.txt | $(GO) run ./fedbayes/internal/benchsummary
	@$(GO) run ./fedbayes/internal/benchsummary -kernels

bench-torch: ## the PyTorch yardstick (Debian python3-torch, one thread) on the models of bench-step
	@mkdir -p $(BUILD)
	@kernels/install torch
	set -o pipefail; COUNT=$${COUNT:-5} /usr/bin/python3 kernels/bench-torch.py | tee $(BUILD)/bench-torch.txt

bench-round: ## one federated round (Fashion-MNIST 60k, 10 clients, E=1, Bayesian LeNet) at GOMAXPROCS=1 and 2
	@mkdir -p $(BUILD)
	@$(GO) run ./fedbayes/internal/benchsummary -kernels
	set -o pipefail; for p in 1 2; do GOMAXPROCS=$$p $(GO) test -run '^$$' -bench 'Round' -benchtime=1x -count=$${COUNT:-3} \
	  -timeout 90m ./fedbayes/engine | sed "s|^BenchmarkRound/|BenchmarkRound/GOMAXPROCS=$$p/|"; done | tee $(BUILD)/bench-round.txt
	@echo "== summary (median of $${COUNT:-3} runs) =="
	@$(GO) run ./fedbayes/internal/benchsummary < $(BUILD)/bench-round.txt
	@$(GO) run ./fedbayes/internal/benchsummary -kernels

bench-ab: ## one change measured in turn: BenchmarkStep at A=rev and B=rev (default main, HEAD) and PyTorch, COUNT times (PKG=engine BENCH=Round/lenet/ PROCS="1 2": the round)
	@mkdir -p $(BUILD)
	@kernels/install torch
	kernels/bench-ab $${A:-main} $${B:-HEAD} $(BUILD)/bench-ab

bench-jobs: tools data ## a sweep of 4 Bayesian LeNet runs as one process and as `fedbayes run -jobs 2` (COUNT=3 each)
	@mkdir -p $(BUILD)
	set -o pipefail; kernels/bench-jobs $(BUILD)/bin/fedbayes $(BUILD)/bench-jobs | tee $(BUILD)/bench-jobs.txt

.PHONY: bench-crossdevice
bench-crossdevice: data ## issue 52's cross-device benchmark (1,000 clients of 50, 50 per round; 10,000 of 6, 100 per round; LeNet FedAvg, Bayesian LeNet GAA), ROUNDS=30 rounds, each case in its own process (its peak RSS)
	@mkdir -p $(BUILD)
	@$(GO) run ./fedbayes/internal/benchsummary -kernels
	$(GO) test -c -o $(BUILD)/engine.test ./fedbayes/engine
	set -o pipefail; for c in $${CASES:-idle-client round-setup lenet-fedavg/C1000-m50 lenet-fedavg/C1000-m100 lenet-fedavg/C10000-m100 bayes-lenet-gaa/C1000-m50 bayes-lenet-gaa/C1000-m100 bayes-lenet-gaa/C10000-m100}; do \
	  echo "load average before $$c: $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	  (cd fedbayes/engine && FEDBAYES_XDEV_ROUNDS=$${ROUNDS:-30} $(BUILD)/engine.test -test.run '^$$' -test.bench "^BenchmarkCrossDevice/$$c\$$" -test.benchtime=1x -test.timeout 120m) || exit 1; \
	done | tee $(BUILD)/bench-crossdevice.txt
	@echo "== summary (ROUNDS=$${ROUNDS:-30}; figures over rounds 2 to ROUNDS) =="
	@$(GO) run ./fedbayes/internal/benchsummary < $(BUILD)/bench-crossdevice.txt
	@$(GO) run ./fedbayes/internal/benchsummary -kernels

# The GPU check's bundle: what kernels/gpu-check needs on a machine without Go (docs/backends.md). The
# binaries are built with cgo (go-xla loads the PJRT plugin with dlopen; OpenBLAS too is opened at run
# time, not linked), stripped and xz-compressed; with Fashion-MNIST's gzip files the folder must stay
# under the device tool's 64 MiB, together with the working tree that travels beside it.
GPU_BUNDLE := $(BUILD)/gpu-bundle
BUNDLE_LIMIT_MIB ?= 56
gpu-bundle: tools data ## the folder kernels/gpu-check reads on a GPU machine (.build/gpu-bundle, under 64 MiB with the tree)
	@set -euo pipefail; rm -rf $(GPU_BUNDLE).tmp; mkdir -p $(GPU_BUNDLE).tmp/bin $(GPU_BUNDLE).tmp/data; \
	$(GO) build -buildvcs=true -trimpath -ldflags='-s -w' -o $(GPU_BUNDLE).tmp/bin/fedbayes ./fedbayes/cmd/fedbayes; \
	$(GO) test -c -trimpath -ldflags='-s -w' -o $(GPU_BUNDLE).tmp/bin/models.test ./fedbayes/models; \
	$(GO) test -c -trimpath -ldflags='-s -w' -o $(GPU_BUNDLE).tmp/bin/engine.test ./fedbayes/engine; \
	for b in fedbayes models.test engine.test; do xz -T2 -6 $(GPU_BUNDLE).tmp/bin/$$b; done; \
	data="$$($(BIN)/fedbayes data path)"; \
	cp -r "$$data/fashion-mnist" $(GPU_BUNDLE).tmp/data/; \
	cp kernels/gpu-check kernels/gpu-check.json kernels/bench-torch.py kernels/hlo-kernels.py $(GPU_BUNDLE).tmp/; \
	{ echo "commit: $$(git rev-parse HEAD)$$(git diff --quiet HEAD -- . ':!notebooks' || echo ' (with uncommitted changes)')"; \
	  echo "built: $$(date -u +%FT%TZ) with $$($(GO) version | cut -d' ' -f3) on $$(ldd --version | head -1)"; \
	  cd $(GPU_BUNDLE).tmp && find . -type f ! -name MANIFEST -printf '%s %p\n' | sort -k2; } > $(GPU_BUNDLE).tmp/MANIFEST; \
	size=$$(du -sm $(GPU_BUNDLE).tmp | cut -f1); \
	if [ $$size -gt $(BUNDLE_LIMIT_MIB) ]; then echo "gpu-bundle: $$size MiB, over $(BUNDLE_LIMIT_MIB) MiB (the device tool carries 64 MiB with the tree)" >&2; exit 1; fi; \
	rm -rf $(GPU_BUNDLE); mv $(GPU_BUNDLE).tmp $(GPU_BUNDLE); \
	echo "gpu-bundle: $(GPU_BUNDLE), $$size MiB: $$(ls $(GPU_BUNDLE)/bin | tr '\n' ' ')"

test-gpu-check: gpu-bundle ## kernels/gpu-check --quick on the pure-Go backend: the GPU check's every step, here (PyTorch on the CPU)
	@kernels/install torch
	@GOMLX_BACKEND=simplegoplus GPU_CHECK_REQUIRE_TORCH=1 OUT=$(BUILD)/gpu-check kernels/gpu-check --quick

fmt:
	gofmt -l -w fedbayes

clean: ## remove .build (the data cache is kept)
	rm -rf $(BUILD)
