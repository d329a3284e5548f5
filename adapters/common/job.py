"""The job every Python adapter does, and the protocol it speaks with locksim
(live/README.md, "External clients"): the job and its rounds arrive as JSON
lines on stdin, the events leave as JSON lines on stdout, the storage is a
TCP connection of JSON lines. An adapter gives the library's part (acquire,
check, release); this module does the rest exactly as locksim's simulated
job does (harness/job.cpp).

Run by Debian's /usr/bin/python3 -I -B -u: Debian's packages, no user site,
no bytecode written into the source tree. Nothing but protocol lines may
reach stdout: sys.stdout is stderr once this module is loaded, and the
protocol writes the original stdout itself, so that an event is out before
the adapter stops itself after it.
"""

import json
import os
import signal
import socket
import sys
import threading
import time

_protocol = sys.stdout
sys.stdout = sys.stderr
_emitting = threading.Lock()  # a library's own threads tell things too (kazoo's connection listener)


def emit(ev, **fields):
    line = json.dumps(dict(ev=ev, **fields)) + "\n"
    with _emitting:
        _protocol.write(line)
        _protocol.flush()


def missing(module, error):
    """The library is not installed: say which module, and go."""
    emit("error", missing=module, detail=str(error).splitlines()[0] if str(error) else module)
    sys.exit(1)


def describe(e):
    # A gRPC error's first line says nothing: its status and details do.
    code, details = getattr(e, "code", None), getattr(e, "details", None)
    if callable(code) and callable(details):
        try:
            return type(e).__name__ + ": " + str(code()) + ": " + str(details())
        except Exception:  # not grpc's: its first line, as for any other
            pass
    return type(e).__name__ + ": " + (str(e).splitlines()[0] if str(e) else "")


class Storage:
    """The storage: one request at a time, each answered by one line."""

    def __init__(self, endpoint, timeout_ms):
        self.endpoint = (endpoint["host"], endpoint["port"])
        self.timeout = timeout_ms / 1000.0 if timeout_ms else None
        self.sock = None
        self.reader = None

    def request(self, req):
        """The reply, or None when none came (in storage_timeout_ms, or ever)."""
        if self.sock is None:
            self.sock = socket.create_connection(self.endpoint)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.sock.settimeout(self.timeout)
            self.reader = self.sock.makefile("r", encoding="utf-8")
        try:
            self.sock.sendall((json.dumps(req) + "\n").encode())
            line = self.reader.readline()
        except (socket.timeout, OSError):
            line = ""
        if not line:
            # A late reply would be taken for the next request's: a new connection.
            self.sock.close()
            self.sock = None
            return None
        return json.loads(line)


class Job:
    def __init__(self, msg):
        self.msg = msg
        self.seen = {}
        self.storage = Storage(msg["storage"], msg["storage_timeout_ms"])

    def event(self, ev, **fields):
        """An event, then a stop of its own if a pause is anchored on it."""
        emit(ev, **fields)
        n = self.seen[ev] = self.seen.get(ev, 0) + 1
        if any(s["event"] == ev and s["occurrence"] == n for s in self.msg["stop_at"]):
            os.kill(os.getpid(), signal.SIGSTOP)

    def notified(self, sig, detail=""):
        """The library told the application something: "suspended", "session-lost", ..."""
        self.event("notified", signal=sig, detail=detail)

    def under_lock(self, grant, rnd, lib):
        """The part of a read-modify-write under the lock (harness/job.cpp).
        `grant`: {"value", "token"}; lib.check(grant), when the scenario asks for
        the library's check, says whether to write: (ok, detail)."""
        msg = self.msg
        token = grant.get("token") if msg["fencing"] == "token" and grant.get("token") is not None else -1
        if msg["fencing"] == "lock-value":
            self.event("claiming", detail=str(grant.get("value")))
            claimed = self.storage.request({"op": "claim", "owner": grant.get("value")})
            if not claimed or not claimed["ok"]:
                self.event("write-rejected", detail="the claim was refused")
                return
        read = self.storage.request({"op": "read", "token": token if msg["fenced_reads"] else -1})
        if read is None:
            self.event("write-rejected", detail="storage did not answer the read")
            return
        if not read["ok"]:
            self.event("write-rejected", token=token, detail="its read was refused: " + read.get("reason", ""))
            return
        self.event("read", value=read["value"])
        time.sleep(rnd["work_ms"] / 1000.0)
        if getattr(lib, "check", None) is not None:
            ok, detail = lib.check(grant)
            if not ok:
                self.event("lost", detail=detail)
                return
            self.event("checked", detail=detail)
        value = read["value"] + 1
        self.event("writing", value=value, token=token)
        req = {"op": "write", "value": value, "token": token}
        if msg["fencing"] == "lock-value":
            req["owner"] = grant.get("value")
        wrote = self.storage.request(req)
        if wrote and wrote["ok"]:
            self.event("wrote", value=value, token=token)
        else:
            self.event("write-rejected", value=value, token=token,
                       detail=wrote.get("reason", "") if wrote else "storage did not answer")

    def round(self, rnd, lib):
        """A round: lib.acquire() returns {"value", "token"} or raises;
        lib.release(grant) returns or raises."""
        self.event("acquiring")
        try:
            grant = lib.acquire()
        except Exception as e:  # the library's own failure: the round's outcome
            self.event("acquire-failed", detail=describe(e))
            return
        if grant is None:
            self.event("acquire-failed", detail="acquire() returned False")
            return
        self.event("acquired", lock_value=grant.get("value"), token=grant.get("token"))
        if self.msg["job"] == "hold":
            time.sleep(rnd["hold_ms"] / 1000.0)
        else:
            self.under_lock(grant, rnd, lib)
        self.event("releasing")
        try:
            lib.release(grant)
            self.event("released")
        except Exception as e:
            self.event("release-failed", detail=describe(e))


def run(hello, start):
    """Runs an adapter: `hello` {"library", "version"} once loaded; start(job)
    connects to the job's servers and returns the library's part (acquire,
    release, check or None, close, and warm if it has scripts: a lock taken
    and released on another key, so that its Lua scripts are in the
    servers' script cache and the run's first EVALSHA is answered, as the
    simulator's one round trip is; a fresh server answers NOSCRIPT and the
    library sends EVAL after it, one round trip more, and a fault that
    counts messages would fall on that NOSCRIPT); then `ready`, and the
    rounds."""
    emit("hello", **hello)
    try:
        first = sys.stdin.readline()
        if not first:
            sys.exit(0)
        msg = json.loads(first)
        if msg.get("msg") != "job":
            raise ValueError("the first message is not a job: " + first.strip())
        job = Job(msg)
        lib = start(job)  # connected to its servers: the run may begin
        if hasattr(lib, "warm"):
            lib.warm()  # its scripts cached on the servers, as on any server the library has used
        emit("ready")
        for line in sys.stdin:
            m = json.loads(line)
            if m["msg"] == "end":
                break
            if m["think_ms"]:
                time.sleep(m["think_ms"] / 1000.0)
            job.round(m, lib)
            emit("round-done")
        lib.close()
        emit("done")
    except SystemExit:
        raise
    except BaseException as e:  # the adapter's own failure: locksim stops the run and says so
        emit("error", detail=describe(e))
        sys.exit(1)
    sys.stdout.flush()
    os._exit(0)  # the library's threads (kazoo's, grpc's) must not keep it alive
