#!/usr/bin/env python3
"""A local stand-in for the Hugging Face Hub, for tests that must not reach the network.

Serves model metadata the way the Hub does (revision API, resolve URLs, an LFS "CDN" on another
host name that needs Range requests) from a fixture tree on disk, records what clients did
(statistics, violations, an optional JSON-lines log) and injects faults on request.
See README_hub_standin.md next to this file for the layout, the control file and the log format.

    python3 hub_standin.py --root DIR --port-file FILE [--log FILE] [--token TOKEN ...]
                           [--cdn-host HOST] [--verbose]

Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import re
import secrets
import signal
import socketserver
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

CONTROL_FILE = ".standin.json"
DEFAULT_LFS_PATTERNS = ("*.safetensors",)
LAST_MODIFIED = "2026-01-01T00:00:00.000Z"
LFS_POINTER_SIZE = 134
# huggingface_hub reads the first 100,000 bytes of a safetensors file in one request; a client may
# read that much (or the whole declared header, if larger) without being flagged.
FREE_PREFIX_BYTES = 100_000
CHUNK = 256 * 1024
ZEROS = bytes(64 * 1024)
MAX_DRAINED_REQUEST_BODY = 1 << 20
KINDS = ("api", "resolve", "cdn")
RANGE_RE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$", re.IGNORECASE)
UNSAFE_HEADER_CHARS = re.compile(r"[^\x20-\x7e]")


class HttpError(Exception):
    """An error answer: JSON body {"error": message}, optional X-Error-Code and extra headers."""

    def __init__(self, status, message, error_code=None, headers=()):
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_code = error_code
        self.headers = list(headers)


# --------------------------------------------------------------------------------------------
# Fixture repositories


class Repo:
    """One fixture repository, DIR/<org>/<name>/, with its optional control file."""

    def __init__(self, root, org, name):
        self.org = org
        self.name = name
        self.id = f"{org}/{name}"
        self.dir = os.path.join(root, org, name)
        cfg = {}
        control = os.path.join(self.dir, CONTROL_FILE)
        if os.path.isfile(control):
            try:
                with open(control, encoding="utf-8") as f:
                    cfg = json.load(f)
            except (OSError, ValueError) as e:
                raise HttpError(500, f"stand-in: unreadable {CONTROL_FILE} in {self.id}: {e}")
            if not isinstance(cfg, dict):
                raise HttpError(500, f"stand-in: {CONTROL_FILE} in {self.id} is not an object")
        self.commit = str(cfg.get("commit") or hashlib.sha1(self.id.encode()).hexdigest()).lower()
        self.revisions = {"main": self.commit}
        for rev_name, commit in (cfg.get("revisions") or {}).items():
            self.revisions[str(rev_name)] = str(commit).lower()
        self.commits = {self.commit, *self.revisions.values()}
        self.gated = bool(cfg.get("gated", False))
        self.private = bool(cfg.get("private", False))
        lfs = cfg.get("lfs", list(DEFAULT_LFS_PATTERNS))
        self.lfs_patterns = [lfs] if isinstance(lfs, str) else [str(p) for p in lfs]
        self.faults = [f for f in (cfg.get("faults") or []) if isinstance(f, dict)]

    def resolve_revision(self, rev):
        """The commit a revision name (main, a named revision, a full commit) points at, or None."""
        if rev in self.revisions:
            return self.revisions[rev]
        if rev.lower() in self.commits:
            return rev.lower()
        return None

    def is_lfs(self, rel):
        return any(fnmatch.fnmatchcase(rel, p) for p in self.lfs_patterns)

    def file_path(self, rel):
        return os.path.join(self.dir, *rel.split("/"))

    def stat_file(self, rel):
        """os.stat_result of a repo file, or None when the repo has no such file."""
        if rel == CONTROL_FILE:
            return None
        try:
            st = os.stat(self.file_path(rel))
        except OSError:
            return None
        return st if _is_regular(st) else None

    def list_files(self):
        out = []
        for dirpath, dirnames, filenames in os.walk(self.dir):
            dirnames.sort()
            for fn in filenames:
                full = os.path.join(dirpath, fn)
                rel = os.path.relpath(full, self.dir).replace(os.sep, "/")
                if rel == CONTROL_FILE:
                    continue
                try:
                    if _is_regular(os.stat(full)):
                        out.append(rel)
                except OSError:
                    pass
        return sorted(out)


def _is_regular(st):
    return (st.st_mode & 0o170000) == 0o100000


class BlobIds:
    """Stable, well-formed object ids. Small (non-LFS) files: the git blob sha1 of their content.
    LFS files: fake sha256 / pointer sha1 derived from (path, size, mtime), never reading the file."""

    def __init__(self):
        self._lock = threading.Lock()
        self._cache = {}

    def git_blob_sha1(self, path, st):
        key = (path, st.st_size, st.st_mtime_ns)
        with self._lock:
            hit = self._cache.get(key)
        if hit:
            return hit
        h = hashlib.sha1(b"blob %d\0" % st.st_size)
        with open(path, "rb") as f:
            while True:
                block = f.read(CHUNK)
                if not block:
                    break
                h.update(block)
        digest = h.hexdigest()
        with self._lock:
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = digest
        return digest

    @staticmethod
    def lfs_ids(repo_id, rel, st):
        seed = f"{repo_id}\0{rel}\0{st.st_size}\0{st.st_mtime_ns}".encode()
        sha256 = hashlib.sha256(b"standin-lfs-content\0" + seed).hexdigest()
        pointer_sha1 = hashlib.sha1(b"standin-lfs-pointer\0" + seed).hexdigest()
        return sha256, pointer_sha1


# --------------------------------------------------------------------------------------------
# Counters, violations, fault bookkeeping


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.requests = 0
            self.by_kind = {k: 0 for k in KINDS}
            self.body_bytes_by_kind = {k: 0 for k in KINDS}
            self.by_status = {}
            self.bytes_sent = 0
            self.violations = []
            self.authorized_requests = 0
            self.auth_headers_seen = 0
            self.fault_uses = {}

    def count_request(self, kind, has_auth, valid_token):
        with self.lock:
            self.requests += 1
            self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
            self.body_bytes_by_kind.setdefault(kind, 0)
            if has_auth:
                self.auth_headers_seen += 1
            if valid_token:
                self.authorized_requests += 1

    def count_status(self, status):
        with self.lock:
            key = str(status)
            self.by_status[key] = self.by_status.get(key, 0) + 1

    def add_bytes(self, kind, n):
        with self.lock:
            self.bytes_sent += n
            self.body_bytes_by_kind[kind] = self.body_bytes_by_kind.get(kind, 0) + n

    def violation(self, kind, path, range_header, repo_id=None, rel=None):
        with self.lock:
            self.violations.append({"kind": kind, "path": path, "range": range_header,
                                    "repo": repo_id, "file": rel, "t": time.time()})

    def claim_fault(self, key, times):
        """Consumes one use of a fault; False when its `times` are used up."""
        with self.lock:
            used = self.fault_uses.get(key, 0)
            if times is not None and used >= times:
                return False
            self.fault_uses[key] = used + 1
            return True

    def snapshot(self):
        with self.lock:
            return {
                "requests": self.requests,
                "by_kind": dict(self.by_kind),
                "bytes_sent": self.bytes_sent,
                "body_bytes_by_kind": dict(self.body_bytes_by_kind),
                "by_status": dict(self.by_status),
                "violations": [dict(v) for v in self.violations],
                "authorized_requests": self.authorized_requests,
                "auth_headers_seen": self.auth_headers_seen,
            }


class JsonLog:
    def __init__(self, path):
        self._lock = threading.Lock()
        self._f = open(path, "a", encoding="utf-8") if path else None

    def write(self, record):
        if self._f is None:
            return
        line = json.dumps(record, separators=(",", ":")) + "\n"
        with self._lock:
            self._f.write(line)
            self._f.flush()

    def close(self):
        if self._f is not None:
            with self._lock:
                self._f.close()
                self._f = None


# --------------------------------------------------------------------------------------------
# Helpers


def classify(path):
    if path.startswith("/_standin/"):
        return "stats"
    if path.startswith("/api/"):
        return "api"
    if path.startswith("/cdn/"):
        return "cdn"
    segs = path.split("/")
    if len(segs) >= 4 and segs[3] == "resolve":
        return "resolve"
    return "other"


def clean_segment(raw, what):
    """One URL path segment, unquoted; 400 for '.', '..', empty, NUL or backslash."""
    try:
        seg = unquote(raw, errors="strict")
    except UnicodeDecodeError:
        raise HttpError(400, f"bad {what}: not UTF-8")
    if seg in ("", ".", "..") or "/" in seg or "\0" in seg or "\\" in seg:
        raise HttpError(400, f"bad {what}")
    return seg


def clean_rel_path(raw_segs):
    """The repo-relative file path from raw URL segments; 400 for '..', absolute or empty paths."""
    if not raw_segs:
        raise HttpError(400, "missing file path")
    parts = []
    for raw in raw_segs:
        try:
            seg = unquote(raw, errors="strict")
        except UnicodeDecodeError:
            raise HttpError(400, "bad file path: not UTF-8")
        parts.extend(seg.split("/"))  # an encoded %2F must not smuggle in a '..' segment
    if any(p in ("", ".", "..") or "\0" in p or "\\" in p for p in parts):
        raise HttpError(400, "bad file path")
    return "/".join(parts)


def parse_bearer(header):
    if header is None:
        return None
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def parse_range(header, size):
    """('ok', start, end_inclusive) | ('bad',) | ('unsatisfiable',) for a single byte range."""
    m = RANGE_RE.match(header)
    if not m:
        return ("bad",)
    first, last = m.group(1), m.group(2)
    if first == "" and last == "":
        return ("bad",)
    if first == "":  # suffix range: the last N bytes
        n = int(last)
        if n == 0 or size == 0:
            return ("unsatisfiable",)
        return ("ok", max(0, size - n), size - 1)
    start = int(first)
    if last != "" and int(last) < start:
        return ("bad",)
    if start >= size:
        return ("unsatisfiable",)
    end = min(int(last), size - 1) if last != "" else size - 1
    return ("ok", start, end)


def content_type(rel):
    return "application/json" if rel.endswith(".json") else "application/octet-stream"


def header_safe(text):
    return UNSAFE_HEADER_CHARS.sub("?", text)[:300]


def read_u64_le(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        head = os.pread(fd, 8, 0)
    finally:
        os.close(fd)
    return struct.unpack("<Q", head)[0] if len(head) == 8 else 0


def file_chunks(path, start, end, patch=None):
    """Bytes start..end (inclusive) of a file, read with pread in bounded chunks.
    `patch` maps file offsets to replacement byte values (the header_len fault)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        pos = start
        while pos <= end:
            data = os.pread(fd, min(CHUNK, end - pos + 1), pos)
            if not data:
                return  # the file shrank underneath us; the caller closes the connection
            if patch and any(pos <= off < pos + len(data) for off in patch):
                data = bytearray(data)
                for off, value in patch.items():
                    if pos <= off < pos + len(data):
                        data[off - pos] = value
                data = bytes(data)
            yield data
            pos += len(data)
    finally:
        os.close(fd)


