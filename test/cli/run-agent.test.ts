import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useMockLlm } from '../helpers/mock-llm.js';
import { troupeAsync } from './serve-helpers.js';

describe('troupe run: an agent block', function () {
  this.timeout(60_000);
  let dir: string;
  const llm = useMockLlm();
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-cli-agent-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('shows the streamed answer as it arrives, then the output, and keeps the key out', async () => {
    llm.script({ pieces: ['Hello ', 'Ada,\n', 'welcome'] });
    const file = join(dir, 'agent.json');
    writeFileSync(file, JSON.stringify({
      id: 'cli-agent',
      name: 'cli agent',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'ask', type: 'agent', name: 'Ask', config: { model: 'gpt-test', baseUrl: llm.openaiUrl, apiKey: '{{LLM_KEY}}', userPrompt: 'Greet <start.name>' } },
      ],
      connections: [{ from: 'start', to: 'ask' }],
    }));
    const env = { TROUPE_DATA_DIR: dir, TROUPE_ALLOW_PRIVATE_NETWORK: 'true', TROUPE_VAR_LLM_KEY: 'sk-cli-secret' };
    const r = await troupeAsync(['run', file, '--input', '{"name":"Ada"}'], env);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.contain('▶ Ask (agent) started\n  ┆ Hello Ada,\n  ┆ welcome\n✔ Ask (agent) completed');
    expect(r.stdout).to.contain('"content": "Hello Ada,\\nwelcome"');
    expect(r.stdout + r.stderr).not.to.contain('sk-cli-secret');
    expect(llm.requests[0]!.headers['authorization']).to.equal('Bearer sk-cli-secret');
  });

  it('waits for a function timer the code awaits, and exits with one still pending', async () => {
    const file = join(dir, 'timer.json');
    writeFileSync(file, JSON.stringify({
      id: 'cli-timer',
      name: 'cli timer',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'f', type: 'function', name: 'F', config: { code: 'await new Promise((r) => setTimeout(r, 300)); setTimeout(() => {}, 600000); return "waited"' } },
      ],
      connections: [{ from: 'start', to: 'f' }],
    }));
    // a process held by the pending timer would outlive the mocha timeout
    const r = await troupeAsync(['run', file], { TROUPE_DATA_DIR: dir });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('"result": "waited"');
  });
});
