"""AWS Lambda's deployment-package quotas, the one place faascope keeps them.

AWS, "Lambda quotas" (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html),
"Deployment package (.zip file archive) size": 50 MB zipped when uploaded directly (the
``ZipFile`` of CreateFunction / UpdateFunctionCode), 250 MB unzipped including layers, and
"Upload larger files with Amazon S3". The API's own refusals give the bytes: "Zipped size must
be smaller than 52428800 bytes" and "Unzipped size must be smaller than 262144000 bytes". The
local platform enforces the same numbers (agent/platform/limits.go: ``maxZippedBytes``,
``maxUnzippedBytes``; tests/providers/test_code_upload.py fails if the two copies drift).
"""
from __future__ import annotations

#: the largest zip CreateFunction / UpdateFunctionCode accept inline (``ZipFile``); larger ones
#: go through S3 (``Code.S3Bucket``/``S3Key``), as deploy tools (SAM, Serverless, Terraform) do
DIRECT_UPLOAD_MAX_BYTES = 52_428_800
#: the largest a package may be unzipped (with its layers), however it is uploaded
UNZIPPED_MAX_BYTES = 262_144_000
