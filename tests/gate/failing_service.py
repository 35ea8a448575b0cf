#!/usr/bin/env python3
"""A broken stand-in for rnx-server: answers every request with 500, or never answers (a hung service).

127.0.0.1 only; writes its port to --port-file; stops by itself after --max-seconds.
"""
import argparse
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if self.server.mode == "hang":
            # Longer than the gate's --service-timeout in the tests, shorter than the server's life.
            time.sleep(self.server.hang_s)
            return
        data = json.dumps({"error": {"code": "internal", "message": "database is locked"}}).encode()
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = handle_any


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["500", "hang"], default="500")
    ap.add_argument("--hang-seconds", type=float, default=8)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--max-seconds", type=float, default=300)
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.mode = args.mode
    server.hang_s = args.hang_seconds
    timer = threading.Timer(args.max_seconds, server.shutdown)
    timer.daemon = True
    timer.start()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(args.port_file + ".tmp", args.port_file)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    timer.cancel()


if __name__ == "__main__":
    main()
