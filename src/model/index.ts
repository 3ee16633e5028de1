/** src/model: the pure workflow model (schema, validation, graph, references, decisions). */
export * from './types.js';
export { normalizeName } from './names.js';
export * from './schema.js';
export { parseCron, isValidTimeZone, type CronFields, type CronParse } from './cron.js';
export { validateWorkflow, formatIssues, type ValidationIssue, type ValidationResult } from './validate.js';
export * from './references.js';
export { ancestors, compileWorkflow, scopeBlocks, startBlocks, topologicalOrder } from './graph.js';
export type { CompiledBlock, CompiledConnection, CompiledWorkflow } from './compiled.js';
export { activatedConnections, decideReadiness, startDecision, type InputState, type Readiness } from './readiness.js';
export { isResponseBlock, selectFinalOutput, terminalBlocks } from './output.js';
export { planActivation, type PlannedState } from './plan.js';
