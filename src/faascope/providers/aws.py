"""The ``aws`` provider: AWS Lambda through the same boto3 code path as the local platform
(:class:`~faascope.providers.lambda_api.LambdaAPIProvider`), plus what a real account needs.

Prerequisites (the provider creates no IAM): an execution role whose ARN is given in
``provider.settings.role`` (trust policy for ``lambda.amazonaws.com``; ``AWSLambdaBasicExecutionRole``;
plus S3/DynamoDB access and ``AWSLambdaVPCAccessExecutionRole`` when the storage settings use them),
a region, and credentials from the standard AWS chain (environment, ``~/.aws`` profiles,
``credentials_profile``, SSO, instance/container roles). Nothing secret is stored: the provider
records region, endpoint, role ARN, storage names and tags, never keys or tokens.

What it does:

- deploys the agent zip as a ``provided.al2023`` function (``bootstrap``), x86_64 or arm64, with
  the cell's memory, ephemeral storage and timeout; invokes with ``LogType=Tail`` and records the
  REPORT line (Duration, Billed Duration, Init Duration, Max Memory Used) with every invocation;
- storage for storage workloads (``provider.settings.storage``): an S3 bucket, a DynamoDB table
  and an EFS access point (needs subnets and security groups: the function joins the VPC); their
  names reach the function as environment variables (``FAASCOPE_S3_BUCKET`` …) and are recorded
  in the campaign; with ``create_bucket``/``create_table`` faascope creates them, tagged;
- tags everything it creates: ``faascope:created-by=faascope``, ``faascope:campaign=<campaign
  uid>``, ``faascope:spec=<spec name>`` and the user's ``tags``; ``faascope cleanup`` removes all
  of it by these tags (:mod:`faascope.providers.cleanup`).
"""
from __future__ import annotations

from typing import Any, Optional

from faascope.errors import Failure
from faascope.providers.base import FunctionConfig
from faascope.providers.lambda_api import (CAMPAIGN_TAG, CREATED_BY_TAG, SPEC_TAG, CodeBucket,
                                           LambdaAPIProvider)

STORAGE_ENV = {
    "s3_bucket": "FAASCOPE_S3_BUCKET",
    "s3_prefix": "FAASCOPE_S3_PREFIX",
    "s3_endpoint_url": "FAASCOPE_S3_ENDPOINT_URL",
    "dynamodb_table": "FAASCOPE_DYNAMODB_TABLE",
    "efs_mount_path": "FAASCOPE_SHARED_DIR",
}


def _get(obj: Any, key: str, default=None):
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


