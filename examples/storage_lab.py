"""Shared set-up for the storage and network examples: the local stand-ins (VersityGW,
redis-server, the faascope sink, a shared directory) and a local platform that exposes them to
its sandboxes. On AWS, replace this with your own functions (see docs/storage.md).

    with Lab() as lab:
        name = lab.function("demo", memory=512)
        body = lab.invoke(name, {"kind": "object", "op": "put", "object_size": 1 << 20, **lab.s3})
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import boto3
from botocore.config import Config

from faascope import standins
from faascope.providers import local_platform
from faascope.providers.packaging import build_zip


class Lab:
    def __init__(self, net_shape: str = "none", profile: str = "lambda"):
        self.tmp = Path(tempfile.mkdtemp(prefix="faascope-example-"))
        self.net_shape, self.profile = net_shape, profile
        self.created: list[str] = []

    def __enter__(self) -> "Lab":
        self.st = standins.start(work_dir=self.tmp / "standins")
        try:
            self.platform = local_platform.start(profile=self.profile, data_dir=self.tmp / "platform", port=0,
                                                 keep_alive="60s", expose=self.st.expose,
                                                 net_shape=self.net_shape,
                                                 shared_dir=Path(self.st.servers["shared"].endpoint))
        except BaseException:
            self.st.stop()
            raise
        self.client = boto3.client("lambda", endpoint_url=self.platform["endpoint"], region_name="us-east-1",
                                   aws_access_key_id="local", aws_secret_access_key="local",
                                   config=Config(retries={"max_attempts": 1}, read_timeout=900,
                                                 max_pool_connections=64))
        self.zip = build_zip(self.tmp / "fn.zip").read_bytes()
        s = self.st.s3_settings()
        # The local S3 stand-in's made-up keys; on AWS the function's role provides credentials.
        self.s3 = {"access_key_id": s["access_key_id"], "secret_access_key": s["secret_access_key"]}
        return self

    def function(self, name: str, memory: int = 512, tags: dict | None = None) -> str:
        self.client.create_function(
            FunctionName=name, Runtime="provided.al2023", Role="arn:aws:iam::000000000000:role/faascope",
            Handler="bootstrap", Code={"ZipFile": self.zip}, MemorySize=memory, Timeout=900,
            Environment={"Variables": self.st.function_env()}, Tags={"faascope:profile": self.profile, **(tags or {})})
        self.created.append(name)
        return name

    def invoke(self, name: str, workload: dict) -> dict:
        r = self.client.invoke(FunctionName=name, Payload=json.dumps({"workload": workload}))
        body = json.loads(r["Payload"].read())
        if "FunctionError" in r or not body.get("ok"):
            raise RuntimeError(f"{name}: {body.get('error') or body}")
        return body

    def __exit__(self, *exc) -> None:
        for n in self.created:
            try:
                self.client.delete_function(FunctionName=n)
            except Exception:  # noqa: BLE001 - best effort on the way out
                pass
        local_platform.stop(self.tmp / "platform")
        self.st.stop()
