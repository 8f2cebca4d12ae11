"""How close `faascope plan`'s duration estimate comes to the wall time of `faascope run`, for
every local example (docs/specs.md, "The duration model"): plan and run side by side in one
process, one example after the other, with the machine's 1-minute load average before and after
each run (a loaded machine makes every run longer than the estimate, which assumes CPUs of its
own).

    python bench/plan_accuracy.py --out /tmp/plan-accuracy.json            # every local example
    python bench/plan_accuracy.py --only network-bucket --only periodic    # some of them

Prints a Markdown table (example, estimate, wall time, ratio wall / estimate, load) and writes
the rows as JSON. Each run writes its results file into a fresh temporary directory, removed at
the end; stand-ins and platforms are the campaigns' own.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
#: needs an agent in HTTP mode on a fixed port (its `agent-http` deployment)
SKIP = {"deployments-local"}


def _faascope(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "faascope", *args], capture_output=True,
                          text=True, cwd=ROOT, **kw)


def _examples(only: list[str]) -> list[Path]:
    specs = sorted(EXAMPLES.glob("*-local.yaml")) + [EXAMPLES / "thesis-local-fileio.yaml"]
    names = {p.stem: p for p in specs if p.stem not in SKIP}
    if only:
        missing = [o for o in only if o not in names]
        if missing:
            raise SystemExit(f"--only: no local example named {', '.join(missing)}")
        return [names[o] for o in only]
    return list(names.values())


def measure(spec: Path, workdir: Path) -> dict:
    plan = _faascope("plan", str(spec), "--format", "json")
    if plan.returncode != 0:
        return {"example": spec.stem, "error": f"plan: {plan.stderr.strip()[-300:]}"}
    estimate = float(json.loads(plan.stdout)["estimate"]["seconds"])
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    run = _faascope("run", str(spec), "--results", str(workdir / f"{spec.stem}.db"),
                    "--no-progress")
    wall = time.monotonic() - t0
    row = {"example": spec.stem, "estimate_s": estimate, "wall_s": wall,
           "ratio": wall / estimate if estimate > 0 else None,
           "load_start": load0, "load_end": os.getloadavg()[0], "exit": run.returncode}
    if run.returncode != 0:
        row["error"] = run.stderr.strip()[-300:]
    return row


def _s(v: float) -> str:
    return f"{v:.1f} s" if v < 100 else f"{v:.0f} s"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", default=[], help="an example's name (repeatable)")
    ap.add_argument("--out", type=Path, help="write the rows as JSON here")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="faascope-plan-accuracy-") as tmp:
        for spec in _examples(args.only):
            row = measure(spec, Path(tmp))
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    print("| example | estimate | wall time of `faascope run` | ratio | load (1 min, start/end) |")
    print("|---|---:|---:|---:|---|")
    for r in rows:
        if "estimate_s" not in r:
            print(f"| {r['example']} | – | – | – | {r['error']} |")
            continue
        ratio = f"{r['ratio']:.2f}" if r["ratio"] else "–"
        note = "" if r["exit"] == 0 else f" (exit {r['exit']})"
        print(f"| {r['example']} | {_s(r['estimate_s'])} | {_s(r['wall_s'])}{note} | {ratio} | "
              f"{r['load_start']:.1f} / {r['load_end']:.1f} |")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2))
    bad = [r for r in rows if r.get("exit") != 0]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
