import { expect } from 'chai';
import { compileWorkflow } from '../../src/model/graph.js';
import { basicCredentials, redactionValues, withSentCredentials } from '../../src/model/secret-forms.js';
import { registry } from './fixtures.js';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

describe('model/secret-forms: what redaction looks for', () => {
  it('the host name the URL parser lowercases', () => {
    const value = 'PlainSecretABCdef123';
    const host = new URL(`http://${value}.invalid/`).hostname;
    expect(redactionValues(new Map([['K', value]]))).to.include.members([value, 'plainsecretabcdef123']);
    expect(host).to.contain('plainsecretabcdef123');
  });

  it('the path and query text the URL parser makes of a value pasted into a URL', () => {
    const value = `my "pass|wörd'%^`;
    const forms = redactionValues(new Map([['K', value]]));
    const sent = new URL(`http://h/api/${value}/x?q=${value}&z=1`);
    const path = sent.pathname.slice('/api/'.length, -'/x'.length);
    const query = sent.search.slice('?q='.length, -'&z=1'.length);
    expect(path).to.not.equal(encodeURIComponent(value));
    expect(query).to.not.equal(path);
    expect(forms).to.include.members([path, query]);
  });

  it('keeps trailing spaces inside a URL, where the parser does not strip them', () => {
    const value = 'secret value  ';
    expect(redactionValues(new Map([['K', value]]))).to.include(new URL(`http://h/${value}x`).pathname.slice(1, -1));
  });

  it('a short value the run names is not lowercased (it would blank more unrelated text)', () => {
    expect(redactionValues(new Map([['K', 'AB']]))).to.not.include('ab');
  });

  it("the Basic credentials sent for a URL's userinfo: user name and password decoded, base64 of user:password", () => {
    const secrets = new Map([['P', 'pa:ss wörd@x'], ['U', 'Ü ser']]);
    expect(basicCredentials('http://u:{{P}}@127.0.0.1:8080/path', secrets)).to.equal(b64('u:pa:ss wörd@x'));
    expect(basicCredentials('https://{{U}}:{{P}}@example.com/', secrets)).to.equal(b64('Ü ser:pa:ss wörd@x'));
    expect(basicCredentials('http://{{U}}@example.com/', secrets)).to.equal(b64('Ü ser:'));
  });

  it('no Basic credentials without a secret in the userinfo, with a reference there, or an unknown secret', () => {
    const secrets = new Map([['P', 'password1']]);
    expect(basicCredentials('http://example.com/{{P}}@x', secrets)).to.equal(null);
    expect(basicCredentials('http://<start.user>:{{P}}@example.com/', secrets)).to.equal(null);
    expect(basicCredentials('http://u:{{MISSING}}@example.com/', secrets)).to.equal(null);
  });

  it("adds each API block's Basic credentials to a copy of the run's secrets, under names no {{NAME}} spells", () => {
    const doc = {
      name: 'w',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'a', type: 'api', name: 'A', config: { url: 'http://u:{{P}}@example.com/' } },
        { id: 'b', type: 'api', name: 'B', config: { url: 'http://example.com/{{P}}' } },
      ],
      connections: [{ from: 'start', to: 'a' }, { from: 'start', to: 'b' }],
    };
    const compiled = compileWorkflow(doc as never, registry);
    const secrets = new Map([['P', 'password1']]);
    const withCredentials = withSentCredentials(compiled, secrets);
    expect([...withCredentials]).to.deep.equal([['P', 'password1'], ['sent:a', b64('u:password1')]]);
    expect(secrets.size).to.equal(1);
    const plain = { ...doc, blocks: doc.blocks.filter((b) => b.id !== 'a'), connections: [doc.connections[1]] };
    const none = new Map([['P', 'password1']]);
    expect(withSentCredentials(compileWorkflow(plain as never, registry), none)).to.equal(none);
  });
});
