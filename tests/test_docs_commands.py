"""Every shell command block (```bash, ```sh, ```shell) of README.md and docs/*.md runs as
written, from a clean copy of the repository's examples, in document order (a block may use
what an earlier block of its document made, such as results/thesis.db).

`faascope run` goes to the fake in-process provider (tests/docs_faascope.py), and waits for a
schedule's slots or a design's time blocks on a virtual clock, so that documented campaigns of
minutes or hours take seconds; every other command is the real one. Untagged
fences are synopses, outputs and formulas, not commands, and are not run.

Left out, each with its reason (:data:`LEFT_OUT`, matched by the start of a command): a test
fails when an entry no longer matches any documented command, so the list cannot go stale.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"bash", "sh", "shell"}

LEFT_OUT = {
    "bash scripts/setup.sh": "installs Debian packages and Go/Python builds (needs apt and root); "
                             "the main job it then runs is the specs.md block's, run here",
    "bash scripts/test.sh": "runs this test suite, this test included",
    "export AWS_ACCESS_KEY_ID": "README's walk-through of the platform with the AWS CLI on the "
                               "fixed port 9001, which other runs on a shared machine may hold; "
                               "tests/localplatform/test_boto3_and_cli.py runs the same "
                               "create-function and invoke with the AWS CLI on a free port",
    "faascope platform start --detach": "as above (port 9001)",
    "faascope package --out fn.zip": "as above (the zip the walk-through deploys)",
    "aws lambda create-function": "as above",
    "aws lambda invoke": "as above",
    "faascope tune --function": "needs a deployed function (and for the ARN an AWS account); "
                                "tests/tune/test_tune_local.py tunes a user's own function, the "
                                "agent and the ARN path on the local platform",
    "faascope tune --url": "needs HTTP deployments of one function at two sizes",
    "faascope tune --spec my-workload.yaml": "names the reader's own spec; tests/tune runs the "
                                             "spec path",
    "faascope report theirs.parquet": "illustrates someone else's file, which the repository "
                                      "does not ship",
    "faascope run examples/periodic-local.yaml --results results/periodic.db --detach":
        "a detached runner is the real `faascope run` in the background (not this test's fake "
        "provider) and outlives the command; tests/driver/test_periodic.py runs --detach, status, "
        "stop and --resume --detach for real, and the analysis block after it runs on a "
        "foreground run of the same spec",
    "faascope run examples/periodic-local.yaml --results results/periodic.db --resume --detach":
        "as above",
    "faascope status results/periodic.db": "as above (the detached run's status)",
    "faascope stop results/periodic.db": "as above",
}


def blocks() -> list[tuple[str, int, str]]:
    """(document, line, text) of every shell block, in document order."""
    out = []
    for doc in DOCS:
        text = doc.read_text()
        for m in re.finditer(r"^```(\w*)[^\n]*\n(.*?)^```", text, re.S | re.M):
            if m.group(1) in SHELL:
                out.append((doc.relative_to(ROOT).as_posix(), text[:m.start()].count("\n") + 1,
                            m.group(2)))
    return out


def commands(block: str) -> list[str]:
    """The block's commands: continuation lines joined, comments and blank lines dropped, and a
    line of `a && b` taken as its commands (so that one left out does not hide the others)."""
    joined = re.sub(r"\\\n\s*", " ", block)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            out += [part.strip() for part in line.split(" && ")]
    return out


def left_out(cmd: str) -> str | None:
    return next((why for start, why in LEFT_OUT.items() if cmd.startswith(start)), None)


def test_every_left_out_entry_names_a_documented_command():
    documented = [c for _, _, b in blocks() for c in commands(b)]
    for start in LEFT_OUT:
        assert any(c.startswith(start) for c in documented), f"stale LEFT_OUT entry {start!r}"


@pytest.fixture
def workdir(tmp_path_factory):
    """A clean copy of what the docs' commands read (examples/, the analysis reference data), with `faascope` on PATH, for each
    document (a document may use only what its own earlier blocks made)."""
    work = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "examples", work / "examples")
    # the statistics' reference data, which docs/analysis.md's examples read from the repository
    shutil.copytree(ROOT / "tests" / "analysis" / "data", work / "tests" / "analysis" / "data")
    bin_dir = work / ".bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "faascope"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {ROOT / 'tests' / 'docs_faascope.py'} "
                       "\"$@\"\n")
    wrapper.chmod(0o755)
    return work


def by_document() -> list[str]:
    return list(dict.fromkeys(doc for doc, _, _ in blocks()))


@pytest.mark.slow
@pytest.mark.parametrize("doc", by_document())
def test_the_shell_blocks_of_each_document_run_as_written(doc, workdir):
    env = dict(os.environ, PATH=f"{workdir / '.bin'}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
               COLUMNS="100", FAASCOPE_DATA_DIR=str(workdir / ".faascope"))
    ran = 0
    for _, line, block in [b for b in blocks() if b[0] == doc]:
        for cmd in commands(block):
            if left_out(cmd):
                continue
            r = subprocess.run(["bash", "-c", cmd], cwd=workdir, env=env, capture_output=True,
                               text=True, timeout=600)
            assert r.returncode == 0, (f"{doc}:{line}: `{cmd}` exited {r.returncode}\n"
                                       f"{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
            ran += 1
    print(f"{doc}: {ran} command(s) ran")
