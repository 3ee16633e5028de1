import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../config/load.js';

describe('config: loadConfig', () => {
  it('applies the SPEC defaults', () => {
    const c = loadConfig({});
    expect(c).to.deep.include({ port: 3000, host: '127.0.0.1', chatHost: 'chat.localhost', maxInflight: 1000, keyRateLimit: 600, trustProxy: 0 });
    expect(c.smtpUrl).to.equal(undefined);
    expect(c.smtpFrom).to.equal(undefined);
  });

  it('reads the chat settings: SMTP sender, trusted proxies, chat host', () => {
    const c = loadConfig({ TROUPE_SMTP_URL: 'smtp://mail.example.com:587', TROUPE_SMTP_FROM: 'Help <help@example.com>', TROUPE_TRUST_PROXY: '1', TROUPE_CHAT_HOST: 'chat.example.com' });
    expect(c).to.deep.include({ smtpUrl: 'smtp://mail.example.com:587', smtpFrom: 'Help <help@example.com>', trustProxy: 1, chatHost: 'chat.example.com' });
    expect(loadConfig({ TROUPE_CHAT_HOST: 'Chat.Example.Test' }).chatHost).to.equal('chat.example.test');
    // no client could send it: every admin request would get 401
    expect(() => loadConfig({ TROUPE_ADMIN_TOKEN: 'admintoken123456789012345 ' })).to.throw(/TROUPE_ADMIN_TOKEN: must not contain spaces/);
    expect(() => loadConfig({ TROUPE_ADMIN_TOKEN: ' '.repeat(21) })).to.throw(/TROUPE_ADMIN_TOKEN/);
  });

  it('reads TROUPE_INSTANCE_ID (unset: none, generated per start by the service) and refuses one that is not a short printable name', () => {
    expect(loadConfig({}).instanceId).to.equal(undefined);
    expect(loadConfig({ TROUPE_INSTANCE_ID: 'eu-west-1.node-2' }).instanceId).to.equal('eu-west-1.node-2');
    for (const bad of ['two words', 'x'.repeat(65), 'é']) expect(() => loadConfig({ TROUPE_INSTANCE_ID: bad })).to.throw(/TROUPE_INSTANCE_ID: must be 1 to 64/);
  });

  it('reads the console settings: on by default for 12 h sessions; TROUPE_CONSOLE=false turns it off', () => {
    expect(loadConfig({})).to.deep.include({ console: true, consoleSessionHours: 12 });
    expect(loadConfig({ TROUPE_CONSOLE: 'false', TROUPE_CONSOLE_SESSION_HOURS: '1' })).to.deep.include({ console: false, consoleSessionHours: 1 });
    expect(() => loadConfig({ TROUPE_CONSOLE: 'maybe' })).to.throw(ConfigError, /TROUPE_CONSOLE/);
    expect(() => loadConfig({ TROUPE_CONSOLE_SESSION_HOURS: '0' })).to.throw(ConfigError, /TROUPE_CONSOLE_SESSION_HOURS: must be at least 1/);
  });

  it('reads the model providers\' own variables as agent defaults', () => {
    const c = loadConfig({ OPENAI_API_KEY: 'sk-1', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1', ANTHROPIC_API_KEY: 'sk-ant-2' });
    expect(c.models).to.deep.equal({ openai: { apiKey: 'sk-1', baseUrl: 'http://127.0.0.1:11434/v1' }, anthropic: { apiKey: 'sk-ant-2', baseUrl: undefined } });
  });

  it('reads whole numbers in decimal digits only, and booleans in any case', () => {
    expect(loadConfig({ TROUPE_PORT: ' 8080 ', TROUPE_ALLOW_PRIVATE_NETWORK: 'TRUE' })).to.deep.include({ port: 8080, allowPrivateNetwork: true });
    expect(loadConfig({ TROUPE_ALLOW_PRIVATE_NETWORK: 'No' }).allowPrivateNetwork).to.equal(false);
    // a log level in capitals (LOG_LEVEL=INFO) is the same level; an unknown one is still refused
    expect(loadConfig({ TROUPE_LOG_LEVEL: 'DEBUG' }).logLevel).to.equal('debug');
    expect(() => loadConfig({ TROUPE_LOG_LEVEL: 'verbose' })).to.throw(ConfigError, /TROUPE_LOG_LEVEL/);
    expect(() => loadConfig({ TROUPE_EXECUTION_TIMEOUT_MS: '2147483648' })).to.throw(ConfigError, /TROUPE_EXECUTION_TIMEOUT_MS/);
    for (const port of ['0x50', '1e3', '80.5', '+80', '- 1']) {
      expect(() => loadConfig({ TROUPE_PORT: port }), port).to.throw(ConfigError, /TROUPE_PORT: must be a whole number in decimal digits|TROUPE_PORT/);
    }
  });

  it('says the range of a whole number outside it, and reads the per-host rate in decimal digits', () => {
    expect(() => loadConfig({ TROUPE_PORT: '70000' })).to.throw(ConfigError, /TROUPE_PORT: must be at most 65535/);
    expect(() => loadConfig({ TROUPE_KEY_RATE_LIMIT: '0' })).to.throw(ConfigError, /TROUPE_KEY_RATE_LIMIT: must be at least 1/);
    expect(() => loadConfig({ TROUPE_FUNCTION_MEMORY_MB: '2' })).to.throw(ConfigError, /TROUPE_FUNCTION_MEMORY_MB: must be at least 8/);
    expect(() => loadConfig({ TROUPE_PORT: '-1' })).to.throw(ConfigError, /TROUPE_PORT: must be at least 0/);
    expect(() => loadConfig({ TROUPE_MAX_INFLIGHT: ' -20 ' })).to.throw(ConfigError, /TROUPE_MAX_INFLIGHT: must be at least 1/);
    expect(loadConfig({ TROUPE_HOST_RPS: '2.5' }).hostRps).to.equal(2.5);
    for (const rps of ['0x10', '1e3', 'ten']) {
      expect(() => loadConfig({ TROUPE_HOST_RPS: rps }), rps).to.throw(ConfigError, /TROUPE_HOST_RPS: must be a number in decimal digits/);
    }
    expect(() => loadConfig({ TROUPE_HOST_RPS: '0' })).to.throw(ConfigError, /TROUPE_HOST_RPS: must be greater than 0/);
  });

  it('reads TROUPE_EXECUTION_RETENTION_DAYS: 30 by default, 0 keeps forever, a negative or fraction is refused', () => {
    expect(loadConfig({}).executionRetentionDays).to.equal(30);
    expect(loadConfig({ TROUPE_EXECUTION_RETENTION_DAYS: '0' }).executionRetentionDays).to.equal(0);
    expect(loadConfig({ TROUPE_EXECUTION_RETENTION_DAYS: '7' }).executionRetentionDays).to.equal(7);
    expect(() => loadConfig({ TROUPE_EXECUTION_RETENTION_DAYS: '-1' })).to.throw(/TROUPE_EXECUTION_RETENTION_DAYS: must be at least 0/);
    expect(() => loadConfig({ TROUPE_EXECUTION_RETENTION_DAYS: '1.5' })).to.throw(/TROUPE_EXECUTION_RETENTION_DAYS: must be a whole number/);
  });

  it('refuses bad values, naming each variable', () => {
    const bad = { TROUPE_CHAT_HOST: 'http://chat.example.com:3000', TROUPE_SMTP_FROM: 'not an address', TROUPE_TRUST_PROXY: '-1', TROUPE_PORT: 'x', OPENAI_BASE_URL: 'api.openai.com' };
    expect(() => loadConfig(bad)).to.throw(ConfigError).that.satisfies((e: Error) =>
      ['TROUPE_CHAT_HOST', 'TROUPE_SMTP_FROM', 'TROUPE_TRUST_PROXY', 'TROUPE_PORT', 'OPENAI_BASE_URL'].every((k) => e.message.includes(k)),
    );
  });

  it('takes TROUPE_ALLOW_HOSTS as host names, *.domains, IPs and CIDRs, and refuses anything else naming it', () => {
    const ok = loadConfig({ TROUPE_ALLOW_HOSTS: ' api.internal , *.Corp.Example,10.0.0.0/8, ::1,[fe80::1], _svc.local., 192.168.1.5 ,' });
    expect(ok.allowHosts).to.deep.equal(['api.internal', '*.Corp.Example', '10.0.0.0/8', '::1', '[fe80::1]', '_svc.local.', '192.168.1.5']);
    const refused: Array<[string, RegExp]> = [
      ['10.0.0.0/33', /TROUPE_ALLOW_HOSTS: "10.0.0.0\/33" is not an IP address, a CIDR, a host name or \*\.domain/],
      ['*.', /TROUPE_ALLOW_HOSTS: "\*\." is not/],
      ['*', /TROUPE_ALLOW_HOSTS: "\*" is not/],
      ['ok.example, http://api.example', /TROUPE_ALLOW_HOSTS: "http:\/\/api.example" is not/],
      ['api.example:8080', /TROUPE_ALLOW_HOSTS: "api.example:8080" is not/],
      ['two words', /TROUPE_ALLOW_HOSTS: "two words" is not/],
      ['a..b', /TROUPE_ALLOW_HOSTS: "a..b" is not/],
    ];
    for (const [value, message] of refused) expect(() => loadConfig({ TROUPE_ALLOW_HOSTS: value }), value).to.throw(ConfigError, message);
  });

  it('takes NATS_URL in the forms the NATS client can use, and never shows its password', () => {
    for (const url of ['nats://127.0.0.1:4222', 'localhost:4222', 'tls://nats.example.com', 'nats://alice:s3cret@n1:4222,nats://n2:4222', 'nats://tok@[::1]:4222']) {
      expect(loadConfig({ NATS_URL: url }).natsUrl, url).to.equal(url);
    }
    const refused: Array<[string, RegExp]> = [
      ['not-a-url', /NATS_URL: "not-a-url" must be nats:\/\/host:port, tls:\/\/host:port or host:port/],
      ['ws://127.0.0.1:8080', /NATS_URL: "ws:\/\/127.0.0.1:8080" is a WebSocket URL/],
      ['http://127.0.0.1:4222', /NATS_URL: "http:\/\/127.0.0.1:4222" must be/],
      ['nats://a:4222,tls://b:4222', /NATS_URL: the list mixes tls:\/\//],
      ['nats://a:4222,,nats://b:4222', /NATS_URL: the list has an empty entry/],
      ['nats://alice:hunter2pass@h:4222/x', /NATS_URL: "nats:\/\/alice:\*\*\*@h:4222\/x" must be/],
    ];
    for (const [url, message] of refused) expect(() => loadConfig({ NATS_URL: url }), url).to.throw(ConfigError, message);
    expect(() => loadConfig({ NATS_URL: 'nats://alice:hunter2pass@h:99999' })).to.throw(ConfigError).that.satisfies((e: Error) => !e.message.includes('hunter2pass'));
  });

  it('takes DATABASE_URL as a postgres:// or postgresql:// URL, and refuses it together with MONGODB_URL naming both', () => {
    expect(loadConfig({}).databaseUrl).to.equal(undefined);
    expect(loadConfig({ DATABASE_URL: 'postgres://troupe:pw@db.internal:5432/troupe' }).databaseUrl).to.equal('postgres://troupe:pw@db.internal:5432/troupe');
    expect(loadConfig({ DATABASE_URL: 'postgresql://127.0.0.1/troupe' }).databaseUrl).to.equal('postgresql://127.0.0.1/troupe');
    for (const bad of ['mysql://127.0.0.1/troupe', '127.0.0.1:5432', 'postgres://']) {
      expect(() => loadConfig({ DATABASE_URL: bad }), bad).to.throw(ConfigError, /DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/);
    }
    const both = { DATABASE_URL: 'postgres://127.0.0.1/troupe', MONGODB_URL: 'mongodb://127.0.0.1/troupe' };
    expect(() => loadConfig(both)).to.throw(ConfigError, /DATABASE_URL and MONGODB_URL: both are set/);
    // the other variables' problems are still listed with it
    expect(() => loadConfig({ ...both, TROUPE_PORT: 'x' })).to.throw(ConfigError, /TROUPE_PORT[\s\S]*DATABASE_URL and MONGODB_URL/);
    // an empty variable counts as unset
    expect(loadConfig({ ...both, MONGODB_URL: '' }).databaseUrl).to.equal('postgres://127.0.0.1/troupe');
  });
});
