import { expect } from 'chai';
import { validateWorkflow, type ValidationIssue } from '../../src/model/validate.js';
import { clone, registry, workflow, type BlockSpec } from './fixtures.js';

const SPEC_EXAMPLE = {
  id: 'weather',
  name: 'Weather lookup',
  variables: { unit: 'metric' },
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: { inputFormat: [{ name: 'city', type: 'string', required: true }] } },
    {
      id: 'w', type: 'api', name: 'Weather',
      config: {
        url: 'https://api.example.com/v1/weather/{city}', method: 'GET',
        pathParams: [{ key: 'city', value: '<start.city>' }],
        params: [{ key: 'units', value: '<variable.unit>' }],
        headers: [{ key: 'Authorization', value: 'Bearer {{WEATHER_TOKEN}}' }],
      },
    },
    { id: 'ok', type: 'condition', name: 'Ok', config: { branches: [{ id: 'yes', expression: '<weather.status> === 200' }], else: true } },
    { id: 'r', type: 'response', name: 'Reply', config: { status: 200, data: { temp: '<weather.data.temp>' } } },
    { id: 'fallback', type: 'response', name: 'Sorry', config: { status: 502, data: { error: 'weather unavailable' } } },
  ],
  connections: [
    { from: 'start', to: 'w' },
    { from: 'w', to: 'ok' },
    { from: 'w', handle: 'error', to: 'fallback' },
    { from: 'ok', handle: 'yes', to: 'r' },
    { from: 'ok', handle: 'else', to: 'fallback' },
  ],
  triggers: [{ id: 'nightly', type: 'schedule', cron: '0 3 * * *', timezone: 'Europe/Paris' }],
};

function issuesOf(doc: unknown): ValidationIssue[] {
  const result = validateWorkflow(doc, registry);
  return result.ok ? [] : result.issues;
}

function paths(doc: unknown): string[] {
  return issuesOf(doc).map((i) => i.path);
}

function expectOnly(doc: unknown, path: string, message?: RegExp): void {
  const issues = issuesOf(doc);
  expect(issues.map((i) => i.path), JSON.stringify(issues)).to.deep.equal([path]);
  if (message) expect(issues[0]?.message).to.match(message);
}

function expectValid(doc: unknown): void {
  expect(issuesOf(doc)).to.deep.equal([]);
}

const fn = (id: string, extra: Partial<BlockSpec> = {}): BlockSpec => ({ id, ...extra });

