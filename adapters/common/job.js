'use strict';
// The job every Node adapter does, and the protocol it speaks with locksim
// (live/README.md, "External clients"): the job and its rounds arrive as JSON
// lines on stdin, the events leave as JSON lines on stdout, the storage is a
// TCP connection of JSON lines. An adapter gives the library's part
// (acquire, check, release, or a whole round for using()); this file does the
// rest exactly as locksim's simulated job does (harness/job.cpp).
//
// Nothing but protocol lines may reach stdout: console.log and friends go to
// stderr, and the protocol writes fd 1 synchronously (fs.writeSync), so that
// an event is out before the adapter stops itself after it.

const fs = require('fs');
const net = require('net');
const readline = require('readline');

for (const name of ['log', 'info', 'debug']) console[name] = console.error;

function emit(ev, fields) {
  const line = JSON.stringify(Object.assign({ ev }, fields || {})) + '\n';
  for (let off = 0; off < line.length; ) {
    try {
      off += fs.writeSync(1, line.slice(off));
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}

// The library is not installed: say which module, and go.
function missing(moduleName, error) {
  emit('error', { missing: moduleName, detail: String(error && error.message ? error.message : error).split('\n')[0] });
  process.exit(1);
}

// require() that reports a library that is not there.
function load(moduleName) {
  try {
    return require(require.resolve(moduleName, { paths: [require.main.path] }));
  } catch (e) {
    if (e && e.code === 'MODULE_NOT_FOUND') missing(moduleName, e);
    throw e;
  }
}

// The installed version of a package, from its package.json (found from its
// main file: a package's "exports" may not export package.json).
function version(moduleName) {
  const path = require('path');
  let dir = path.dirname(require.resolve(moduleName, { paths: [require.main.path] }));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (pkg.name === moduleName) return String(pkg.version).replace(/^v/, '');
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error('no package.json of ' + moduleName);
    dir = up;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The storage: one request at a time, each answered by one line.
class Storage {
  constructor(endpoint, timeoutMs) {
    this.endpoint = endpoint;
    this.timeoutMs = timeoutMs;
    this.socket = null;
  }
  connect() {
    return new Promise((resolve, reject) => {
      const s = net.createConnection({ host: this.endpoint.host, port: this.endpoint.port }, () => resolve());
      s.setNoDelay(true);
      s.once('error', reject);
      this.socket = s;
      this.buffer = '';
      this.waiting = null;
      s.on('data', (chunk) => {
        this.buffer += chunk.toString('utf8');
        let nl;
        while ((nl = this.buffer.indexOf('\n')) >= 0) {
          const line = this.buffer.slice(0, nl);
          this.buffer = this.buffer.slice(nl + 1);
          const w = this.waiting;
          this.waiting = null;
          if (w) w(JSON.parse(line));
        }
      });
      s.on('close', () => {
        const w = this.waiting;
        this.waiting = null;
        if (w) w(null);
      });
    });
  }
  // The reply, or null when none came (in storage_timeout_ms, or ever).
  async request(req) {
    if (!this.socket || this.socket.destroyed) await this.connect();
    const reply = new Promise((resolve) => {
      this.waiting = resolve;
    });
    this.socket.write(JSON.stringify(req) + '\n');
    if (!this.timeoutMs) return reply;
    let timer;
    const late = new Promise((resolve) => {
      timer = setTimeout(() => resolve('late'), this.timeoutMs);
    });
    const r = await Promise.race([reply, late]);
    clearTimeout(timer);
    if (r !== 'late') return r;
    // A late reply would be taken for the next request's: a new connection.
    this.waiting = null;
    this.socket.destroy();
    this.socket = null;
    return null;
  }
}

class Job {
  constructor(msg) {
    this.msg = msg;
    this.seen = {};
    this.storage = new Storage(msg.storage, msg.storage_timeout_ms);
  }
  // An event, then a stop of its own if a pause is anchored on it.
  event(ev, fields) {
    emit(ev, fields);
    const n = (this.seen[ev] = (this.seen[ev] || 0) + 1);
    if (this.msg.stop_at.some((s) => s.event === ev && s.occurrence === n)) process.kill(process.pid, 'SIGSTOP');
  }
  // The library told the application something: "lock-lost", "suspended", ...
  notified(signal, detail) {
    this.event('notified', { signal, detail });
  }
  // The part of a read-modify-write under the lock (harness/job.cpp):
  // `grant` {value, token}; `lib.check(grant)`, given when the scenario asks
  // for the library's check, says whether to write ({ok, detail});
  // `lib.validityLeft(grant)`, for check_before_write, the lock's own
  // deadline less the local clock, in ms.
  async underLock(grant, round, lib) {
    const token = this.msg.fencing === 'token' && grant.token != null ? grant.token : -1;
    if (this.msg.fencing === 'lock-value') {
      this.event('claiming', { detail: grant.value });
      const claimed = await this.storage.request({ op: 'claim', owner: grant.value });
      if (!claimed || !claimed.ok) {
        this.event('write-rejected', { detail: 'the claim was refused' });
        return;
      }
    }
    const read = await this.storage.request({ op: 'read', token: this.msg.fenced_reads ? token : -1 });
    if (!read) {
      this.event('write-rejected', { detail: 'storage did not answer the read' });
      return;
    }
    if (!read.ok) {
      this.event('write-rejected', { token, detail: 'its read was refused: ' + read.reason });
      return;
    }
    this.event('read', { value: read.value });
    await sleep(round.work_ms);
    if (this.msg.check_before_write && lib.validityLeft) {
      const left = lib.validityLeft(grant);
      if (left <= 0) {
        this.event('lost', { detail: 'checked on its own clock, its lock expired ' + -left + ' ms ago; it abandons the write' });
        return;
      }
      this.event('checked', { detail: left + ' ms left' });
    }
    if (lib.check) {
      const r = await lib.check(grant);  // {ok, detail}; quiet: the library told its loss already
      if (!r.ok) {
        if (!r.quiet) this.event('lost', { detail: r.detail });
        return;
      }
      if (!r.quiet) this.event('checked', { detail: r.detail });
    }
    const value = read.value + 1;
    this.event('writing', { value, token });
    const req = { op: 'write', value, token };
    if (this.msg.fencing === 'lock-value') req.owner = grant.value;
    const wrote = await this.storage.request(req);
    if (wrote && wrote.ok) this.event('wrote', { value, token });
    else this.event('write-rejected', { value, token, detail: wrote ? wrote.reason : 'storage did not answer' });
  }
  // A round with acquire() and release() (lib.acquire resolves {value, token}
  // or rejects; lib.release resolves or rejects).
  async round(round, lib) {
    this.event('acquiring');
    let grant;
    try {
      grant = await lib.acquire();
    } catch (e) {
      this.event('acquire-failed', { detail: describe(e) });
      return;
    }
    const valid = lib.validityLeft ? { value: lib.validityLeft(grant) } : {};
    this.event('acquired', Object.assign({ lock_value: grant.value, token: grant.token }, valid));
    if (this.msg.job === 'hold') await sleep(round.hold_ms);
    else await this.underLock(grant, round, lib);
    this.event('releasing');
    try {
      await lib.release(grant);
      this.event('released');
    } catch (e) {
      this.event('release-failed', { detail: describe(e) });
    }
  }
}

function describe(e) {
  if (!e) return String(e);
  const name = e.name && e.name !== 'Error' ? e.name + ': ' : '';
  return name + String(e.message || e).split('\n')[0];
}

// Runs an adapter: `hello` {library, version} once loaded; `start(job)`
// connects to the job's servers and returns the library's part,
// {round(round) or acquire/check/release, close(), warm() where the library
// runs Lua scripts: a lock taken and released on another key}; then `ready`,
// and the rounds.
function run(hello, start) {
  emit('hello', hello);
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  const lines = [];
  let wake = null;
  rl.on('line', (line) => {
    lines.push(line);
    if (wake) wake();
  });
  rl.on('close', () => {
    lines.push(null);
    if (wake) wake();
  });
  const next = async () => {
    while (lines.length === 0) await new Promise((resolve) => (wake = resolve));
    wake = null;
    const line = lines.shift();
    return line === null ? null : JSON.parse(line);
  };
  (async () => {
    const first = await next();
    if (!first) process.exit(0);
    if (first.msg !== 'job') throw new Error('the first message is not a job: ' + JSON.stringify(first));
    const job = new Job(first);
    const lib = await start(job);  // connected to its servers: the run may begin
    // Its Lua scripts cached on the servers, as on any server the library has
    // used: a fresh server answers the first EVALSHA with NOSCRIPT and the
    // library sends EVAL after it (ioredis, redis-semaphore's createEval),
    // one round trip more than the simulator's, and a fault that counts
    // messages (delay or drop `count`) would fall on that NOSCRIPT.
    if (lib.warm) await lib.warm();
    emit('ready');
    for (;;) {
      const m = await next();
      if (!m || m.msg === 'end') break;
      if (m.think_ms) await sleep(m.think_ms);
      if (lib.round) await lib.round(m);
      else await job.round(m, lib);
      emit('round-done');
    }
    if (lib.close) await lib.close().catch(() => {});
    emit('done');
    process.exit(0);
  })().catch((e) => {
    emit('error', { detail: describe(e) });
    process.exit(1);
  });
}

// ioredis clients for the job's servers, with ioredis's defaults, once each
// is ready (connected, its INFO ready check answered).
async function redisClients(Redis, job) {
  const clients = job.msg.servers.map((s) => {
    const c = new Redis({ host: s.host, port: s.port });
    c.on('error', () => {});  // a reset or a refused connection: ioredis reconnects; the library sees its commands fail
    return c;
  });
  await Promise.all(clients.map((c) => (c.status === 'ready' ? null : new Promise((resolve) => c.once('ready', resolve)))));
  return clients;
}

// node-redlock's settings (4.2.0 and 5.0.0-beta.2 take the same three) from
// the job's [lock] options; those not given keep the library's defaults.
function redlockSettings(o) {
  const settings = {};
  if (o.retry_count !== undefined) settings.retryCount = o.retry_count === 'forever' ? -1 : o.retry_count;
  if (o.retry_delay_ms !== undefined) settings.retryDelay = o.retry_delay_ms;
  if (o.drift_factor !== undefined) settings.driftFactor = o.drift_factor;
  return settings;
}

module.exports = { emit, load, version, missing, sleep, run, describe, redisClients, redlockSettings };
