/** The store port, continued: what triggers keep (webhooks, schedules, chat deployments). */

// ---- webhooks -------------------------------------------------------------------------------

/** Where `POST /webhooks/{path}` leads: an index kept at deploy time, checked against the pinned version. */
export interface WebhookRoute {
  path: string;
  workflowId: string;
  triggerId: string;
}

export type WebhookEventStatus = 'pending' | 'started';

/** One accepted webhook delivery: written before the 202, so an accepted event is never lost. */
export interface WebhookEvent {
  id: string;
  workflowId: string;
  triggerId: string;
  /** the deployed version it was accepted for: it runs on that version, even after a redeploy */
  version: number;
  /** the provider's delivery id (de-duplication key), null when the request carried none */
  deliveryId: string | null;
  /** the starter's input: `{ body, headers, query, method }` */
  payload: unknown;
  receivedAt: string;
  status: WebhookEventStatus;
  /** chosen at accept time: starting it is creating this execution, which can happen only once */
  executionId: string;
  /** published on the bus (SPEC §5); the sweep publishes the ones that are not */
  announced: boolean;
}

export interface WebhookRepo {
  /**
   * Replaces the workflow's routes. TroupeError CONFLICT (nothing written, details.path) when a
   * path is routed to another workflow.
   */
  putRoutes(workflowId: string, routes: readonly { path: string; triggerId: string }[]): Promise<void>;
  findRoute(path: string): Promise<WebhookRoute | null>;
  deleteRoutes(workflowId: string): Promise<number>;
  /**
   * Stores a pending event unless the same (workflowId, triggerId, deliveryId) was accepted at
   * or after `dedupSince`: then nothing is written and the earlier event is returned with
   * `duplicate: true`. Events without a delivery id are never duplicates.
   */
  accept(event: WebhookEvent, dedupSince: string): Promise<{ event: WebhookEvent; duplicate: boolean }>;
  /** pending → started (its execution exists); false when it was not pending */
  markStarted(eventId: string): Promise<boolean>;
  markAnnounced(eventId: string): Promise<void>;
  /** events not yet announced, received at or before `receivedBefore`, oldest first */
  listUnannounced(receivedBefore: string, limit: number): Promise<WebhookEvent[]>;
  get(eventId: string): Promise<WebhookEvent | null>;
  /** pending events received at or before `receivedBefore`, oldest first */
  listPending(receivedBefore: string, limit: number): Promise<WebhookEvent[]>;
  /** deletes started events received before `before` (their delivery ids stop de-duplicating); returns how many */
  purgeStarted(before: string): Promise<number>;
}

// ---- schedules ------------------------------------------------------------------------------

/** A schedule trigger of a deployed workflow: kept at deploy time, read by every instance's scheduler. */
export interface ScheduleEntry {
  workflowId: string;
  triggerId: string;
  /** `cron|timezone` as deployed */
  spec: string;
  /** the pinned version whose trigger this is */
  version: number;
  /** due times before this (the deployment) are never fired */
  activeFrom: string;
  /** the latest due time handled (fired, skipped or passed over); null before the first */
  lastDueAt: string | null;
}

/** claimed: this instance won the due time and is starting it; started: its execution exists */
export type FireOutcome = 'claimed' | 'started' | 'skipped';

export interface ScheduleFire {
  workflowId: string;
  triggerId: string;
  dueAt: string;
  /** chosen before the claim; null when skipped */
  executionId: string | null;
  outcome: FireOutcome;
  firedAt: string;
}

export interface ScheduleRepo {
  /**
   * Replaces the workflow's schedules. A trigger id that stays keeps its `lastDueAt`, and its
   * `activeFrom` too while its `spec` (cron and zone) is unchanged: a redeploy drops no due time.
   */
  put(workflowId: string, entries: readonly { triggerId: string; version: number; spec: string }[], activeFrom: string): Promise<void>;
  deleteByWorkflow(workflowId: string): Promise<number>;
  /** every schedule of every deployed workflow, by workflow then trigger id */
  list(): Promise<ScheduleEntry[]>;
  listByWorkflow(workflowId: string): Promise<ScheduleEntry[]>;
  /**
   * Records the fire of one due time unless one exists (false: another caller had it; this is
   * what makes a due time fire once across instances); advances the schedule's `lastDueAt`.
   */
  claim(fire: ScheduleFire): Promise<boolean>;
  /** advances `lastDueAt` over due times that are not fired (missed while down, catchUp none) */
  pass(workflowId: string, triggerId: string, dueAt: string): Promise<void>;
  /** claimed → started; false when it was not claimed */
  markStarted(workflowId: string, triggerId: string, dueAt: string): Promise<boolean>;
  /** fires still `claimed` that were claimed at or before `firedBefore`, oldest first */
  listClaimed(firedBefore: string, limit: number): Promise<ScheduleFire[]>;
  /** newest due time first */
  lastFires(workflowId: string, triggerId: string, limit: number): Promise<ScheduleFire[]>;
  /** the newest fire that has an execution (claimed or started), or null */
  lastRun(workflowId: string, triggerId: string): Promise<ScheduleFire | null>;
  /**
   * Drops fires due before `before`, except claimed ones and, per schedule, the newest fire
   * and the newest with an execution (what GET /schedules and overlap need). Returns how many.
   */
  purgeFires(before: string): Promise<number>;
  /** when any instance last finished a scheduler tick (the time it examined up to), or null */
  heartbeat(): Promise<string | null>;
  /** records a finished tick; never moves the heartbeat back */
  beat(at: string): Promise<void>;
}

