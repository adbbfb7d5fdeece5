# SPDX-License-Identifier: Apache-2.0
# Orthanc's storage area in an S3 bucket (orthanc-python + Debian's boto3), for the Orthanc cluster of
# tests/stores/tst_orthanccluster.cpp: each attachment one object named by its UUID, as the Orthanc book's S3
# storage plugin keeps them. Its settings come from the "S3Storage" section of Orthanc's configuration.
import json
import boto3
import botocore.config
import orthanc

_cfg = json.loads(orthanc.GetConfiguration()).get("S3Storage", {})
_s3 = boto3.client("s3", endpoint_url=_cfg["Endpoint"], aws_access_key_id=_cfg["AccessKey"],
                   aws_secret_access_key=_cfg["SecretKey"], region_name=_cfg.get("Region", "us-east-1"),
                   config=botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3}))
_bucket = _cfg["Bucket"]
_prefix = _cfg.get("Prefix", "")


def _create(uuid, content_type, data):
    _s3.put_object(Bucket=_bucket, Key=_prefix + uuid, Body=data)


def _read(uuid, content_type):
    return _s3.get_object(Bucket=_bucket, Key=_prefix + uuid)["Body"].read()


def _remove(uuid, content_type):
    _s3.delete_object(Bucket=_bucket, Key=_prefix + uuid)


orthanc.RegisterStorageArea(_create, _read, _remove)
