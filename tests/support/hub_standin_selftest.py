#!/usr/bin/env python3
"""Self-test of hub_standin.py: starts it as a subprocess on a temporary fixture tree and checks
each behaviour over HTTP with http.client / urllib. Exit 0 when every check passes.

    python3 tests/support/hub_standin_selftest.py [-v]
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request
from urllib.parse import urljoin, urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "hub_standin.py")
TOKEN = "hf_selftest_" + secrets.token_hex(12)
BAD_TOKEN = "hf_wrong_" + secrets.token_hex(12)
SHARD_SIZE = 10 * 1000**3  # 10 GB apparent size, sparse
NORMAL_COMMIT = "0123456789abcdef0123456789abcdef01234567"
V1_COMMIT = "89abcdef0123456789abcdef0123456789abcdef"
VERBOSE = "-v" in sys.argv


class CheckFailed(AssertionError):
    pass


def check(cond, msg):
    if not cond:
        raise CheckFailed(msg)


def eq(actual, expected, what):
    if actual != expected:
        raise CheckFailed(f"{what}: expected {expected!r}, got {actual!r}")


# --------------------------------------------------------------------------------------------
# Fixture tree


def safetensors_header(tensor_name):
    header = {"__metadata__": {"format": "pt"},
              tensor_name: {"dtype": "BF16", "shape": [4, 4], "data_offsets": [0, 32]}}
    raw = json.dumps(header, separators=(",", ":")).encode()
    return raw + b" " * (-len(raw) % 8)


def write_safetensors(path, tensor_name, apparent_size):
    header = safetensors_header(tensor_name)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
        f.write(bytes(range(32)))
    os.truncate(path, apparent_size)  # the data region becomes a hole
    return header


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1)


def build_fixtures(root):
    cfg = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 2,
           "torch_dtype": "bfloat16", "model_type": "llama"}
    fx = {}

    normal = os.path.join(root, "org", "normal")
    write_json(os.path.join(normal, "config.json"), cfg)
    fx["shard_headers"] = [
        write_safetensors(os.path.join(normal, "model-00001-of-00002.safetensors"), "w", SHARD_SIZE),
        write_safetensors(os.path.join(normal, "model-00002-of-00002.safetensors"), "w2", SHARD_SIZE),
    ]
    write_json(os.path.join(normal, "model.safetensors.index.json"), {
        "metadata": {"total_size": 64},
        "weight_map": {"w": "model-00001-of-00002.safetensors",
                       "w2": "model-00002-of-00002.safetensors"}})
    write_json(os.path.join(normal, "sub", "extra.txt.json"), {"nested": True})
    write_json(os.path.join(normal, ".standin.json"),
               {"commit": NORMAL_COMMIT, "revisions": {"v1.0": V1_COMMIT}})

    gated = os.path.join(root, "org", "gated")
    write_json(os.path.join(gated, "config.json"), cfg)
    write_safetensors(os.path.join(gated, "model.safetensors"), "w", 1 << 20)
    write_json(os.path.join(gated, ".standin.json"), {"gated": True})

    private = os.path.join(root, "org", "private")
    write_json(os.path.join(private, "config.json"), cfg)
    write_json(os.path.join(private, ".standin.json"), {"private": True})

    faults = os.path.join(root, "org", "faults")
    for name in ("config.json", "err500.json", "rate.json", "slow.json", "loop.json",
                 "huge.json", "gone.json"):
        write_json(os.path.join(faults, name), cfg)
    with open(os.path.join(faults, "trunc.json"), "w", encoding="utf-8") as f:
        json.dump({"pad": "x" * 1000}, f)
    write_safetensors(os.path.join(faults, "badhdr.safetensors"), "w", SHARD_SIZE)
    write_json(os.path.join(faults, ".standin.json"), {"faults": [
        {"path": "err500.json", "status": 500, "times": 2},
        {"path": "rate.json", "status": 429, "retry_after": 1, "times": 1},
        {"path": "slow.json", "delay_s": 1.0},
        {"path": "trunc.json", "truncate": 100},
        {"path": "badhdr.safetensors", "header_len": 99999999999},
        {"path": "loop.json", "redirect_loop": True},
        {"path": "huge.json", "oversized": 200000000},
        {"path": "gone.json", "status": 404, "error_code": "EntryNotFound"},
    ]})

    big = os.path.join(root, "org", "big")  # 163 sparse shards of 300 GB apparent size each
    fx["big_shards"] = [f"model-{i:05d}-of-00163.safetensors" for i in range(1, 164)]
    os.makedirs(big)
    for i, rel in enumerate(fx["big_shards"]):
        write_safetensors(os.path.join(big, rel), f"layers.{i}.w", 300 * 1000**3)
    write_json(os.path.join(big, "config.json"), cfg)

    apifault = os.path.join(root, "org", "apifault")
    write_json(os.path.join(apifault, "config.json"), cfg)
    write_json(os.path.join(apifault, ".standin.json"),
               {"faults": [{"path": "api", "status": 503, "times": 1}]})
    return fx


def tree_snapshot(root):
    snap = {}
    for dirpath, _, filenames in os.walk(root):
        for fn in filenames:
            full = os.path.join(dirpath, fn)
            st = os.stat(full)
            snap[os.path.relpath(full, root)] = (st.st_size, st.st_mtime_ns)
    return snap


# --------------------------------------------------------------------------------------------
# HTTP helpers


class Client:
    def __init__(self, port):
        self.port = port

    def conn(self, timeout=10):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, headers=None, conn=None, token=None):
        """(status, headers with lower-case names, body) on a new or given connection."""
        own = conn is None
        c = conn or self.conn()
        hdrs = dict(headers or {})
        if token is not None:
            hdrs["Authorization"] = f"Bearer {token}"
        try:
            c.request(method, path, headers=hdrs)
            r = c.getresponse()
            body = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, body
        finally:
            if own:
                c.close()

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def stats(self):
        status, _, body = self.get("/_standin/stats")
        eq(status, 200, "stats status")
        return json.loads(body)

    def reset(self):
        status, _, _ = self.request("POST", "/_standin/reset")
        eq(status, 200, "reset status")


def cdn_path(location, port, cdn_host="localhost"):
    u = urlsplit(location)
    eq(u.scheme, "http", "redirect scheme")
    eq(u.hostname, cdn_host, "redirect host")
    eq(u.port, port, "redirect port")
    return u.path + ("?" + u.query if u.query else ""), u.netloc


# --------------------------------------------------------------------------------------------
# Checks (run in order; each gets the shared context)


def t_port_file(ctx):
    check(not os.path.exists(ctx.port_file + ".tmp"), "port file .tmp left behind")
    with open(ctx.port_file, encoding="ascii") as f:
        text = f.read()
    check(text.strip().isdigit(), f"port file content {text!r}")


def t_api(ctx):
    c = ctx.client
    expected_files = ["config.json", "model-00001-of-00002.safetensors",
                      "model-00002-of-00002.safetensors", "model.safetensors.index.json",
                      "sub/extra.txt.json"]
    for path in ("/api/models/org/normal/revision/main", "/api/models/org/normal"):
        status, h, body = c.get(path)
        eq(status, 200, path)
        info = json.loads(body)
        eq(info["sha"], NORMAL_COMMIT, "sha")
        eq(h.get("x-repo-commit"), NORMAL_COMMIT, "X-Repo-Commit")
        eq(info["id"], "org/normal", "id")
        eq(info["modelId"], "org/normal", "modelId")
        for key in ("_id", "private", "gated", "disabled", "lastModified", "tags"):
            check(key in info, f"API answer lacks {key}")
        eq(info["gated"], False, "gated")
        eq(info["private"], False, "private")
        eq(sorted(s["rfilename"] for s in info["siblings"]), expected_files, "siblings")
        check(".standin.json" not in body.decode(), "control file listed")
        check("size" not in info["siblings"][0], "size without blobs=true")

    status, _, body = c.get("/api/models/org/normal/revision/main?blobs=true")
    eq(status, 200, "blobs=true")
    sib = {s["rfilename"]: s for s in json.loads(body)["siblings"]}
    shard = sib["model-00001-of-00002.safetensors"]
    eq(shard["size"], SHARD_SIZE, "LFS sibling size")
    eq(shard["lfs"]["size"], SHARD_SIZE, "lfs.size")
    eq(shard["lfs"]["pointerSize"], 134, "lfs.pointerSize")
    check(len(shard["lfs"]["sha256"]) == 64 and int(shard["lfs"]["sha256"], 16) >= 0, "lfs.sha256")
    check(len(shard["blobId"]) == 40, "LFS blobId")
    cfg = sib["config.json"]
    with open(os.path.join(ctx.root, "org", "normal", "config.json"), "rb") as f:
        content = f.read()
    eq(cfg["size"], len(content), "config.json size")
    check("lfs" not in cfg, "non-LFS file has lfs")
    eq(cfg["blobId"], hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest(), "blobId")
    # stable across calls
    _, _, body2 = c.get("/api/models/org/normal/revision/main?blobs=true")
    eq(json.loads(body2)["siblings"], json.loads(body)["siblings"], "blobs stable")

    for rev, commit in (("v1.0", V1_COMMIT), (NORMAL_COMMIT, NORMAL_COMMIT), ("v1%2E0", V1_COMMIT)):
        status, h, body = c.get(f"/api/models/org/normal/revision/{rev}")
        eq(status, 200, f"revision {rev}")
        eq(json.loads(body)["sha"], commit, f"sha of {rev}")
        eq(h.get("x-repo-commit"), commit, f"X-Repo-Commit of {rev}")
    status, _, body = c.get("/api/models/org/gated")
    eq(json.loads(body)["sha"], hashlib.sha1(b"org/gated").hexdigest(), "default commit")

    status, h, body = c.get("/api/models/org/nosuch/revision/main")
    eq(status, 404, "unknown repo")
    eq(h.get("x-error-code"), "RepoNotFound", "unknown repo code")
    eq(json.loads(body), {"error": "Repository not found"}, "unknown repo body")
    status, h, body = c.get("/api/models/org/normal/revision/nope")
    eq(status, 404, "unknown revision")
    eq(h.get("x-error-code"), "RevisionNotFound", "unknown revision code")
    eq(json.loads(body), {"error": "Invalid rev id: nope"}, "unknown revision body")


def t_resolve_small(ctx):
    c = ctx.client
    with open(os.path.join(ctx.root, "org", "normal", "config.json"), "rb") as f:
        content = f.read()
    conn = c.conn()
    try:
        status, h, body = c.get("/org/normal/resolve/main/config.json", conn=conn)
        eq(status, 200, "resolve config.json")
        eq(body, content, "config.json body")
        eq(h.get("content-length"), str(len(content)), "Content-Length")
        eq(h.get("x-repo-commit"), NORMAL_COMMIT, "X-Repo-Commit")
        eq(h.get("content-type"), "application/json", "Content-Type json")
        eq(h.get("etag"), '"%s"' % hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest(),
           "ETag")
        sock = conn.sock
        status, h, body = c.request("HEAD", "/org/normal/resolve/v1.0/config.json", conn=conn)
        eq(status, 200, "HEAD resolve")
        eq(body, b"", "HEAD body")
        eq(h.get("content-length"), str(len(content)), "HEAD Content-Length")
        eq(h.get("x-repo-commit"), V1_COMMIT, "X-Repo-Commit for v1.0")
        check(conn.sock is sock and sock is not None, "keep-alive connection not reused")
        status, h, body = c.get("/org/normal/resolve/main/config.json", conn=conn,
                                headers={"Range": "bytes=0-9"})
        eq(status, 206, "resolve Range")
        eq(body, content[:10], "range body")
        eq(h.get("content-range"), f"bytes 0-9/{len(content)}", "Content-Range")
        status, h, _ = c.get("/org/normal/resolve/main/config.json", conn=conn,
                             headers={"Range": f"bytes={len(content)}-"})
        eq(status, 416, "resolve range past end")
        eq(h.get("content-range"), f"bytes */{len(content)}", "416 Content-Range")
        status, h, body = c.get(f"/org/normal/resolve/{NORMAL_COMMIT}/sub/extra.txt.json", conn=conn)
        eq(status, 200, "nested file by commit")
        check(conn.sock is sock, "keep-alive lost after 416")
    finally:
        conn.close()

    status, h, _ = c.get("/org/normal/resolve/main/nope.json")
    eq(status, 404, "unknown file")
    eq(h.get("x-error-code"), "EntryNotFound", "unknown file code")
    status, h, _ = c.get("/org/normal/resolve/main/.standin.json")
    eq(status, 404, "control file is not served")
    status, h, _ = c.get("/org/normal/resolve/nope/config.json")
    eq(status, 404, "unknown revision (resolve)")
    eq(h.get("x-error-code"), "RevisionNotFound", "unknown revision code (resolve)")
    status, h, _ = c.get("/org/nosuch/resolve/main/config.json")
    eq(status, 404, "unknown repo (resolve)")
    eq(h.get("x-error-code"), "RepoNotFound", "unknown repo code (resolve)")
    for bad in ("/org/normal/resolve/main/../../../etc/passwd",
                "/org/normal/resolve/main/sub/%2e%2e/%2e%2e/x",
                "/org/normal/resolve/main/sub%2F..%2F..%2Fx",
                "/org/normal/resolve/main//etc/passwd",
                "/org/%2e%2e/resolve/main/config.json",
                "/cdn/%s/org/normal/../gated/config.json" % NORMAL_COMMIT):
        status, _, _ = c.get(bad)
        eq(status, 400, f"unsafe path {bad}")


def t_resolve_lfs_and_cdn(ctx):
    c, port = ctx.client, ctx.port
    rel = "model-00001-of-00002.safetensors"
    header = ctx.fx["shard_headers"][0]
    locations = []
    for method in ("HEAD", "GET"):
        status, h, body = c.request(method, f"/org/normal/resolve/main/{rel}")
        eq(status, 302, f"{method} LFS resolve")
        eq(body, b"", "302 body")
        eq(h.get("content-length"), "0", "302 Content-Length")
        eq(h.get("x-repo-commit"), NORMAL_COMMIT, "302 X-Repo-Commit")
        eq(h.get("x-linked-size"), str(SHARD_SIZE), "X-Linked-Size")
        check(len(h.get("x-linked-etag", "").strip('"')) == 64, "X-Linked-ETag")
        check(h.get("etag"), "302 ETag")
        path, _ = cdn_path(h["location"], port)
        check(path.startswith(f"/cdn/{NORMAL_COMMIT}/org/normal/{rel}?sig="), f"Location {path}")
        locations.append(h["location"])
    check(locations[0] != locations[1], "sig should be random")

    path, netloc = cdn_path(locations[1], port)
    conn = c.conn()
    try:
        # Host header of the CDN host name, and plain 127.0.0.1, on one keep-alive connection
        for host in (netloc, f"127.0.0.1:{port}"):
            conn.putrequest("GET", path, skip_host=True)
            conn.putheader("Host", host)
            conn.putheader("Range", "bytes=0-7")
            conn.endheaders()
            r = conn.getresponse()
            body = r.read()
            eq(r.status, 206, f"CDN range (Host {host})")
            eq(body, struct.pack("<Q", len(header)), "u64 header length")
            eq(r.getheader("Content-Range"), f"bytes 0-7/{SHARD_SIZE}", "CDN Content-Range")
            eq(r.getheader("Accept-Ranges"), "bytes", "Accept-Ranges")
        n = struct.unpack("<Q", body)[0]
        status, h, body = c.get(path, conn=conn, headers={"Range": f"bytes=8-{8 + n - 1}"})
        eq(status, 206, "CDN header range")
        eq(body, header, "safetensors header bytes")
        meta = json.loads(body)
        eq(meta["w"]["shape"], [4, 4], "header content")
        status, h, _ = c.get(path, conn=conn, headers={"Range": f"bytes={SHARD_SIZE}-"})
        eq(status, 416, "CDN range past end")
        eq(h.get("content-range"), f"bytes */{SHARD_SIZE}", "CDN 416 Content-Range")
        status, h, _ = c.request("HEAD", path, conn=conn)
        eq(status, 200, "CDN HEAD without Range")
        eq(h.get("content-length"), str(SHARD_SIZE), "CDN HEAD Content-Length")
    finally:
        conn.close()

    # urllib follows the redirect the way a simple client would
    req = urllib.request.Request(f"http://127.0.0.1:{port}/org/normal/resolve/main/{rel}",
                                 headers={"Range": "bytes=0-7"})
    with urllib.request.urlopen(req, timeout=10) as r:
        eq(r.status, 206, "urllib through redirect")
        eq(r.read(), struct.pack("<Q", len(header)), "urllib body")
        eq(urlsplit(r.url).hostname, "localhost", "urllib final host")

    status, h, _ = c.get(f"/cdn/{'f' * 40}/org/normal/{rel}", headers={"Range": "bytes=0-7"})
    eq(status, 404, "CDN unknown commit")
    status, h, _ = c.get(f"/cdn/{V1_COMMIT}/org/normal/{rel}", headers={"Range": "bytes=0-7"})
    eq(status, 206, "CDN under a named revision's commit")


def t_violations(ctx):
    c = ctx.client
    c.reset()
    status, h, _ = c.get("/org/normal/resolve/main/model-00002-of-00002.safetensors")
    path, _ = cdn_path(h["location"], ctx.port)
    bare = urlsplit(path).path

    status, _, body = c.get(path)
    eq(status, 403, "whole-file GET refused")
    v = c.stats()["violations"]
    eq([x["kind"] for x in v], ["whole_file"], "whole_file recorded")
    eq(v[0]["path"], bare, "violation path")

    status, _, body = c.get(path, headers={"Range": "bytes=0-99999"})
    eq(status, 206, "100,000-byte prefix")
    eq(len(body), 100000, "prefix length")
    eq(len(c.stats()["violations"]), 1, "100,000-byte prefix is not a violation")

    status, _, body = c.get(path, headers={"Range": "bytes=0-199999"})
    eq(status, 206, "weights range still served")
    eq(len(body), 200000, "weights range length")
    v = c.stats()["violations"]
    eq([x["kind"] for x in v], ["whole_file", "weights_range"], "weights_range recorded")
    eq(v[1]["range"], "bytes=0-199999", "violation range")

    status, _, _ = c.get(path, headers={"Range": "bytes=0-7"}, token=TOKEN)
    eq(status, 206, "token to CDN still served")
    v = c.stats()["violations"]
    eq(v[-1]["kind"], "token_to_cdn", "token_to_cdn recorded")
    eq(len(v), 3, "violations count")


def t_gated_private(ctx):
    c = ctx.client
    status, _, body = c.get("/api/models/org/gated/revision/main")
    eq(status, 200, "gated API answers")
    eq(json.loads(body)["gated"], "manual", "gated field")
    for rel in ("config.json", "model.safetensors"):
        status, h, _ = c.get(f"/org/gated/resolve/main/{rel}")
        eq(status, 401, f"gated {rel} without token")
        eq(h.get("x-error-code"), "GatedRepo", "gated code 401")
        status, h, _ = c.request("HEAD", f"/org/gated/resolve/main/{rel}", token=BAD_TOKEN)
        eq(status, 403, f"gated {rel} wrong token")
        eq(h.get("x-error-code"), "GatedRepo", "gated code 403")
    status, _, body = c.get("/org/gated/resolve/main/config.json", token=TOKEN)
    eq(status, 200, "gated with valid token")
    check(json.loads(body)["model_type"] == "llama", "gated body")
    status, h, _ = c.get("/org/gated/resolve/main/model.safetensors", token=TOKEN)
    eq(status, 302, "gated LFS with valid token")
    path, _ = cdn_path(h["location"], ctx.port)
    status, _, _ = c.get(path, headers={"Range": "bytes=0-7"})
    eq(status, 206, "gated CDN without token")

    for tok in (None, BAD_TOKEN):
        status, h, body = c.get("/api/models/org/private/revision/main", token=tok)
        eq(status, 401, f"private API token={tok is not None}")
        eq(h.get("x-error-code"), "RepoNotFound", "private API code")
        status, h, _ = c.get("/org/private/resolve/main/config.json", token=tok)
        eq(status, 401, "private file")
        eq(h.get("x-error-code"), "RepoNotFound", "private file code")
    status, _, body = c.get("/api/models/org/private/revision/main", token=TOKEN)
    eq(status, 200, "private API with token")
    eq(json.loads(body)["private"], True, "private field")
    status, _, _ = c.get("/org/private/resolve/main/config.json", token=TOKEN)
    eq(status, 200, "private file with token")


def t_status_faults(ctx):
    c = ctx.client
    c.reset()
    statuses = [c.get("/org/faults/resolve/main/err500.json")[0] for _ in range(3)]
    eq(statuses, [500, 500, 200], "500 twice, then OK")
    status, h, _ = c.get("/org/faults/resolve/main/rate.json")
    eq(status, 429, "429")
    eq(h.get("retry-after"), "1", "Retry-After")
    eq(c.get("/org/faults/resolve/main/rate.json")[0], 200, "after 429")
    status, h, _ = c.get("/org/faults/resolve/main/gone.json")
    eq(status, 404, "404 fault")
    eq(h.get("x-error-code"), "EntryNotFound", "404 fault code")
    eq(c.get("/api/models/org/apifault/revision/main")[0], 503, "api fault")
    eq(c.get("/api/models/org/apifault/revision/main")[0], 200, "api after fault")
    eq(c.get("/org/apifault/resolve/main/config.json")[0], 200, "api fault leaves files alone")
    # reset re-arms the fault counters
    c.reset()
    eq(c.get("/org/faults/resolve/main/err500.json")[0], 500, "fault re-armed by reset")
    eq(c.get("/api/models/org/apifault/revision/main")[0], 503, "api fault re-armed by reset")


def t_delay(ctx):
    c = ctx.client
    results = []

    def one():
        t0 = time.monotonic()
        status = c.get("/org/faults/resolve/main/slow.json")[0]
        results.append((status, time.monotonic() - t0))

    threads = [threading.Thread(target=one) for _ in range(2)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    # the server keeps answering while both sleep
    t_fast = time.monotonic()
    eq(c.get("/org/faults/resolve/main/config.json")[0], 200, "fast request during delay")
    fast = time.monotonic() - t_fast
    for t in threads:
        t.join()
    total = time.monotonic() - t0
    eq([s for s, _ in results], [200, 200], "slow statuses")
    check(all(d >= 0.95 for _, d in results), f"delay not applied: {results}")
    check(total < 1.8, f"two 1 s delays took {total:.2f} s: requests are serialized")
    check(fast < 0.5, f"a plain request took {fast:.2f} s during the delays")


def t_truncate(ctx):
    conn = ctx.client.conn()
    try:
        conn.request("GET", "/org/faults/resolve/main/trunc.json")
        r = conn.getresponse()
        declared = int(r.getheader("Content-Length"))
        size = os.path.getsize(os.path.join(ctx.root, "org", "faults", "trunc.json"))
        eq(declared, size, "truncated answer declares the full length")
        try:
            data = r.read()
            raise CheckFailed(f"read {len(data)} bytes without IncompleteRead")
        except http.client.IncompleteRead as e:
            eq(len(e.partial), 100, "bytes before the close")
    finally:
        conn.close()


def t_header_len(ctx):
    c = ctx.client
    status, h, _ = c.get("/org/faults/resolve/main/badhdr.safetensors")
    eq(status, 302, "badhdr redirect")
    path, _ = cdn_path(h["location"], ctx.port)
    status, _, body = c.get(path, headers={"Range": "bytes=0-15"})
    eq(status, 206, "badhdr range")
    eq(struct.unpack("<Q", body[:8])[0], 99999999999, "faked header length")
    eq(body[8:10], b'{"', "bytes after the length are the real header")


def t_redirect_loop(ctx):
    c = ctx.client
    url = "/org/faults/resolve/main/loop.json"
    seen = []
    conn = c.conn()
    try:
        for _ in range(12):
            status, h, _ = c.get(url, conn=conn)
            eq(status, 302, f"loop hop {len(seen)}")
            seen.append(url)
            url = urljoin(url, h["location"])
    finally:
        conn.close()
    check(len(set(seen)) == 2 and seen[0] == seen[2], f"loop alternates: {seen[:3]}")
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{ctx.port}/org/faults/resolve/main/loop.json",
                               timeout=10)
        raise CheckFailed("urllib reached the end of a redirect loop")
    except urllib.error.HTTPError as e:
        eq(e.code, 302, "urllib gives up on the loop")


def t_oversized(ctx):
    path = "/org/faults/resolve/main/huge.json"
    conn = ctx.client.conn()
    conn.request("GET", path)
    r = conn.getresponse()
    eq(r.status, 200, "oversized status")
    eq(r.getheader("Content-Length"), "200000000", "oversized Content-Length")
    got = len(r.read(1 << 20))
    eq(got, 1 << 20, "oversized first MiB")
    r.close()
    conn.close()
    deadline = time.monotonic() + 10
    entry = None
    while time.monotonic() < deadline and entry is None:
        with open(ctx.log_file, encoding="utf-8") as f:
            text = f.read()
        for line in text.splitlines(keepends=True):
            if line.endswith("\n") and json.loads(line)["path"] == path:
                entry = json.loads(line)
        time.sleep(0.05)
    check(entry is not None, "oversized request never finished after the client closed")
    check(entry["bytes"] < 50_000_000, f"server kept streaming: {entry['bytes']} bytes")
    eq(ctx.client.get("/org/faults/resolve/main/config.json")[0], 200, "alive after oversized")


def t_concurrency(ctx):
    """64 keep-alive connections reading shard headers at once."""
    errors = []
    port = ctx.port
    rels = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]

    def worker(i):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            for k in range(3):
                rel = rels[(i + k) % 2]
                c.request("GET", f"/cdn/{NORMAL_COMMIT}/org/normal/{rel}",
                          headers={"Range": "bytes=0-7"})
                r = c.getresponse()
                if r.status != 206 or len(r.read()) != 8:
                    errors.append(f"worker {i}: {r.status}")
            c.close()
        except Exception as e:  # noqa: BLE001
            errors.append(f"worker {i}: {e!r}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(64)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    eq(errors, [], "concurrent requests")
    check(time.monotonic() - t0 < 5, "64 concurrent connections were slow")


def t_many_shards(ctx):
    """163 shards of 300 GB apparent size: API with sizes, then every header over 32 keep-alive
    connections (resolve -> CDN u64 -> CDN header), in well under a few seconds."""
    c, port = ctx.client, ctx.port
    t0 = time.monotonic()
    status, _, body = c.get("/api/models/org/big/revision/main?blobs=true")
    eq(status, 200, "big API")
    sizes = {s["rfilename"]: s["size"] for s in json.loads(body)["siblings"]}
    eq(sum(1 for r in sizes if r.endswith(".safetensors")), 163, "163 shards listed")
    check(all(sizes[r] == 300 * 1000**3 for r in ctx.fx["big_shards"]), "shard sizes")
    work = list(ctx.fx["big_shards"])
    lock = threading.Lock()
    errors, done = [], []

    def worker():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            while True:
                with lock:
                    if not work:
                        return
                    rel = work.pop()
                status, h, _ = c.request("HEAD", f"/org/big/resolve/main/{rel}", conn=conn)
                if status != 302:
                    errors.append(f"{rel}: resolve {status}")
                    continue
                path = urlsplit(h["location"]).path + "?" + urlsplit(h["location"]).query
                status, _, head = c.get(path, conn=conn, headers={"Range": "bytes=0-7"})
                n = struct.unpack("<Q", head)[0]
                status2, _, meta = c.get(path, conn=conn, headers={"Range": f"bytes=8-{7 + n}"})
                if status != 206 or status2 != 206 or "__metadata__" not in json.loads(meta):
                    errors.append(f"{rel}: {status}/{status2}")
                done.append(rel)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))
        finally:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    eq(errors, [], "163-shard header fetch")
    eq(len(done), 163, "headers fetched")
    elapsed = time.monotonic() - t0
    check(elapsed < 5, f"163 shard headers took {elapsed:.2f} s")


def t_stats(ctx):
    c = ctx.client
    c.reset()
    s = c.stats()
    eq((s["requests"], s["bytes_sent"], s["violations"], s["authorized_requests"],
        s["auth_headers_seen"]), (0, 0, [], 0, 0), "stats after reset")
    eq(s["by_kind"], {"api": 0, "resolve": 0, "cdn": 0}, "by_kind after reset")
    _, _, api_body = c.get("/api/models/org/normal/revision/main")
    c.request("HEAD", "/org/normal/resolve/main/config.json", token=TOKEN)
    c.get("/org/normal/resolve/main/config.json", token=BAD_TOKEN)
    c.get(f"/cdn/{NORMAL_COMMIT}/org/normal/model-00001-of-00002.safetensors",
          headers={"Range": "bytes=0-7"})
    s = c.stats()
    with open(os.path.join(ctx.root, "org", "normal", "config.json"), "rb") as f:
        cfg_len = len(f.read())
    eq(s["requests"], 4, "requests")
    eq(s["by_kind"], {"api": 1, "resolve": 2, "cdn": 1}, "by_kind")
    eq(s["body_bytes_by_kind"], {"api": len(api_body), "resolve": cfg_len, "cdn": 8},
       "body_bytes_by_kind")
    eq(s["bytes_sent"], len(api_body) + cfg_len + 8, "bytes_sent")
    eq(s["authorized_requests"], 1, "authorized_requests")
    eq(s["auth_headers_seen"], 2, "auth_headers_seen")
    eq(s["violations"], [], "no violations")
    check(TOKEN not in json.dumps(s) and BAD_TOKEN not in json.dumps(s), "token in stats")
    eq(c.stats()["requests"], 4, "stats does not count itself")
    eq(c.get("/_standin/reset")[0], 405, "reset needs POST")


def t_unknown_endpoint(ctx):
    eq(ctx.client.get("/nothing/here")[0], 404, "unknown endpoint")
    eq(ctx.client.request("POST", "/api/models/org/normal")[0], 405, "POST to API")


TESTS = [t_port_file, t_api, t_resolve_small, t_resolve_lfs_and_cdn, t_violations,
         t_gated_private, t_status_faults, t_delay, t_truncate, t_header_len, t_redirect_loop,
         t_oversized, t_concurrency, t_many_shards, t_stats, t_unknown_endpoint]


# --------------------------------------------------------------------------------------------


class Ctx:
    pass


def start_server(ctx):
    ctx.port_file = os.path.join(ctx.tmp, "port")
    ctx.log_file = os.path.join(ctx.tmp, "requests.jsonl")
    ctx.stderr_file = open(os.path.join(ctx.tmp, "stderr.txt"), "w+b")
    ctx.proc = subprocess.Popen(
        [sys.executable, SERVER, "--root", ctx.root, "--port-file", ctx.port_file,
         "--log", ctx.log_file, "--token", "another-token", "--token", TOKEN],
        stdout=subprocess.DEVNULL, stderr=ctx.stderr_file)
    deadline = time.monotonic() + 10
    while not os.path.exists(ctx.port_file):
        if ctx.proc.poll() is not None:
            raise CheckFailed(f"server exited early with {ctx.proc.returncode}")
        if time.monotonic() > deadline:
            raise CheckFailed("no port file after 10 s")
        time.sleep(0.02)
    with open(ctx.port_file, encoding="ascii") as f:
        ctx.port = int(f.read())
    ctx.client = Client(ctx.port)


def finish_checks(ctx, snapshot_before):
    """Shutdown, log format, token secrecy, fixture tree untouched."""
    ctx.proc.send_signal(signal.SIGTERM)
    try:
        rc = ctx.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        ctx.proc.kill()
        raise CheckFailed("server ignored SIGTERM")
    eq(rc, 0, "exit status after SIGTERM")
    ctx.stderr_file.seek(0)
    stderr = ctx.stderr_file.read().decode(errors="replace")
    eq(stderr, "", "server stderr (quiet by default)")

    with open(ctx.log_file, encoding="utf-8") as f:
        text = f.read()
    check(TOKEN not in text and BAD_TOKEN not in text, "a token appears in the log")
    keys = {"t", "method", "host", "path", "range", "status", "bytes", "auth", "kind"}
    records = [json.loads(line) for line in text.splitlines()]
    check(len(records) > 100, f"only {len(records)} log lines")
    for rec in records:
        eq(set(rec), keys, "log record keys")
        check(isinstance(rec["t"], float) and isinstance(rec["auth"], bool), f"log types {rec}")
        check(rec["kind"] in ("api", "resolve", "cdn", "stats", "other"), f"log kind {rec}")
    check(any(r["auth"] for r in records), "no log line with auth true")
    check(any(r["kind"] == "stats" for r in records), "stats requests are logged")
    check(any(r["status"] == 206 and r["range"] == "bytes=0-7" and r["bytes"] == 8
              for r in records), "no 206 line with range and bytes")
    check(any(r["host"] == f"localhost:{ctx.port}" for r in records), "CDN-host line")

    eq(tree_snapshot(ctx.root), snapshot_before, "fixture tree changed")


def main():
    ctx = Ctx()
    ctx.tmp = tempfile.mkdtemp(prefix="hub_standin_selftest.")
    ctx.root = os.path.join(ctx.tmp, "hub")
    ctx.proc = None
    failures = []
    t_start = time.monotonic()
    try:
        ctx.fx = build_fixtures(ctx.root)
        os.chmod(ctx.root, 0o555)  # read-only for the server, as far as permissions reach
        before = tree_snapshot(ctx.root)
        start_server(ctx)
        for test in TESTS:
            t0 = time.monotonic()
            try:
                test(ctx)
                print(f"PASS {test.__name__} ({time.monotonic() - t0:.2f} s)")
            except Exception as e:  # noqa: BLE001
                failures.append(test.__name__)
                print(f"FAIL {test.__name__}: {e}")
                if VERBOSE or not isinstance(e, CheckFailed):
                    traceback.print_exc()
        try:
            finish_checks(ctx, before)
            print("PASS shutdown_log_tokens_tree")
        except Exception as e:  # noqa: BLE001
            failures.append("shutdown_log_tokens_tree")
            print(f"FAIL shutdown_log_tokens_tree: {e}")
    except Exception as e:  # noqa: BLE001
        failures.append("setup")
        print(f"FAIL setup: {e}")
        traceback.print_exc()
    finally:
        if ctx.proc is not None and ctx.proc.poll() is None:
            ctx.proc.kill()
            ctx.proc.wait()
        try:
            os.chmod(ctx.root, 0o755)
        except OSError:
            pass
        shutil.rmtree(ctx.tmp, ignore_errors=True)
    elapsed = time.monotonic() - t_start
    if failures:
        print(f"hub_standin self-test: {len(failures)} FAILED ({', '.join(failures)}) "
              f"in {elapsed:.1f} s")
        return 1
    print(f"hub_standin self-test: all {len(TESTS) + 1} groups passed in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
