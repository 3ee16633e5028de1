import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import { ensureBuilt } from '../helpers/build.js';

const root = new URL('../../', import.meta.url).pathname;
ensureBuilt();

function troupe(args: string[], dataDir: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['bin/troupe.js', ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, TROUPE_DATA_DIR: dataDir, TROUPE_LOG_LEVEL: 'silent' },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('troupe CLI: run and validate', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-cli-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('runs each example with live progress and exit code 0', () => {
    const runs: [string, string, unknown][] = [
      ['examples/branching.json', '{"customer":"ada","amount":250}', { status: 200, headers: {}, data: { queue: 'priority', customer: 'ada', amount: 250 } }],
      ['examples/parallel-join.json', '{"numbers":[1,2,3]}', { result: { count: 3, sum: 6, mean: 2, min: 1, max: 3 }, stdout: '' }],
      ['examples/error-path.json', '{"payload":"{}"}', { status: 422, headers: {}, data: { error: 'total must be a number', total: 0 } }],
      ['examples/chat-echo.json', '{"message":"hi","turn":21,"history":[]}', { result: { content: 'Turn 21: you said "hi" (0 earlier messages in view)' }, stdout: '' }],
    ];
    for (const [file, input, output] of runs) {
      const r = troupe(['run', file, '--input', input, '--json'], dir);
      expect(r.code, r.stderr).to.equal(0);
      expect(JSON.parse(r.stdout).output).to.deep.equal(output);
      const human = troupe(['run', file, '--input', input], dir);
      expect(human.code).to.equal(0);
      expect(human.stderr).to.match(/▶ Start \(starter\) started/);
      expect(human.stderr).to.match(/✔ Start \(starter\) completed in \d+ ms/);
      expect(human.stderr).to.match(/execution \S+ completed in \d+ ms/);
      // stdout is the result alone, so `troupe run ... | jq` reads it
      expect(JSON.parse(human.stdout)).to.deep.equal(output);
    }
  });

  it('exits non-zero when the execution fails', () => {
    const r = troupe(['run', 'examples/branching.json', '--input', '{"customer":"ada"}'], dir);
    expect(r.code).to.equal(1);
    expect(JSON.parse(r.stdout)).to.deep.include({ error: { code: 'INVALID_INPUT', message: "the input does not match the starter's inputFormat: amount is required", blockId: 'start' } });
    expect(r.stderr).to.match(/✖ Start \(starter\) failed/);
    expect(r.stderr).to.match(/execution \S+ failed in \d+ ms: INVALID_INPUT: .* \(block start\)/);
  });

  it('reads --input from a file (@path) or from stdin (@-)', () => {
    const file = join(dir, 'input.json');
    writeFileSync(file, '{"customer":"ada","amount":250}');
    const fromFile = troupe(['run', 'examples/branching.json', '--input', `@${file}`], dir);
    expect(fromFile.code, fromFile.stderr).to.equal(0);
    expect(JSON.parse(fromFile.stdout)).to.deep.include({ data: { queue: 'priority', customer: 'ada', amount: 250 } });
    const fromStdin = spawnSync(process.execPath, ['bin/troupe.js', 'run', 'examples/branching.json', '--input', '@-'], {
      cwd: root,
      encoding: 'utf8',
      input: '{"customer":"bo","amount":5}',
      env: { ...process.env, TROUPE_DATA_DIR: dir, TROUPE_LOG_LEVEL: 'silent' },
      timeout: 60_000,
    });
    expect(fromStdin.status, fromStdin.stderr).to.equal(0);
    expect(JSON.parse(fromStdin.stdout)).to.deep.include({ data: { queue: 'standard', customer: 'bo', note: 'amount 5 is under 100' } });
    const missing = troupe(['run', 'examples/branching.json', '--input', `@${join(dir, 'none.json')}`], dir);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.contain('cannot read');
  });

  it('validate prints every issue with its JSON path', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({
      name: 'bad',
      blocks: [
        { id: 's', type: 'starter', name: 'Start', config: {} },
        { id: 'f', type: 'function', name: 'F.x', config: { code: 'return <nope.x>' } },
      ],
      connections: [{ from: 's', to: 'ghost' }],
    }));
    const r = troupe(['validate', bad], dir);
    expect(r.code).to.equal(1);
    expect(r.stdout).to.contain('/connections/0/to');
    expect(r.stdout).to.contain('/blocks/1/name');
    expect(r.stdout).to.contain('/blocks/1/config/code');
    expect(troupe(['validate', 'examples/branching.json'], dir).code).to.equal(0);
    // run refuses the same file with the same issues, not only their count
    const run = troupe(['run', bad], dir);
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain('INVALID_WORKFLOW');
    expect(run.stderr).to.contain('/connections/0/to');
    expect(run.stderr).to.contain('/blocks/1/config/code');
  });

  it('Ctrl-C (or SIGTERM) cancels the run: the record says cancelled, the cut-off block is shown, exit code 130 (143)', async () => {
    const slow = join(dir, 'slow.json');
    writeFileSync(slow, JSON.stringify({
      id: 'slow',
      name: 'slow',
      blocks: [
        { id: 's', type: 'starter', name: 'Start', config: {} },
        { id: 'f', type: 'function', name: 'Spin', config: { code: 'await new Promise(() => {}); return 1' } },
      ],
      connections: [{ from: 's', to: 'f' }],
    }));
    for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
      const data = mkdtempSync(join(tmpdir(), 'troupe-cli-signal-'));
      const child = spawn(process.execPath, ['bin/troupe.js', 'run', slow], { cwd: root, env: { ...process.env, TROUPE_DATA_DIR: data } });
      let stderr = '';
      let stdout = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      while (!stderr.includes('Spin (function) started')) await new Promise((r) => setTimeout(r, 20));
      child.kill(signal);
      expect(await exited, signal).to.equal(code);
      expect(stderr).to.contain('■ Spin (function) cancelled');
      expect(stderr).to.match(/execution \S+ cancelled in \d+ ms/);
      expect((JSON.parse(stdout) as { error: { code: string } }).error.code).to.be.a('string');
      const store = openSqliteStore(join(data, 'troupe.db'));
      try {
        const { items } = await store.executions.list('slow', { limit: 10 });
        expect(items.map((e) => e.status)).to.deep.equal(['cancelled']);
      } finally {
        await store.close();
        rmSync(data, { recursive: true, force: true });
      }
    }
  });

  it('answers a malformed command line with what is wrong and the usage, exit code 2', () => {
    const r = troupe(['run', 'examples/branching.json', '--input'], dir);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/--input/);
    expect(r.stderr).to.contain('usage:');
    expect(r.stderr).to.not.match(/\n\s+at /);
    for (const timeout of ['abc', '0', '-5', '1.5']) {
      const bad = troupe(['run', 'examples/branching.json', `--timeout=${timeout}`], dir);
      expect(bad.code, timeout).to.equal(2);
      expect(bad.stderr).to.contain('--timeout takes a time limit in ms');
    }
    const url = troupe(['deploy', 'examples/hello.json', '--url', '127.0.0.1:3000', '--token', 'x'], dir);
    expect(url.code).to.equal(2);
    expect(url.stderr).to.contain('--url must be the service');
    // given twice, or one argument too many: refused, not silently dropped
    for (const args of [['run', 'examples/branching.json', '--input', '{}', '--input', '{"a":1}'], ['validate', 'examples/hello.json', 'extra'],
      ['run', 'examples/hello.json', 'examples/branching.json'], ['serve', 'oops']]) {
      const bad = troupe(args, dir);
      expect([args.join(' '), bad.code]).to.deep.equal([args.join(' '), 2]);
      expect(bad.stderr).to.match(/more than once|unexpected argument/i);
      expect(bad.stderr).to.contain('usage:');
    }
    // no command at all: the usage on stderr (stdout stays for what was asked), exit code 2
    const none = troupe([], dir);
    expect(none.code).to.equal(2);
    expect(none.stdout).to.equal('');
    expect(none.stderr).to.contain('usage:');
    const help = troupe(['run', '--help'], dir);
    expect(help.code).to.equal(0);
    expect(help.stdout).to.contain('--json');
  });

  it('deploy that finds no service at the address from TROUPE_HOST/TROUPE_PORT says how to name another one', () => {
    const r = spawnSync(process.execPath, ['bin/troupe.js', 'deploy', 'examples/hello.json', '--token', 'a-token-of-16-chars-or-more'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, TROUPE_DATA_DIR: dir, TROUPE_PORT: '1' },
      timeout: 60_000,
    });
    expect(r.status).to.equal(1);
    expect(r.stderr).to.contain('not reachable at http://127.0.0.1:1');
    expect(r.stderr).to.contain('pass --url, or set TROUPE_HOST/TROUPE_PORT');
  });

  it('validate checks a file as run and the service do: a missing name is the id', () => {
    const nameless = join(dir, 'nameless.json');
    writeFileSync(nameless, JSON.stringify({
      id: 'nameless',
      blocks: [{ id: 's', type: 'starter', name: 'Start', config: {} }, { id: 'f', type: 'function', name: 'F', config: { code: 'return 1' } }],
      connections: [{ from: 's', to: 'f' }],
    }));
    const r = troupe(['validate', nameless], dir);
    expect(r.code, r.stdout).to.equal(0);
    expect(r.stdout).to.contain('valid (2 blocks, 1 connection)');
  });

  it('rejects a bad setting naming the variable', () => {
    const r = spawnSync(process.execPath, ['bin/troupe.js', 'run', 'examples/branching.json'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, TROUPE_DATA_DIR: dir, TROUPE_FUNCTION_TIMEOUT_MS: 'soon' },
    });
    expect(r.status).to.not.equal(0);
    expect(r.stderr).to.contain('TROUPE_FUNCTION_TIMEOUT_MS');
  });
});
