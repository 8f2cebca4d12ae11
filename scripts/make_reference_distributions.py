"""Make the committed reference distributions (src/faascope/calibration/distributions/) from the
published raw data: small seeded random subsets, so that the fidelity check can compare whole
distributions (quantiles and a two-sample KS distance) without shipping megabytes.

- Skyrise (hpides/skyrise, MIT): resources/benchmark/measurement/storage_latency/*/…_1a.json,
  the same files the standins-aws table's medians and p99s come from; every request latency of
  every invocation of every repetition (100,000 per operation) pooled, then SUBSET values drawn
  without replacement;
- lambda-perf (maxday/lambda-perf, Apache-2.0): data/YYYY-MM-DD.json, the Init Duration of
  go_on_provided_al2023, python312 and nodejs20x, zip, 128 and 1024 MB, x86_64 (10 cold starts a
  day each, LAMBDA_PERF_RUNS) over the DAYS days up to LAST_DAY: every value kept.

Run it with the two repositories' git directories (e.g. from a `git clone --bare`):

    python3 scripts/make_reference_distributions.py SKYRISE_GIT_DIR LAMBDA_PERF_GIT_DIR

It records the commits it read, and the full data's p50/p90/p99 (nearest rank) beside each
subset, so a test can check that the subset represents the whole.
"""
from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "src/faascope/calibration/distributions"
SUBSET = 300
SEED = 20261127
SKYRISE_FILES = {"s3_standard": "s3/s3s_latency_1a.json", "s3_express": "s3/s3e_latency_1a.json",
                 "efs": "efs/efs_latency_1a.json", "dynamodb": "dynamodb/ddb_latency_1a.json"}
SKYRISE_DIR = "resources/benchmark/measurement/storage_latency/"
OPS = {"kWrite": "write", "kRead": "read"}
#: lambda-perf's runs kept, by set name: the Go custom runtime faascope's own functions are, and
#: the managed runtimes users' functions run on, at the smallest size and at 1024 MB (the INIT
#: phase's CPU, agent/platform/initcpu.go, is judged on how Init Duration changes between them)
LAMBDA_PERF_RUNS = {
    f"{name}_{mb}": f"lambda-perf-{run}-zip-{mb}-x86_64"
    for name, run in (("go_provided_al2023", "go_on_provided_al2023"), ("python312", "python312"),
                      ("nodejs20x", "nodejs20x"))
    for mb in (128, 1024)}
LAST_DAY = dt.date(2026, 8, 22)
DAYS = 40


def git(gitdir: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], check=True,
                          capture_output=True, text=True).stdout


def nearest_rank(v: np.ndarray, q: float) -> float:
    s = np.sort(v)
    return float(s[max(int(np.ceil(q * len(s))), 1) - 1])


def summary(v: np.ndarray) -> dict:
    return {"n": int(len(v)), "p50": nearest_rank(v, 0.5), "p90": nearest_rank(v, 0.9),
            "p99": nearest_rank(v, 0.99)}


def skyrise(gitdir: str) -> dict:
    commit = git(gitdir, "rev-parse", "HEAD").strip()
    rng = np.random.default_rng(SEED)
    sets = {}
    for service, path in SKYRISE_FILES.items():
        doc = json.loads(git(gitdir, "show", f"HEAD:{SKYRISE_DIR}{path}"))
        for run in doc["runs"]:
            p = run["parameters"]
            v = np.array([x for rep in run["repetitions"] for inv in rep["invocations"]
                          for x in inv.get("invocation_request_latencies_ms", [])], float)
            sub = rng.choice(v, size=SUBSET, replace=False)
            sets[f"{service}_{OPS[p['operation_type']]}"] = {
                "file": SKYRISE_DIR + path, "date": doc["context"]["date"],
                "parameters": {k: p[k] for k in ("instance_size_mb", "concurrent_instance_count",
                                                 "object_size_kb", "object_count",
                                                 "operation_type", "storage_type")},
                "full": summary(v), "values": [round(float(x), 3) for x in sub]}
    return {"name": "skyrise-request-latency", "unit": "ms",
            "what": "latency of one 1 KiB request seen by a 7076 MB AWS Lambda function "
                    "(10 concurrent, 10 repetitions of 1,000 requests each)",
            "source": "Bodner et al., 'An Empirical Evaluation of Serverless Cloud Infrastructure "
                      "for Large-Scale Data Processing' (Skyrise, HPI), raw measurements",
            "repository": "https://github.com/hpides/skyrise", "commit": commit,
            "license": "MIT", "license_file": "LICENSE-skyrise.txt",
            "subset": f"{SUBSET} values per set drawn without replacement "
                      f"(numpy default_rng({SEED})) from every request of the file's run",
            "sets": sets}


def lambda_perf(gitdir: str) -> dict:
    commit = git(gitdir, "rev-parse", "HEAD").strip()
    values = {name: [] for name in LAMBDA_PERF_RUNS}
    days = {name: [] for name in LAMBDA_PERF_RUNS}
    by_run = {run: name for name, run in LAMBDA_PERF_RUNS.items()}
    for k in range(DAYS):
        day = LAST_DAY - dt.timedelta(days=k)
        try:
            doc = json.loads(git(gitdir, "show", f"HEAD:data/{day.isoformat()}.json"))
        except subprocess.CalledProcessError:
            continue
        for r in doc["runtimeData"]:
            if r["r"] in by_run:
                values[by_run[r["r"]]] += r["i"]
                days[by_run[r["r"]]].append(day.isoformat())
    every_day = sorted({d for ds in days.values() for d in ds})
    return {"name": "lambda-perf-init", "unit": "ms",
            "what": "Init Duration of a cold start (REPORT line) of a hello-world zip function, "
                    "x86_64, 10 cold starts a day; per set the runtime and memory size",
            "source": "lambda-perf (github.com/maxday/lambda-perf), daily cold-start runs",
            "repository": "https://github.com/maxday/lambda-perf", "commit": commit,
            "license": "Apache-2.0", "license_file": "LICENSE-lambda-perf.txt",
            "subset": f"every value of the {len(every_day)} daily files from {min(every_day)} "
                      f"to {max(every_day)}",
            "sets": {name: {"file": "data/YYYY-MM-DD.json", "runtime": run,
                            "days": sorted(days[name]),
                            "full": summary(np.array(values[name], float)),
                            "values": [float(x) for x in values[name]]}
                     for name, run in LAMBDA_PERF_RUNS.items()}}


def main(skyrise_git: str, lambda_perf_git: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for doc, lic, gitdir in ((skyrise(skyrise_git), "LICENSE-skyrise.txt", skyrise_git),
                             (lambda_perf(lambda_perf_git), "LICENSE-lambda-perf.txt",
                              lambda_perf_git)):
        (OUT / f"{doc['name']}.json").write_text(json.dumps(doc, indent=1) + "\n")
        (OUT / lic).write_text(git(gitdir, "show", "HEAD:LICENSE"))


if __name__ == "__main__":
    main(*sys.argv[1:3])
