# Troupe — every entry point a developer or CI needs. `make setup` is idempotent.
SHELL := /bin/bash
.DEFAULT_GOAL := help
STAMP := node_modules/.troupe-setup
MOCHA := npx mocha

.PHONY: help setup build console nats-server postgresql chromium run cluster test test-unit test-integration test-chaos bench bench-peers lint typecheck clean

help:
	@echo "make setup | build | console | run | cluster | test | test-unit | test-integration | test-chaos | bench | bench-peers | lint | typecheck"

$(STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $(STAMP)

# The compiled build: tsc emits src/, actors/ and config/ to dist/ (gitignored), and bin/troupe.js
# runs dist/ with no TypeScript loader. The stamp depends on every source file, so an edit
# rebuilds before anything that runs bin/troupe.js; the compiled folders are wiped first so that
# no output of a deleted source is left behind to be imported (dist/console is the console's). node_modules only has to be there (order-only):
# the tests call `make build`, and a changed lockfile must not start an `npm ci` from a test.
BUILD_STAMP := dist/.build-stamp
BUILD_SOURCES := $(shell find src actors config -name '*.ts' -o -name '*.cjs' -o -name '*.cts' 2>/dev/null)

$(BUILD_STAMP): $(BUILD_SOURCES) tsconfig.json tsconfig.build.json | $(STAMP)
	@rm -rf dist/src dist/actors dist/config
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

# PostgreSQL is needed by the store tests (the contract suite runs on it) and by DATABASE_URL;
# install Debian's where absent and start its cluster when it is down. A fresh install gets the
# loopback trust rule these machines have (tests connect as postgres@127.0.0.1 without a password;
# TEST_DATABASE_URL points them elsewhere). Quiet when the server already answers.
postgresql:
	@command -v pg_ctlcluster >/dev/null 2>&1 || \
	  { echo "installing postgresql (apt)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) || \
	    { echo "could not install postgresql: run 'sudo apt-get install postgresql'"; exit 1; }; \
	    hba=/etc/postgresql/$$(ls /etc/postgresql | sort -V | tail -1)/main/pg_hba.conf; \
	    echo "trusting loopback connections in $$hba (a development and CI setup)"; \
	    sed -i '1i host all all 127.0.0.1/32 trust' "$$hba"; }
	@pg_isready -q -h 127.0.0.1 -p 5432 || \
	  { v=$$(ls /etc/postgresql | sort -V | tail -1); echo "starting PostgreSQL $$v"; \
	    pg_ctlcluster --skip-systemctl-redirect "$$v" main start || \
	    { echo "could not start PostgreSQL: run 'pg_ctlcluster $$v main start'"; exit 1; }; \
	    for i in $$(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && exit 0; sleep 0.5; done; \
	    echo "PostgreSQL did not answer on 127.0.0.1:5432"; exit 1; }

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

setup: $(STAMP) build console nats-server postgresql chromium

run: build console
	node bin/troupe.js serve --demo

# three instances of one service on one NATS and one PostgreSQL database, for a local trial
# (ports 3001-3003; docs/operations.md "Several instances")
cluster: $(STAMP) nats-server postgresql
	bin/cluster.sh

typecheck: $(STAMP)
	npx tsc --noEmit -p .
	npx tsc --noEmit -p src/console

# eslint, then import cycles with type-only imports counted (import-x/no-cycle skips those)
lint: $(STAMP)
	npx eslint --max-warnings 0 .
	node scripts/import-cycles.mjs

# test/store runs the store contract and the adapter's tests on PostgreSQL too
test-unit: build postgresql
	$(MOCHA) 'test/{model,blocks,sandbox,outbound,config,store,console}/**/*.test.ts'

test-integration: setup
	$(MOCHA) 'test/{contract,actors,cli,http,e2e,browser}/**/*.test.ts'

# three instances on one NATS and one PostgreSQL, one SIGKILLed every 3 s under load, for 45 s
# (about a minute; `make test` runs it too, with every other suite)
test-chaos: setup
	$(MOCHA) 'test/chaos/**/*.test.ts'

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
	rm -rf node_modules .troupe .troupe-cluster dist
