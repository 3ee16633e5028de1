import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { CHAT_PAGE_SCRIPT } from '../../src/http/chat-page-script.js';
import { DEFAULT_PRIMARY_COLOR, escapeHtml, jsonForScript, renderChatPage, safeColor, safeLogoUrl } from '../../src/http/chat-page.js';

const NASTY = `Evil </script><script>alert("x")</script> & 'quoted' "title"`;

function configOf(html: string): Record<string, unknown> {
  const match = /<script type="application\/json" id="chat-config">([\s\S]*?)<\/script>/.exec(html);
  expect(match, 'config block').to.not.equal(null);
  return JSON.parse(match![1]!) as Record<string, unknown>;
}

function scriptTags(html: string): number {
  return html.match(/<script[\s>]/g)?.length ?? 0;
}

describe('http: chat page', () => {
  it('escapes a title with <script> and quotes in the heading, the <title> and the config block', () => {
    const html = renderChatPage({ subdomain: 'acme', branding: { title: NASTY, description: NASTY, welcomeMessage: NASTY }, authMode: 'public' });
    expect(html).to.not.include('<script>alert');
    expect(html).to.not.include('"x")');
    expect(scriptTags(html)).to.equal(2); // the config block and the page's own script, nothing injected
    const escaped = 'Evil &lt;/script&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39; &quot;title&quot;';
    expect(html).to.include(`<h1 id="chat-title">${escaped}</h1>`);
    expect(html).to.include(`<title>${escaped}</title>`);
    expect(html).to.include(`<p id="chat-description">${escaped}</p>`);
    expect(html).to.include(`<meta name="description" content="${escaped}">`);
    // the script reads the original text back from the JSON block
    const config = configOf(html);
    expect(config).to.deep.equal({ subdomain: 'acme', authMode: 'public', title: NASTY, welcomeMessage: NASTY });
    const block = /id="chat-config">([\s\S]*?)<\/script>/.exec(html)![1]!;
    expect(block).to.not.match(/[<>&]/);
  });

  it('jsonForScript escapes <, >, & and the JS line separators', () => {
    const out = jsonForScript({ a: '</script><!-- & \u2028\u2029' });
    expect(out).to.equal('{"a":"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028\\u2029"}');
    expect(JSON.parse(out)).to.deep.equal({ a: '</script><!-- & \u2028\u2029' });
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).to.equal('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });

  it('uses a valid primaryColor as the --primary CSS variable and falls back on a bad one', () => {
    expect(safeColor('#ABC')).to.equal('#abc');
    expect(safeColor('#12aB9f')).to.equal('#12ab9f');
    for (const bad of ['red', '#12345', '#1234567', '#ggg', '#fff;} body{display:none', 'url(x)', '', undefined]) {
      expect(safeColor(bad), String(bad)).to.equal(DEFAULT_PRIMARY_COLOR);
    }
    const good = renderChatPage({ subdomain: 'a', branding: { title: 't', primaryColor: '#0A7' }, authMode: 'public' });
    expect(good).to.include('--primary:#0a7;');
    const bad = renderChatPage({ subdomain: 'a', branding: { title: 't', primaryColor: 'red;}</style><script>alert(1)</script>' }, authMode: 'public' });
    expect(bad).to.include(`--primary:${DEFAULT_PRIMARY_COLOR};`);
    expect(bad).to.not.include('alert(1)');
  });

  it('keeps only http(s) or same-origin logo URLs, escaped', () => {
    expect(safeLogoUrl('javascript:alert(1)')).to.equal(undefined);
    expect(safeLogoUrl('data:image/svg+xml,<svg onload=alert(1)>')).to.equal(undefined);
    expect(safeLogoUrl('//evil.example/x.png')).to.equal(undefined);
    expect(safeLogoUrl('/static/logo.png')).to.equal('/static/logo.png');
    const html = renderChatPage({ subdomain: 'a', branding: { title: 't', logoUrl: 'https://cdn.example/l.png?a=1&b="2"' }, authMode: 'public' });
    expect(html).to.include('<img id="chat-logo" src="https://cdn.example/l.png?a=1&amp;b=%222%22" alt="">');
    const none = renderChatPage({ subdomain: 'a', branding: { title: 't', logoUrl: 'javascript:alert(1)' }, authMode: 'public' });
    expect(none).to.not.include('id="chat-logo"');
  });

  it('renders the sign-in fields of the auth mode, and a CSP that allows exactly the inline script', () => {
    const pub = renderChatPage({ subdomain: 'a', branding: { title: 't' }, authMode: 'public' });
    expect(pub).to.not.include('id="signin"');
    const pw = renderChatPage({ subdomain: 'a', branding: { title: 't' }, authMode: 'password' });
    expect(pw).to.include('id="password"').and.include('id="signin-submit"').and.include('id="signin-error"').and.not.include('id="email"');
    const em = renderChatPage({ subdomain: 'a', branding: { title: 't' }, authMode: 'email' });
    expect(em).to.include('id="email"').and.include('id="code"').and.not.include('id="password"');
    for (const id of ['chat-title', 'messages', 'message-input', 'send', 'new-conversation']) expect(pw).to.include(`id="${id}"`);
    expect(pw).to.include('aria-live="polite"');
    const hash = createHash('sha256').update(CHAT_PAGE_SCRIPT).digest('base64');
    expect(pw).to.include(`script-src &#39;sha256-${hash}&#39;`); // the CSP meta attribute, HTML-escaped
    expect(pw).to.include(`<script>${CHAT_PAGE_SCRIPT}</script>`);
    expect(CHAT_PAGE_SCRIPT).to.not.include('</script');
  });
});
