'use strict';
// node-redlock 5.0.0-beta.2 (npm redlock@5.0.0-beta.2), as an external client
// of locksim (live/README.md). Without `using`: redlock.acquire([key], ttl)
// and lock.release(); check_before_write compares lock.expiration
// (dist/cjs/index.js:217, from a Date.now() read before the first try) with
// Date.now(). With `using = true`: the round runs inside
// redlock.using([key], ttl, routine), which extends the lock
// automaticExtensionThreshold (500 ms) before it expires and aborts the
// routine's signal when it cannot (index.js:432-450); the routine reads
// signal.aborted before its write, as the README recommends, and using()
// releases the lock when the routine returns. The abort is the routine's
// "lost", told as it happens; the read of signal.aborted before the write
// says nothing more. Options from [lock]: retry_count, retry_delay,
// drift_factor.
const path = require('path');
const common = require(path.join(__dirname, '..', 'common', 'job.js'));

const RedlockModule = common.load('redlock');
const Redlock = RedlockModule.default || RedlockModule;
const Redis = common.load('ioredis');

common.run({ library: 'redlock', version: common.version('redlock') }, async (job) => {
  const clients = await common.redisClients(Redis, job);
  const redlock = new Redlock(clients, common.redlockSettings(job.msg.options));
  const key = job.msg.key;
  const ttl = job.msg.ttl_ms;
  const close = () => Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
  const warm = async () => {
    const lock = await redlock.acquire([key + ':locksim-warm-up'], ttl);
    await lock.release();
  };
  if (!job.msg.using) {
    return {
      warm,
      acquire: async () => {
        const lock = await redlock.acquire([key], ttl);
        return { value: lock.value, token: null, lock };
      },
      validityLeft: (grant) => grant.lock.expiration - Date.now(),
      release: (grant) => grant.lock.release(),
      close,
    };
  }
  // using(): the routine is the round's work under the lock.
  const round = async (r) => {
    job.event('acquiring');
    let inside = false;
    try {
      await redlock.using([key], ttl, async (signal) => {
        inside = true;
        // The abort is the library telling the routine its lock is gone: it gives up then.
        signal.addEventListener('abort', () => job.event('lost', { detail: 'signal aborted: ' + common.describe(signal.error) }));
        job.event('acquired', { token: null });
        const check = async () => ({ ok: !signal.aborted, quiet: true });
        if (job.msg.job === 'hold') await common.sleep(r.hold_ms);
        else await job.underLock({ value: null, token: null }, r, { check });
        job.event('releasing');
      });
      job.event('released');
    } catch (e) {
      job.event(inside ? 'release-failed' : 'acquire-failed', { detail: common.describe(e) });
    }
  };
  return { round, close, warm };
});
