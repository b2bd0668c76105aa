#!/usr/bin/env python3
"""A static file server on 127.0.0.1 for tests that download (release assets, wheels): serves DIR
on a free port, writes the port to PORT_FILE once listening, runs until killed.

usage: static_server.py DIR PORT_FILE
"""
import functools
import http.server
import sys
from pathlib import Path


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main() -> int:
    root, port_file = Path(sys.argv[1]), Path(sys.argv[2])
    handler = functools.partial(Quiet, directory=str(root))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as srv:
        tmp = port_file.with_suffix(".tmp")
        tmp.write_text(str(srv.server_address[1]))
        tmp.replace(port_file)
        srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
