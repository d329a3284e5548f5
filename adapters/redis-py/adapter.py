"""redis-py 4.3.4 (Debian's python3-redis), as an external client of locksim
(live/README.md): redis.lock.Lock(client, key, timeout=ttl) with the
library's defaults (sleep 0.1 s between tries, blocking for ever: lock.py
acquire()), released with lock.release(), which raises LockNotOwnedError
when the key is no longer its token (lock.py do_release). Check "owned":
lock.owned(), a GET compared with its token (lock.py owned()). Options from
[lock]: blocking_timeout (acquire() gives up after it), sleep.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import job as common  # noqa: E402

try:
    import redis
    from redis.lock import Lock
except ImportError as e:
    common.missing("redis", e)


class RedisPy:
    def __init__(self, job):
        msg = job.msg
        server = msg["servers"][0]
        self.client = redis.Redis(host=server["host"], port=server["port"])
        self.client.ping()  # connected before the run: its first message in the run is the lock's
        o = msg["options"]
        self.kwargs = {"timeout": msg["ttl_ms"] / 1000.0 if msg.get("ttl_ms") else None}
        if "blocking_timeout_ms" in o:
            self.kwargs["blocking_timeout"] = o["blocking_timeout_ms"] / 1000.0
        if "sleep_ms" in o:
            self.kwargs["sleep"] = o["sleep_ms"] / 1000.0
        self.key = msg["key"]
        self.check = self.owned if msg["check"] == "owned" else None

    def warm(self):
        lock = Lock(self.client, self.key + ":locksim-warm-up", **self.kwargs)
        lock.acquire()
        lock.release()  # its release script (lock.py LUA_RELEASE_SCRIPT) cached

    def acquire(self):
        lock = Lock(self.client, self.key, **self.kwargs)
        if not lock.acquire():
            return None
        return {"value": lock.local.token.decode(), "token": None, "lock": lock}

    def owned(self, grant):
        if grant["lock"].owned():
            return True, "owned(): the key holds its token"
        return False, "owned(): the key does not hold its token"

    def release(self, grant):
        grant["lock"].release()

    def close(self):
        self.client.close()


common.run({"library": "redis", "version": redis.__version__}, RedisPy)
