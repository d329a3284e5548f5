'use strict';
// redis-semaphore 5.8.0 (npm redis-semaphore@5.8.0), as an external client of
// locksim (live/README.md): its Mutex over the first server
// (redis-semaphore@5.8.0) or its RedlockMutex over all of them
// (redis-semaphore-redlock@5.8.0). lockTimeout is the scenario's ttl; the
// library refreshes the key every refreshInterval (default 0.8 x lockTimeout,
// lib/Lock.js:48) from a setInterval, and calls onLockLost when a refresh
// finds the key gone (Lock.js:61-69). The adapter's onLockLost tells it
// ("notified", lock-lost): the library's default throws, which would end the
// process. Checks: "is-acquired" reads mutex.isAcquired (a flag,
// Lock.js:105); "on-lock-lost" gives up the write once onLockLost has been
// called. release() reports nothing (mutex/release.js ignores the script's
// answer). Options from [lock]: acquire_timeout, acquire_attempts_limit,
// retry_interval, refresh_interval.
const path = require('path');
const common = require(path.join(__dirname, '..', 'common', 'job.js'));

const semaphore = common.load('redis-semaphore');
const Redis = common.load('ioredis');

common.run({ library: 'redis-semaphore', version: common.version('redis-semaphore') }, async (job) => {
  const clients = await common.redisClients(Redis, job);
  const redlock = job.msg.library.startsWith('redis-semaphore-redlock@');
  const o = job.msg.options;
  let lost = null;  // the LostLockError of this round's mutex, once onLockLost is called
  const options = {
    lockTimeout: job.msg.ttl_ms,
    onLockLost: (err) => {
      lost = err;
      job.notified('lock-lost', common.describe(err));
    },
  };
  if (o.acquire_timeout_ms !== undefined) options.acquireTimeout = o.acquire_timeout_ms;
  if (o.acquire_attempts_limit !== undefined)
    options.acquireAttemptsLimit = o.acquire_attempts_limit === 'forever' ? Number.POSITIVE_INFINITY : o.acquire_attempts_limit;
  if (o.retry_interval_ms !== undefined) options.retryInterval = o.retry_interval_ms;
  if (o.refresh_interval_ms !== undefined) options.refreshInterval = o.refresh_interval_ms;
  const make = () =>
    redlock ? new semaphore.RedlockMutex(clients, job.msg.key, options) : new semaphore.Mutex(clients[0], job.msg.key, options);
  const checks = {
    'is-acquired': async (grant) =>
      grant.mutex.isAcquired ? { ok: true, detail: 'isAcquired is true' } : { ok: false, detail: 'isAcquired is false' },
    'on-lock-lost': async () =>
      lost ? { ok: false, detail: 'onLockLost was called: ' + common.describe(lost) } : { ok: true, detail: 'onLockLost not called' },
  };
  return {
    warm: async () => {
      const o = { lockTimeout: job.msg.ttl_ms };
      const mutex = redlock ? new semaphore.RedlockMutex(clients, job.msg.key + ':locksim-warm-up', o)
                            : new semaphore.Mutex(clients[0], job.msg.key + ':locksim-warm-up', o);
      await mutex.acquire();
      await mutex.release();
    },
    acquire: async () => {
      lost = null;
      const mutex = make();
      await mutex.acquire();
      return { value: mutex.identifier, token: null, mutex };
    },
    check: checks[job.msg.check] || null,
    release: (grant) => grant.mutex.release(),
    close: () => Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect()))),
  };
});
