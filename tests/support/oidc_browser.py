#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The system browser and the person at it, for the sign-in tests: given the authorization URL Spectrum opens, it
follows the identity provider's redirects as a browser does (cookies kept), signs in as the test's user at Ory
Hydra's login and consent steps (through Hydra's admin API, as a login page would), and lands on Spectrum's
loopback address with the code. What it saw goes to $OIDC_BROWSER_LOG (JSON lines).

Environment: HYDRA_ADMIN_URL, OIDC_SUBJECT, OIDC_NAME, OIDC_GIVEN, OIDC_FAMILY, OIDC_EMAIL; OIDC_DENY=1 refuses
consent; OIDC_FORGE_STATE=1 first sends Spectrum a redirect with a forged state."""
import http.cookiejar
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

admin = os.environ["HYDRA_ADMIN_URL"].rstrip("/")
log_path = os.environ.get("OIDC_BROWSER_LOG")


def log(**entry):
    if log_path:
        with open(log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


jar = http.cookiejar.CookieJar()
browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)


def admin_call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(admin + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as r:
        return json.loads(r.read() or b"{}")


def listener_address(port):
    """The local address the process listening on `port` is bound to, from /proc/net/tcp (None: not found)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    local, state = parts[1], parts[3]
                    address, p = local.split(":")
                    if int(p, 16) == port and state == "0A":
                        if len(address) == 8:
                            return ".".join(str(int(address[i:i + 2], 16)) for i in (6, 4, 2, 0))
                        return address
        except OSError:
            pass
    return None


url = sys.argv[1]
query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(url).query))
redirect = urllib.parse.urlparse(query.get("redirect_uri", ""))
log(step="authorize", params=query, listener=listener_address(redirect.port) if redirect.port else None)

if os.environ.get("OIDC_FORGE_STATE") == "1" and redirect.port:
    forged = f"{query['redirect_uri']}?code=forged&state=not-yours"
    try:
        with browser.open(forged, timeout=20) as r:
            log(step="forged", status=r.status)
    except urllib.error.HTTPError as e:
        log(step="forged", status=e.code, body=e.read().decode(errors="replace")[:300])

for _ in range(30):
    parts = urllib.parse.urlparse(url)
    q = dict(urllib.parse.parse_qsl(parts.query))
    if "login_challenge" in q:
        done = admin_call("PUT", "/admin/oauth2/auth/requests/login/accept?login_challenge=" + urllib.parse.quote(q["login_challenge"]),
                          {"subject": os.environ.get("OIDC_SUBJECT", "asmith"), "remember": False})
        url = done["redirect_to"]
        continue
    if "consent_challenge" in q:
        challenge = urllib.parse.quote(q["consent_challenge"])
        asked = admin_call("GET", "/admin/oauth2/auth/requests/consent?consent_challenge=" + challenge)
        if os.environ.get("OIDC_DENY") == "1":
            done = admin_call("PUT", "/admin/oauth2/auth/requests/consent/reject?consent_challenge=" + challenge,
                              {"error": "access_denied", "error_description": "The user refused."})
        else:
            claims = {"name": os.environ.get("OIDC_NAME", "Dr. Anna Smith"), "given_name": os.environ.get("OIDC_GIVEN", "Anna"),
                      "family_name": os.environ.get("OIDC_FAMILY", "Smith"), "email": os.environ.get("OIDC_EMAIL", "asmith@hospital.test"),
                      "preferred_username": os.environ.get("OIDC_SUBJECT", "asmith")}
            done = admin_call("PUT", "/admin/oauth2/auth/requests/consent/accept?consent_challenge=" + challenge,
                              {"grant_scope": asked.get("requested_scope", []),
                               "grant_access_token_audience": asked.get("requested_access_token_audience", []),
                               "session": {"id_token": claims}})
        url = done["redirect_to"]
        continue
    try:
        with browser.open(url, timeout=30) as r:
            status, location, body = r.status, r.headers.get("Location"), r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        status, location, body = e.code, e.headers.get("Location"), e.read().decode(errors="replace")
    if status in (301, 302, 303, 307, 308) and location:
        url = urllib.parse.urljoin(url, location)
        continue
    log(step="landed", url=url.split("?")[0], status=status, body=body[:300])
    break
