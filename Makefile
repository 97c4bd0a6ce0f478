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

.PHONY: test-interrupt help setup system tools kernel charts data notebook notebook-banner test test-go test-notebooks bench reproduce vet fmt clean strip-notebooks

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/\$$\$$/$$/g' | awk -F':.*## ' '{printf "  make %-17s %s\n", $$1, $$2}'

setup: system tools kernel charts data ## install everything the notebooks and tests need (idempotent)

system: ## Debian packages: Jupyter Notebook, nbconvert, Chromium
	@kernels/install system

tools: ## build gonb, goimports and the fedbayes command into .build/bin
	@kernels/install tools

kernel: tools ## write the "Go (fedbayes)" kernel spec under .build/jupyter
	@kernels/install kernel

charts: ## ECharts from npm into the cache, for offline charts and figures
	@kernels/install charts

data: tools ## install the datasets from Debian packages into the data cache ($$FEDBAYES_DATA)
	@$(BIN)/fedbayes data install

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

test: setup test-go test-notebooks ## the tests: go vet, go test, and every notebook headless (fast mode)

test-go: vet
	FEDBAYES_REQUIRE_BROWSER=1 $(GO) test -timeout 40m ./...

test-notebooks: setup
	@FEDBAYES_FAST=1 kernels/run-notebooks $(NOTEBOOKS)

test-interrupt: setup ## Kernel > Interrupt on notebook 02's training cell, headless: a clean stop, no panics
	@/usr/bin/python3 kernels/check-interrupt

vet:
	$(GO) vet ./...

reproduce: tools charts data ## run the papers' presets (BUDGET=reduced|full, PAPERS=000,...) and write docs/reproduction.md
	$(BUILD)/bin/fedbayes reproduce -budget $${BUDGET:-reduced} $${PAPERS:+-papers $$PAPERS} -results $${RESULTS:-results/reproduce} -o docs/reproduction.md

bench: ## benchmarks (go test -bench, COUNT runs each); ends with one summary line per benchmark
	@mkdir -p $(BUILD)
	set -o pipefail; $(GO) test -run '^$$' -bench "$${BENCH:-.}" -benchtime=$${BENCHTIME:-20x} -count=$${COUNT:-5} \
	  -timeout 90m $${PKGS:-./fedbayes/...} | tee $(BUILD)/bench.txt
	@echo "== summary (median of $${COUNT:-5} runs) =="
	@$(GO) run ./fedbayes/internal/benchsummary < $(BUILD)/bench.txt

fmt:
	gofmt -l -w fedbayes

clean: ## remove .build (the data cache is kept)
	rm -rf $(BUILD)
