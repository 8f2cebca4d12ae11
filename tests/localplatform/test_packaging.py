import zipfile

import pytest
from click.testing import CliRunner

from faascope.cli import cli


def test_package_with_image_size_pads_to_exact_uncompressed_size(tmp_path):
    out = tmp_path / "fn.zip"
    res = CliRunner().invoke(cli, ["package", "--out", str(out), "--image-size", "20MiB"])
    assert res.exit_code == 0, res.output
    with zipfile.ZipFile(out) as z:
        infos = {i.filename: i for i in z.infolist()}
        assert set(infos) == {"bootstrap", "padding.bin"}
        assert sum(i.file_size for i in infos.values()) == 20 * 1024 * 1024
        assert (infos["bootstrap"].external_attr >> 16) & 0o111, "bootstrap must be executable"


@pytest.mark.parametrize("arch", ["x86_64", "arm64"])
def test_package_builds_both_architectures(tmp_path, arch):
    out = tmp_path / f"{arch}.zip"
    res = CliRunner().invoke(cli, ["package", "--out", str(out), "--arch", arch])
    assert res.exit_code == 0, res.output
    with zipfile.ZipFile(out) as z:
        head = z.read("bootstrap")[:20]
    machine = int.from_bytes(head[18:20], "little")  # ELF e_machine
    assert machine == {"x86_64": 62, "arm64": 183}[arch]


def test_package_rejects_bad_image_size(tmp_path):
    res = CliRunner().invoke(cli, ["package", "--out", str(tmp_path / "x.zip"), "--image-size", "128k"])
    assert res.exit_code == 2 and "image-size" in res.output
    res = CliRunner().invoke(cli, ["package", "--out", str(tmp_path / "x.zip"), "--image-size", "1KiB"])
    assert res.exit_code == 2 and "image_size" in res.output
