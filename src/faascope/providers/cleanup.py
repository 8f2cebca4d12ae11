"""``faascope cleanup``: remove everything faascope created, found by its tags.

Every function faascope deploys through the Lambda API (AWS or the local platform) carries the tags
``faascope:created-by=faascope`` and ``faascope:campaign=<campaign uid>``; buckets and tables it
creates carry the same. Cleanup lists the functions (ListFunctions, then GetFunction for the tags,
which both AWS and the local platform answer), S3 buckets (GetBucketTagging) and DynamoDB tables
(ListTagsOfResource), and deletes the ones whose tags match: all of faascope's, or one campaign's
with ``--campaign`` (a uid, or a results file whose campaign uid is read). ``--dry-run`` only lists.
It is idempotent: what is already gone is skipped, a second run finds nothing.
"""
from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import click

from faascope.errors import BadInput, Failure
from faascope.provider_kinds import LAMBDA_API_KINDS, PROVIDER_KINDS
from faascope.providers import leftovers, local_platform
from faascope.providers.lambda_api import CAMPAIGN_TAG, CREATED_BY_TAG
from faascope.providers.local import local_credentials
from faascope.schemas import request_schema
from faascope.store.reader import ResultsFile

LEGACY_TAG = ("faascope", "1")  # functions from before faascope:created-by


@dataclass
class Resource:
    kind: str      # lambda-function, s3-bucket, dynamodb-table, local-run-leftovers, shared-file
    name: str
    campaign: Optional[str]
    action: str    # deleted, would-delete, gone, failed; stopped, would-stop (local-run-leftovers)
    detail: str = ""


def _delete_ours(out: list[Resource], kind: str, name: str, tags: dict[str, str], campaign: Optional[str],
                 dry_run: bool, say: Callable[[str], None], delete: Callable[[], Any],
                 gone_code: str = "ResourceNotFoundException") -> None:
    """Delete one resource if its tags say faascope made it (for this campaign), and record
    what happened: deleted, would-delete, gone (deleted meanwhile) or failed."""
    from botocore.exceptions import ClientError

    if not is_ours(tags, campaign):
        return
    camp = tags.get(CAMPAIGN_TAG)
    if dry_run:
        out.append(Resource(kind, name, camp, "would-delete"))
        return
    try:
        detail = delete()
    except ClientError as exc:
        gone = _code(exc) == gone_code
        out.append(Resource(kind, name, camp, "gone" if gone else "failed", "" if gone else str(exc)))
        return
    detail = detail if isinstance(detail, str) else ""
    out.append(Resource(kind, name, camp, "deleted", detail))
    say(f"deleted {kind.split('-', 1)[1]} {name}" + (f" ({detail})" if detail else ""))


def is_ours(tags: dict[str, str], campaign: Optional[str]) -> bool:
    mine = tags.get(CREATED_BY_TAG) == "faascope" or tags.get(LEGACY_TAG[0]) == LEGACY_TAG[1]
    if not mine:
        return False
    return campaign is None or tags.get(CAMPAIGN_TAG) == campaign


def campaign_uid(value: Optional[str]) -> Optional[str]:
    """A campaign uid as given, or read from a results file."""
    if value is None:
        return None
    p = Path(value)
    if p.is_file():
        with ResultsFile(p, field="--campaign") as rf:
            return rf.require_campaign()["uid"]
    if not value.strip() or any(ch in value for ch in "/\\ "):
        raise BadInput(f"not a campaign uid nor a results file: {value!r}", field="--campaign")
    return value.strip()


def _code(exc: Exception) -> str:
    return str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))


def clean_functions(client, campaign: Optional[str], dry_run: bool,
                    say: Callable[[str], None] = lambda s: None) -> list[Resource]:
    from botocore.exceptions import ClientError

    out: list[Resource] = []
    names: list[str] = []
    for page in client.get_paginator("list_functions").paginate():
        names += [f["FunctionName"] for f in page.get("Functions", [])]
    for name in names:
        try:
            tags = client.get_function(FunctionName=name).get("Tags") or {}
        except ClientError as exc:
            if _code(exc) == "ResourceNotFoundException":
                continue  # deleted meanwhile
            out.append(Resource("lambda-function", name, None, "failed", str(exc)))
            continue
        _delete_ours(out, "lambda-function", name, tags, campaign, dry_run, say,
                     lambda: client.delete_function(FunctionName=name))
    return out


