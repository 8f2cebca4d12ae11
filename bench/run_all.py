"""Run every benchmark in bench/ and print one table of ratios.

Each bench runs as its own process (``--quick`` by default: a few rounds, small sizes) and writes
its JSON under bench/out/run_all/; this script reads them back and prints one row per figure:

    what | faascope figure | reference figure | ratio | goal | met?

(the goals are issue #20's and the benches' own). A bench that fails or times out gets a row
saying so, and the rest still run. Writes bench/out/run_all.json with the rows and the commands.

    python bench/run_all.py [--quick | --full] [--only fileio,overhead,...] [--timeout 900] [--port-base 9375]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out" / "run_all"

# name -> (script, extra arguments); "{port+N}" is --port-base + N (the benches use base..base+4)
BENCHES = {
    "fileio": ("fileio_engines.py", ["--port", "{port+0}"]),
    "overhead": ("platform_overhead.py", ["--port", "{port+1}"]),  # and the baseline's, the next
    "dispatch": ("dispatch_spread.py", []),
    "scale": ("scale.py", ["--port", "{port+3}"]),
    "analysis": ("analysis_scale.py", []),
    "report": ("report_scale.py", []),
    "soak": ("soak.py", []),
    "soak_hostile": ("soak_hostile.py", ["--port", "{port+4}"]),
}
PORT_BASE = 9375


def run(name: str, quick: bool, timeout: float, port_base: int = PORT_BASE) -> dict:
    script, extra = BENCHES[name]
    extra = [str(port_base + int(x[len("{port+"):-1])) if x.startswith("{port+") else x for x in extra]
    out = OUT / f"{name}.json"
    out.unlink(missing_ok=True)
    cmd = [sys.executable, str(BENCH / script), *(["--quick"] if quick else []), *extra, "--out", str(out)]
    shown = " ".join(["python", f"bench/{script}", *(["--quick"] if quick else []), *extra])
    print(f"== {shown}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(BENCH.parent / "src"), os.environ.get("PYTHONPATH")])))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
        tail = (proc.stdout + proc.stderr)[-1500:]
    except subprocess.TimeoutExpired as e:
        status, tail = f"timeout after {timeout:.0f} s", str(e.stdout or "")[-1500:]
    took = time.perf_counter() - t0
    data = None
    if out.exists():
        try:
            data = json.loads(out.read_text())
        except ValueError:
            pass
    if status != "ok":
        print(f"   {status} ({took:.0f} s)\n{tail}", file=sys.stderr, flush=True)
    else:
        print(f"   ok ({took:.0f} s)", file=sys.stderr, flush=True)
    return {"name": name, "command": shown, "status": status, "seconds": took, "data": data}


def row(what, ours, ref, ratio, goal, met, unit="") -> dict:
    return {"what": what, "faascope": ours, "reference": ref, "ratio": ratio, "goal": goal, "met": met, "unit": unit}


def rows_fileio(d: dict) -> list[dict]:
    out = []
    for r in d["table"]:
        for e in ("platform", "native"):
            if f"{e}_over_fio" not in r:
                continue
            rr = r[f"{e}_over_fio_per_round"]
            out.append(row(f"direct I/O {r['case']} {r['size_bytes'] >> 20} MiB: {e} vs fio, MiB/s "
                           f"(rounds {min(rr):.2f}–{max(rr):.2f})", r[f"{e}_mib_s"], r["fio_mib_s"],
                           r[f"{e}_over_fio"], "≥ 0.95 (run's median)", r[f"{e}_over_fio"] >= 0.95))
            if f"{e}_p50_speed_over_fio" in r:
                pr = r[f"{e}_p50_speed_over_fio_per_round"]
                out.append(row(f"direct I/O {r['case']}: {e} vs fio, p50 µs per operation "
                               f"(speed, rounds {min(pr):.2f}–{max(pr):.2f})",
                               r[f"{e}_p50_us"], r["fio_p50_us"], r[f"{e}_p50_speed_over_fio"],
                               "speed ≥ 0.95 (median)", r[f"{e}_p50_speed_over_fio"] >= 0.95))
        if "platform_over_native" in r:
            out.append(row(f"direct I/O {r['case']}: platform vs native (same agent, bare), MiB/s",
                           r["platform_mib_s"], r["native_mib_s"], r["platform_over_native"], "≥ 0.95",
                           r["platform_over_native"] >= 0.95))
    return out


def rows_overhead(d: dict) -> list[dict]:
    w, dr = d["platform_http"]["median_ms"], d["direct"]["median_ms"]
    c, b = d["platform_cold"]["median_ms"], d["bare_spawn"]["median_ms"]
    s = d["platform_setup_ms"]["median_ms"]
    return [row("warm noop invoke, raw HTTP: platform vs agent direct, ms", w, dr, w / dr, "≤ +0.3 ms", w - dr <= 0.3),
            row("cold start: platform vs bare spawn, ms", c, b, c / b, "setup ≤ 20 ms", s <= 20),
            row("cold start: platform setup (median), ms", s, None, None, "≤ 20 ms", s <= 20)]


def rows_dispatch(d: dict) -> list[dict]:
    out = []
    for server in ("sink", "stand_in", "platform"):
        for n, v in (d.get(server) or {}).items():
            sm = v["summary"]
            if "go" not in sm:
                continue
            go, th = sm["go"], sm.get("threads")
            ref = th["send_spread_ms"]["median"] if th else None
            send = go["send_spread_ms"]["max"]
            out.append(row(f"burst of {n} ({server}): send spread p100, Go dispatcher vs thread-pool boto3, ms",
                           send, ref, send / ref if ref else None, "≤ 50 ms", send is not None and send <= 50))
            arr = go["arrival_spread_ms"]["max"]
            out.append(row(f"burst of {n} ({server}): arrival spread, Go dispatcher, ms", arr, None, None,
                           "≤ 100 ms", arr is not None and arr <= 100))
    return out


def rows_scale(d: dict) -> list[dict]:
    out = []
    for s in d["steps"]:
        ok = s.get("burst_ok", 0)
        out.append(row(f"warm burst of {s['n']} on the platform ({d['profile']}, {d['network']}): time to last reply, s",
                       s.get("burst_burst_s"), None, None, "all ok", ok == s["n"]))
        out.append(row(f"  memory per warm instance at {s['instances']} (process tree PSS / cgroup usage), MB",
                       s.get("pss_mb_per_instance", s["tree_mb_per_instance"]), s["cgroup_mb_per_instance"],
                       None, "measured", None))
        out.append(row(f"  platform descriptors / tasks per warm instance at {s['instances']}",
                       s["fds_per_instance"], s["tasks_per_instance"], None, "measured", None))
    fl = d.get("first_limit") or {}
    out.append(row(f"first limit: {fl.get('detail', '?')[:90]}", fl.get("at_n"), None, None, "5,000 warm", None))
    return out


def rows_analysis(d: dict) -> list[dict]:
    return [row(f"analysis (ANOVA + Tukey + cells), {d['rows']:,} rows, s", d["headline_s"], None, None, "measured", None)]


def rows_report(d: dict) -> list[dict]:
    return [row(f"report end to end, {d['rows']:,} rows, s", d["total_s"], None, None, "measured", None)]


def rows_soak(d: dict) -> list[dict]:
    grew = d.get("grew") or {}
    return [row(f"soak {d['seconds']:.0f} s: {d['invocations']} invocations, resources grown", len(grew), 0, None,
                "nothing grows", not grew)]


def rows_soak_hostile(d: dict) -> list[dict]:
    out = []
    for name, w in d.get("workloads", {}).items():
        if "B/A" in w:
            r = w["B/A"]
            lo, hi = r["ci95"]
            out.append(row(f"{name} beside hostile neighbours vs alone (median ratio, 95 % CI {lo:.2f}–{hi:.2f})",
                           None, None, r["median_ratio"], "CI contains 1", lo <= 1 <= hi))
    return out


EXTRACT = {"fileio": rows_fileio, "overhead": rows_overhead, "dispatch": rows_dispatch, "scale": rows_scale,
           "analysis": rows_analysis, "report": rows_report, "soak": rows_soak, "soak_hostile": rows_soak_hostile}


def fmt(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, float):
        return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", default=True, help="every bench in its --quick mode (default)")
    g.add_argument("--full", action="store_true", help="every bench with its own defaults (hours)")
    ap.add_argument("--only", help="comma-separated subset of " + ",".join(BENCHES))
    ap.add_argument("--timeout", type=float, default=900, help="per bench, seconds")
    ap.add_argument("--port-base", type=int, default=PORT_BASE,
                    help="the benches' platforms listen on this port and the four after it")
    a = ap.parse_args()
    quick = not a.full
    names = [n for n in BENCHES if not a.only or n in a.only.split(",")]
    OUT.mkdir(parents=True, exist_ok=True)
    results, rows = [], []
    for name in names:
        r = run(name, quick, a.timeout, a.port_base)
        results.append({k: v for k, v in r.items() if k != "data"})
        if r["data"] is None:
            rows.append(row(f"{name}: {r['status']} (no results)", None, None, None, "runs", False))
            continue
        try:
            got = EXTRACT[name](r["data"])
        except (KeyError, TypeError, ZeroDivisionError) as e:
            got = [row(f"{name}: results not understood ({e.__class__.__name__}: {e})", None, None, None, "runs", False)]
        if r["status"] != "ok":
            got.append(row(f"{name}: {r['status']}", None, None, None, "exit 0", False))
        rows.extend({**x, "bench": name, "command": r["command"]} for x in got)
    w = max(len(x["what"]) for x in rows)
    print(f"\n{'what':<{w}}  {'faascope':>10}  {'reference':>10}  {'ratio':>7}  {'goal':<22} met?")
    for x in rows:
        print(f"{x['what']:<{w}}  {fmt(x['faascope']):>10}  {fmt(x['reference']):>10}  {fmt(x['ratio']):>7}  "
              f"{x['goal']:<22} {fmt(x['met'])}")
    print("\ncommands:")
    for r in results:
        print(f"  {r['command']}   ({r['status']}, {r['seconds']:.0f} s)")
    (BENCH / "out" / "run_all.json").write_text(json.dumps(
        {"when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "quick": quick, "cpus": os.cpu_count(),
         "load": os.getloadavg(), "benches": results, "rows": rows}, indent=2, default=str))
    print(f"wrote {BENCH / 'out' / 'run_all.json'}")


if __name__ == "__main__":
    main()
