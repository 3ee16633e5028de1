import { z } from 'zod';
import { TroupeError } from '../errors.js';
import { hasPlaceholder } from '../model/ref-parse.js';
import type { ModelPort, ModelRequest, ProviderName } from '../providers/types.js';
import { unsetWhenNull } from './schemas.js';
import type { BlockRunContext } from './types.js';

/**
 * The model settings shared by the agent block and the router's llm mode. The provider follows
 * the model's name unless set (`claude-…` → Anthropic, anything else → OpenAI-compatible);
 * `baseUrl` points an OpenAI-compatible setting at another server (Ollama, vLLM, a gateway).
 * The key is usually a secret: `"apiKey": "{{OPENAI_API_KEY}}"`.
 */

const int = (min: number, max: number) => z.coerce.number({ error: 'must be a number' }).int().min(min).max(max);
/** Judged once its references are filled in: at save a URL made of them is taken as it is. */
const httpUrl = (field: string) =>
  z.string().trim().refine((url) => hasPlaceholder(url) || isHttpUrl(url), `${field} must be an absolute http or https URL`);

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

export const modelSettingsShape = {
  model: z.string().trim().min(1, 'a model is required'),
  provider: z.enum(['openai', 'anthropic']).optional(),
  baseUrl: httpUrl('baseUrl').optional(),
  /** the SDKs' spelling of baseUrl */
  baseURL: httpUrl('baseURL').optional(),
  apiKey: z.string().optional(),
  temperature: unsetWhenNull(z.coerce.number({ error: 'must be a number' }).min(0).max(2).optional()),
  maxTokens: unsetWhenNull(int(1, 1_000_000).optional()),
  timeoutMs: unsetWhenNull(int(1, 3_600_000).default(120_000)),
  retries: unsetWhenNull(int(0, 10).default(2)),
};

export interface ModelSettings {
  model: string;
  provider?: ProviderName | undefined;
  baseUrl?: string | undefined;
  baseURL?: string | undefined;
  apiKey?: string | undefined;
  temperature?: number | undefined;
  maxTokens?: number | undefined;
  timeoutMs: number;
  retries: number;
}

export function providerOf(settings: Pick<ModelSettings, 'model' | 'provider'>): ProviderName {
  return settings.provider ?? (/^claude/i.test(settings.model) ? 'anthropic' : 'openai');
}

/** The request fields every call of a block shares. */
export function baseRequest(settings: ModelSettings): Omit<ModelRequest, 'messages'> {
  const provider = providerOf(settings);
  const request: Omit<ModelRequest, 'messages'> = { provider, model: settings.model, timeoutMs: settings.timeoutMs, retries: settings.retries };
  // absent: the process's default server for the provider, with its key (providers/index.ts)
  const baseUrl = settings.baseUrl ?? settings.baseURL;
  if (baseUrl !== undefined) request.baseUrl = baseUrl;
  if (settings.apiKey !== undefined && settings.apiKey !== '') request.apiKey = settings.apiKey;
  if (settings.temperature !== undefined) {
    if (provider === 'anthropic' && settings.temperature > 1) {
      throw new TroupeError('INVALID_CONFIG', `temperature ${settings.temperature} is above Anthropic's 1`);
    }
    request.temperature = settings.temperature;
  }
  if (settings.maxTokens !== undefined) request.maxTokens = settings.maxTokens;
  return request;
}

export function modelsOf(ctx: BlockRunContext<unknown>): ModelPort {
  const models = ctx.services.models;
  if (models === undefined) throw new TroupeError('INTERNAL', `${ctx.block.type} blocks need a model client, and this runtime has none`);
  return models;
}

/** A value placed in a prompt: text as is, anything else as JSON. */
export function promptText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value);
}
