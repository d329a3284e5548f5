// Headless Chromium driven over the DevTools protocol through a pipe
// (--remote-debugging-pipe: JSON messages on file descriptors 3 and 4, each
// ended by a NUL byte), so that no port is opened and nothing but Node is
// needed. Used by the browser test (web/test/browser.mjs), which also takes
// the README's screenshot (--screenshot).
//
// Chromium runs as tests/browser_test.cpp runs it for the HTML report: headless, no sandbox (root
// on CI), no GPU, no network of its own, a new empty profile. It is killed,
// with its process group, when the Node process ends, however it ends.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM = '/usr/bin/chromium';

export class Browser {
  static async launch({ width = 1440, height = 1000 } = {}) {
    // One directory for all Chromium writes: its profile, and its TMPDIR,
    // where it keeps the profile's singleton socket (org.chromium.Chromium.*),
    // which a killed Chromium would otherwise leave in /tmp. close() removes it.
    const base = mkdtempSync(join(tmpdir(), 'locksim-web-chromium-'));
    const profile = join(base, 'profile');
    mkdirSync(join(base, 'tmp'));
    const child = spawn(CHROMIUM, [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--hide-scrollbars', '--force-device-scale-factor=1',
      `--window-size=${width},${height}`, `--user-data-dir=${profile}`, '--remote-debugging-pipe', 'about:blank',
    ], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true,
         env: { ...process.env, TMPDIR: join(base, 'tmp') } });
    const browser = new Browser(child, base);
    const kill = () => browser.close();
    process.on('exit', kill);
    for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => { kill(); process.exit(130); });
    return browser;
  }

  constructor(child, dir) {
    this.child = child;
    this.dir = dir;  // the profile and Chromium's TMPDIR, removed by close()
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = [];
    this.stderr = '';
    this.closed = false;
    child.stderr.on('data', (d) => { this.stderr = (this.stderr + d).slice(-4000); });
    let buffer = Buffer.alloc(0);
    child.stdio[4].on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (let end = buffer.indexOf(0); end >= 0; end = buffer.indexOf(0)) {
        const message = JSON.parse(buffer.subarray(0, end).toString('utf8'));
        buffer = buffer.subarray(end + 1);
        this.dispatch(message);
      }
    });
    child.on('exit', (code) => {
      for (const { reject } of this.pending.values()) reject(new Error(`chromium exited (${code}): ${this.stderr}`));
      this.pending.clear();
    });
  }

  dispatch(message) {
    if (message.id && this.pending.has(message.id)) {
      const { resolve, reject } = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) reject(new Error(`${message.error.message} (${JSON.stringify(message.error.data ?? '')})`));
      else resolve(message.result);
      return;
    }
    for (const listener of this.listeners) listener(message);
  }

  send(method, params = {}, sessionId = undefined) {
    const id = this.nextId++;
    const message = { id, method, params };
    if (sessionId) message.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdio[3].write(JSON.stringify(message) + '\0');
    });
  }

  // A new tab at `url`, with its console and errors collected.
  async open(url) {
    const { targetId } = await this.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    const page = new Page(this, sessionId);
    await page.send('Runtime.enable');
    await page.send('Page.enable');
    await page.goto(url);
    return page;
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    try { process.kill(-this.child.pid, 'SIGKILL'); } catch { /* gone already */ }
    try { rmSync(this.dir, { recursive: true, force: true }); } catch { /* best effort */ }
  }
}

export class Page {
  constructor(browser, sessionId) {
    this.browser = browser;
    this.sessionId = sessionId;
    this.errors = [];
    browser.listeners.push((m) => {
      if (m.sessionId !== sessionId) return;
      if (m.method === 'Runtime.exceptionThrown') this.errors.push(m.params.exceptionDetails.exception?.description ?? m.params.exceptionDetails.text);
      if (m.method === 'Runtime.consoleAPICalled' && m.params.type === 'error')
        this.errors.push(m.params.args.map((a) => a.value ?? a.description).join(' '));
    });
  }

  send(method, params = {}) { return this.browser.send(method, params, this.sessionId); }

  async goto(url) {
    const loaded = new Promise((resolve) => {
      const listener = (m) => { if (m.sessionId === this.sessionId && m.method === 'Page.loadEventFired') resolve(); };
      this.browser.listeners.push(listener);
    });
    await this.send('Page.navigate', { url });
    await loaded;
  }

  // The value of `expression` in the page (awaited when it is a promise).
  async eval(expression) {
    const r = await this.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
    if (r.exceptionDetails) throw new Error(`in the page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value;
  }

  // Waits until `expression` is truthy in the page; its value.
  async until(expression, { timeout = 20000, what = expression } = {}) {
    const start = Date.now();
    for (;;) {
      const v = await this.eval(expression);
      if (v) return v;
      if (Date.now() - start > timeout) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async screenshot() {
    const { data } = await this.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: false });
    return Buffer.from(data, 'base64');
  }
}