describe('model/validateWorkflow', () => {
  it('accepts the SPEC example and returns the parsed workflow', () => {
    const result = validateWorkflow(SPEC_EXAMPLE, registry);
    expect(result.ok).to.equal(true);
    if (result.ok) {
      expect(result.workflow.blocks).to.have.length(5);
      expect(result.workflow.triggers?.[0]).to.deep.include({ cron: '0 3 * * *' });
    }
  });

  it('drops unknown keys and defaults connections and config', () => {
    const doc = { name: 'x', blocks: [{ id: 's', type: 'starter', name: 'Start', position: { x: 1 } }], extra: true };
    const result = validateWorkflow(doc, registry);
    expect(result.ok).to.equal(true);
    if (result.ok) expect(result.workflow).to.deep.equal({ name: 'x', blocks: [{ id: 's', type: 'starter', name: 'Start', config: {} }], connections: [] });
  });

  describe('document structure', () => {
    it('rejects a non-object', () => expectOnly([], ''));
    it('rejects a bad workflow id', () => expectOnly({ ...clone(SPEC_EXAMPLE), id: 'has space' }, '/id'));
    it('accepts a missing workflow id', () => {
      const { id: _id, ...rest } = clone(SPEC_EXAMPLE);
      expectValid(rest);
    });
    it('rejects a missing name', () => expectOnly({ ...clone(SPEC_EXAMPLE), name: undefined }, '/name'));
    it('rejects blocks that are not an array', () => expect(paths({ name: 'x', blocks: {} })).to.include('/blocks'));
    it('reports a structurally broken block at its field', () => {
      const doc = clone(SPEC_EXAMPLE) as { blocks: Record<string, unknown>[] };
      delete doc.blocks[4]!['type'];
      expectOnly(doc, '/blocks/4/type');
    });
    it('rejects a bad block id', () => {
      const doc = workflow([fn('a b')], ['start>a b']);
      expect(paths(doc)).to.deep.equal(['/blocks/1/id']);
    });
    it('reports a broken connection field', () => {
      const doc = clone(workflow([fn('a')], ['start>a'])) as unknown as { connections: Record<string, unknown>[] };
      doc.connections[0]!['to'] = 5;
      expectOnly(doc, '/connections/0/to');
    });
    it('rejects a bad retry policy', () => {
      const doc = clone(workflow([fn('a')], ['start>a'])) as unknown as { blocks: Record<string, unknown>[] };
      doc.blocks[1]!['retry'] = { maxAttempts: 0, backoffMs: 10 };
      expectOnly(doc, '/blocks/1/retry/maxAttempts');
    });
  });

  describe('retry', () => {
    it('backs off 1000 ms when the policy names only maxAttempts', () => {
      const doc = clone(workflow([fn('a')], ['start>a'])) as unknown as { blocks: Record<string, unknown>[] };
      doc.blocks[1]!['retry'] = { maxAttempts: 3 };
      const result = validateWorkflow(doc, registry);
      expect(result.ok).to.equal(true);
      if (result.ok) expect(result.workflow.blocks[1]?.retry).to.deep.equal({ maxAttempts: 3, backoffMs: 1000 });
    });
  });

  describe('ids and names', () => {
    it('rejects a duplicated block id at the second one', () => {
      expectOnly(workflow([fn('a'), fn('a', { name: 'other' })], ['start>a']), '/blocks/2/id', /duplicate block id "a"/);
    });
    it('rejects names equal after normalization', () => {
      expectOnly(workflow([fn('a', { name: 'My API' }), fn('b', { name: 'myapi' })], ['start>a', 'a>b']), '/blocks/2/name', /normalization/);
    });
    for (const bad of ['a.b', 'a<b', 'a>b']) {
      it(`rejects the name "${bad}"`, () => expectOnly(workflow([fn('a', { name: bad })], ['start>a']), '/blocks/1/name'));
    }
    for (const reserved of ['loop', 'Parallel', 'vari able', 'ENV', 'S tart']) {
      it(`rejects the reserved name "${reserved}" on a function block`, () => {
        expectOnly(workflow([fn('a', { name: reserved })], ['start>a']), '/blocks/1/name', /reserved/);
      });
    }
    it('rejects a reserved name on the starter, except start', () => {
      const doc = workflow([fn('a')], ['start>a']);
      doc.blocks[0]!.name = 'Loop';
      expectOnly(doc, '/blocks/0/name');
    });
    it('rejects an empty name', () => expectOnly(workflow([fn('a', { name: '  ' })], ['start>a']), '/blocks/1/name'));
  });

  describe('types and configs', () => {
    it('rejects an unknown type', () => expectOnly(workflow([fn('a', { type: 'teleport' })], ['start>a']), '/blocks/1/type', /unknown block type/));
    it('prefixes config issues with the block path', () => {
      expectOnly(workflow([fn('a', { config: {} })], ['start>a']), '/blocks/1/config/code');
      const cond = workflow([{ id: 'c', type: 'condition', config: { branches: [{ id: '', expression: 'true' }] } }], ['start>c']);
      expectOnly(cond, '/blocks/1/config/branches/0/id');
    });
    it('requires exactly one starter', () => {
      const none = workflow([fn('a')]);
      none.blocks.shift();
      expectOnly(none, '/blocks', /exactly one/);
      const two = workflow([fn('a', { type: 'starter', config: {}, name: 'Begin' })], ['start>a']);
      expect(paths(two)).to.include('/blocks/1/type');
    });
    it('requires the starter at the top level', () => {
      const doc = workflow([fn('l', { type: 'loop' })], ['start>l']);
      doc.blocks[0]!.parent = 'l';
      expect(paths(doc)).to.include('/blocks/0/parent');
    });
  });

  describe('connections', () => {
    it('rejects missing endpoints at from and to', () => {
      expect(paths(workflow([fn('a')], ['start>a', 'ghost>a', 'a>nowhere']))).to.deep.equal(['/connections/1/from', '/connections/2/to']);
    });
    it('rejects a handle the source does not have', () => {
      expectOnly(workflow([fn('a'), fn('b')], ['start>a', 'a>b:maybe']), '/connections/1/handle', /no "maybe" handle/);
    });
    it('accepts branch, else and error handles of a condition', () => {
      const cond = { id: 'c', type: 'condition', config: { branches: [{ id: 'yes', expression: 'true' }], else: true } };
      expectValid(workflow([cond, fn('a'), fn('b'), fn('e')], ['start>c', 'c>a:yes', 'c>b:else', 'c>e:error']));
      const noElse = { ...cond, config: { branches: [{ id: 'yes', expression: 'true' }] } };
      expectOnly(workflow([noElse, fn('a')], ['start>c', 'c>a:else']), '/connections/1/handle');
    });
    it('rejects a success connection out of a response block', () => {
      expectOnly(workflow([fn('r', { type: 'response' }), fn('a')], ['start>r', 'r>a']), '/connections/1', /no "success" handle/);
    });
    it('rejects a connection into the starter', () => {
      expectOnly(workflow([fn('a')], ['start>a', 'a>start']), '/connections/1/to');
    });
    it('reports the connection that closes a cycle', () => {
      const doc = workflow([fn('a'), fn('b'), fn('c')], ['start>a', 'a>b', 'b>c', 'c>a']);
      expectOnly(doc, '/connections/3', /cycle/);
      expectOnly(workflow([fn('a')], ['start>a', 'a>a']), '/connections/1', /cycle/);
    });
    it('reports one issue per independent cycle', () => {
      const doc = workflow([fn('a'), fn('b'), fn('c'), fn('d')], ['start>a', 'a>b', 'b>a', 'start>c', 'c>d', 'd>c']);
      expect(paths(doc)).to.deep.equal(['/connections/2', '/connections/5']);
    });
  });

  describe('containers', () => {
    const loop = (extra: Partial<BlockSpec> = {}): BlockSpec => ({ id: 'l', type: 'loop', name: 'L1', config: { kind: 'for', iterations: 2 }, ...extra });
    it('accepts children connected inside and the container connected outside', () => {
      expectValid(workflow([loop(), fn('x', { parent: 'l' }), fn('y', { parent: 'l' }), fn('after')], ['start>l', 'x>y', 'l>after']));
    });
    it('rejects a parent that is not a container', () => {
      expectOnly(workflow([fn('a'), fn('b', { parent: 'a' })], ['start>a']), '/blocks/2/parent', /only loop and parallel/);
    });
    it('rejects a parent that does not exist', () => {
      expectOnly(workflow([fn('b', { parent: 'nope' })]), '/blocks/1/parent');
    });
    it('rejects containers that contain each other', () => {
      const doc = workflow([loop({ parent: 'p' }), { id: 'p', type: 'parallel', parent: 'l' }]);
      expect(paths(doc)).to.deep.equal(['/blocks/1/parent', '/blocks/2/parent']);
    });
    it('rejects connections across the boundary, in and out', () => {
      const doc = workflow([loop(), fn('x', { parent: 'l' }), fn('out')], ['start>l', 'start>x', 'x>out', 'l>x']);
      expect(paths(doc)).to.deep.equal(['/connections/1', '/connections/2', '/connections/3']);
      expect(issuesOf(doc)[0]?.message).to.match(/container boundary/);
    });
    it('rejects connections between children of different containers', () => {
      const doc = workflow([loop(), { id: 'p', type: 'parallel' }, fn('x', { parent: 'l' }), fn('y', { parent: 'p' })], ['start>l', 'l>p', 'x>y']);
      expectOnly(doc, '/connections/2');
    });
  });

  describe('references', () => {
    const api = (value: string): BlockSpec => ({ id: 'w', type: 'api', name: 'Weather', config: { url: 'https://x', headers: [{ key: 'A', value }] } });
    it('accepts block, start, variable and whole-output references', () => {
      expectValid(workflow([fn('a', { name: 'My API' }), api('<myapi.data.items[0].id> <start.city> <variable.unit> <My API>')], ['start>a', 'a>w']));
    });
    it('rejects a reference to a block that does not exist, at the string path', () => {
      expectOnly(workflow([api('Bearer <wether.data>')], ['start>w']), '/blocks/1/config/headers/0/value', /does not exist/);
    });
    it('checks code fields too', () => {
      expectOnly(workflow([fn('a', { config: { code: 'return <nope.x> + 1' } })], ['start>a']), '/blocks/1/config/code');
    });
    it('leaves comparisons, HTML and unknown bare names alone', () => {
      expectValid(workflow([fn('a', { config: { code: 'if (a < b && c > d) return "<div><br></div>" + "<b>x</b>"; return x<y.z' } })], ['start>a']));
    });
    it('rejects <env.X> with a hint', () => {
      expectOnly(workflow([api('<env.TOKEN>')], ['start>w']), '/blocks/1/config/headers/0/value', /\{\{NAME\}\}/);
    });
    it('reads the starter as <start...> only', () => {
      const doc = workflow([api('<trigger.city>')], ['start>w']);
      doc.blocks[0]!.name = 'Trigger';
      expectOnly(doc, '/blocks/1/config/headers/0/value', /<start\.city>/);
    });
    it('escapes keys in the JSON pointer', () => {
      expectOnly(workflow([fn('a', { type: 'response', config: { data: { 'a/b': '<x.y>' } } })], ['start>a']), '/blocks/1/config/data/a~1b');
    });
    it('allows iteration references only inside a container of that kind', () => {
      const inLoop = workflow([{ id: 'l', type: 'loop' }, fn('x', { parent: 'l', config: { code: 'return <loop.index> + <loop.item.id>' } })], ['start>l']);
      expectValid(inLoop);
      expectOnly(workflow([fn('x', { config: { code: '<loop.index>' } })], ['start>x']), '/blocks/1/config/code', /inside a loop/);
      const wrongKind = workflow([{ id: 'l', type: 'loop' }, fn('x', { parent: 'l', config: { code: '<parallel.item>' } })], ['start>l']);
      expectOnly(wrongKind, '/blocks/2/config/code', /inside a parallel/);
      const badField = workflow([{ id: 'l', type: 'loop' }, fn('x', { parent: 'l', config: { code: '<loop.count>' } })], ['start>l']);
      expectOnly(badField, '/blocks/2/config/code', /index, item, items/);
    });
    it('evaluates a container\'s own config in the enclosing scope', () => {
      const own = workflow([{ id: 'l', type: 'loop', config: { items: '<loop.items>' } }], ['start>l']);
      expectOnly(own, '/blocks/1/config/items');
      const nested = workflow(
        [{ id: 'outer', type: 'parallel' }, { id: 'inner', type: 'loop', parent: 'outer', config: { items: '<parallel.item.list>' } }],
        ['start>outer'],
      );
      expectValid(nested);
    });
  });

  describe('disabled blocks', () => {
    it('drops connections touching them and skips their config and references', () => {
      const doc = workflow([fn('a'), fn('off', { enabled: false, config: { code: '<ghost.x>' } }), fn('b', { config: { code: 'return <off.result>' } })], [
        'start>a', 'a>off', 'off>b', 'a>b',
      ]);
      expectValid(doc);
    });
    it('still requires unique ids and names', () => {
      expectOnly(workflow([fn('a'), fn('b', { name: 'a', enabled: false })], ['start>a']), '/blocks/2/name');
    });
    it('does not count a disabled starter', () => {
      const doc = workflow([fn('a')]);
      doc.blocks[0]!.enabled = false;
      expectOnly(doc, '/blocks');
    });
  });

  describe('triggers', () => {
    const withTriggers = (triggers: unknown[]): unknown => ({ ...clone(SPEC_EXAMPLE), triggers });
    it('rejects a bad cron expression', () => {
      expectOnly(withTriggers([{ id: 't', type: 'schedule', cron: '61 * * * *' }]), '/triggers/0/cron', /outside 0-59/);
      expectOnly(withTriggers([{ id: 't', type: 'schedule', cron: '* * *' }]), '/triggers/0/cron', /5 fields/);
    });
    it('rejects a schedule input that is not an object', () => {
      expectOnly(withTriggers([{ id: 't', type: 'schedule', cron: '0 3 * * *', input: 'str' }]), '/triggers/0/input', /object/);
      expectOnly(withTriggers([{ id: 't', type: 'schedule', cron: '0 3 * * *', input: [1] }]), '/triggers/0/input', /object/);
    });
    it('rejects an unknown time zone', () => {
      expectOnly(withTriggers([{ id: 't', type: 'schedule', cron: '0 3 * * *', timezone: 'Mars/Olympus' }]), '/triggers/0/timezone');
    });
    it('rejects duplicate webhook paths and trigger ids', () => {
      const doc = withTriggers([
        { id: 'a', type: 'webhook', path: 'hooks/gh', provider: 'github', secret: '{{GH}}' },
        { id: 'b', type: 'webhook', path: 'hooks/gh', secret: '{{GH}}' },
        { id: 'a', type: 'schedule', cron: '*/5 * * * *' },
      ]);
      expect(paths(doc)).to.deep.equal(['/triggers/1/path', '/triggers/2/id']);
    });
    it('requires a webhook secret, as one {{NAME}} reference', () => {
      expectOnly(withTriggers([{ id: 'a', type: 'webhook', path: 'x' }]), '/triggers/0/secret', /needs a secret/);
      expectOnly(withTriggers([{ id: 'a', type: 'webhook', path: 'x', secret: 'plain text key' }]), '/triggers/0/secret', /\{\{NAME\}\}/);
    });
    it('rejects an unknown trigger type and bad webhook fields', () => {
      expectOnly(withTriggers([{ id: 'a', type: 'email' }]), '/triggers/0/type');
      expectOnly(withTriggers([{ id: 'a', type: 'webhook', path: '/lead' }]), '/triggers/0/path');
      expectOnly(withTriggers([{ id: 'a', type: 'webhook', path: 'x', provider: 'gitlab' }]), '/triggers/0/provider');
    });
  });

  it('reports a wrong type once, without the length rule zod also runs on it', () => {
    // `"to": []` also got "Too small: expected array to have >=1 items" for a string field
    const doc = workflow([fn('a')]) as unknown as Record<string, unknown>;
    doc['connections'] = [{ from: 'start', to: [] }];
    const issues = issuesOf(doc);
    expect(issues.map((i) => i.path), JSON.stringify(issues)).to.deep.equal(['/connections/0/to']);
    expect(issues[0]?.message).to.match(/expected string, received array/);
  });

  it('collects every issue at once', () => {
    const doc = clone(SPEC_EXAMPLE) as unknown as Record<string, any>;
    doc['blocks'][4].name = 'So.rry';
    doc['blocks'][2].config.branches[0].expression = '<nothing.here> === 1';
    doc['connections'].push({ from: 'fallback', to: 'ghost' });
    doc['triggers'].push({ id: 'nightly', type: 'schedule', cron: 'bad' });
    doc['blocks'].push({ id: 'x', type: 'function', name: 'X' });
    expect(paths(doc)).to.have.members([
      '/blocks/4/name',
      '/blocks/2/config/branches/0/expression',
      '/blocks/5/config/code',
      '/connections/5/to',
      '/triggers/1/id',
      '/triggers/1/cron',
    ]);
  });
});
