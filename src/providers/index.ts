import { TroupeError } from '../errors.js';
import { normalizeHostname } from '../outbound/address-policy.js';
import { completeAnthropic } from './anthropic.js';
import { completeOpenAi } from './openai.js';
import { ProviderTransport, type TransportOptions } from './transport.js';
import type { ModelPort, ModelRequest, ProviderName } from './types.js';

import { ANTHROPIC_BASE_URL } from './anthropic.js';
import { OPENAI_BASE_URL } from './openai.js';

export { ANTHROPIC_BASE_URL, OPENAI_BASE_URL };
export type * from './types.js';

export type ProviderDefaults = Partial<Record<ProviderName, { apiKey?: string | undefined; baseUrl?: string | undefined }>>;

/**
 * The model client of a process: one transport (address policy, pooled connections) for both
 * providers. A request with no base URL goes to the process's default for its provider
 * (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, else the provider's own), and only such a request
 * gets the process's key: a workflow that names its own server never receives it.
 */
export function createModelClient(options: TransportOptions & { defaults?: ProviderDefaults }): ModelPort & { close(): void } {
  const transport = new ProviderTransport(options);
  return {
    async complete(request, signal, onToken) {
      const filled = withDefaults(request, options.defaults?.[request.provider]);
      return filled.provider === 'anthropic' ? completeAnthropic(transport, filled, signal, onToken) : completeOpenAi(transport, filled, signal, onToken);
    },
    close() {
      transport.close();
    },
  };
}

function withDefaults(request: ModelRequest, defaults: { apiKey?: string | undefined; baseUrl?: string | undefined } | undefined): ModelRequest & { baseUrl: string } {
  const own = request.baseUrl !== undefined;
  const baseUrl = request.baseUrl ?? defaults?.baseUrl ?? (request.provider === 'anthropic' ? ANTHROPIC_BASE_URL : OPENAI_BASE_URL);
  const filled = { ...request, baseUrl };
  if (filled.apiKey === undefined && !own && defaults?.apiKey !== undefined) filled.apiKey = defaults.apiKey;
  requireKeyForOwnApi(filled);
  return filled;
}

const OWN_API: Record<ProviderName, { url: string; variable: string; name: string }> = {
  openai: { url: OPENAI_BASE_URL, variable: 'OPENAI_API_KEY', name: 'the OpenAI API' },
  anthropic: { url: ANTHROPIC_BASE_URL, variable: 'ANTHROPIC_API_KEY', name: 'the Anthropic API' },
};

/**
 * The providers' own APIs refuse every call without a key, so a call to one without a key fails
 * before it is sent, saying how to give one: sent, it would only come back as a 401 (or, offline,
 * as a DNS failure retried with backoff). Servers of one's own (Ollama, vLLM) may need no key,
 * so only the providers' hosts are checked.
 */
function requireKeyForOwnApi(request: ModelRequest & { baseUrl: string }): void {
  if (request.apiKey !== undefined && request.apiKey !== '') return;
  const own = OWN_API[request.provider];
  if (hostOf(request.baseUrl) !== hostOf(own.url)) return;
  throw new TroupeError('MISSING_SECRET', `no API key for ${own.name}: set the block's apiKey (e.g. "{{${own.variable}}}" with that secret) or the service's ${own.variable}`);
}

function hostOf(url: string): string | null {
  try {
    return normalizeHostname(new URL(url).hostname);
  } catch {
    return null;
  }
}
