#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A proxy between an S3 client and an S3 server that goes wrong on purpose (tst_s3, tst_s3signin).

    s3faultproxy.py UPSTREAM_PORT [--slowdown N] [--flip-get K] [--sts-expires-in S]

--slowdown N   answers the first N requests with 503 SlowDown, as a throttling store does
--flip-get K   flips one bit in the middle of the body of the K-th GET answer with a body of 1 KiB or more, as a
               faulty network card or middlebox would on a link without TLS
--sts-expires-in S
               says the credentials of each AssumeRoleWithWebIdentity answer expire S seconds from now (the store's
               token service gives at least 15 minutes; a hospital's may give 5): prints "sts expires EXPIRATION"

Everything else is passed through as it came (the Host header too: the client's signature covers it). Prints
"listening PORT" once it listens on loopback; says on stderr what it did.
"""
import argparse
import datetime
import re
import http.client
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SLOWDOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
            b'<Message>Please reduce your request rate.</Message></Error>')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("upstream", type=int)
    ap.add_argument("--slowdown", type=int, default=0)
    ap.add_argument("--flip-get", type=int, default=0)
    ap.add_argument("--sts-expires-in", type=int, default=0)
    args = ap.parse_args()
    lock = threading.Lock()
    state = {"requests": 0, "gets": 0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with lock:
                state["requests"] += 1
                throttled = state["requests"] <= args.slowdown
            if throttled:
                print("503 SlowDown for %s %s" % (self.command, self.path), file=sys.stderr, flush=True)
                self.send_response(503)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(SLOWDOWN) if self.command != "HEAD" else 0))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(SLOWDOWN)
                return
            up = http.client.HTTPConnection("127.0.0.1", args.upstream, timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "proxy-connection")}
            up.request(self.command, self.path, body=body if body else None, headers=headers)
            r = up.getresponse()
            data = r.read() if self.command != "HEAD" else b""
            if self.command == "GET" and len(data) >= 1024:
                with lock:
                    state["gets"] += 1
                    flip = state["gets"] == args.flip_get
                if flip:
                    at = len(data) // 2
                    data = data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1:]
                    print("flipped a bit at byte %d of GET %s" % (at, self.path), file=sys.stderr, flush=True)
            if args.sts_expires_in and b"<AssumeRoleWithWebIdentityResponse" in data and b"<Expiration>" in data:
                soon = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=args.sts_expires_in)).strftime("%Y-%m-%dT%H:%M:%SZ")
                data = re.sub(rb"<Expiration>[^<]*</Expiration>", b"<Expiration>" + soon.encode() + b"</Expiration>", data)
                print("sts expires %s" % soon, flush=True)
            self.send_response(r.status, r.reason)
            for k, v in r.getheaders():
                if k.lower() not in ("connection", "transfer-encoding", "content-length"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data) if self.command != "HEAD" else r.getheader("Content-Length", "0")))
            self.end_headers()
            if data:
                self.wfile.write(data)
            up.close()

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("listening %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
