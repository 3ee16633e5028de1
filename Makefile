# Troupe — every entry point a developer or CI needs. `make setup` is idempotent.
SHELL := /bin/bash
.DEFAULT_GOAL := help
STAMP := node_modules/.troupe-setup
MOCHA := npx mocha

.PHONY: help setup build nats-server chromium run test test-unit test-integration bench bench-peers lint typecheck clean

help:
	@echo "make setup | build | run | test | test-unit | test-integration | bench | bench-peers | lint | typecheck"

$(STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $(STAMP)

# The compiled build: tsc emits src/, actors/ and config/ to dist/ (gitignored), and bin/troupe.js
# runs dist/ with no TypeScript loader. The stamp depends on every source file, so an edit
# rebuilds before anything that runs bin/troupe.js; dist/ is wiped first so that no output of a
# deleted source is left behind to be imported. node_modules only has to be there (order-only):
# the tests call `make build`, and a changed lockfile must not start an `npm ci` from a test.
BUILD_STAMP := dist/.build-stamp
BUILD_SOURCES := $(shell find src actors config -name '*.ts' -o -name '*.cjs' -o -name '*.cts' 2>/dev/null)

$(BUILD_STAMP): $(BUILD_SOURCES) tsconfig.json tsconfig.build.json | $(STAMP)
	@rm -rf dist
	npx tsc -p tsconfig.build.json
	@cp src/store/sqlite/*.cjs dist/src/store/sqlite/
	@touch $(BUILD_STAMP)

build: $(BUILD_STAMP)

# nats-server is only needed by tests and by distributed mode; install it from Debian if absent.
nats-server:
	@command -v nats-server >/dev/null 2>&1 || test -x /usr/sbin/nats-server || \
	  { echo "installing nats-server (apt)"; \
	    (apt-get update -qq && apt-get install -y -qq nats-server) || \
	    { echo "could not install nats-server: run 'sudo apt-get install nats-server'"; exit 1; }; }

# chromium is only needed by the browser tests (test/browser, driven by playwright-core); install
# Debian's build if absent.
chromium:
	@test -x /usr/bin/chromium || \
	  { echo "installing chromium (apt)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
	    { echo "could not install chromium: run 'sudo apt-get install chromium' (needed by test/browser)"; exit 1; }; }

setup: $(STAMP) build nats-server chromium

run: build
	node bin/troupe.js serve --demo

typecheck: $(STAMP)
	npx tsc --noEmit -p .

lint: $(STAMP)
	npx eslint --max-warnings 0 .

test-unit: build
	$(MOCHA) 'test/{model,blocks,sandbox,outbound,config,store}/**/*.test.ts'

test-integration: setup
	$(MOCHA) 'test/{contract,actors,cli,http,e2e,browser}/**/*.test.ts'

# The README's test command: typecheck, lint, then every suite in one mocha run.
test: setup typecheck lint
	$(MOCHA) 'test/**/*.test.ts'

bench: setup
	node --import tsx bench/index.ts

# Node-RED side by side (S1, S2, S3f, S4): Node-RED installed into $$TMPDIR/troupe-bench-peers
# (never into the project), troupe serve from dist/ (embedded, then NATS). Loopback, bounded.
bench-peers: build nats-server
	node --import tsx bench/peers/run.ts

clean:
	rm -rf node_modules .troupe dist