// ---- chat -----------------------------------------------------------------------------------

/** A chat deployment (SPEC §4.4): at most one per workflow, its subdomain unique. */
export interface ChatDeployment {
  workflowId: string;
  /** lowercase letters, digits and `-` */
  subdomain: string;
  auth: {
    mode: 'public' | 'password' | 'email';
    /** scrypt hash of the password (`scrypt$<salt>$<hash>`); never the password itself */
    passwordHash?: string;
    /** random, renewed whenever who may sign in changes: sessions signed under another are void */
    sessionEpoch?: string;
    /** addresses or `@domain` */
    allowedEmails?: string[];
  };
  branding: { title: string; description?: string; welcomeMessage?: string; primaryColor?: string; logoUrl?: string };
  output?: { block: string; path?: string };
  createdAt: string;
  updatedAt: string;
}

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
  at: string;
  /** the execution that answered (assistant messages), or the turn's run (user messages) */
  executionId?: string;
  /** user messages: the client's id of the message, so that a retry of it makes no second turn */
  messageId?: string;
}

export interface Conversation {
  id: string;
  workflowId: string;
  subdomain: string;
  /** who it belongs to: the signed-in email, or null (public and password chats) */
  owner: string | null;
  /** hash of the conversationToken its `done` events carry (absent in conversations begun before tokens) */
  tokenHash?: string;
  messages: ChatMessage[];
  createdAt: string;
  updatedAt: string;
}

/** A signed-in visitor's session, kept so sign-out can end it on the server: only its id's hash is stored. */
export interface ChatSession {
  idHash: string;
  workflowId: string;
  subdomain: string;
  /** lower case; null for password chats */
  email: string | null;
  expiresAt: string;
}

/** A sign-in code sent by email: only its hash is kept. */
export interface ChatCode {
  subdomain: string;
  /** lower case */
  email: string;
  /**
   * who asked for it (a keyed hash of the client address): a code is one visitor's, so
   * nobody else's requests replace it and nobody else's guesses use up its tries
   */
  client: string;
  codeHash: string;
  expiresAt: string;
  attempts: number;
}

export interface ChatRepo {
  /** Inserts or replaces the workflow's chat (createdAt kept on replace); CONFLICT (details.subdomain) when another workflow has the subdomain. */
  put(chat: ChatDeployment): Promise<{ chat: ChatDeployment; created: boolean }>;
  getByWorkflow(workflowId: string): Promise<ChatDeployment | null>;
  getBySubdomain(subdomain: string): Promise<ChatDeployment | null>;
  /** also deletes its conversations, codes and sessions; false when there was none */
  delete(workflowId: string): Promise<boolean>;
  createConversation(c: Conversation): Promise<Conversation>;
  getConversation(id: string): Promise<Conversation | null>;
  /** appends in order and sets updatedAt; false when the conversation does not exist */
  appendMessages(id: string, messages: readonly ChatMessage[], updatedAt: string): Promise<boolean>;
  /** replaces any earlier code for (subdomain, email, client) */
  putCode(code: ChatCode): Promise<void>;
  getCode(subdomain: string, email: string, client: string): Promise<ChatCode | null>;
  /** attempts + 1; returns the new count (0 when there is no code) */
  countAttempt(subdomain: string, email: string, client: string): Promise<number>;
  deleteCode(subdomain: string, email: string, client: string): Promise<void>;
  /** replaces the conversation's token hash; false when the conversation does not exist */
  setConversationToken(id: string, tokenHash: string): Promise<boolean>;
  /** stores a new session, and drops sessions that expired before `now` */
  putSession(session: ChatSession, now: string): Promise<void>;
  getSession(idHash: string): Promise<ChatSession | null>;
  /** ends a session (sign-out); false when there was none */
  deleteSession(idHash: string): Promise<boolean>;
}