def zero_chunks(total):
    left = total
    while left > 0:
        n = min(left, len(ZEROS))
        yield ZEROS[:n] if n < len(ZEROS) else ZEROS
        left -= n


class Mods:
    """What the faults chosen for one request ask for."""

    def __init__(self):
        self.truncate = None
        self.header_len = None
        self.oversized = None
        self.redirect_loop = False


# --------------------------------------------------------------------------------------------
# HTTP


class StandinServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024

    def __init__(self, handler, root, tokens, cdn_host, log, verbose):
        self.root = root
        self.tokens = frozenset(tokens)
        self.cdn_host = cdn_host
        self.log = log
        self.verbose = verbose
        self.state = State()
        self.blob_ids = BlobIds()
        super().__init__(("127.0.0.1", 0), handler)

    def server_bind(self):
        # HTTPServer.server_bind calls socket.getfqdn(), a DNS lookup that can stall; not needed.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = host
        self.server_port = port

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return  # client went away: not worth a word
        super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hub-standin/1"
    sys_version = ""
    disable_nagle_algorithm = True
    timeout = 60  # idle keep-alive connections and stalled readers are dropped after this

    # ---- plumbing

    def log_message(self, format, *args):  # noqa: A002 (signature of the base class)
        if self.server.verbose:
            sys.stderr.write("hub-standin: %s\n" % (format % args))

    def do_GET(self):
        self._dispatch()

    def do_HEAD(self):
        self._dispatch()

    def do_POST(self):
        self._dispatch()

    _kind = None  # set per request by _dispatch; None for requests http.server rejects itself
    _status = None

    def send_response(self, code, message=None):
        self._status = code
        if self._kind not in (None, "stats"):
            self.server.state.count_status(code)
        super().send_response(code, message)

    def _drain_request_body(self):
        length = self.headers.get("Content-Length")
        if not length:
            return
        try:
            n = int(length)
        except ValueError:
            n = -1
        if n < 0 or n > MAX_DRAINED_REQUEST_BODY:
            self.close_connection = True
            return
        while n > 0:
            block = self.rfile.read(min(n, 65536))
            if not block:
                break
            n -= len(block)

    def _dispatch(self):
        self._t0 = time.time()
        self._status = None
        self._bytes = 0
        split = urlsplit(self.path)
        raw_path = split.path
        self._kind = kind = classify(raw_path)
        self._query = parse_qs(split.query)
        auth = self.headers.get("Authorization")
        self._has_auth = auth is not None
        token = parse_bearer(auth)
        self._token_present = token is not None
        self._token_valid = token is not None and token in self.server.tokens
        del auth, token  # never kept, never logged
        if kind != "stats":
            self.server.state.count_request(kind, self._has_auth, self._token_valid)
        try:
            self._drain_request_body()
            try:
                if self.command == "POST" and kind != "stats":
                    raise HttpError(405, "method not allowed")
                if kind == "stats":
                    self._handle_standin(raw_path)
                elif kind == "api":
                    self._handle_api(raw_path)
                elif kind == "resolve":
                    self._handle_resolve(raw_path)
                elif kind == "cdn":
                    self._handle_cdn(raw_path)
                else:
                    raise HttpError(404, "Not Found")
            except HttpError as e:
                self._send_error(e)
        except (ConnectionError, TimeoutError):
            self.close_connection = True
        finally:
            self._write_log()

    def _write_log(self):
        record = {
            "t": self._t0,
            "method": self.command,
            "host": self.headers.get("Host"),
            "path": self.path,
            "range": self.headers.get("Range"),
            "status": self._status,
            "bytes": self._bytes,
            "auth": self._has_auth,
            "kind": self._kind,
        }
        self.server.log.write(record)

    def _send(self, status, headers, body=b"", *, length=None, chunks=None, truncate=None):
        """Answers with an exact Content-Length. With `truncate`, only that many body bytes are
        sent and the connection is closed (the client sees a short body)."""
        if chunks is None:
            length = len(body)
            chunks = iter((body,) if body else ())
        try:
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, str(value))
            self.send_header("Content-Length", str(length))
            self.end_headers()
            if self.command == "HEAD":
                return
            limit = length if truncate is None else min(truncate, length)
            sent = 0
            for chunk in chunks:
                if sent >= limit:
                    break
                piece = chunk if len(chunk) <= limit - sent else chunk[: limit - sent]
                if self._kind != "stats":
                    # counted before the write, so a client that has the whole answer already
                    # sees it in /_standin/stats
                    self.server.state.add_bytes(self._kind, len(piece))
                self.wfile.write(piece)
                sent += len(piece)
                self._bytes = sent
            if sent < length:
                self.close_connection = True
        except OSError as e:
            if isinstance(e, (ConnectionError, TimeoutError)):
                raise
            self.close_connection = True  # e.g. a fixture file vanished after the headers went out
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    def _send_json(self, status, obj, extra_headers=(), truncate=None):
        body = json.dumps(obj).encode()
        headers = [("Content-Type", "application/json; charset=utf-8"), *extra_headers]
        self._send(status, headers, body, truncate=truncate)

    def _send_error(self, e):
        headers = []
        if e.error_code:
            headers.append(("X-Error-Code", e.error_code))
        headers.append(("X-Error-Message", header_safe(e.message)))
        headers.extend(e.headers)
        self._send_json(e.status, {"error": e.message}, headers)

    # ---- shared checks

    def _repo(self, raw_org, raw_name):
        org = clean_segment(raw_org, "repo id")
        name = clean_segment(raw_name, "repo id")
        if not os.path.isdir(os.path.join(self.server.root, org, name)):
            raise HttpError(404, "Repository not found", "RepoNotFound")
        return Repo(self.server.root, org, name)

    def _check_private(self, repo):
        if repo.private and not self._token_valid:
            raise HttpError(401, "Repository not found", "RepoNotFound")

    def _check_gated(self, repo):
        if not repo.gated or self._token_valid:
            return
        msg = f"Access to model {repo.id} is restricted. You must have access to it and be authenticated to access it. Please log in."
        if self._token_present:
            raise HttpError(403, f"Access to model {repo.id} is restricted and you are not in the authorized list.", "GatedRepo")
        raise HttpError(401, msg, "GatedRepo")

    def _revision(self, repo, rev):
        commit = repo.resolve_revision(rev)
        if commit is None:
            raise HttpError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        return commit

    def _faults(self, repo, target, kind, body_bearing):
        """Applies the faults of `repo` that match this request: sleeps for delays, raises for
        status faults and returns the rest as Mods. Each chosen fault uses one of its `times`."""
        mods = Mods()
        delay = 0.0
        status_fault = None
        for index, fault in enumerate(repo.faults):
            pattern = str(fault.get("path", "*"))
            if target == "api":
                if pattern != "api":
                    continue
            elif pattern == "api" or not fnmatch.fnmatchcase(target, pattern):
                continue
            if "kind" in fault and fault["kind"] != kind:
                continue
            if "method" in fault and str(fault["method"]).upper() != self.command:
                continue
            if ("redirect_loop" in fault and kind != "resolve") or (
                any(k in fault for k in ("truncate", "header_len", "oversized")) and not body_bearing
            ) or (any(k in fault for k in ("truncate", "header_len")) and self.command != "GET"):
                continue
            key = (repo.id, index, json.dumps(fault, sort_keys=True))
            if not self.server.state.claim_fault(key, fault.get("times")):
                continue
            if "delay_s" in fault:
                delay += float(fault["delay_s"])
            if "status" in fault and status_fault is None:
                status_fault = fault
            if fault.get("redirect_loop"):
                mods.redirect_loop = True
            if "truncate" in fault:
                n = int(fault["truncate"])
                mods.truncate = n if mods.truncate is None else min(mods.truncate, n)
            if "header_len" in fault:
                mods.header_len = int(fault["header_len"])
            if "oversized" in fault:
                mods.oversized = int(fault["oversized"])
        if delay > 0:
            time.sleep(delay)
        if status_fault is not None:
            status = int(status_fault["status"])
            headers = []
            if "retry_after" in status_fault:
                headers.append(("Retry-After", str(status_fault["retry_after"])))
            message = str(status_fault.get("message") or f"stand-in fault: status {status}")
            raise HttpError(status, message, status_fault.get("error_code"), headers)
        return mods

    # ---- endpoints

    def _handle_standin(self, raw_path):
        if raw_path == "/_standin/stats" and self.command in ("GET", "HEAD"):
            self._send_json(200, self.server.state.snapshot())
        elif raw_path == "/_standin/reset" and self.command == "POST":
            self.server.state.reset()
            self._send_json(200, {"ok": True})
        elif raw_path in ("/_standin/stats", "/_standin/reset"):
            raise HttpError(405, "method not allowed")
        else:
            raise HttpError(404, "Not Found")

    def _handle_api(self, raw_path):
        segs = raw_path.split("/")  # ['', 'api', 'models', org, name, ('revision', rev...)]
        if len(segs) < 5 or segs[2] != "models":
            raise HttpError(404, "Not Found")
        repo = self._repo(segs[3], segs[4])
        rest = segs[5:]
        if not rest or rest == [""]:
            rev = "main"
        elif rest[0] == "revision" and len(rest) >= 2 and rest[1] != "":
            rev = "/".join(unquote(s) for s in rest[1:])
        else:
            raise HttpError(404, "Not Found")
        self._check_private(repo)
        commit = self._revision(repo, rev)
        mods = self._faults(repo, "api", "api", body_bearing=True)
        blobs = any(v.lower() in ("true", "1") for v in self._query.get("blobs", []))
        siblings = []
        for rel in repo.list_files():
            entry = {"rfilename": rel}
            if blobs:
                st = repo.stat_file(rel)
                if st is None:
                    continue
                entry["size"] = st.st_size
                if repo.is_lfs(rel):
                    sha256, pointer = BlobIds.lfs_ids(repo.id, rel, st)
                    entry["blobId"] = pointer
                    entry["lfs"] = {"sha256": sha256, "size": st.st_size,
                                    "pointerSize": LFS_POINTER_SIZE}
                else:
                    entry["blobId"] = self.server.blob_ids.git_blob_sha1(repo.file_path(rel), st)
            siblings.append(entry)
        info = {
            "_id": hashlib.sha1(b"id\0" + repo.id.encode()).hexdigest()[:24],
            "id": repo.id,
            "modelId": repo.id,
            "author": repo.org,
            "sha": commit,
            "private": repo.private,
            "gated": "manual" if repo.gated else False,
            "disabled": False,
            "lastModified": LAST_MODIFIED,
            "tags": [],
            "siblings": siblings,
        }
        headers = [("X-Repo-Commit", commit)]
        if mods.oversized is not None:
            self._send(200, [("Content-Type", "application/json; charset=utf-8"), *headers],
                       length=mods.oversized, chunks=zero_chunks(mods.oversized))
            return
        self._send_json(200, info, headers, truncate=mods.truncate)

    def _handle_resolve(self, raw_path):
        segs = raw_path.split("/")  # ['', org, name, 'resolve', rev, path...]
        if len(segs) < 6:
            raise HttpError(400, "missing revision or file path")
        repo = self._repo(segs[1], segs[2])
        try:
            rev = unquote(segs[4], errors="strict")
        except UnicodeDecodeError:
            raise HttpError(400, "bad revision")
        rel = clean_rel_path(segs[5:])
        self._check_private(repo)
        commit = self._revision(repo, rev)
        self._check_gated(repo)
        lfs = repo.is_lfs(rel)
        mods = self._faults(repo, rel, "resolve", body_bearing=not lfs)
        if mods.redirect_loop:
            # Relative Location alternating between the URL with and without a marker, forever.
            target = raw_path if "standin_loop" in self._query else raw_path + "?standin_loop=1"
            self._send(302, [("Location", target), ("X-Repo-Commit", commit)])
            return
        st = repo.stat_file(rel)
        if st is None:
            raise HttpError(404, "Entry not found", "EntryNotFound")
        path = repo.file_path(rel)
        if lfs:
            sha256, pointer = BlobIds.lfs_ids(repo.id, rel, st)
            location = "http://%s:%d/cdn/%s/%s/%s/%s?sig=%s" % (
                self.server.cdn_host, self.server.server_port, commit, quote(repo.org, safe=""),
                quote(repo.name, safe=""), quote(rel), secrets.token_hex(16))
            self._send(302, [
                ("Location", location),
                ("X-Repo-Commit", commit),
                ("X-Linked-Size", st.st_size),
                ("X-Linked-ETag", f'"{sha256}"'),
                ("ETag", f'"{pointer}"'),
                ("Content-Type", "text/plain; charset=utf-8"),
            ])
            return
        etag = self.server.blob_ids.git_blob_sha1(path, st)
        headers = [("ETag", f'"{etag}"'), ("X-Repo-Commit", commit),
                   ("Content-Type", content_type(rel)), ("Accept-Ranges", "bytes")]
        self._serve_bytes(path, st.st_size, rel, headers, mods, strict_range=False)

    def _handle_cdn(self, raw_path):
        segs = raw_path.split("/")  # ['', 'cdn', commit, org, name, path...]
        if len(segs) < 6:
            raise HttpError(400, "bad CDN path")
        repo = self._repo(segs[3], segs[4])
        commit = segs[2].lower()
        if commit not in repo.commits:
            raise HttpError(404, f"Invalid rev id: {commit}", "RevisionNotFound")
        rel = clean_rel_path(segs[5:])
        range_header = self.headers.get("Range")
        if self._has_auth:
            self.server.state.violation("token_to_cdn", raw_path, range_header, repo.id, rel)
        mods = self._faults(repo, rel, "cdn", body_bearing=True)
        st = repo.stat_file(rel)
        if st is None:
            raise HttpError(404, "Entry not found", "EntryNotFound")
        is_safetensors = rel.endswith(".safetensors")
        if (self.command == "GET" and range_header is None and is_safetensors
                and mods.oversized is None):
            self.server.state.violation("whole_file", raw_path, None, repo.id, rel)
            raise HttpError(403, "stand-in CDN: a GET of a whole .safetensors file is refused "
                                 "(send a Range header)")
        headers = [("Content-Type", content_type(rel)), ("Accept-Ranges", "bytes")]
        if repo.is_lfs(rel):
            sha256, _ = BlobIds.lfs_ids(repo.id, rel, st)
            headers.append(("ETag", f'"{sha256}"'))
        self._serve_bytes(repo.file_path(rel), st.st_size, rel, headers, mods, strict_range=True,
                          safetensors_check=(repo, raw_path) if is_safetensors else None)

    def _serve_bytes(self, path, size, rel, headers, mods, strict_range, safetensors_check=None):
        if mods.oversized is not None:
            self._send(200, headers, length=mods.oversized, chunks=zero_chunks(mods.oversized))
            return
        range_header = self.headers.get("Range")
        status, start, end = 200, 0, size - 1
        if range_header is not None:
            parsed = parse_range(range_header, size)
            if parsed[0] == "unsatisfiable":
                raise HttpError(416, "Requested range not satisfiable",
                                headers=[("Content-Range", f"bytes */{size}")])
            if parsed[0] == "bad":
                if strict_range:
                    raise HttpError(400, "bad Range header (one range, bytes=a-b, bytes=a- or bytes=-n)")
            else:
                status, start, end = 206, parsed[1], parsed[2]
                headers = [*headers, ("Content-Range", f"bytes {start}-{end}/{size}")]
        if safetensors_check is not None and self.command == "GET":
            repo, raw_path = safetensors_check
            declared = read_u64_le(path) if size >= 8 else 0
            allowed = max(8 + min(declared, size), FREE_PREFIX_BYTES)
            if end + 1 > allowed:
                self.server.state.violation("weights_range", raw_path, range_header, repo.id, rel)
        patch = None
        if mods.header_len is not None:
            patch = dict(enumerate(struct.pack("<Q", mods.header_len % (1 << 64))))
        length = end - start + 1 if size > 0 else 0
        chunks = file_chunks(path, start, end, patch) if length > 0 else iter(())
        self._send(status, headers, length=length, chunks=chunks, truncate=mods.truncate)


# --------------------------------------------------------------------------------------------


def write_port_file(path, port):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(str(port))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Local Hugging Face Hub stand-in for tests.")
    ap.add_argument("--root", required=True, help="fixture tree: ROOT/<org>/<name>/...")
    ap.add_argument("--port-file", required=True, help="the bound port is written here")
    ap.add_argument("--log", help="append one JSON line per request here")
    ap.add_argument("--token", action="append", default=[],
                    help="a token accepted as 'Authorization: Bearer TOKEN' (repeatable)")
    ap.add_argument("--cdn-host", default="localhost",
                    help="host name used in redirects to LFS files (default: localhost)")
    ap.add_argument("--verbose", action="store_true", help="one stderr line per request")
    args = ap.parse_args(argv)

    root = os.path.abspath(args.root)
    if not os.path.isdir(root):
        ap.error(f"--root {args.root}: not a directory")
    log = JsonLog(args.log)
    server = StandinServer(Handler, root, args.token, args.cdn_host, log, args.verbose)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                               name="hub-standin", daemon=True)
    serving.start()
    write_port_file(args.port_file, server.server_port)
    while not stop.wait(0.5):
        pass
    server.shutdown()
    server.server_close()
    log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
