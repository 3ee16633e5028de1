/**
 * The language-model port used by the agent block and the router's llm mode. Two providers sit
 * behind it (OpenAI-compatible chat completions, Anthropic messages); blocks see neither.
 */
export type ProviderName = 'openai' | 'anthropic';

export interface ToolSpec {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object */
  parameters: Record<string, unknown>;
}

export interface ToolCall {
  id: string;
  name: string;
  /** the parsed arguments object (the raw text when the model sent text that is not JSON) */
  arguments: unknown;
}

/** One turn of the conversation sent to the model. */
export type ModelTurn =
  | { role: 'user' | 'assistant'; content: string }
  | { role: 'assistant'; content: string; toolCalls: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

export interface ModelRequest {
  provider: ProviderName;
  /** e.g. https://api.openai.com/v1 or https://api.anthropic.com; absent: the process's default */
  baseUrl?: string;
  apiKey?: string;
  model: string;
  system?: string;
  messages: ModelTurn[];
  temperature?: number;
  maxTokens?: number;
  /** structured output: the answer must be a JSON object matching this schema */
  responseSchema?: { name: string; schema: Record<string, unknown> };
  tools?: ToolSpec[];
  /** time limit of one call, ms (each attempt) */
  timeoutMs: number;
  /** retries of a call that got no answer, a 429 or a 5xx, before any token arrived */
  retries: number;
}

export interface TokenUsage {
  prompt: number;
  completion: number;
  total: number;
}

export interface ModelAnswer {
  /** the text answer (for structured output: the JSON text) */
  content: string;
  /** the model that answered, as the provider names it */
  model: string;
  tokens: TokenUsage;
  /** tools the model asked to call in this answer */
  toolCalls: ToolCall[];
  finishReason: string;
}

export interface ModelPort {
  /** one model call; `onToken` hears text as it streams (the call streams only when it is given) */
  complete(request: ModelRequest, signal: AbortSignal, onToken?: (text: string) => void): Promise<ModelAnswer>;
}
