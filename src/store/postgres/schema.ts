/**
 * PostgreSQL schema migrations, applied in order at start (db.ts); `troupe_schema_version`
 * records each one applied. Never edit a released migration: append a new one.
 *
 * Text columns use the "C" collation so that ordering and cursor comparisons are byte order,
 * whatever the database's default collation: the same order as SQLite and MongoDB, and ISO
 * timestamps (stored as text, as the other adapters do) sort as time. Opaque payloads are JSON
 * text rather than jsonb: jsonb reorders keys and drops duplicates, and callers get back
 * exactly what they wrote.
 */
const T = 'TEXT COLLATE "C"';

export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE workflows (
    id          ${T} PRIMARY KEY,
    version     INTEGER NOT NULL,
    created_at  ${T} NOT NULL,
    updated_at  ${T} NOT NULL
  );
  CREATE TABLE workflow_versions (
    workflow_id ${T} NOT NULL,
    version     INTEGER NOT NULL,
    definition  TEXT NOT NULL,
    created_at  ${T} NOT NULL,
    PRIMARY KEY (workflow_id, version)
  );
  CREATE TABLE deployments (
    workflow_id ${T} PRIMARY KEY,
    version     INTEGER NOT NULL,
    deployed_at ${T} NOT NULL,
    endpoint    TEXT
  );
  CREATE TABLE api_keys (
    id           ${T} PRIMARY KEY,
    workflow_id  ${T} NOT NULL,
    prefix       TEXT NOT NULL,
    hash         ${T} NOT NULL UNIQUE,
    created_at   ${T} NOT NULL,
    revoked_at   ${T},
    last_used_at ${T}
  );
  CREATE INDEX api_keys_by_workflow ON api_keys (workflow_id, created_at, id);
  CREATE TABLE executions (
    id           ${T} PRIMARY KEY,
    workflow_id  ${T} NOT NULL,
    version      INTEGER NOT NULL,
    status       ${T} NOT NULL,
    trigger      TEXT NOT NULL,
    input        TEXT NOT NULL,
    output       TEXT NOT NULL,
    error        TEXT,
    started_at   ${T},
    ended_at     ${T},
    duration_ms  DOUBLE PRECISION,
    context      TEXT,
    created_at   ${T} NOT NULL
  );
  CREATE INDEX executions_by_workflow ON executions (workflow_id, created_at DESC, id DESC);
  CREATE INDEX executions_by_workflow_status ON executions (workflow_id, status, created_at DESC, id DESC);
  CREATE INDEX executions_by_status ON executions (status, created_at, id);
  CREATE TABLE block_logs (
    execution_id  ${T} NOT NULL,
    block_id      ${T} NOT NULL,
    iteration_key ${T} NOT NULL,
    ord           DOUBLE PRECISION NOT NULL,
    status        TEXT NOT NULL,
    body          TEXT NOT NULL,
    PRIMARY KEY (execution_id, block_id, iteration_key)
  );
  CREATE INDEX block_logs_by_order ON block_logs (execution_id, ord);
  CREATE TABLE execution_events (
    execution_id ${T} NOT NULL,
    seq          BIGINT NOT NULL,
    event        TEXT NOT NULL,
    data         TEXT NOT NULL,
    at           ${T} NOT NULL,
    PRIMARY KEY (execution_id, seq)
  );
  CREATE TABLE secrets (
    name       ${T} PRIMARY KEY,
    ciphertext TEXT NOT NULL,
    updated_at ${T} NOT NULL
  );
  CREATE TABLE webhook_routes (
    path        ${T} PRIMARY KEY,
    workflow_id ${T} NOT NULL,
    trigger_id  ${T} NOT NULL
  );
  CREATE INDEX webhook_routes_by_workflow ON webhook_routes (workflow_id);
  CREATE TABLE webhook_events (
    id           ${T} PRIMARY KEY,
    workflow_id  ${T} NOT NULL,
    trigger_id   ${T} NOT NULL,
    version      INTEGER NOT NULL,
    delivery_id  ${T},
    payload      TEXT NOT NULL,
    received_at  ${T} NOT NULL,
    status       ${T} NOT NULL,
    execution_id ${T} NOT NULL,
    announced    BOOLEAN NOT NULL DEFAULT false
  );
  CREATE INDEX webhook_events_by_announced ON webhook_events (announced, received_at, id);
  CREATE INDEX webhook_events_by_delivery ON webhook_events (workflow_id, trigger_id, delivery_id, received_at);
  CREATE INDEX webhook_events_by_status ON webhook_events (status, received_at, id);
  CREATE TABLE schedules (
    workflow_id ${T} NOT NULL,
    trigger_id  ${T} NOT NULL,
    version     INTEGER NOT NULL,
    spec        TEXT NOT NULL,
    active_from ${T} NOT NULL,
    last_due_at ${T},
    PRIMARY KEY (workflow_id, trigger_id)
  );
  CREATE TABLE schedule_fires (
    workflow_id  ${T} NOT NULL,
    trigger_id   ${T} NOT NULL,
    due_at       ${T} NOT NULL,
    execution_id ${T},
    outcome      ${T} NOT NULL,
    fired_at     ${T} NOT NULL,
    PRIMARY KEY (workflow_id, trigger_id, due_at)
  );
  CREATE INDEX schedule_fires_by_outcome ON schedule_fires (outcome, fired_at);
  CREATE INDEX schedule_fires_by_due ON schedule_fires (due_at);
  CREATE TABLE scheduler_heartbeat (
    id ${T} PRIMARY KEY,
    at ${T} NOT NULL
  );
  CREATE TABLE chat_deployments (
    workflow_id ${T} PRIMARY KEY,
    subdomain   ${T} NOT NULL UNIQUE,
    body        TEXT NOT NULL,
    created_at  ${T} NOT NULL,
    updated_at  ${T} NOT NULL
  );
  CREATE TABLE chat_conversations (
    id          ${T} PRIMARY KEY,
    workflow_id ${T} NOT NULL,
    subdomain   ${T} NOT NULL,
    owner       TEXT,
    created_at  ${T} NOT NULL,
    updated_at  ${T} NOT NULL
  );
  CREATE INDEX chat_conversations_by_workflow ON chat_conversations (workflow_id);
  CREATE TABLE chat_messages (
    conversation_id ${T} NOT NULL,
    seq             INTEGER NOT NULL,
    workflow_id     ${T} NOT NULL,
    body            TEXT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
  );
  CREATE INDEX chat_messages_by_workflow ON chat_messages (workflow_id);
  CREATE TABLE chat_codes (
    subdomain   ${T} NOT NULL,
    email       ${T} NOT NULL,
    workflow_id ${T},
    code_hash   TEXT NOT NULL,
    expires_at  ${T} NOT NULL,
    attempts    INTEGER NOT NULL,
    PRIMARY KEY (subdomain, email)
  );
  CREATE INDEX chat_codes_by_workflow ON chat_codes (workflow_id);
  CREATE TABLE memories (
    workflow_id     ${T} NOT NULL,
    conversation_id ${T} NOT NULL,
    seq             BIGINT NOT NULL,
    role            TEXT NOT NULL,
    content         TEXT NOT NULL,
    created_at      ${T} NOT NULL,
    PRIMARY KEY (workflow_id, conversation_id, seq)
  );
  CREATE TABLE memory_conversations (
    workflow_id     ${T} NOT NULL,
    conversation_id ${T} NOT NULL,
    last_seq        BIGINT NOT NULL,
    PRIMARY KEY (workflow_id, conversation_id)
  );
  `,
  // The executions list across workflows (SPEC §4.1): newest first, alone or by trigger type
  // (by status, executions_by_status serves it read backwards). The adapter writes trigger_type
  // (rows.ts); rows of before are filled here, but for a trigger holding \u0000, which the
  // server's JSON functions refuse.
  `
  ALTER TABLE executions ADD COLUMN trigger_type ${T};
  UPDATE executions SET trigger_type = trigger::json ->> 'type' WHERE strpos(trigger, '\\u0000') = 0;
  CREATE INDEX executions_by_created ON executions (created_at DESC, id DESC);
  CREATE INDEX executions_by_trigger_type ON executions (trigger_type, created_at DESC, id DESC);
  `,
];
