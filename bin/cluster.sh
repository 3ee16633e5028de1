#!/usr/bin/env bash
# `make cluster`: a local trial of several instances (docs/operations.md "Several instances").
# Starts nats-server with JetStream, makes the PostgreSQL database `troupe_cluster` where it is
# missing, and runs three `troupe serve` on ports 3001, 3002 and 3003, all on that NATS and that
# database, with one admin token and secret key (kept in .troupe-cluster/env). Ctrl-C stops all.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=.troupe-cluster
PORTS=(${CLUSTER_PORTS:-3001 3002 3003})
NATS_PORT=${CLUSTER_NATS_PORT:-4222}
PG_URL=${CLUSTER_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}
DB=troupe_cluster
mkdir -p "$DIR"
pids=()
stop() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop INT TERM EXIT

if [ ! -f "$DIR/env" ]; then
  # one admin token and one secret key for every instance: they must be the same everywhere
  printf 'TROUPE_ADMIN_TOKEN=%s\nTROUPE_SECRET_KEY=%s\n' "$(openssl rand -hex 24)" "$(openssl rand -hex 24)" > "$DIR/env"
  chmod 600 "$DIR/env"
fi
set -a; . "$DIR/env"; set +a

NATS_BIN=$(command -v nats-server || echo /usr/sbin/nats-server)
"$NATS_BIN" -a 127.0.0.1 -p "$NATS_PORT" -js -sd "$DIR/nats" >"$DIR/nats.log" 2>&1 &
pids+=($!)

if ! psql "$PG_URL" -Atqc "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1; then
  psql "$PG_URL" -qc "CREATE DATABASE $DB"
fi
export DATABASE_URL="${PG_URL%/*}/$DB"
export NATS_URL="nats://127.0.0.1:$NATS_PORT"

for i in "${!PORTS[@]}"; do
  port=${PORTS[$i]}
  TROUPE_PORT=$port TROUPE_INSTANCE_ID="local-$((i + 1))" TROUPE_DATA_DIR="$DIR/instance-$((i + 1))" \
    node bin/troupe.js serve >"$DIR/instance-$((i + 1)).log" 2>&1 &
  pids+=($!)
done

for port in "${PORTS[@]}"; do
  for _ in $(seq 1 60); do
    curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    sleep 0.5
  done
done
echo "three instances of one service: ${PORTS[*]/#/http://127.0.0.1:}"
echo "admin token: $TROUPE_ADMIN_TOKEN   (the instances: curl -H 'Authorization: Bearer …' http://127.0.0.1:${PORTS[0]}/api/cluster)"
echo "logs in $DIR/; Ctrl-C stops them all"
wait -n "${pids[@]}" || true
echo "a process of the cluster exited: stopping the others (see $DIR/*.log)"
