import { expect } from 'chai';
import { blockTypeRegistry } from '../../src/blocks/index.js';
import { validateWorkflow } from '../../src/model/validate.js';

const registry = blockTypeRegistry();

function docWith(blocks: Record<string, unknown>[]): unknown {
  return {
    name: 'typed fields',
    blocks: [{ id: 's', type: 'starter', name: 'Start', config: {} }, ...blocks],
    connections: blocks.filter((b) => b['parent'] === undefined).map((b) => ({ from: 's', to: b['id'] })),
  };
}

const issuesOf = (doc: unknown): string[] => {
  const result = validateWorkflow(doc, registry);
  return result.ok ? [] : result.issues.map((i) => `${i.path}: ${i.message}`);
};

describe('blocks/registry: config validation with references (SPEC §1.2)', () => {
  it('accepts a whole reference or {{SECRET}} in a field of any type: its value is checked at run time', () => {
    const doc = docWith([
      { id: 'api', type: 'api', name: 'Call', config: { url: '<start.url>', method: '<start.method>', timeoutMs: '<start.timeout>', retries: '{{RETRIES}}' } },
      { id: 'lp', type: 'loop', name: 'Repeat', config: { kind: 'for', iterations: '<start.n>', maxIterations: '<start.max>' } },
      { id: 'body', type: 'function', name: 'Body', parent: 'lp', config: { code: 'return 1' } },
      { id: 'par', type: 'parallel', name: 'Fan', config: { kind: 'count', count: 2, concurrency: '<start.c>' } },
      { id: 'leg', type: 'function', name: 'Leg', parent: 'par', config: { code: 'return 2' } },
    ]);
    expect(issuesOf(doc)).to.deep.equal([]);
  });

  it('still refuses a literal of the wrong type, and text that only contains a reference', () => {
    const doc = docWith([
      { id: 'api', type: 'api', name: 'Call', config: { url: 'https://example.com', method: 'FETCH', timeoutMs: 'soon' } },
      { id: 'lp', type: 'loop', name: 'Repeat', config: { kind: 'for', iterations: 2, maxIterations: 'x<start.max>' } },
      { id: 'body', type: 'function', name: 'Body', parent: 'lp', config: { code: 'return 1' } },
    ]);
    expect(issuesOf(doc).map((i) => i.split(':')[0])).to.deep.equal(['/blocks/1/config/method', '/blocks/1/config/timeoutMs', '/blocks/2/config/maxIterations']);
  });

  it('refuses collection items that could never be iterated: a number, a boolean, text that is neither JSON nor a reference', () => {
    const loop = (id: string, items: unknown) => [
      { id, type: 'loop', name: id, config: { kind: 'forEach', items } },
      { id: `${id}b`, type: 'function', name: `${id}b`, parent: id, config: { code: 'return 1' } },
    ];
    const doc = docWith([
      ...loop('n', 5), ...loop('t', true), ...loop('abc', 'abc'), ...loop('q', '"just text"'),
      { id: 'p', type: 'parallel', name: 'p', config: { kind: 'collection', items: 7 } },
      { id: 'pb', type: 'function', name: 'pb', parent: 'p', config: { code: 'return 1' } },
      // all of these can be iterated (or resolve at run time)
      ...loop('arr', [1, 2]), ...loop('obj', { a: 1 }), ...loop('json', '["x"]'), ...loop('ref', '<start.items>'), ...loop('mixed', '[<start.a>, 2]'), ...loop('nil', null),
    ]);
    expect(issuesOf(doc).map((i) => i.split(':')[0])).to.deep.equal([
      '/blocks/1/config/items', '/blocks/3/config/items', '/blocks/5/config/items', '/blocks/7/config/items', '/blocks/9/config/items',
    ]);
    expect(issuesOf(doc)[0]).to.match(/items must be an array, an object or a JSON string, got number/);
  });

  it('refuses a delay longer than a timer can take (2^31 − 1 ms): it would fire at once', () => {
    const doc = docWith([
      { id: 'lp', type: 'loop', name: 'Repeat', timeoutMs: 2_147_483_648, config: { kind: 'for', iterations: 2 } },
      { id: 'body', type: 'function', name: 'Body', parent: 'lp', config: { code: 'return 1' } },
      { id: 'api', type: 'api', name: 'Call', config: { url: 'https://example.com', timeoutMs: 2_147_483_648, retryMaxMs: 2_147_483_647 } },
    ]);
    expect(issuesOf(doc).map((i) => i.split(':')[0])).to.deep.equal(['/blocks/1/timeoutMs', '/blocks/3/config/timeoutMs']);
  });

  it('checks what is literal when the workflow is saved: an API URL, a response status', () => {
    const doc = docWith([
      { id: 'a', type: 'api', name: 'A', config: { url: 'not a url' } },
      { id: 'b', type: 'api', name: 'B', config: { url: 'ftp://files.example.com/x' } },
      { id: 'r', type: 'response', name: 'R', config: { status: 'abc' } },
      { id: 'ok1', type: 'api', name: 'Ok1', config: { url: '<start.base>/items/{id}', pathParams: { id: 1 } } },
      { id: 'ok4', type: 'api', name: 'Ok4', config: { url: 'http://example.com:{port}/x', pathParams: { port: 8080 } } },
      { id: 'ok2', type: 'api', name: 'Ok2', config: { url: 'https://api.example.com/users/{id}' } },
      { id: 'ok3', type: 'response', name: 'Ok3', config: { status: '201' } },
    ]);
    expect(issuesOf(doc)).to.deep.equal([
      '/blocks/1/config/url: url must be an absolute http or https URL',
      '/blocks/2/config/url: url must be http or https, not ftp:',
      '/blocks/3/config/status: status must be an integer from 200 to 599',
    ]);
  });

  it('keeps what the config cannot do without, and the starter, strict', () => {
    const doc = {
      name: 'structure',
      blocks: [
        { id: 's', type: 'starter', name: 'Start', config: { inputFormat: [{ name: 'n', type: 'number', required: '<variable.req>' }] } },
        { id: 'lp', type: 'loop', name: 'Repeat', config: { kind: '<start.kind>', iterations: 2 } },
        { id: 'body', type: 'function', name: 'Body', parent: 'lp', config: { code: 'return 1' } },
        { id: 'c', type: 'condition', name: 'Check', config: { branches: [{ id: '<start.a>', expression: 'true' }] } },
        { id: 'c2', type: 'condition', name: 'Check2', config: { branches: '<start.branches>' } },
        { id: 'st', type: 'response', name: 'Odd', config: { status: '999' } },
        { id: 'u', type: 'api', name: 'Ftp', config: { url: 'ftp://files.example.com/{path}' } },
        { id: 'rt', type: 'router', name: 'Route', config: { mode: '<start.mode>', prompt: 'which?', routes: [{ id: 'a', description: 'A' }] } },
        { id: 'pad', type: 'parallel', name: 'Padded', config: { kind: 'count', count: 2, concurrency: ' <start.c> ' } },
        { id: 'leg', type: 'function', name: 'Leg', parent: 'pad', config: { code: 'return 1' } },
      ],
      connections: [{ from: 's', to: 'lp' }, { from: 's', to: 'c' }, { from: 's', to: 'c2' }, { from: 's', to: 'st' }, { from: 's', to: 'u' }, { from: 's', to: 'rt' }, { from: 's', to: 'pad' }],
    };
    const paths = issuesOf(doc).map((i) => i.split(':')[0]);
    for (const path of ['/blocks/0/config/inputFormat/0/required', '/blocks/1/config/kind', '/blocks/3/config/branches/0/id', '/blocks/4/config/branches', '/blocks/5/config/status', '/blocks/6/config/url', '/blocks/7/config/mode', '/blocks/8/config/concurrency']) {
      expect(paths, path).to.include(path);
    }
  });

  it('gives a block its handles when a field of it waits for run time', () => {
    const doc = {
      name: 'handles',
      blocks: [
        { id: 's', type: 'starter', name: 'Start', config: {} },
        { id: 'api', type: 'api', name: 'Call', config: { url: 'https://example.com', timeoutMs: '<start.t>' } },
        { id: 'r', type: 'response', name: 'Reply', config: {} },
        { id: 'oops', type: 'response', name: 'Oops', config: { status: 502 } },
      ],
      connections: [{ from: 's', to: 'api' }, { from: 'api', to: 'r' }, { from: 'api', to: 'oops', handle: 'error' }],
    };
    expect(issuesOf(doc)).to.deep.equal([]);
  });

  it('refuses what could never resolve to a fitting value: a secret where a number must be, a count in words', () => {
    const doc = docWith([
      { id: 'par', type: 'parallel', name: 'Fan', config: { kind: 'count', count: 'three', concurrency: '{{C}}' } },
      { id: 'leg', type: 'function', name: 'Leg', parent: 'par', config: { code: 'return 1' } },
      { id: 'c', type: 'condition', name: 'Check', config: { branches: [{ id: 'big', expression: 'true' }], else: '<start.e>' } },
      { id: 'rt', type: 'router', name: 'Route', config: { mode: '<start.mode>', value: '1', routes: [{ id: 'a', equals: 1 }] } },
    ]);
    const paths = issuesOf(doc).map((i) => i.split(':')[0]);
    expect(paths).to.include.members(['/blocks/1/config/count', '/blocks/1/config/concurrency', '/blocks/3/config/else', '/blocks/4/config/mode']);
  });

  it('reports every issue of a config at once, its refinements too when another field has the wrong type', () => {
    // zod skips an object's refinements once a field failed its type: these used to show only the first
    const doc = docWith([
      { id: 'c', type: 'condition', name: 'C', config: { branches: [{ id: 'a', expression: '1' }, { id: 'a', expression: '2' }, { id: 'else', expression: '3' }], else: 1 } },
      { id: 'lp', type: 'loop', name: 'Lp', config: { kind: 'for', maxIterations: 'many' } },
      { id: 'par', type: 'parallel', name: 'Par', config: { kind: 'collection', concurrency: 'x' } },
      { id: 'c2', type: 'condition', name: 'C2', config: { branches: [5, { id: 'b', expression: 7 }, { id: 'b', expression: 'x' }] } },
    ]);
    expect(issuesOf(doc)).to.have.members([
      '/blocks/1/config/else: Invalid input: expected boolean, received number',
      '/blocks/1/config/branches/1/id: duplicate id "a"',
      '/blocks/1/config/branches/2/id: "else" is reserved and cannot be used as an id',
      '/blocks/2/config/maxIterations: Invalid input: expected number, received string',
      '/blocks/2/config/iterations: a "for" loop needs iterations',
      '/blocks/3/config/concurrency: Invalid input: expected number, received string',
      '/blocks/3/config/items: a "collection" parallel needs items',
      '/blocks/4/config/branches/0: Invalid input: expected object, received number',
      '/blocks/4/config/branches/1/expression: Invalid input: expected string, received number',
      '/blocks/4/config/branches/2/id: duplicate id "b"',
    ]);
    // nothing reads the fields of a config that is no object (validateConfig is called directly)
    for (const type of ['condition', 'loop', 'parallel', 'starter', 'router', 'memory', 'agent']) {
      expect(registry[type]!.validateConfig(null).map((i) => i.path), type).to.deep.equal(['']);
    }
    const starter = { id: 's', type: 'starter', name: 'Start', config: { inputFormat: [{ name: 'a', type: 'number', default: 'x' }, { name: 'a', required: 'yes' }, 3] } };
    expect(issuesOf({ name: 'x', blocks: [starter] })).to.have.members([
      '/blocks/0/config/inputFormat/0/default: the default must be a number',
      '/blocks/0/config/inputFormat/1/required: Invalid input: expected boolean, received string',
      '/blocks/0/config/inputFormat/1/name: duplicate field "a"',
      '/blocks/0/config/inputFormat/2: Invalid input: expected object, received number',
    ]);
  });

  it('refuses a literal API header name HTTP cannot carry when the workflow is saved', () => {
    const doc = docWith([
      { id: 'a', type: 'api', name: 'A', config: { url: 'https://example.com/', headers: [{ key: 'Bad Name', value: 'x' }, { key: '  ', value: 'x' }, { key: '<start.h>', value: 'x' }, { key: ' X-Ok ', value: 'a\nb' }] } },
      { id: 'b', type: 'api', name: 'B', config: { url: 'https://example.com/', headers: { 'X:Y': '1', 'X-Ok': '{{TOKEN}}' } } },
    ]);
    expect(issuesOf(doc)).to.deep.equal([
      '/blocks/1/config/headers/0/key: header name "Bad Name" is not a valid HTTP header name',
      '/blocks/2/config/headers/X:Y: header name "X:Y" is not a valid HTTP header name',
    ]);
  });

  it('refuses a blank condition expression or loop condition: it could only be a syntax error at run time', () => {
    const doc = docWith([
      { id: 'c', type: 'condition', name: 'C', config: { branches: [{ id: 'a', expression: '  ' }, { id: 'b', expression: ' ;\n' }, { id: 'd', expression: 'true;' }] } },
      { id: 'lp', type: 'loop', name: 'Lp', config: { kind: 'while', condition: '\t' } },
    ]);
    expect(issuesOf(doc)).to.deep.equal([
      '/blocks/1/config/branches/0/expression: an expression is required',
      '/blocks/1/config/branches/1/expression: an expression is required',
      '/blocks/2/config/condition: an expression is required',
    ]);
  });

  it('reports a router\'s duplicate route ids and unknown default beside a wrong type (they were hidden)', () => {
    const routes = [{ id: 'a', equals: 1 }, { id: 'a', equals: 2 }];
    const doc = docWith([
      { id: 'r1', type: 'router', name: 'R1', config: { value: 5, routes, default: 'zz' } },
      { id: 'r2', type: 'router', name: 'R2', config: { value: 'x', routes: [{ id: 'b' }, ...routes], default: 'zz' } },
      { id: 'r3', type: 'router', name: 'R3', config: { mode: 'llm', prompt: 'p', model: 'm', temperature: 'hot', routes: [{ id: 'a', description: 5 }, { id: 'a', description: 'y' }], default: 'q' } },
      { id: 'r4', type: 'router', name: 'R4', config: { value: 'x', routes: 'none', default: 'a' } },
    ]);
    expect(issuesOf(doc)).to.have.members([
      '/blocks/1/config/value: Invalid input: expected string, received number',
      '/blocks/1/config/routes/1/id: duplicate id "a"',
      '/blocks/1/config/default: default names no route: "zz"',
      '/blocks/2/config/routes/0/equals: a route needs "equals": the value it matches (null matches a missing value; "default" names the route taken when none matches)',
      '/blocks/2/config/routes/2/id: duplicate id "a"',
      '/blocks/2/config/default: default names no route: "zz"',
      '/blocks/3/config/temperature: must be a number',
      '/blocks/3/config/routes/0/description: Invalid input: expected string, received number',
      '/blocks/3/config/routes/1/id: duplicate id "a"',
      '/blocks/3/config/default: default names no route: "q"',
      // no list, no ids: nothing to hold the default against
      '/blocks/4/config/routes: Invalid input: expected array, received string',
    ]);
  });

  it('refuses a blank rules-router value: it could only be a syntax error at every run', () => {
    const routes = [{ id: 'a', equals: null }];
    const doc = docWith([
      { id: 'r1', type: 'router', name: 'R1', config: { value: ' \n ', routes } },
      { id: 'r2', type: 'router', name: 'R2', config: { value: ';', routes } },
      { id: 'r3', type: 'router', name: 'R3', config: { value: '<start.tier>', routes } },
    ]);
    expect(issuesOf(doc)).to.deep.equal([
      '/blocks/1/config/value: a value (expression or reference) is required',
      '/blocks/2/config/value: a value (expression or reference) is required',
    ]);
  });
});
