# engine: the two commands a new user needs are `make demo` and `make test`.

GO      ?= go
BIN     := bin/engine
AGENT   := bin/engine-agent
GOFILES  = $(shell find . -name '*.go' -not -path './bin/*')

.PHONY: build demo test deps demo-deps vet fmt-check tidy-check lint proto bench bench-check stress fuzz gym load clean

STATICCHECK_VERSION := v0.8.2
BENCHSTAT_VERSION   := v0.0.0-20260908200009-22c9c6c9d4da

# BUILD_ENV is the environment the binaries are built in. CGO_ENABLED=0
# makes them static: nothing in them needs C (os/user and DNS have pure Go
# versions), and a static binary skips the dynamic loader, ~1 ms of CPU in
# every short command (docs/design/api.md, "Short-lived opens").
BUILD_ENV ?= CGO_ENABLED=0

## build: bin/engine (the memory commands) and bin/engine-agent (the agent loop and the built-in plugins; engine runs it for run, demo, doctor, plugins)
build:
	$(BUILD_ENV) $(GO) build -o $(BIN) ./cmd/engine
	$(BUILD_ENV) $(GO) build -o $(AGENT) ./cmd/engine-agent

## demo: build, install chromium if missing, and run the demo on embedded defaults
demo: demo-deps build
	./$(BIN) demo

## test: go.mod tidy, go vet, gofmt, staticcheck, every test with the race detector, then the gym (make gym)
test: deps tidy-check vet fmt-check lint
	GORACE=atexit_sleep_ms=0 $(GO) test -race -count=1 -timeout 40m ./...
	$(MAKE) gym

## deps: install what the tests need where it is missing (chromium, a C compiler, protoc, generators)
deps:
	sh scripts/install-deps.sh test

## demo-deps: install what the demo needs where it is missing (a browser)
demo-deps:
	sh scripts/install-deps.sh demo

## tidy-check: go mod tidy would change nothing
tidy-check:
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }

vet:
	$(GO) vet ./...

fmt-check:
	@out="$$(gofmt -l $(GOFILES))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## lint: staticcheck, pinned, installed into bin/tools when missing
lint:
	@[ -x bin/tools/staticcheck ] && bin/tools/staticcheck -version | grep -q "$(STATICCHECK_VERSION:v%=%)" || \
		GOBIN="$(CURDIR)/bin/tools" $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	bin/tools/staticcheck ./...

## proto: regenerate the plugin protocol's Go code from plugins/proto/*.proto
proto: deps
	sh scripts/gen-proto.sh

## bench: every benchmark once, the lesson ones up to 1M lessons (stores cached in ENGINE_BENCH_CACHE), then the recall report (scripts/bench-recall.sh) in BENCH_OUT
BENCH_OUT ?= bin/bench
bench:
	mkdir -p $(BENCH_OUT)
	{ ENGINE_BENCH_1M=1 $(GO) test -run '^$$' -bench . -benchmem -timeout 0 ./...; echo $$? >$(BENCH_OUT)/rc; } | tee $(BENCH_OUT)/bench.txt
	exit $$(cat $(BENCH_OUT)/rc)
	GO=$(GO) sh scripts/bench-recall.sh $(BENCH_OUT)/bench-recall.md $(BENCH_OUT)/bench.txt

## bench-check: the key benchmarks here and on the commit before (BENCH_BASE=<rev> for another), in turns; fails on a significant slowdown of more than 10% (scripts/bench-check.sh)
bench-check:
	@[ -x bin/tools/benchstat ] && $(GO) version -m bin/tools/benchstat | grep -q "$(BENCHSTAT_VERSION)" || \
		GOBIN="$(CURDIR)/bin/tools" $(GO) install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)
	GO=$(GO) BENCHSTAT=bin/tools/benchstat bash scripts/bench-check.sh

## stress: the timing-exposed tests, 20 rounds, with every core kept busy (STRESS_COUNT, STRESS_RUN, STRESS_PKGS)
stress: deps
	sh scripts/stress.sh

## load: a served memory under 20 clients' mixed load (half writes) at LOAD_LESSONS stored lessons, killed LOAD_KILLS times with SIGKILL and started again; fails if an acknowledged write is missing (scripts/load)
LOAD_LESSONS ?= 1000,100000
LOAD_REQUESTS ?= 20000
LOAD_KILLS ?= 1
load: build
	$(GO) run ./scripts/load -engine $(BIN) -lessons $(LOAD_LESSONS) -requests $(LOAD_REQUESTS) -kills $(LOAD_KILLS)

## fuzz: every fuzz target for FUZZTIME each (default 10s), one after another (scripts/fuzz.sh)
FUZZTIME ?= 10s
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) sh scripts/fuzz.sh

## gym: build, then run the bundled gym of trap sites with the scripted model and fail unless warm and replay make fewer errors and LLM calls than no memory and warm succeeds on every changed variant (GYM_OUT: the output dir, default a new temporary one; GYM_FLAGS: more eval flags)
gym: build
	@out="$${GYM_OUT:-$$(mktemp -d)}"; echo "gym: report in $$out/report.html"; \
	./$(BIN) eval --suite gym --llm scripted --browser chromedp --repeats 1 --warm-runs 2 --change-after 2 --parallel 2 \
		--out "$$out" $(GYM_FLAGS) \
		--fail-if 'warm.errors>=no-memory.errors' --fail-if 'warm.llm_calls>=no-memory.llm_calls' \
		--fail-if 'replay.errors>=no-memory.errors' --fail-if 'replay.llm_calls>=no-memory.llm_calls' \
		--fail-if 'warm@changed.success<1'

clean:
	rm -rf bin
