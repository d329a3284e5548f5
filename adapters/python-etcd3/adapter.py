"""python-etcd3 0.12.0 (Debian's python3-etcd3), as an external client of
locksim (live/README.md): etcd3.Lock(name=<key>, ttl=lease_ttl) on the job's
server, whose key is /locks/<key> (locks.py lock_prefix). Each acquire() try
makes a new lease and a Txn "create the key if it has no create revision";
nothing keeps the lease alive unless the scenario asks (refresh_interval: a
thread calls lock.refresh() that often).

acquire() is called with timeout=0 and polled, retry_delay (default 100 ms)
apart: a contended blocking acquire() fails with Debian's tenacity 8.2, which
calls the lock's wait(previous_attempt_number, delay_since_first_attempt)
with one argument (locks.py acquire's `wait`; tenacity 8 passes a
RetryCallState). With timeout=0 tenacity stops before it waits.

The token (fencing = "token") is the key's create revision, read with get()
right after acquire(). Check "is-acquired": lock.is_acquired(), a get()
compared with its uuid (a round trip). release() is a Txn deleting the key if
its value is still the uuid; False raises (release-failed).
"""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import job as common  # noqa: E402

try:
    import etcd3
except ImportError as e:
    common.missing("etcd3", e)


class PythonEtcd3:
    def __init__(self, job):
        msg = job.msg
        server = msg["servers"][0]
        o = msg["options"]
        self.client = etcd3.client(host=server["host"], port=server["port"])
        self.client.status()  # connected before the run
        self.key = msg["key"]
        self.ttl = max(1, round(o.get("lease_ttl_ms", 60000) / 1000))
        self.retry_delay = o.get("retry_delay_ms", 100) / 1000.0
        self.refresh_interval = o.get("refresh_interval_ms", 0) / 1000.0
        self.check = self.is_acquired if msg["check"] == "is-acquired" else None

    def acquire(self):
        lock = etcd3.Lock(self.key, ttl=self.ttl, etcd_client=self.client)
        while not lock.acquire(timeout=0):
            time.sleep(self.retry_delay)
        _, meta = self.client.get(lock.key)
        grant = {"value": lock.uuid.hex(), "token": meta.create_revision if meta else None, "lock": lock}
        if self.refresh_interval > 0:
            grant["refreshing"] = threading.Event()
            threading.Thread(target=self.refresh, args=(grant,), daemon=True).start()
        return grant

    def refresh(self, grant):
        while not grant["refreshing"].wait(self.refresh_interval):
            try:
                grant["lock"].refresh()
            except Exception:  # a refresh that fails is the application's to notice, not the thread's
                pass

    def is_acquired(self, grant):
        if grant["lock"].is_acquired():
            return True, "is_acquired(): the key holds its uuid"
        return False, "is_acquired(): the key does not hold its uuid"

    def release(self, grant):
        if "refreshing" in grant:
            grant["refreshing"].set()
        if not grant["lock"].release():
            raise RuntimeError("release() returned False: the key no longer holds its uuid")

    def close(self):
        self.client.close()


common.run({"library": "etcd3", "version": etcd3.__version__}, PythonEtcd3)
