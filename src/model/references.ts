/** References and secrets (SPEC §1.2): the one entry point the runtime and blocks import. */
export {
  classifyReference,
  collectReferences,
  findReferences,
  findSecretTokens,
  interpretReference,
  ITERATION_FIELDS,
  parseReference,
  REFERENCE_PREFIXES,
  type LocatedRef,
  type ParsedRef,
  type RefKind,
  type SecretToken,
} from './ref-parse.js';
export {
  lookupReference,
  navigate,
  resolveConfig,
  resolveString,
  resolveValue,
  toText,
  type IterationScope,
  type ReferenceScope,
  type SecretSource,
} from './resolve.js';
export { bindCode, type BoundCode } from './bind-code.js';
export { findSecretNames, maskSecretPlaceholders, redactSecrets, REDACTED, StreamRedactor, substituteSecrets } from './secrets.js';
