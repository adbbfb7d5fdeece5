#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The gate nginx asks before it lets a request through to the PACS (auth_request): the Bearer token is shown to
the identity provider's introspection endpoint (RFC 7662, Ory Hydra's admin API); it passes when the provider says
it is active and meant for this PACS (its audience). Otherwise 401, and why in X-Why.

Usage: token_validator.py PORT INTROSPECTION_URL AUDIENCE"""
import http.server
import json
import sys
import urllib.parse
import urllib.request

port, introspection, audience = int(sys.argv[1]), sys.argv[2], sys.argv[3]


class Gate(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def refuse(self, why):
        self.send_response(401)
        self.send_header("X-Why", why)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or len(auth) < 12:
            return self.refuse("no bearer token")
        data = urllib.parse.urlencode({"token": auth[7:]}).encode()
        try:
            with urllib.request.urlopen(urllib.request.Request(introspection, data=data), timeout=10) as r:
                said = json.loads(r.read())
        except Exception as e:  # the provider down: nothing passes
            return self.refuse("the identity provider cannot be asked: %s" % e)
        if not said.get("active"):
            return self.refuse("token expired or revoked")
        if audience not in (said.get("aud") or []):
            return self.refuse("token not meant for this server (audience %s)" % ",".join(said.get("aud") or []))
        self.send_response(204)
        self.send_header("X-User", said.get("sub", ""))
        self.end_headers()


http.server.ThreadingHTTPServer(("127.0.0.1", port), Gate).serve_forever()
