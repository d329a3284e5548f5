'use strict';
// etcd3 1.1.2 for Node (npm etcd3@1.1.2), as an external client of locksim
// (live/README.md): client.lock(<key>).ttl(lease_ttl).acquire() over an
// Etcd3 client of the job's server. acquire() grants a lease, then a Txn
// "put the key with the lease if it has no create revision"; held by another,
// it rejects at once (lib/lock.js acquire), so the job tries again
// retry_delay (default 100 ms) later, as an application must. The lease is
// kept alive every ttl/3 (lib/lease.js:235); its 'lost' event is told as it
// comes ("notified", lease-lost); nothing else reaches the holder. The token
// (fencing = "token") is the key's create revision, read with get() right
// after acquire(). release() revokes the lease (lock.js release).
const path = require('path');
const common = require(path.join(__dirname, '..', 'common', 'job.js'));

const { Etcd3, EtcdLockFailedError } = common.load('etcd3');

common.run({ library: 'etcd3', version: common.version('etcd3') }, async (job) => {
  const server = job.msg.servers[0];
  const o = job.msg.options;
  const client = new Etcd3({ hosts: 'http://' + server.host + ':' + server.port });
  await client.maintenance.status();  // connected before the run
  const ttl = Math.max(1, Math.round((o.lease_ttl_ms !== undefined ? o.lease_ttl_ms : 30000) / 1000));
  const retryDelay = o.retry_delay_ms !== undefined ? o.retry_delay_ms : 100;
  return {
    acquire: async () => {
      for (;;) {
        const lock = client.lock(job.msg.key).ttl(ttl);
        try {
          await lock.acquire();
        } catch (e) {
          if (!(e instanceof EtcdLockFailedError)) throw e;
          await common.sleep(retryDelay);
          continue;
        }
        lock.lease.on('lost', (err) => job.notified('lease-lost', common.describe(err)));
        const res = await client.get(job.msg.key).exec();
        const kv = res.kvs[0];
        return { value: String(await lock.leaseId()), token: kv ? Number(kv.create_revision) : null, lock };
      }
    },
    release: (grant) => grant.lock.release(),
    close: async () => client.close(),
  };
});
