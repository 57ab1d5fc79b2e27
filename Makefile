# relay's build. `make test` is what CI runs; `make bench` and `make soak`
# hold what is too slow for it.
GO       ?= go
TAGS     := sqlite_fts5
PKG      := ./...
# Install where a new user's shell finds it: /usr/local/bin when we may write
# there (root), else ~/.local/bin (on PATH in most login shells).
BINDIR   ?= $(shell if [ -w /usr/local/bin ]; then echo /usr/local/bin; else echo $(HOME)/.local/bin; fi)
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X github.com/relayhq/relay/internal/cli.Version=$(VERSION)

.PHONY: build install test test-short cross bench soak lint fmt clean

# build makes the pair that install puts on PATH: bin/relay, the lean
# build (tag lean, no cgo), which wraps agents and joins a hub, and
# bin/relay-hub, the full one (the default build: hub, dashboard, memory
# store, MCP server), which the lean relay runs for every other command
# (docs/performance.md). `go install ./cmd/relay` still makes the full
# all-in-one relay.
build:
	CGO_ENABLED=0 $(GO) build -tags '$(TAGS) lean' -ldflags '$(LDFLAGS)' -o bin/relay ./cmd/relay
	$(GO) build -tags $(TAGS) -ldflags '$(LDFLAGS)' -o bin/relay-hub ./cmd/relay

install: build
	@mkdir -p $(BINDIR)
	install -m 0755 bin/relay-hub $(BINDIR)/relay-hub
	install -m 0755 bin/relay $(BINDIR)/relay
	@case ":$$PATH:" in *":$(BINDIR):"*) echo "installed $(BINDIR)/relay (and relay-hub beside it)";; \
	  *) echo "installed $(BINDIR)/relay (and relay-hub beside it), but $(BINDIR) is not on your PATH: add it, or run $(BINDIR)/relay";; esac

test:
	$(GO) vet -tags $(TAGS) $(PKG)
	$(GO) test -race -count=1 -tags $(TAGS) -timeout 45m $(PKG)

# cross compiles relay and vets every package for macOS (Intel and Apple
# silicon) with cgo off: a check that nothing Linux-only leaks into a
# macOS build. It runs nothing; the binary is thrown away (with cgo off the
# SQLite driver is a stub, so such a binary could not open the memory store).
CROSS    := darwin/amd64 darwin/arm64

cross:
	@set -e; for t in $(CROSS); do \
	  os=$${t%/*}; arch=$${t#*/}; echo "cross $$os/$$arch"; \
	  GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build -tags $(TAGS) -o /dev/null ./cmd/relay; \
	  GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build -tags '$(TAGS) lean' -o /dev/null ./cmd/relay; \
	  GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) vet -tags $(TAGS) $(PKG); \
	done

test-short:
	$(GO) test -tags $(TAGS) -short $(PKG)

# bench measures bin/relay, the binary users run: the end-to-end benchmarks
# take it through RELAY_E2E_RELAY instead of building one with the race
# detector. Its last step prints the real CLIs' round trip (Claude Code,
# Codex, Gemini CLI; skipped when not installed) as a table beside the goal,
# and what a wrapper costs while each of them thinks beside script(1)
# (BenchmarkThinkingCPU; RELAY_BENCH_AGAINST=OTHER/bin/relay adds another
# relay binary to it).
# internal/tools/bench/cost prints what one wrapper costs its machine (CPU with a
# spinner and idle, memory, start-up, pass-through through a pty, a hundred
# shells on one hub), each beside its bar.
# RELAY_BENCH_1M adds the memory searches' 1,000,000-memory cases (their
# files take minutes and about 4 GB to build the first time, cached in the
# temp folder).
BENCH_E2E := RELAY_E2E_RELAY=$(CURDIR)/bin/relay RELAY_BENCH_1M=1
CLI_BENCH := ^(BenchmarkCLIRoundTrip|BenchmarkThinkingCPU)$$

bench: build
	$(BENCH_E2E) $(GO) test -tags $(TAGS) -run '^$$' -bench . -skip '$(CLI_BENCH)' -benchmem -timeout 120m $(PKG)
	$(GO) run -tags $(TAGS) ./internal/tools/bench/passthrough -relay bin/relay
	$(GO) run -tags $(TAGS) ./internal/tools/bench/latency -relay bin/relay
	$(GO) run -tags $(TAGS) ./internal/tools/bench/cost -relay bin/relay
	$(BENCH_E2E) $(GO) test -tags $(TAGS) -run '^$$' -bench '$(CLI_BENCH)' -benchtime 1x -timeout 45m ./internal/e2e

soak:
	$(GO) test -race -tags '$(TAGS) soak' -timeout 60m -run Soak $(PKG)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags $(TAGS) $(PKG)
	@command -v staticcheck >/dev/null || $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2
	staticcheck -tags $(TAGS) $(PKG)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