def clean_buckets(s3, campaign: Optional[str], dry_run: bool,
                  say: Callable[[str], None] = lambda s: None) -> list[Resource]:
    from botocore.exceptions import ClientError

    out: list[Resource] = []
    try:
        buckets = [b["Name"] for b in s3.list_buckets().get("Buckets", [])]
    except ClientError as exc:
        return [Resource("s3-bucket", "*", None, "failed", f"ListBuckets: {exc}")]
    for b in buckets:
        try:
            tagset = s3.get_bucket_tagging(Bucket=b).get("TagSet", [])
        except ClientError as exc:
            if _code(exc) not in ("NoSuchTagSet", "NoSuchBucket", "AccessDenied", "NotImplemented"):
                out.append(Resource("s3-bucket", b, None, "failed", str(exc)))
            continue
        tags = {t["Key"]: t["Value"] for t in tagset}

        def empty_and_delete(b=b) -> str:
            n = 0
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=b):
                keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
                if keys:
                    s3.delete_objects(Bucket=b, Delete={"Objects": keys, "Quiet": True})
                    n += len(keys)
            s3.delete_bucket(Bucket=b)
            return f"{n} object(s)"

        _delete_ours(out, "s3-bucket", b, tags, campaign, dry_run, say, empty_and_delete, gone_code="NoSuchBucket")
    return out


def clean_tables(ddb, campaign: Optional[str], dry_run: bool,
                 say: Callable[[str], None] = lambda s: None) -> list[Resource]:
    from botocore.exceptions import ClientError

    out: list[Resource] = []
    try:
        names: list[str] = []
        for page in ddb.get_paginator("list_tables").paginate():
            names += page.get("TableNames", [])
    except ClientError as exc:
        return [Resource("dynamodb-table", "*", None, "failed", f"ListTables: {exc}")]
    for t in names:
        try:
            arn = ddb.describe_table(TableName=t)["Table"]["TableArn"]
            tags = {x["Key"]: x["Value"] for x in ddb.list_tags_of_resource(ResourceArn=arn).get("Tags", [])}
        except ClientError as exc:
            if _code(exc) != "ResourceNotFoundException":
                out.append(Resource("dynamodb-table", t, None, "failed", str(exc)))
            continue
        _delete_ours(out, "dynamodb-table", t, tags, campaign, dry_run, say,
                     lambda t=t: ddb.delete_table(TableName=t))
    return out


def _session(region: str, profile: Optional[str], local: bool):
    import boto3

    kw: dict[str, Any] = {"region_name": region}
    if local:
        key, secret = local_credentials()
        kw.update(aws_access_key_id=key, aws_secret_access_key=secret)
    elif profile:
        kw["profile_name"] = profile
    return boto3.session.Session(**kw)


