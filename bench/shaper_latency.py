"""What boto3 sees through the stand-ins' shaper: median and p99 of 1 KB requests (S3 PUT/GET,
DynamoDB PutItem/GetItem), shaped for the lambda profile and unshaped, against the calibrated
figures (standins-aws). Sequential requests from one client; the client's own time (signing,
parsing) is in the measured figures, as it is in the published ones. docs/storage.md,
"Shaped like the cloud", quotes the output.

    python bench/shaper_latency.py [--n 400]
"""
from __future__ import annotations

import argparse
import os
import time

import boto3
from botocore.config import Config

from faascope import calibration, standins
from faascope.standins import shaping

KEYS = dict(region_name=standins.DEFAULT_REGION, aws_access_key_id=standins.DEFAULT_ACCESS_KEY,
            aws_secret_access_key=standins.DEFAULT_SECRET_KEY)


def quantiles(xs: list[float]) -> str:
    xs = sorted(xs)
    return f"{xs[len(xs) // 2] * 1000:7.2f} {xs[int(len(xs) * 0.99)] * 1000:7.2f}"


def measure(s3_endpoint: str, ddb_endpoint: str, n: int) -> dict[str, list[float]]:
    s3 = boto3.client("s3", endpoint_url=s3_endpoint, **KEYS,
                      config=Config(s3={"addressing_style": "path"}, retries={"total_max_attempts": 1}))
    ddb = boto3.client("dynamodb", endpoint_url=ddb_endpoint, **KEYS, config=Config(retries={"total_max_attempts": 1}))
    body = os.urandom(1000)
    out: dict[str, list[float]] = {"s3 write": [], "s3 read": [], "dynamodb write": [], "dynamodb read": []}
    for i in range(n):
        key = f"bench{i % 64}/{i}"  # 64 prefixes: far below S3's per-prefix rates
        t0 = time.perf_counter()
        s3.put_object(Bucket=standins.DEFAULT_BUCKET, Key=key, Body=body)
        t1 = time.perf_counter()
        s3.get_object(Bucket=standins.DEFAULT_BUCKET, Key=key)["Body"].read()
        t2 = time.perf_counter()
        ddb.put_item(TableName=standins.DEFAULT_TABLE, Item={"pk": {"S": key}, "v": {"B": body}})
        t3 = time.perf_counter()
        ddb.get_item(TableName=standins.DEFAULT_TABLE, Key={"pk": {"S": key}})
        t4 = time.perf_counter()
        for k, d in zip(out, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            out[k].append(d)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=400, help="requests of each kind")
    a = ap.parse_args()
    t = calibration.load_table(shaping.TABLE)
    with standins.start(["s3", "dynamodb"], shape=("lambda",)) as st:
        shaped = measure(st.shaped["lambda"]["s3"].endpoint, st.shaped["lambda"]["dynamodb"].endpoint, a.n)
        raw = measure(st.servers["s3"].endpoint, st.servers["dynamodb"].endpoint, a.n)
    print(f"{a.n} sequential 1 KB requests each; ms; load average {os.getloadavg()[0]:.1f}")
    print(f"{'':16s} {'shaped p50':>10s} {'p99':>7s}   {'table p50':>9s} {'p99':>7s}   {'unshaped p50':>12s} {'p99':>7s}")
    for k in shaped:
        e = shaping.LATENCY_ENTRIES[k.split()[0]] + "_" + k.split()[1]
        print(f"{k:16s} {quantiles(shaped[k]):>18s}   {t.value(e + '_median'):9.2f} {t.value(e + '_p99'):7.2f}"
              f"   {quantiles(raw[k]):>20s}")


if __name__ == "__main__":
    main()
