/**
 * The chat page's inline script (no framework, no build step), kept as source text. It reads
 * `#chat-config` ({ subdomain, authMode, title, welcomeMessage }), signs in through
 * `POST /api/chat/{sub}/auth`, sends through `POST /api/chat/{sub}/messages` and reads the SSE
 * answer with fetch + ReadableStream + TextDecoder (`chunk` → append, `done` → finish and keep
 * conversationId and conversationToken, `error` → show it). The conversation ({ conversationId,
 * conversationToken, messages, signedIn }: the token is what continues it, SPEC §4.4)
 * lives in localStorage under `troupe-chat:{subdomain}`; "Sign out" (`DELETE .../auth`) drops it
 * with the session. Text only ever goes in via textContent.
 *
 * String.raw: backslashes are the script's own; the text must contain no backtick and no "${".
 */
export const CHAT_PAGE_SCRIPT = String.raw`
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('chat-config').textContent);
  var API = '/api/chat/' + encodeURIComponent(config.subdomain);
  var KEY = 'troupe-chat:' + config.subdomain;
  var MAX_STORED = 200;
  var $ = function (id) { return document.getElementById(id); };
  var list = $('messages'), input = $('message-input'), sendButton = $('send');
  var newButton = $('new-conversation'), composer = $('composer'), signin = $('signin');
  var signOutButton = $('sign-out');
  var state = load();
  var busy = false, pending = null, emailStep = 'email';

  function validMessage(m) {
    return m && (m.role === 'user' || m.role === 'assistant') && typeof m.text === 'string';
  }

  function load() {
    try {
      var raw = JSON.parse(localStorage.getItem(KEY) || 'null');
      if (raw && Array.isArray(raw.messages)) {
        return {
          conversationId: typeof raw.conversationId === 'string' ? raw.conversationId : null,
          conversationToken: typeof raw.conversationToken === 'string' ? raw.conversationToken : null,
          messages: raw.messages.filter(validMessage).slice(-MAX_STORED),
          signedIn: raw.signedIn === true
        };
      }
    } catch (e) { /* unreadable: start over */ }
    return { conversationId: null, conversationToken: null, messages: [], signedIn: false };
  }

  function save() {
    state.messages = state.messages.slice(-MAX_STORED);
    try { localStorage.setItem(KEY, JSON.stringify(state)); } catch (e) { /* storage full or off */ }
  }

  function scrollDown() { list.scrollTop = list.scrollHeight; }

  function setText(el, text) { el.querySelector('.message-text').textContent = text; scrollDown(); }

  function showError(el, message) {
    el.classList.add('error');
    var box = el.querySelector('.message-error');
    if (!box) {
      box = document.createElement('div');
      box.className = 'message-error';
      el.appendChild(box);
    }
    box.textContent = message;
    scrollDown();
  }

  function bubble(role, text, error) {
    var el = document.createElement('div');
    el.className = 'message ' + role;
    var who = document.createElement('span');
    who.className = 'sr-only';
    who.textContent = role === 'user' ? 'You: ' : config.title + ': ';
    var body = document.createElement('div');
    body.className = 'message-text';
    body.textContent = text || '';
    el.appendChild(who);
    el.appendChild(body);
    list.appendChild(el);
    if (error) showError(el, error);
    scrollDown();
    return el;
  }

  function renderAll() {
    list.textContent = '';
    if (config.welcomeMessage) bubble('assistant', config.welcomeMessage).classList.add('welcome');
    state.messages.forEach(function (m) { bubble(m.role, m.text, m.error); });
  }

  function setBusy(value) {
    busy = value;
    input.disabled = value;
    sendButton.disabled = value;
    newButton.disabled = value;
    list.setAttribute('aria-busy', value ? 'true' : 'false');
  }

  function showComposer() {
    if (signin) signin.hidden = true;
    if (signOutButton) signOutButton.hidden = false;
    composer.hidden = false;
    input.focus();
  }

  function needSignIn(message) {
    state.signedIn = false;
    save();
    composer.hidden = true;
    signin.hidden = false;
    signOutButton.hidden = true;
    $('signin-error').textContent = message || '';
    var first = config.authMode === 'password' ? $('password') : (emailStep === 'code' ? $('code') : $('email'));
    first.focus();
  }

  async function errorMessage(res, fallback) {
    var message = fallback;
    try {
      var body = await res.json();
      if (body && body.error && typeof body.error.message === 'string' && body.error.message) message = body.error.message;
    } catch (e) { /* not JSON */ }
    var retry = res.headers.get('Retry-After');
    if (res.status === 429 && retry) message += ' Try again in ' + retry + ' seconds.';
    return message;
  }

  function outputText(output) {
    if (output === undefined || output === null) return '';
    if (typeof output === 'string') return output;
    return JSON.stringify(output, null, 2);
  }

  function sseParser(dispatch) {
    var buffer = '', eventName = '', data = [];
    function line(text) {
      if (text === '') {
        if (data.length) dispatch(eventName || 'message', data.join('\n'));
        eventName = '';
        data = [];
        return;
      }
      if (text.charAt(0) === ':') return;
      var colon = text.indexOf(':');
      var field = colon < 0 ? text : text.slice(0, colon);
      var value = colon < 0 ? '' : text.slice(colon + 1);
      if (value.charAt(0) === ' ') value = value.slice(1);
      if (field === 'event') eventName = value;
      else if (field === 'data') data.push(value);
    }
    return {
      push: function (text) {
        buffer += text;
        var lines = buffer.split(/\r\n|\n|\r(?!$)/);
        buffer = lines.pop();
        lines.forEach(line);
      },
      end: function () {
        if (buffer) line(buffer.replace(/\r$/, ''));
        buffer = '';
        line('');
      }
    };
  }

  // the token comes with the id: only the two together continue the conversation
  function keepConversation(data) {
    if (!data || typeof data.conversationId !== 'string') return;
    state.conversationId = data.conversationId;
    state.conversationToken = typeof data.conversationToken === 'string' ? data.conversationToken : null;
  }

  function onEvent(name, raw, el, turn) {
    var data;
    try { data = JSON.parse(raw); } catch (e) { return; }
    if (name === 'chunk' && data && typeof data.text === 'string') {
      turn.text += data.text;
      setText(el, turn.text);
    } else if (name === 'done') {
      turn.done = true;
      keepConversation(data);
      if (!turn.text) { turn.text = outputText(data && data.output); setText(el, turn.text); }
    } else if (name === 'error') {
      keepConversation(data);
      turn.error = (data && typeof data.message === 'string' && data.message) || 'Something went wrong.';
      showError(el, turn.error);
    }
  }

  async function readStream(body, el, turn) {
    var reader = body.getReader();
    var decoder = new TextDecoder();
    var parser = sseParser(function (name, raw) { onEvent(name, raw, el, turn); });
    for (;;) {
      var step = await reader.read();
      if (step.done) break;
      parser.push(decoder.decode(step.value, { stream: true }));
      if (turn.done || turn.error) { reader.cancel().catch(function () {}); break; }
    }
    parser.push(decoder.decode());
    parser.end();
    if (!turn.done && !turn.error) {
      turn.error = 'The answer was interrupted. Please try again.';
      showError(el, turn.error);
    }
  }

  async function errorCode(res) {
    try { var data = await res.json(); return data && data.error && data.error.code; } catch (e) { return null; }
  }

  function postJson(path, body) {
    return fetch(API + path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'Accept': 'text/event-stream, application/json' },
      body: JSON.stringify(body)
    });
  }

  function remember(role, text, error) {
    var m = { role: role, text: text };
    if (error) m.error = error;
    state.messages.push(m);
    save();
  }

  async function exchange(text, el, turn) {
    var body = { message: text };
    if (state.conversationId) body.conversationId = state.conversationId;
    if (state.conversationId && state.conversationToken) body.conversationToken = state.conversationToken;
    var res = await postJson('/messages', body);
    if (res.status === 403 && state.conversationId && (await errorCode(res.clone())) === 'FORBIDDEN') {
      // the conversation cannot be continued here (the chat was replaced, or its token is lost): carry on in a new one
      state.conversationId = null;
      state.conversationToken = null;
      save();
      res = await postJson('/messages', { message: text });
    }
    if (res.status === 401 && config.authMode !== 'public') return res;
    remember('user', text);
    turn.userSaved = true;
    if (!res.ok) {
      turn.error = await errorMessage(res, 'The message could not be sent (' + res.status + ').');
      showError(el, turn.error);
    } else if ((res.headers.get('Content-Type') || '').indexOf('text/event-stream') < 0 || !res.body) {
      turn.error = 'The chat service sent an unexpected answer.';
      showError(el, turn.error);
    } else {
      await readStream(res.body, el, turn);
    }
    remember('assistant', turn.text, turn.error);
    return res;
  }

  async function send(text) {
    if (busy || !text.trim()) return;
    setBusy(true);
    var userEl = bubble('user', text);
    var el = bubble('assistant', '');
    el.classList.add('streaming');
    var turn = { text: '', done: false, error: null, userSaved: false };
    try {
      var res = await exchange(text, el, turn);
      if (res.status === 401 && config.authMode !== 'public') {
        userEl.remove();
        el.remove();
        pending = text;
        needSignIn(await errorMessage(res, 'Please sign in to continue.'));
      }
    } catch (e) {
      turn.error = 'Could not reach the chat service. Check your connection and try again.';
      showError(el, turn.error);
      if (!turn.userSaved) remember('user', text);
      remember('assistant', turn.text, turn.error);
    } finally {
      el.classList.remove('streaming');
      setBusy(false);
      if (!composer.hidden) input.focus();
    }
  }

  function signedIn() {
    state.signedIn = true;
    save();
    if ($('password')) $('password').value = '';
    if ($('code')) $('code').value = '';
    showComposer();
    if (pending) { var text = pending; pending = null; send(text); }
  }

  function setEmailStep(step, email) {
    emailStep = step;
    $('code-step').hidden = step !== 'code';
    $('email').readOnly = step === 'code';
    $('signin-restart').hidden = step !== 'code';
    $('signin-submit').textContent = step === 'code' ? 'Sign in' : 'Send code';
    $('signin-hint').textContent = step === 'code'
      ? 'We sent a 6-digit code to ' + email + '. Enter it below.'
      : 'Sign in to start chatting.';
    (step === 'code' ? $('code') : $('email')).focus();
  }

  function signinBody() {
    if (config.authMode === 'password') {
      var password = $('password').value;
      return password ? { password: password } : null;
    }
    var email = $('email').value.trim();
    if (!email) return null;
    if (emailStep === 'email') return { email: email };
    var code = $('code').value.replace(/\s+/g, '');
    return /^[0-9]{6}$/.test(code) ? { email: email, code: code } : null;
  }

  function signinFallback() {
    if (config.authMode === 'password') return 'Wrong password.';
    return emailStep === 'code' ? 'That code is not valid.' : 'The code could not be sent.';
  }

  async function submitSignIn(event) {
    event.preventDefault();
    var errorBox = $('signin-error');
    var body = signinBody();
    if (!body) {
      errorBox.textContent = config.authMode === 'password' ? 'Enter the password.'
        : (emailStep === 'code' ? 'Enter the 6-digit code.' : 'Enter your email address.');
      return;
    }
    errorBox.textContent = '';
    $('signin-submit').disabled = true;
    try {
      var res = await postJson('/auth', body);
      if (res.status === 202 && config.authMode === 'email' && emailStep === 'email') setEmailStep('code', body.email);
      else if (res.ok) signedIn();
      else errorBox.textContent = await errorMessage(res, signinFallback());
    } catch (e) {
      errorBox.textContent = 'Could not reach the chat service. Check your connection and try again.';
    } finally {
      $('signin-submit').disabled = false;
    }
  }

  function submitMessage(event) {
    if (event) event.preventDefault();
    var text = input.value;
    if (busy || !text.trim()) return;
    input.value = '';
    send(text);
  }

  function newConversation() {
    if (busy) return;
    state.conversationId = null;
    state.conversationToken = null;
    state.messages = [];
    save();
    renderAll();
    if (!composer.hidden) input.focus();
  }

  // the conversation goes too: on a shared computer the next person must not read it
  async function signOut() {
    if (busy) return;
    signOutButton.disabled = true;
    try {
      var res = await fetch(API + '/auth', { method: 'DELETE', credentials: 'same-origin' });
      if (!res.ok) throw new Error('sign-out answered ' + res.status);
      newConversation();
      if (config.authMode === 'email') { $('email').value = ''; setEmailStep('email', ''); }
      needSignIn('');
    } catch (e) {
      showError(bubble('assistant', ''), 'Could not sign out. Check your connection and try again.');
    } finally {
      signOutButton.disabled = false;
    }
  }

  composer.addEventListener('submit', submitMessage);
  input.addEventListener('keydown', function (event) {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) submitMessage(event);
  });
  newButton.addEventListener('click', newConversation);
  if (signOutButton) signOutButton.addEventListener('click', signOut);
  if (signin) {
    signin.addEventListener('submit', submitSignIn);
    if ($('signin-restart')) $('signin-restart').addEventListener('click', function () { setEmailStep('email', ''); });
  }
  renderAll();
  if (config.authMode !== 'public' && !state.signedIn) needSignIn('');
  else showComposer();
})();
`;
