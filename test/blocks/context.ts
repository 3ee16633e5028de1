/** A hand-built BlockRunContext for running one block type in a test. */
import type { BlockRunContext, Clock, TriggerInfo } from '../../src/blocks/types.js';
import { bindCode } from '../../src/model/references.js';
import type { Sandbox } from '../../src/sandbox/types.js';

export interface ContextOptions<C> {
  config: C;
  sandbox?: Sandbox;
  /** block outputs by normalized name, readable by references in code (`<api.status>`) */
  outputs?: Record<string, unknown>;
  variables?: Record<string, unknown>;
  input?: unknown;
  trigger?: TriggerInfo;
  conversationId?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  memoryMb?: number;
}

/** A sandbox that fails the test if a block uses it when it should not. */
const noSandbox: Sandbox = {
  runFunction: () => Promise.reject(new Error('this test gave the block no sandbox')),
  evaluate: () => Promise.reject(new Error('this test gave the block no sandbox')),
  dispose: () => Promise.resolve(),
};

const clock: Clock = {
  now: () => 0,
  sleep: () => Promise.resolve(),
  setTimer: () => {
    throw new Error('a block run alone sets no timer (its time limit is the runtime\'s)');
  },
};

export function makeContext<C>(options: ContextOptions<C>): BlockRunContext<C> {
  const outputs = options.outputs ?? {};
  const scope = { outputs, blockNames: new Set(Object.keys(outputs)), variables: options.variables ?? {} };
  const ctx: BlockRunContext<C> = {
    executionId: 'exec-1',
    workflowId: 'wf-1',
    block: { id: 'b1', name: 'Block', type: 'test' },
    config: options.config,
    input: options.input,
    trigger: options.trigger ?? { type: 'manual' },
    bindCode: (source) => bindCode(source, scope),
    resolve: (value) => value,
    hasErrorConnection: false,
    signal: options.signal ?? new AbortController().signal,
    services: {
      sandbox: options.sandbox ?? noSandbox,
      clock,
      functionTimeoutMs: options.timeoutMs ?? 500,
      functionMemoryMb: options.memoryMb ?? 16,
    },
    emitChunk: () => undefined,
  };
  if (options.conversationId !== undefined) ctx.conversationId = options.conversationId;
  return ctx;
}
