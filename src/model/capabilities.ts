/**
 * What each block type can do, declared once: the model, the runtime, the actors and the
 * services ask here instead of testing a type's name. Pure, so src/model can use it without
 * importing the block types (src/blocks); the registry there checks that every type it has is
 * declared here and agrees with it (src/blocks/index.ts, test/blocks/capabilities.test.ts).
 * A type not declared (a test-only one) can do none of these.
 */

export interface BlockCapabilities {
  /** the workflow's entry: one per workflow, named `start`, its output is the trigger's input */
  entry: boolean;
  /** chooses its out handles itself: the output field that names the choice (resumption replays it) */
  route: string | null;
  /** a completed run ends the execution with its output as the response (SPEC §2) */
  responds: boolean;
  /** holds child blocks, run per iteration by a container actor; its `results` are their outputs */
  contains: boolean;
  /** may wait (a time, a decision, a child's end) and so let its execution park (SPEC §2.1) */
  parks: boolean;
  /** runs differently by which of its handles are connected (an approval's `timeout`) */
  readsConnections: boolean;
  /** starts a child workflow, the one its config's `workflowId` names */
  startsWorkflow: boolean;
  /**
   * its output spreads user data among its own fields (the starter its input's, an agent with a
   * response format its answer's): these fields are Troupe's, the others are data (redaction)
   */
  ownOutputFields: ReadonlySet<string> | null;
}

const NONE: BlockCapabilities = Object.freeze({
  entry: false, route: null, responds: false, contains: false, parks: false, readsConnections: false, startsWorkflow: false, ownOutputFields: null,
});

function declare(caps: Partial<BlockCapabilities>): BlockCapabilities {
  return Object.freeze({ ...NONE, ...caps });
}

/** Every shipped block type (SPEC §1.1) and what it can do. */
export const CAPABILITIES: Readonly<Record<string, BlockCapabilities>> = Object.freeze({
  starter: declare({ entry: true, ownOutputFields: new Set(['input', 'trigger', 'conversationId', 'error']) }),
  api: NONE,
  function: NONE,
  condition: declare({ route: 'selectedBranch' }),
  router: declare({ route: 'selectedRoute' }),
  response: declare({ responds: true }),
  agent: declare({ ownOutputFields: new Set(['content', 'model', 'tokens', 'toolCalls', 'error']) }),
  memory: NONE,
  loop: declare({ contains: true }),
  parallel: declare({ contains: true }),
  wait: declare({ parks: true }),
  approval: declare({ parks: true, readsConnections: true }),
  workflow: declare({ parks: true, startsWorkflow: true }),
});

/** What a block type can do; nothing for a type not declared. */
export function capabilitiesOf(type: string | undefined): BlockCapabilities {
  return type !== undefined && Object.hasOwn(CAPABILITIES, type) ? (CAPABILITIES[type] as BlockCapabilities) : NONE;
}

export const isEntry = (type: string | undefined): boolean => capabilitiesOf(type).entry;
export const responds = (type: string | undefined): boolean => capabilitiesOf(type).responds;
export const contains = (type: string | undefined): boolean => capabilitiesOf(type).contains;

/** The declared types that contain others, for messages. */
export function containerTypes(): string[] {
  return Object.keys(CAPABILITIES).filter((t) => contains(t));
}
