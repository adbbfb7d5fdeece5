#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Signs S3 requests with botocore's SigV4 signer (S3SigV4Auth, not ours) at a fixed time, for tst_s3: reads a JSON
list of requests on stdin — method, scheme, host, bucket, key, virtual (host style), query pairs, headers, body,
unsigned (UNSIGNED-PAYLOAD), access, secret, region, timestamp — and prints, for each, the canonical request and
the Authorization header botocore makes. The URL path is encoded here as botocore's S3 serializer does, so our
encoding of keys is checked too, not only our signature."""
import json
import sys

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode


def main():
    out = []
    for c in json.load(sys.stdin):
        if c["virtual"]:
            path = "/" + percent_encode(c["key"], safe="/~")
        else:
            path = "/" + percent_encode(c["bucket"], safe="~") + ("/" + percent_encode(c["key"], safe="/~") if c["key"] else "")
        url = c["scheme"] + "://" + c["host"] + path
        request = AWSRequest(method=c["method"], url=url, headers=dict(c["headers"]),
                             data=c["body"].encode("utf-8"), params=[tuple(p) for p in c["query"]])
        request.headers["Host"] = c["host"]  # as sent, port included
        request.context["timestamp"] = c["timestamp"]
        auth = S3SigV4Auth(Credentials(c["access"], c["secret"]), "s3", c["region"])
        auth._modify_request_before_signing(request)
        if c["unsigned"]:
            request.headers.replace_header("X-Amz-Content-SHA256", "UNSIGNED-PAYLOAD")
        canonical = auth.canonical_request(request)
        signature = auth.signature(auth.string_to_sign(request, canonical), request)
        auth._inject_signature_to_request(request, signature)
        out.append({"canonical": canonical, "authorization": request.headers["Authorization"]})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
