/**
 * Schema migrations, applied in order; `PRAGMA user_version` records how many ran. Never edit
 * a released migration: append a new one (a new entity = a new CREATE TABLE migration).
 * Opaque payloads are JSON in TEXT columns.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE workflows (
    id          TEXT PRIMARY KEY,
    version     INTEGER NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
  ) STRICT;
  CREATE TABLE workflow_versions (
    workflow_id TEXT NOT NULL,
    version     INTEGER NOT NULL,
    definition  TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (workflow_id, version)
  ) STRICT;
  CREATE TABLE deployments (
    workflow_id TEXT PRIMARY KEY,
    version     INTEGER NOT NULL,
    deployed_at TEXT NOT NULL,
    endpoint    TEXT
  ) STRICT;
  CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    workflow_id  TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    created_at   TEXT NOT NULL,
    revoked_at   TEXT,
    last_used_at TEXT
  ) STRICT;
  CREATE INDEX api_keys_by_workflow ON api_keys (workflow_id, created_at, id);
  CREATE TABLE executions (
    id           TEXT PRIMARY KEY,
    workflow_id  TEXT NOT NULL,
    version      INTEGER NOT NULL,
    status       TEXT NOT NULL,
    trigger      TEXT NOT NULL,
    input        TEXT NOT NULL,
    output       TEXT NOT NULL,
    error        TEXT,
    started_at   TEXT,
    ended_at     TEXT,
    duration_ms  REAL,
    context      TEXT,
    created_at   TEXT NOT NULL
  ) STRICT;
  CREATE INDEX executions_by_workflow ON executions (workflow_id, created_at DESC, id DESC);
  CREATE INDEX executions_by_workflow_status ON executions (workflow_id, status, created_at DESC, id DESC);
  CREATE INDEX executions_by_status ON executions (status, created_at, id);
  CREATE TABLE block_logs (
    execution_id  TEXT NOT NULL,
    block_id      TEXT NOT NULL,
    iteration_key TEXT NOT NULL,
    ord           REAL NOT NULL,
    status        TEXT NOT NULL,
    body          TEXT NOT NULL,
    PRIMARY KEY (execution_id, block_id, iteration_key)
  ) STRICT;
  CREATE INDEX block_logs_by_order ON block_logs (execution_id, ord);
  CREATE TABLE execution_events (
    execution_id TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    event        TEXT NOT NULL,
    data         TEXT NOT NULL,
    at           TEXT NOT NULL,
    PRIMARY KEY (execution_id, seq)
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE secrets (
    name       TEXT PRIMARY KEY,
    ciphertext TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT;
  `,
  // Events are written one row per execution per boundary batch (a JSON array), not one row per
  // event: most boundaries carry several events, and rows were the larger part of the write cost.
  `
  CREATE TABLE execution_event_batches (
    execution_id TEXT NOT NULL,
    first_seq    INTEGER NOT NULL,
    last_seq     INTEGER NOT NULL,
    body         TEXT NOT NULL,
    PRIMARY KEY (execution_id, first_seq)
  ) STRICT, WITHOUT ROWID;
  INSERT INTO execution_event_batches (execution_id, first_seq, last_seq, body)
    SELECT execution_id, seq, seq, json_array(json_object('seq', seq, 'event', event, 'data', json(data), 'at', at))
    FROM execution_events;
  DROP TABLE execution_events;
  `,
  // Webhooks (SPEC §4.3): the path index of deployed workflows, and every accepted delivery,
  // written before the 202 so an accepted event survives a crash before its execution starts.
  `
  CREATE TABLE webhook_routes (
    path        TEXT PRIMARY KEY,
    workflow_id TEXT NOT NULL,
    trigger_id  TEXT NOT NULL
  ) STRICT;
  CREATE INDEX webhook_routes_by_workflow ON webhook_routes (workflow_id);
  CREATE TABLE webhook_events (
    id           TEXT PRIMARY KEY,
    workflow_id  TEXT NOT NULL,
    trigger_id   TEXT NOT NULL,
    version      INTEGER NOT NULL,
    delivery_id  TEXT,
    payload      TEXT NOT NULL,
    received_at  TEXT NOT NULL,
    status       TEXT NOT NULL,
    execution_id TEXT NOT NULL,
    announced    INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  CREATE INDEX webhook_events_by_announced ON webhook_events (announced, received_at);
  CREATE INDEX webhook_events_by_delivery ON webhook_events (workflow_id, trigger_id, delivery_id, received_at);
  CREATE INDEX webhook_events_by_status ON webhook_events (status, received_at);
  CREATE INDEX webhook_events_by_workflow ON webhook_events (workflow_id);
  INSERT OR IGNORE INTO webhook_routes (path, workflow_id, trigger_id)
    SELECT json_extract(t.value, '$.path'), d.workflow_id, json_extract(t.value, '$.id')
    FROM deployments d
    JOIN workflow_versions v ON v.workflow_id = d.workflow_id AND v.version = d.version,
    json_each(v.definition, '$.triggers') t
    WHERE json_extract(t.value, '$.type') = 'webhook';
  `,
  // Schedules (SPEC §4.5): the schedules of deployed workflows, and one row per due time fired
  // or skipped: its primary key is what lets only one instance fire a due time.
  `
  CREATE TABLE schedules (
    workflow_id TEXT NOT NULL,
    trigger_id  TEXT NOT NULL,
    version     INTEGER NOT NULL,
    spec        TEXT NOT NULL,
    active_from TEXT NOT NULL,
    last_due_at TEXT,
    PRIMARY KEY (workflow_id, trigger_id)
  ) STRICT;
  CREATE TABLE schedule_fires (
    workflow_id  TEXT NOT NULL,
    trigger_id   TEXT NOT NULL,
    due_at       TEXT NOT NULL,
    execution_id TEXT,
    outcome      TEXT NOT NULL,
    fired_at     TEXT NOT NULL,
    PRIMARY KEY (workflow_id, trigger_id, due_at)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX schedule_fires_by_outcome ON schedule_fires (outcome, fired_at);
  CREATE TABLE scheduler_heartbeat (
    id TEXT PRIMARY KEY,
    at TEXT NOT NULL
  ) STRICT;
  INSERT OR IGNORE INTO schedules (workflow_id, trigger_id, version, spec, active_from, last_due_at)
    SELECT d.workflow_id, json_extract(t.value, '$.id'), d.version,
      json_extract(t.value, '$.cron') || '|' || coalesce(json_extract(t.value, '$.timezone'), 'UTC'),
      strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NULL
    FROM deployments d
    JOIN workflow_versions v ON v.workflow_id = d.workflow_id AND v.version = d.version,
    json_each(v.definition, '$.triggers') t
    WHERE json_extract(t.value, '$.type') = 'schedule';
  `,
  // Chat (SPEC §4.4): one chat per workflow, its subdomain unique; conversations with their
  // messages one row each (an append is an insert, in order by seq); sign-in codes by
  // (subdomain, email), with the workflow that held the subdomain when the code was sent.
  `
  CREATE TABLE chat_deployments (
    workflow_id TEXT PRIMARY KEY,
    subdomain   TEXT NOT NULL UNIQUE,
    body        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
  ) STRICT;
  CREATE TABLE chat_conversations (
    id          TEXT PRIMARY KEY,
    workflow_id TEXT NOT NULL,
    subdomain   TEXT NOT NULL,
    owner       TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
  ) STRICT;
  CREATE INDEX chat_conversations_by_workflow ON chat_conversations (workflow_id);
  CREATE TABLE chat_messages (
    conversation_id TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    workflow_id     TEXT NOT NULL,
    body            TEXT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX chat_messages_by_workflow ON chat_messages (workflow_id);
  CREATE TABLE chat_codes (
    subdomain   TEXT NOT NULL,
    email       TEXT NOT NULL,
    workflow_id TEXT,
    code_hash   TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    attempts    INTEGER NOT NULL,
    PRIMARY KEY (subdomain, email)
  ) STRICT;
  CREATE INDEX chat_codes_by_workflow ON chat_codes (workflow_id);
  `,
  // Conversation memory (memory block, agent memory): one row per remembered message, keyed
  // and ordered by (workflow, conversation, seq), which also serves listAll and the workflow's
  // delete. `memory_conversations` holds each conversation's last seq, so a seq is never used
  // twice, even after a trim or a delete emptied the conversation.
  `
  CREATE TABLE memories (
    workflow_id     TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    role            TEXT NOT NULL,
    content         TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    PRIMARY KEY (workflow_id, conversation_id, seq)
  ) STRICT;
  CREATE TABLE memory_conversations (
    workflow_id     TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    last_seq        INTEGER NOT NULL,
    PRIMARY KEY (workflow_id, conversation_id)
  ) STRICT, WITHOUT ROWID;
  `,
  // The executions list across workflows (SPEC §4.1, the console): newest first, alone or by
  // trigger type, whose value is read from the trigger's JSON by an expression index (by status,
  // executions_by_status serves it read backwards).
  `
  CREATE INDEX executions_by_created ON executions (created_at DESC, id DESC);
  CREATE INDEX executions_by_trigger_type ON executions (json_extract(trigger, '$.type'), created_at DESC, id DESC);
  `,
  // Chat ownership and sign-out (SPEC §4.4): a conversation's token hash, and the sessions that
  // sign-out ends on the server (by the hash of the id their cookie carries). Sign-in codes are
  // per client too, so nobody else's requests or guesses touch a visitor's code: the table is
  // made anew (codes live 15 minutes; one pending across the upgrade is asked for again).
  `
  ALTER TABLE chat_conversations ADD COLUMN token_hash TEXT;
  DROP TABLE chat_codes;
  CREATE TABLE chat_codes (
    subdomain   TEXT NOT NULL,
    email       TEXT NOT NULL,
    client      TEXT NOT NULL,
    workflow_id TEXT,
    code_hash   TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    attempts    INTEGER NOT NULL,
    PRIMARY KEY (subdomain, email, client)
  ) STRICT;
  CREATE INDEX chat_codes_by_workflow ON chat_codes (workflow_id);
  CREATE TABLE chat_sessions (
    id_hash     TEXT PRIMARY KEY,
    workflow_id TEXT NOT NULL,
    subdomain   TEXT NOT NULL,
    email       TEXT,
    expires_at  TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX chat_sessions_by_workflow ON chat_sessions (workflow_id);
  CREATE INDEX chat_sessions_by_expiry ON chat_sessions (expires_at);
  `,
  // Due times of waiting blocks (docs/waiting.md): one row per waiting block run, polled by due time.
  `
  CREATE TABLE waits (
    execution_id TEXT NOT NULL,
    key          TEXT NOT NULL,
    workflow_id  TEXT NOT NULL,
    since        TEXT NOT NULL,
    due_at       TEXT NOT NULL,
    PRIMARY KEY (execution_id, key)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX waits_by_due ON waits (due_at, execution_id, key);
  `,
  // Approval blocks (docs/waiting.md): one row per block run; the link's token only as its hash.
  `
  CREATE TABLE approvals (
    execution_id TEXT NOT NULL,
    key          TEXT NOT NULL,
    block_id     TEXT NOT NULL,
    workflow_id  TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    message      TEXT NOT NULL,
    since        TEXT NOT NULL,
    expires_at   TEXT,
    decision     TEXT,
    data         TEXT,
    decided_at   TEXT,
    decided_by   TEXT,
    PRIMARY KEY (execution_id, key)
  ) STRICT;
  `,
  // Cheaper writes of execution records (issue 22: a commit's cost is a WAL frame per B-tree page
  // it touches; bench/peers/record-probe.ts counts them).
  // - The newest-first indexes were declared DESC, so every new execution went in at their left
  //   edge, where a full page splits among its neighbours; ascending, it is appended at the right
  //   edge, and newest first is the same index read backwards: ~1 page per index per commit less.
  // - The status indexes leave completed executions out (most of them: S1's every one): a list of
  //   completed ones reads the workflow's or the global index backwards, which carry the status so
  //   that the filter needs no table row; the other statuses (running ones for recovery, failed
  //   ones) keep an index of their own. A query names `status <> 'completed'` to use one (the
  //   planner takes a partial index only for a term of its WHERE written out; executions.ts).
  // - Logs lose their index by order: an execution's logs are read through the primary key
  //   (execution first) and sorted, and the index was one more B-tree written per log.
  `
  DROP INDEX executions_by_workflow;
  DROP INDEX executions_by_workflow_status;
  DROP INDEX executions_by_status;
  DROP INDEX executions_by_created;
  DROP INDEX executions_by_trigger_type;
  DROP INDEX block_logs_by_order;
  CREATE INDEX executions_by_workflow ON executions (workflow_id, created_at, id, status);
  CREATE INDEX executions_by_created ON executions (created_at, id, status);
  CREATE INDEX executions_by_trigger_type ON executions (json_extract(trigger, '$.type'), created_at, id);
  CREATE INDEX executions_by_workflow_status ON executions (workflow_id, status, created_at, id) WHERE status <> 'completed';
  CREATE INDEX executions_by_status ON executions (status, created_at, id) WHERE status <> 'completed';
  `,
];
