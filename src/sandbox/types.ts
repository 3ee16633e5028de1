/** The sandbox port: user code with no host access and enforced limits. */
export interface SandboxLimits {
  timeoutMs: number;
  memoryMb: number;
  signal?: AbortSignal;
  /**
   * Who calls: calls of one caller share a hardened realm (compiled code, never state), calls of
   * different callers never do, and the pool shares its isolates fairly between callers. Without
   * it a call gets a realm of its own, used once.
   */
  caller?: SandboxCaller;
}

/** a workflow version (its code is what a realm compiles) */
export interface SandboxCaller {
  workflowId: string;
  version?: number;
}

export interface FunctionResult {
  result: unknown;
  stdout: string;
}

export interface Sandbox {
  /**
   * Runs a JavaScript function body (may `await` and `return`). `bindings` are exposed to the
   * code as read-only variables by name (values are copied in as JSON-compatible data).
   * Throws TroupeError FUNCTION_ERROR | FUNCTION_TIMEOUT | FUNCTION_MEMORY | CANCELLED.
   */
  runFunction(code: string, bindings: Record<string, unknown>, limits: SandboxLimits): Promise<FunctionResult>;
  /** Evaluates one expression; throws EXPRESSION_ERROR (or the timeout/memory codes). */
  evaluate(expression: string, bindings: Record<string, unknown>, limits: SandboxLimits): Promise<unknown>;
  dispose(): Promise<void>;
}