class AWSProvider(LambdaAPIProvider):
    kind = "aws"

    def __init__(self, *, region: str = "us-east-1", role: str, endpoint_url: Optional[str] = None,
                 credentials_profile: Optional[str] = None, credentials: Optional[tuple[str, str]] = None,
                 max_attempts: int = 1, read_timeout_s: float = 960.0,
                 connect_timeout_s: float = 10.0, storage: Any = None,
                 tags: Optional[dict[str, str]] = None, log_tail: bool = True):
        super().__init__(region=region, endpoint_url=endpoint_url, role=role,
                         credentials=credentials, credentials_profile=credentials_profile,
                         max_attempts=max_attempts, read_timeout_s=read_timeout_s,
                         connect_timeout_s=connect_timeout_s, kind="aws", log_tail=log_tail)
        self._session_kw: dict[str, Any] = {"region_name": region}
        if credentials:
            self._session_kw.update(aws_access_key_id=credentials[0],
                                    aws_secret_access_key=credentials[1])
        if credentials_profile:
            self._session_kw["profile_name"] = credentials_profile
        self.storage = self._storage_dict(storage)
        self.user_tags = {k: v for k, v in (tags or {}).items() if not k.startswith("faascope:")}
        self._storage_ready = False

    @staticmethod
    def _storage_dict(storage: Any) -> dict[str, Any]:
        if storage is None:
            return {}
        if hasattr(storage, "model_dump"):
            storage = storage.model_dump()
        return {k: v for k, v in dict(storage).items() if v not in (None, [], "")}

    @classmethod
    def from_settings(cls, s: Any) -> "AWSProvider":
        return cls(region=s.region, role=s.role, endpoint_url=s.endpoint_url,
                   credentials_profile=s.credentials_profile, max_attempts=s.max_attempts,
                   read_timeout_s=s.read_timeout_s, connect_timeout_s=s.connect_timeout_s,
                   storage=_get(s, "storage"), tags=_get(s, "tags") or {},
                   log_tail=_get(s, "log_tail", True))

    # ------------------------------------------------------------------ what is recorded
    def describe(self) -> dict:
        d = super().describe()
        d.update(role=self.role, storage=dict(self.storage), tags=self.all_tags(),
                 runtime="provided.al2023")
        return d

    def all_tags(self) -> dict[str, str]:
        tags = {**self.user_tags, CREATED_BY_TAG: "faascope"}
        if self.campaign_uid:
            tags[CAMPAIGN_TAG] = self.campaign_uid
        if self.spec_name:
            tags[SPEC_TAG] = self.spec_name
        return tags

    def _tags(self, config: FunctionConfig) -> dict[str, str]:
        return {**self.user_tags, **super()._tags(config)}

    # ------------------------------------------------------------------ function
    def _function_env(self, config: FunctionConfig) -> dict[str, str]:
        env = {}
        for key, var in STORAGE_ENV.items():
            v = self.storage.get(key)
            if key == "efs_mount_path" and not self.storage.get("efs_access_point_arn"):
                continue
            if key == "s3_prefix" and not self.storage.get("s3_bucket"):
                continue
            if v:
                env[var] = str(v)
        return env

    def _create_kwargs(self, name: str, config: FunctionConfig, code: dict[str, Any],
                       env: dict[str, str]) -> dict[str, Any]:
        kw = super()._create_kwargs(name, config, code, env)
        st = self.storage
        if st.get("subnet_ids") or st.get("security_group_ids"):
            kw["VpcConfig"] = {"SubnetIds": list(st.get("subnet_ids") or []),
                               "SecurityGroupIds": list(st.get("security_group_ids") or [])}
        if st.get("efs_access_point_arn"):
            kw["FileSystemConfigs"] = [{"Arn": st["efs_access_point_arn"],
                                        "LocalMountPath": st.get("efs_mount_path", "/mnt/efs")}]
        return kw

    def code_bucket(self) -> Optional[CodeBucket]:
        """Packages over the direct-upload limit go through ``storage.code_bucket``, else the
        object workloads' ``s3_bucket`` (under ``s3_prefix``); it must be in the function's
        region, as Lambda requires."""
        bucket = self.storage.get("code_bucket") or self.storage.get("s3_bucket")
        if not bucket:
            return None
        prefix = "" if self.storage.get("code_bucket") else str(self.storage.get("s3_prefix") or "")
        return CodeBucket(self.s3_client(), bucket, prefix)

    def deploy(self, name: str, config: FunctionConfig) -> None:
        if not self._storage_ready:
            self.ensure_storage()
        super().deploy(name, config)

    # ------------------------------------------------------------------ storage
    def _client(self, service: str, endpoint_url: Optional[str] = None):
        import boto3
        from botocore.config import Config

        session = boto3.session.Session(**self._session_kw)
        return session.client(service, endpoint_url=endpoint_url,
                              config=Config(retries={"total_max_attempts": 8, "mode": "standard"}))

    def s3_client(self):
        return self._client("s3", self.storage.get("s3_endpoint_url"))

    def dynamodb_client(self):
        return self._client("dynamodb", self.endpoint_url if self.kind != "aws" else None)

    def ensure_storage(self) -> dict[str, str]:
        """Create the bucket and the table the settings ask faascope to create (tagged); check
        that the others exist. Returns what was created."""
        from botocore.exceptions import ClientError

        created: dict[str, str] = {}
        st = self.storage
        tagset = [{"Key": k, "Value": v} for k, v in sorted(self.all_tags().items())]
        bucket = st.get("s3_bucket")
        if bucket and st.get("create_bucket"):
            s3 = self.s3_client()
            try:
                s3.head_bucket(Bucket=bucket)
            except ClientError as exc:
                code = str(exc.response.get("Error", {}).get("Code"))
                if code not in ("404", "NoSuchBucket", "NotFound"):
                    raise Failure(f"S3 bucket {bucket}: {exc}") from None
                kw: dict[str, Any] = {"Bucket": bucket}
                if self.region != "us-east-1":
                    kw["CreateBucketConfiguration"] = {"LocationConstraint": self.region}
                try:
                    s3.create_bucket(**kw)
                    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tagset})
                except ClientError as exc2:
                    raise Failure(f"creating the S3 bucket {bucket}: {exc2}") from None
                created["s3_bucket"] = bucket
        table = st.get("dynamodb_table")
        if table and st.get("create_table"):
            ddb = self.dynamodb_client()
            try:
                ddb.describe_table(TableName=table)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                    raise Failure(f"DynamoDB table {table}: {exc}") from None
                try:
                    ddb.create_table(TableName=table, BillingMode="PAY_PER_REQUEST",
                                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                                     Tags=tagset)
                    ddb.get_waiter("table_exists").wait(TableName=table,
                                                        WaiterConfig={"Delay": 2, "MaxAttempts": 60})
                except Exception as exc2:
                    raise Failure(f"creating the DynamoDB table {table}: {exc2}") from None
                created["dynamodb_table"] = table
        self._storage_ready = True
        return created
