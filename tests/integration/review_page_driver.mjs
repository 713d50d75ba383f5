// Drives the review page in Debian's headless Chromium over the DevTools protocol, through a
// pipe (--remote-debugging-pipe: fds 3 and 4, NUL-separated JSON), so it needs nothing but
// Node's standard library (Debian 12's nodejs 18 has no WebSocket client). Run by
// review_page_browser_test.cc, which starts the stack and checks what this prints.
//
//   node review_page_driver.mjs CONFIG.json
//
// CONFIG: {chromium, profile_dir, review_url, feed_url, token, approve_id, reject_id,
//          csrf_id, screenshot, no_sandbox}
// Prints one JSON object: what the reviewer saw after each step, the public feed's ids after
// each change, and every console or Content-Security-Policy message the page produced.
// Chromium is stopped (Browser.close, then by its PID) before this exits.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const STEP_TIMEOUT_MS = 20000;

const args = [
  '--headless=new', '--disable-gpu', '--no-first-run', '--no-default-browser-check',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-extensions', '--remote-debugging-pipe',
  // Nothing but loopback is reachable.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
  '--window-size=900,1000', `--user-data-dir=${config.profile_dir}`,
];
if (config.no_sandbox) args.push('--no-sandbox');
args.push('about:blank');
const chromium = spawn(config.chromium, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let chromiumLog = '';
chromium.stderr.on('data', (chunk) => { chromiumLog += chunk.toString().slice(0, 4000); });

const toBrowser = chromium.stdio[3];
const fromBrowser = chromium.stdio[4];
let nextId = 1;
const pending = new Map();
const listeners = [];
let buffer = Buffer.alloc(0);
fromBrowser.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  let end;
  while ((end = buffer.indexOf(0)) >= 0) {
    const message = JSON.parse(buffer.subarray(0, end).toString('utf8'));
    buffer = buffer.subarray(end + 1);
    if (message.id && pending.has(message.id)) {
      const { resolve, reject } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) reject(new Error(JSON.stringify(message.error)));
      else resolve(message.result);
    } else if (message.method) {
      for (const listener of [...listeners]) listener(message);
    }
  }
});

function send(method, params = {}, sessionId = undefined) {
  const id = nextId++;
  const message = { id, method, params };
  if (sessionId) message.sessionId = sessionId;
  toBrowser.write(JSON.stringify(message) + '\0');
  return withTimeout(new Promise((resolve, reject) => pending.set(id, { resolve, reject })), method);
}

function withTimeout(promise, what) {
  return Promise.race([promise, new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`timed out: ${what}`)), STEP_TIMEOUT_MS))]);
}

function nextEvent(method, sessionId) {
  return withTimeout(new Promise((resolve) => {
    const listener = (message) => {
      if (message.method === method && message.sessionId === sessionId) {
        listeners.splice(listeners.indexOf(listener), 1);
        resolve(message.params);
      }
    };
    listeners.push(listener);
  }), method);
}

async function feedIds() {
  const response = await fetch(config.feed_url);
  const feed = await response.json();
  return feed.children.map((entry) => entry['wm-id']).sort();
}

const result = { messages: [], steps: {} };
let session;

async function page(expression) {
  const evaluated = await send('Runtime.evaluate', { expression, returnByValue: true }, session);
  return evaluated.result.value;
}

// The page as a reviewer sees it: title, status message, the mentions listed, the login field.
async function snapshot() {
  return page(`({
    title: document.title,
    heading: document.querySelector('h1')?.textContent ?? '',
    message: document.querySelector('.message')?.textContent ?? '',
    mentions: [...document.querySelectorAll('form.review')].map((f) => f.dataset.mentionId).sort(),
    has_login: !!document.querySelector('#token'),
    csrf_fields: document.querySelectorAll('input[name=csrf]').length,
    text: document.body.innerText.slice(0, 3000),
  })`);
}

// Submits by pressing a button of a mention's form (a real click: the form posts and the page
// loads the answer).
async function press(mentionId, action) {
  const loaded = nextEvent('Page.loadEventFired', session);
  const found = await page(`(() => {
    const button = document.querySelector('form[data-mention-id="${mentionId}"] button[value="${action}"]');
    if (!button) return false;
    button.click();
    return true;
  })()`);
  if (!found) throw new Error(`no ${action} button for ${mentionId}`);
  await loaded;
}

try {
  // The first page appears shortly after the browser starts.
  let target;
  for (let attempt = 0; attempt < 100 && !target; ++attempt) {
    const { targetInfos } = await send('Target.getTargets');
    target = targetInfos.find((info) => info.type === 'page');
    if (!target) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!target) throw new Error('no page target');
  ({ sessionId: session } = await send('Target.attachToTarget', { targetId: target.targetId, flatten: true }));
  listeners.push((message) => {
    if (message.sessionId !== session) return;
    if (message.method === 'Log.entryAdded') result.messages.push(message.params.entry.text);
    if (message.method === 'Runtime.consoleAPICalled') {
      result.messages.push(message.params.args.map((arg) => arg.value).join(' '));
    }
  });
  await send('Page.enable', {}, session);
  await send('Runtime.enable', {}, session);
  await send('Log.enable', {}, session);
  // Keyboard focus as in a window the reviewer is looking at (headless has none otherwise).
  await send('Emulation.setFocusEmulationEnabled', { enabled: true }, session);

  // 1. The page without a session: the token form. Typed in with the keyboard, sent with Enter.
  let loaded = nextEvent('Page.loadEventFired', session);
  await send('Page.navigate', { url: config.review_url }, session);
  await loaded;
  result.steps.login_form = await snapshot();
  await page(`document.querySelector('#token').focus()`);
  await send('Input.insertText', { text: config.token }, session);
  loaded = nextEvent('Page.loadEventFired', session);
  for (const type of ['keyDown', 'keyUp']) {
    await send('Input.dispatchKeyEvent', { type, key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13, text: type === 'keyDown' ? '\r' : undefined }, session);
  }
  await loaded;
  result.steps.queue = await snapshot();
  result.steps.cookie_visible_to_script = await page('document.cookie');
  const shot = await send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: false }, session);
  writeFileSync(config.screenshot, Buffer.from(shot.data, 'base64'));
  result.feed_before = await feedIds();

  // 2. Approve one: the public feed has it.
  await press(config.approve_id, 'approve');
  result.steps.after_approve = await snapshot();
  result.feed_after_approve = await feedIds();

  // 3. Reject another: it stays out.
  await press(config.reject_id, 'reject');
  result.steps.after_reject = await snapshot();
  result.feed_after_reject = await feedIds();

  // 4. A POST without the CSRF token (the field removed from the form) changes nothing.
  await page(`document.querySelector('form[data-mention-id="${config.csrf_id}"] input[name=csrf]').remove()`);
  await press(config.csrf_id, 'approve');
  result.steps.without_csrf = await snapshot();
  result.feed_after_csrfless = await feedIds();
} catch (error) {
  result.error = String(error.stack || error);
  result.chromium_log = chromiumLog;
}

try {
  await send('Browser.close');
} catch {
  // Stopped below by its PID.
}
await new Promise((resolve) => {
  const timer = setTimeout(() => { chromium.kill('SIGKILL'); resolve(); }, 5000);
  chromium.on('exit', () => { clearTimeout(timer); resolve(); });
});
process.stdout.write(JSON.stringify(result) + '\n');
process.exit(0);
