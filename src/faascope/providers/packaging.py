"""Deployment packages: a zip whose `bootstrap` is the agent, as Lambda's custom runtimes expect.

`image_size` pads the package with an incompressible file so cold-start studies can vary the
amount of code a platform must fetch and unpack (STeLLAR's image-size factor). A package over
Lambda's 50 MB direct-upload limit is deployed through S3 (faascope.specs.lambda_quotas).
"""
from __future__ import annotations

import hashlib
import io
import os
import zipfile
from pathlib import Path

import click

from faascope.binaries import LAMBDA_ARCH, agent_binary
from faascope.errors import BadInput
from faascope.specs.lambda_quotas import DIRECT_UPLOAD_MAX_BYTES
from faascope.units import SizeError, format_size, parse_size

PADDING_NAME = "padding.bin"
_CHUNK = 1 << 20
#: what a package's zip may add to its files' size: two entries' local and central headers with
#: zip64 extras and the end records (< 1 KiB), and deflate's worst case on the agent
#: (5 bytes per 16 KiB stored block: < 4 KiB for a 10 MiB agent); generous, since erring only
#: starts the S3 stand-in for nothing
ZIP_OVERHEAD_BYTES = 64 * 1024


def needs_s3_upload(image_size: int | None) -> bool:
    """Whether a package padded to ``image_size`` may be over Lambda's direct-upload limit, so
    that a local campaign needs the S3 stand-in to deploy it (the deploy itself decides on the
    zip's real size: LambdaAPIProvider._code_source). Without padding the agent's zip is ~4 MiB."""
    return image_size is not None and image_size + ZIP_OVERHEAD_BYTES > DIRECT_UPLOAD_MAX_BYTES


def build_zip(out_path: str | os.PathLike, arch: str = "x86_64", image_size: int | None = None) -> Path:
    """Write the package; image_size is the total uncompressed size of its files in bytes."""
    if arch not in LAMBDA_ARCH:
        raise BadInput(f"{arch!r} is not one of {', '.join(LAMBDA_ARCH)}", field="arch")
    agent = agent_binary(arch)
    agent_size = agent.stat().st_size
    padding = 0
    if image_size is not None:
        if image_size < agent_size:
            raise BadInput(f"{image_size} bytes is smaller than the agent itself ({agent_size} bytes)",
                           field="image_size")
        padding = image_size - agent_size
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        info = zipfile.ZipInfo("bootstrap", date_time=(2024, 1, 1, 0, 0, 0))
        info.external_attr = (0o100755 << 16)  # regular file, executable: Lambda runs it as is
        info.compress_type = zipfile.ZIP_DEFLATED
        with z.open(info, "w") as dst, open(agent, "rb") as src:
            while chunk := src.read(_CHUNK):
                dst.write(chunk)
        if padding:
            pinfo = zipfile.ZipInfo(PADDING_NAME, date_time=(2024, 1, 1, 0, 0, 0))
            pinfo.external_attr = (0o100644 << 16)
            pinfo.compress_type = zipfile.ZIP_STORED  # random bytes do not compress
            with z.open(pinfo, "w", force_zip64=padding > 2**31) as dst:
                left = padding
                while left:
                    n = min(left, _CHUNK)
                    dst.write(os.urandom(n))
                    left -= n
    tmp.replace(out)
    return out


def user_package(path: str | os.PathLike) -> bytes:
    """A user's own function's package (spec ``function.code.path``): a zip file as it is, or a
    directory zipped with its files at the root. The zip is the same bytes for the same files
    (sorted names, a fixed date, modes kept), so a resumed campaign finds the deployed
    function's CodeSha256 unchanged and does not redeploy it."""
    src = Path(path)
    if src.is_file():
        return src.read_bytes()
    if not src.is_dir():
        raise BadInput(f"{src}: no such directory or zip", field="function.code.path")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for f in sorted(p for p in src.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            info = zipfile.ZipInfo(f.relative_to(src).as_posix(), date_time=(2024, 1, 1, 0, 0, 0))
            # executable files (a custom runtime's bootstrap) stay executable, as Lambda needs
            info.external_attr = ((0o100755 if os.access(f, os.X_OK) else 0o100644) << 16)
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, f.read_bytes())
    return buf.getvalue()


def package_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 (hex) of a user's package as :func:`user_package` builds it: what a campaign
    records of the code it measured."""
    return hashlib.sha256(user_package(path)).hexdigest()


def _size(ctx, param, value):
    if value is None:
        return None
    try:
        return parse_size(value)
    except SizeError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


@click.command("package")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Zip file to write.")
@click.option("--arch", type=click.Choice(list(LAMBDA_ARCH)), default="x86_64", show_default=True)
@click.option("--image-size", callback=_size, default=None,
              help="Total uncompressed package size (bytes, or 50MiB, 100MB…); pads with random data.")
def package_command(out_path, arch, image_size):
    """Build the agent's deployment zip (bootstrap at its root)."""
    path = build_zip(out_path, arch=arch, image_size=image_size)
    click.echo(f"{path} ({format_size(path.stat().st_size)} zipped, arch {arch}"
               + (f", image size {image_size} bytes" if image_size else "") + ")")
