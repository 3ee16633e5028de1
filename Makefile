# Troupe — every entry point a developer or CI needs. `make setup` is idempotent.
SHELL := /bin/bash
.DEFAULT_GOAL := help
STAMP := node_modules/.troupe-setup
MOCHA := npx mocha

.PHONY: help setup console nats-server chromium run test test-unit test-integration bench lint typecheck clean

help:
	@echo "make setup | run | console | test | test-unit | test-integration | bench | lint | typecheck"

$(STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $(STAMP)

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

# The web console (SPEC §8), built from src/console into dist/console; rebuilt when a source changes.
CONSOLE_SOURCES := $(shell find src/console -type f 2>/dev/null)
dist/console/index.html: $(STAMP) $(CONSOLE_SOURCES)
	npx vite build --config src/console/vite.config.ts --logLevel warn

console: dist/console/index.html

setup: $(STAMP) console nats-server chromium

run: $(STAMP) console
	node bin/troupe.js serve --demo

typecheck: $(STAMP)
	npx tsc --noEmit -p .
	npx tsc --noEmit -p src/console

lint: $(STAMP)
	npx eslint --max-warnings 0 .

test-unit: $(STAMP)
	$(MOCHA) 'test/{model,blocks,sandbox,outbound,config,store,console}/**/*.test.ts'

test-integration: setup
	$(MOCHA) 'test/{contract,actors,cli,http,e2e,browser}/**/*.test.ts'

# The README's test command: typecheck, lint, then every suite in one mocha run.
test: setup typecheck lint
	$(MOCHA) 'test/**/*.test.ts'

bench: setup
	node --import tsx bench/index.ts

clean:
	rm -rf node_modules .troupe dist/console
