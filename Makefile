# Troupe — every entry point a developer or CI needs. `make setup` is idempotent.
SHELL := /bin/bash
.DEFAULT_GOAL := help
STAMP := node_modules/.troupe-setup
MOCHA := npx mocha

.PHONY: help setup nats-server postgresql chromium run cluster test test-unit test-integration test-chaos bench lint typecheck clean

help:
	@echo "make setup | run | cluster | test | test-unit | test-integration | test-chaos | bench | lint | typecheck"

$(STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $(STAMP)

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

setup: $(STAMP) nats-server postgresql chromium

run: $(STAMP)
	node bin/troupe.js serve --demo

# three instances of one service on one NATS and one PostgreSQL database, for a local trial
# (ports 3001-3003; docs/operations.md "Several instances")
cluster: $(STAMP) nats-server postgresql
	bin/cluster.sh

typecheck: $(STAMP)
	npx tsc --noEmit -p .

lint: $(STAMP)
	npx eslint --max-warnings 0 .

# test/store runs the store contract and the adapter's tests on PostgreSQL too
test-unit: $(STAMP) postgresql
	$(MOCHA) 'test/{model,blocks,sandbox,outbound,config,store}/**/*.test.ts'

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

clean:
	rm -rf node_modules .troupe .troupe-cluster
