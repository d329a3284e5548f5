"""kazoo 2.8.0 (Debian's python3-kazoo), as an external client of locksim
(live/README.md): kazoo.recipe.lock.Lock(zk, "/locks/<key>") over a
KazooClient of the job's server, with the scenario's session_timeout
(KazooClient(timeout=...)). Every connection state the library reports
(zk.add_listener: SUSPENDED, CONNECTED again, LOST) is told as it comes
("notified"); the lock itself never tells its holder anything. The token
(fencing = "token") is the lock node's czxid, read with zk.exists() right
after acquire(). Checks: "state" reads zk.state == KazooState.CONNECTED (what
the connection thread last set); "exists" calls zk.exists() on the lock's
node (a round trip; while SUSPENDED it waits for the connection, then fails).
release() deletes the node (recipe/lock.py _inner_release).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import job as common  # noqa: E402

try:
    import kazoo.version
    from kazoo.client import KazooClient, KazooState
    from kazoo.recipe.lock import Lock
except ImportError as e:
    common.missing("kazoo", e)

SIGNALS = {KazooState.SUSPENDED: "suspended", KazooState.CONNECTED: "reconnected", KazooState.LOST: "session-lost"}


class Kazoo:
    def __init__(self, job):
        msg = job.msg
        server = msg["servers"][0]
        o = msg["options"]
        timeout = o.get("session_timeout_ms", 10000) / 1000.0
        self.zk = KazooClient(hosts="%s:%d" % (server["host"], server["port"]), timeout=timeout)
        self.zk.start(timeout=15)

        def listener(state):
            job.notified(SIGNALS[state], "the connection's state is " + state)

        self.listener = listener
        self.zk.add_listener(listener)
        self.path = "/locks/" + msg["key"]
        self.check = {"state": self.state, "exists": self.exists}.get(msg["check"])

    def acquire(self):
        lock = Lock(self.zk, self.path)
        lock.acquire()
        node = self.path + "/" + lock.node
        stat = self.zk.exists(node)
        return {"value": node, "token": stat.czxid if stat else None, "lock": lock, "node": node}

    def state(self, grant):
        state = self.zk.state
        return state == KazooState.CONNECTED, "zk.state is " + state

    def exists(self, grant):
        try:
            stat = self.zk.exists(grant["node"])
        except Exception as e:  # the connection or the session is gone: the node cannot be vouched for
            return False, "zk.exists() failed: " + common.describe(e)
        if stat is None:
            return False, "zk.exists(): the lock's node is gone"
        return True, "zk.exists(): the lock's node is there"

    def release(self, grant):
        if not grant["lock"].release():
            raise RuntimeError("release() returned False")

    def close(self):
        self.zk.remove_listener(self.listener)  # its own stop() is no news to the job
        self.zk.stop()
        self.zk.close()


common.run({"library": "kazoo", "version": kazoo.version.__version__}, Kazoo)
