/** A small fake block-type registry and workflow builders for the model tests. */
import type { BlockTypeInfo, BlockTypeRegistry, WorkflowDef } from '../../src/model/types.js';

type Issue = { path: string; message: string };

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function idList(config: Record<string, unknown>, key: string): string[] {
  const list = config[key];
  return Array.isArray(list) ? list.filter(isObj).map((b) => String(b['id'])) : [];
}

function listCheck(config: unknown, key: string, field: string): Issue[] {
  if (!isObj(config) || !Array.isArray(config[key]) || config[key].length === 0) return [{ path: `/${key}`, message: `${key} must be a non-empty array` }];
  const issues: Issue[] = [];
  const seen = new Set<string>();
  (config[key] as unknown[]).forEach((item, i) => {
    if (!isObj(item) || typeof item['id'] !== 'string' || item['id'] === '') issues.push({ path: `/${key}/${i}/id`, message: 'id is required' });
    else if (['else', 'error', 'success'].includes(item['id']) || seen.has(item['id'])) issues.push({ path: `/${key}/${i}/id`, message: 'id is reserved or duplicated' });
    else seen.add(item['id']);
    if (isObj(item) && typeof item[field] !== 'string') issues.push({ path: `/${key}/${i}/${field}`, message: `${field} must be a string` });
  });
  return issues;
}

const simple = (handles: string[], check: (c: Record<string, unknown>) => Issue[] = () => []): BlockTypeInfo => ({
  validateConfig: (config) => (isObj(config) ? check(config) : [{ path: '', message: 'config must be an object' }]),
  handles: () => handles,
});

export const registry: BlockTypeRegistry = {
  starter: simple(['success']),
  function: {
    ...simple(['success', 'error'], (c) => (typeof c['code'] === 'string' ? [] : [{ path: '/code', message: 'code must be a string' }])),
    codeFields: ['code'],
  },
  condition: {
    validateConfig: (config) => listCheck(config, 'branches', 'expression'),
    handles: (config) => [...idList(config, 'branches'), ...(config['else'] === true ? ['else'] : []), 'error'],
    codeFields: ['branches'],
  },
  router: {
    validateConfig: (config) => listCheck(config, 'routes', 'equals'),
    handles: (config) => [...idList(config, 'routes'), 'error'],
    codeFields: ['value'],
  },
  response: simple([]),
  api: simple(['success', 'error'], (c) => (typeof c['url'] === 'string' ? [] : [{ path: '/url', message: 'url is required' }])),
  loop: simple(['success', 'error']),
  parallel: simple(['success', 'error']),
};

export interface BlockSpec {
  id: string;
  type?: string;
  name?: string;
  config?: Record<string, unknown>;
  parent?: string;
  enabled?: boolean;
}

/** `conns` entries are "from>to" or "from>to:handle". */
export function workflow(blocks: BlockSpec[], conns: string[] = [], extra: Partial<WorkflowDef> = {}): WorkflowDef {
  return {
    name: 'test',
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      ...blocks.map((b) => ({
        id: b.id,
        type: b.type ?? 'function',
        name: b.name ?? b.id,
        config: b.config ?? (b.type === undefined || b.type === 'function' ? { code: 'return 1' } : {}),
        ...(b.parent === undefined ? {} : { parent: b.parent }),
        ...(b.enabled === undefined ? {} : { enabled: b.enabled }),
      })),
    ],
    connections: conns.map((c) => {
      const [pair = '', handle] = c.split(':');
      const [from = '', to = ''] = pair.split('>');
      return handle === undefined ? { from, to } : { from, to, handle };
    }),
    ...extra,
  };
}

/** Deep clone of a JSON document, for mutating a valid one into an invalid one. */
export const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