def run_cleanup(provider: str = "aws", campaign: Optional[str] = None, dry_run: bool = False, *,
                region: str = "us-east-1", endpoint_url: Optional[str] = None,
                s3_endpoint_url: Optional[str] = None, credentials_profile: Optional[str] = None,
                data_dir: Optional[Path] = None, storage: bool = True,
                say: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    from botocore.config import Config

    note = None
    kind = PROVIDER_KINDS[provider]
    left: list[Resource] = []
    if kind.local:
        # what runs killed outright left running on this machine (stand-ins, their tmpfs, the
        # platform only they used), found by their records first: it may be that platform
        left = local_leftovers(Path(data_dir) if data_dir else local_platform.default_data_dir(),
                               dry_run, say)
        if endpoint_url is None:
            state = local_platform.running(Path(data_dir) if data_dir else None)
            if state is None:
                return {"provider": "local", "campaign": campaign, "dry_run": dry_run,
                        "resources": [asdict(r) for r in left],
                        "note": "the local platform is not running; no function to clean"}
            endpoint_url = state["endpoint"]
            left += clean_shared_files((local_platform.health(endpoint_url) or {}).get("shared_dir") or "",
                                       dry_run, say)
        storage = storage and bool(s3_endpoint_url)  # no DynamoDB locally; S3 only if given
    elif endpoint_url is not None and storage and not s3_endpoint_url:
        # a Lambda-API stand-in: do not reach for the real account's S3 and DynamoDB
        storage = False
        note = ("--endpoint-url without --s3-endpoint-url: functions only (buckets and tables "
                "are looked for only on AWS itself or at --s3-endpoint-url)")
    session = _session(region, credentials_profile, kind.local)
    cfg = Config(retries={"total_max_attempts": 8, "mode": "standard"}, connect_timeout=10, read_timeout=60)
    try:
        lam = session.client("lambda", endpoint_url=endpoint_url, config=cfg)
        res = clean_functions(lam, campaign, dry_run, say)
        if storage:
            res += clean_buckets(session.client("s3", endpoint_url=s3_endpoint_url, config=cfg),
                                 campaign, dry_run, say)
            if kind.cleanup_tables and endpoint_url is None:
                res += clean_tables(session.client("dynamodb", config=cfg), campaign, dry_run, say)
    except Exception as exc:
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

        if isinstance(exc, NoCredentialsError):
            raise Failure("no AWS credentials found (standard chain: environment, ~/.aws, "
                          "--profile, SSO, instance role)") from None
        if isinstance(exc, (BotoCoreError, ClientError)):
            raise Failure(f"cleanup failed: {exc}") from None
        raise
    return {"provider": provider, "campaign": campaign, "dry_run": dry_run, "endpoint_url": endpoint_url,
            "resources": [asdict(r) for r in left + res], "note": note}


def shared_file_name() -> str:
    """The file name the sharedfs workload uses when a request names none (its request schema's
    default: the one source)."""
    return request_schema()["$defs"]["sharedfs"]["properties"]["path"]["default"]


def clean_shared_files(shared_dir: str, dry_run: bool, say: Callable[[str], None]) -> list[Resource]:
    """Remove (or, dry run, list) the files the sharedfs workload left in the running platform's
    shared directory under its default name (``faascope-sharedfs.dat`` and its per-invocation
    ``.N`` files): campaigns leave them behind (issue #29: 512 MB seen). Files a spec named
    itself are the user's and stay."""
    if not shared_dir or not Path(shared_dir).is_dir():
        return []
    name = shared_file_name()
    out = []
    for f in sorted(Path(shared_dir).rglob(name + "*")):
        if not f.is_file() or not (f.name == name or f.name[len(name):].lstrip(".").isdigit()):
            continue
        size = f.stat().st_size
        if not dry_run:
            f.unlink(missing_ok=True)
            say(f"removed {f} ({size:,} B)")
        out.append(Resource("shared-file", str(f), None, "would-delete" if dry_run else "deleted",
                            f"{size:,} B"))
    return out


def local_leftovers(data_dir: Path, dry_run: bool, say: Callable[[str], None]) -> list[Resource]:
    """Stop (or, dry run, list) what local runs that are gone left running: one resource per
    such run (faascope.providers.leftovers)."""
    if dry_run:
        return [Resource("local-run-leftovers", f"run pid {r.doc.get('owner', {}).get('pid')}", None,
                         "would-stop", ", ".join(p.get("what", "") for p in r.doc.get("processes", [])))
                for r in leftovers.records(data_dir) if not r.alive]
    out = []
    for r in leftovers.reap(data_dir):
        platform = r["platform"]
        detail = ", ".join(r["stopped"]) or "nothing still running"
        if platform.get("action") == "stopped":
            detail += f"; local platform {platform.get('endpoint')} stopped"
        out.append(Resource("local-run-leftovers", f"run pid {r['run_pid']}", None, "stopped", detail))
        say(f"stopped what run pid {r['run_pid']} left: {detail}")
    return out


@click.command("cleanup")
@click.option("--provider", type=click.Choice(LAMBDA_API_KINDS), default="aws", show_default=True)
@click.option("--campaign", default=None,
              help="Only this campaign's resources: its uid, or a results file (default: all faascope's).")
@click.option("--dry-run", is_flag=True, help="List what would be removed; remove nothing.")
@click.option("--region", default="us-east-1", show_default=True, help="AWS region.")
@click.option("--profile", "credentials_profile", default=None, help="AWS credentials profile.")
@click.option("--endpoint-url", default=None,
              help="Lambda API endpoint (default: AWS; for --provider local: the running platform's).")
@click.option("--s3-endpoint-url", default=None, help="S3 endpoint (e.g. a local S3-compatible server).")
@click.option("--no-storage", is_flag=True, help="Functions only; leave buckets and tables alone.")
@click.option("--data-dir", type=click.Path(path_type=Path), default=None,
              help="The local platform's state directory (--provider local).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def cleanup_command(provider, campaign, dry_run, region, credentials_profile, endpoint_url,
                    s3_endpoint_url, no_storage, data_dir, fmt):
    """Remove everything faascope created (functions, buckets, tables), found by its tags.

    Idempotent: run it again and it finds nothing. Exit status 1 if anything could not be removed.
    """
    uid = campaign_uid(campaign)
    out = run_cleanup(provider, uid, dry_run, region=region, endpoint_url=endpoint_url,
                      s3_endpoint_url=s3_endpoint_url, credentials_profile=credentials_profile,
                      data_dir=data_dir, storage=not no_storage)
    failed = [r for r in out["resources"] if r["action"] == "failed"]
    if fmt == "json":
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        if out.get("note"):
            click.echo(out["note"])
        if not out["resources"]:
            click.echo(f"nothing of faascope's found{' for campaign ' + uid if uid else ''} "
                       f"({provider}{', dry run' if dry_run else ''})")
        for r in out["resources"]:
            extra = f" ({r['detail']})" if r["detail"] else ""
            camp = f" campaign {r['campaign']}" if r["campaign"] else ""
            click.echo(f"{r['action']:>12}  {r['kind']:<15} {r['name']}{camp}{extra}")
    if failed:
        raise Failure(f"{len(failed)} resource(s) could not be removed; run again or remove them by hand")
