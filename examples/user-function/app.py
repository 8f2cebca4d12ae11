"""A user's own Lambda function, as a user writes it (nothing of faascope's inside): it writes
the event's ``size`` bytes to /tmp, reads them back, puts them to S3 as ``key`` in the bucket
named by the BUCKET variable, gets them back, and returns what it did and how long each step
took. Handler: ``app.handler``.

S3 is reached with boto3 where the runtime has it (AWS's managed Python runtimes do), else with
the small stdlib client beside it (s3lite.py). Either finds the endpoint the standard way: the
AWS_ENDPOINT_URL_S3 variable when set (faascope's local provider sets it to its S3 stand-in),
else AWS's own; the credentials are the execution role's (AWS_ACCESS_KEY_ID …)."""
import hashlib
import os
import time

try:
    import boto3
except ImportError:  # a runtime without boto3
    boto3 = None
    import s3lite

BUCKET = os.environ["BUCKET"]
S3 = boto3.client("s3") if boto3 else s3lite.Client()


def handler(event, context):
    size = int(event.get("size", 65536))
    key = event.get("key", "faascope-example/object.bin")
    data = os.urandom(size)
    digest = hashlib.sha256(data).hexdigest()

    t0 = time.perf_counter()
    path = "/tmp/example.bin"
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    with open(path, "rb") as f:
        back = f.read()
    os.remove(path)
    t1 = time.perf_counter()
    if back != data:
        raise RuntimeError("/tmp returned other bytes than were written")

    S3.put_object(Bucket=BUCKET, Key=key, Body=data)
    t2 = time.perf_counter()
    got = S3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    t3 = time.perf_counter()
    if hashlib.sha256(got).hexdigest() != digest:
        raise RuntimeError(f"s3://{BUCKET}/{key} returned other bytes than were put")
    return {"key": key, "bytes": size, "sha256": digest, "s3_client": "boto3" if boto3 else "s3lite",
            "tmp_s": t1 - t0, "put_s": t2 - t1, "get_s": t3 - t2,
            "remaining_ms": context.get_remaining_time_in_millis()}
