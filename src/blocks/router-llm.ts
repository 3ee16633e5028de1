import { TroupeError } from '../errors.js';
import type { ModelRequest } from '../providers/types.js';
import { baseRequest, modelsOf, promptText } from './model-settings.js';
import { unfenced } from './structured-output.js';
import type { RouterLlmConfig } from './router-config.js';
import type { BlockRunContext } from './types.js';

/**
 * The router's llm mode: the model is shown the routes (id and description) and the prompt and
 * asked for `{ "route", "reasoning" }` as structured output. Servers that ignore the response
 * format and answer in words are read leniently: an answer that is exactly one route id, or
 * that names exactly one of them, picks it. Naming none (or several) takes the `default` route
 * when there is one, else fails with NO_ROUTE (SPEC §1.1).
 */
export async function chooseRoute(ctx: BlockRunContext<unknown>, config: RouterLlmConfig): Promise<{ selectedRoute: string; reasoning: string }> {
  const ids = config.routes.map((r) => r.id);
  const request: ModelRequest = {
    ...baseRequest(config),
    system: systemText(config),
    messages: [{ role: 'user', content: promptText(config.prompt) }],
    responseSchema: {
      name: 'route_choice',
      schema: {
        type: 'object',
        properties: { route: { type: 'string', enum: ids }, reasoning: { type: 'string' } },
        required: ['route', 'reasoning'],
        additionalProperties: false,
      },
    },
  };
  const answer = await modelsOf(ctx).complete(request, ctx.signal);
  const picked = readChoice(answer.content, ids);
  if (picked === null && config.default !== undefined) {
    return { selectedRoute: config.default, reasoning: `the model's answer named no route; took the default route '${config.default}'` };
  }
  if (picked === null) {
    throw new TroupeError('NO_ROUTE', `the model's answer names no single route (routes: ${ids.join(', ')})`, { details: { answer: answer.content.slice(0, 500) } });
  }
  return { selectedRoute: picked.route, reasoning: picked.reasoning };
}

function systemText(config: RouterLlmConfig): string {
  const lines = config.routes.map((r) => `- ${r.id}: ${r.description}`);
  return [
    'You route a request to exactly one of these routes (id: description):',
    ...lines,
    'Answer with a JSON object {"route": "<one route id>", "reasoning": "<one sentence>"}.',
  ].join('\n');
}

function readChoice(content: string, ids: readonly string[]): { route: string; reasoning: string } | null {
  const text = content.trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(unfenced(text));
  } catch {
    // not JSON: read the words
  }
  // an object is the structured answer and must name a route; anything else JSON can parse
  // (`2`, `"billing"`) is an answer in words like any other
  if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const choice = parsed as { route?: unknown; reasoning?: unknown };
    if (typeof choice.route === 'string' && ids.includes(choice.route)) {
      return { route: choice.route, reasoning: typeof choice.reasoning === 'string' ? choice.reasoning : '' };
    }
    return null;
  }
  if (ids.includes(text)) return { route: text, reasoning: '' };
  const named = ids.filter((id) => new RegExp(`(^|[^A-Za-z0-9_-])${escape(id)}($|[^A-Za-z0-9_-])`).test(text));
  return named.length === 1 && named[0] !== undefined ? { route: named[0], reasoning: text } : null;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
