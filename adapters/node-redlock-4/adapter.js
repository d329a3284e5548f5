'use strict';
// node-redlock 4.2.0 (npm redlock@4.2.0, what `npm install redlock` gives),
// as an external client of locksim (live/README.md). The job's lock is
// redlock.lock(key, ttl) over one ioredis client per server, released with
// lock.unlock(); check_before_write compares lock.expiration (Date.now()
// based, redlock.js:416) with Date.now(). Options from [lock]: retry_count,
// retry_delay, drift_factor.
const path = require('path');
const common = require(path.join(__dirname, '..', 'common', 'job.js'));

const Redlock = common.load('redlock');
const Redis = common.load('ioredis');

common.run({ library: 'redlock', version: common.version('redlock') }, async (job) => {
  const clients = await common.redisClients(Redis, job);
  const redlock = new Redlock(clients, common.redlockSettings(job.msg.options));
  redlock.on('clientError', () => {});  // a node's error: one vote fewer, as the library counts it
  return {
    warm: async () => {
      const lock = await redlock.lock(job.msg.key + ':locksim-warm-up', job.msg.ttl_ms);
      await lock.unlock();
    },
    acquire: async () => {
      const lock = await redlock.lock(job.msg.key, job.msg.ttl_ms);
      return { value: lock.value, token: null, lock };
    },
    validityLeft: (grant) => grant.lock.expiration - Date.now(),
    release: (grant) => grant.lock.unlock(),
    close: () => Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect()))),
  };
});
