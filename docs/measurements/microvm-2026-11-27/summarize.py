#!/usr/bin/env python3
"""Summarize $W/results.jsonl: boots (boot-to-READY, RSS) and the dd cells (per-call µs)."""
import json, statistics as st, sys
from collections import defaultdict
path = sys.argv[1] if len(sys.argv) > 1 else "/tmp/vm26/results.jsonl"  # or docs/measurements/microvm-2026-11-27/results/tcg-results.jsonl
rows = [json.loads(l) for l in open(path)]
def fmt(xs, unit=1.0, nd=1):
    xs = [x * unit for x in xs]
    return f"{st.median(xs):.{nd}f} [{min(xs):.{nd}f}–{max(xs):.{nd}f}] n={len(xs)}" if xs else "-"
boots = defaultdict(list)
for r in rows:
    boots[r["tag"]].append(r)
print("| tag | VMs | reached READY | boot→READY s | guest uptime at READY s | exec→exit s | qemu RSS at READY MiB | peak RSS MiB |")
print("|---|---:|---:|---|---|---|---|---|")
for tag, rs in boots.items():
    ok = [r for r in rs if r["boot_to_ready_s"] is not None]
    print(f"| {tag} | {len(rs)} | {len(ok)} | {fmt([r['boot_to_ready_s'] for r in ok],1,2)} | "
          f"{fmt([r['guest_uptime_at_ready_s'] for r in ok],1,2)} | {fmt([r['total_s'] for r in ok],1,2)} | "
          f"{fmt([r['rss_kb_at_ready'] for r in ok],1/1024,0)} | {fmt([r['peak_rss_kb'] for r in ok if r['peak_rss_kb']],1/1024,0)} |")
cells = defaultdict(list)
for r in rows:
    for o in r["out"]:
        if o.startswith("@@CELL"):
            _, name, calls, secs = o.split()[:4]
            cells[(r["tag"], name)].append(float(secs) / int(calls) * 1e6)
print()
print("| config | cell | per dd call µs: median [min–max] n |")
print("|---|---|---|")
for (tag, name), xs in sorted(cells.items()):
    print(f"| {tag} | {name} | {fmt(xs)} |")
