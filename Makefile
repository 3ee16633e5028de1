# Troupe — every entry point a developer or CI needs. `make setup` is idempotent.
SHELL := /bin/bash
.DEFAULT_GOAL := help
STAMP := node_modules/.troupe-setup
MOCHA := npx mocha

.PHONY: help setup nats-server chromium run test test-unit test-integration bench lint typecheck clean

help:
	@echo "make setup | run | test | test-unit | test-integration | bench | lint | typecheck"

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

setup: $(STAMP) nats-server chromium

run: $(STAMP)
	node bin/troupe.js serve --demo

typecheck: $(STAMP)
	npx tsc --noEmit -p .

lint: $(STAMP)
	npx eslint --max-warnings 0 .

test-unit: $(STAMP)
	$(MOCHA) 'test/{model,blocks,sandbox,outbound,config,store}/**/*.test.ts'

test-integration: setup
	$(MOCHA) 'test/{contract,actors,cli,http,e2e,browser}/**/*.test.ts'

# The README's test command: typecheck, lint, then every suite in one mocha run.
test: setup typecheck lint
	$(MOCHA) 'test/**/*.test.ts'

bench: setup
	node --import tsx bench/index.ts

clean:
	rm -rf node_modules .troupe
