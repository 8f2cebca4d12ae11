"""A burst's summary, from its (member, result) pairs: statuses, throttles, dispatch spread, lag
behind the schedule, arrival spread, wait/run/service quantiles, instances; and its one-line
report."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from faascope.providers.invocation import InvokeResult
from faascope.schemas.response import parse_response

THROTTLE_TYPES = ("TooManyRequestsException", "ThrottlingException", "TooManyRequests", "HTTP429")


def _q(a: np.ndarray, p: float) -> Optional[float]:
    return float(np.quantile(a, p)) if a.size else None


def dist(values) -> dict[str, Optional[float]]:
    a = np.asarray([v for v in values if v is not None], dtype=float)
    if not a.size:
        return {"n": 0}
    return {"n": int(a.size), "p50": _q(a, .5), "p95": _q(a, .95), "p99": _q(a, .99),
            "max": float(a.max()), "min": float(a.min()), "mean": float(a.mean())}


def summarise(results: list[tuple[Any, InvokeResult]], planned: int) -> dict:
    """A burst's summary from its (member, result) pairs: statuses, throttles, dispatch spread,
    lag behind the schedule, arrival spread, wait/run/service quantiles, instances."""
    statuses: dict[str, int] = {}
    errors: dict[str, int] = {}
    sends, lags, recv, arrival, waits, runs, services, rts = [], [], [], [], [], [], [], []
    instances, sandboxes, hosts, cold = set(), set(), set(), 0
    new_conns = 0
    for m, r in results:
        statuses[r.status] = statuses.get(r.status, 0) + 1
        if r.status != "ok":
            errors[r.error_type or r.status] = errors.get(r.error_type or r.status, 0) + 1
        if (r.platform or {}).get("connection") == "new":
            new_conns += 1
        if r.send_ns is not None:
            sends.append(r.send_ns)
            lags.append((r.send_ns - m.scheduled_ns) / 1e9)
            if r.end_ns is not None:
                rts.append((r.end_ns - r.send_ns) / 1e9)
        resp = parse_response(r.response)
        if resp.instance_id:
            instances.add(resp.instance_id)
        if resp.sandbox:
            sandboxes.add(resp.sandbox)
        if resp.boot_id:
            hosts.add(resp.boot_id)
        if resp.cold:
            cold += 1
        rec = resp.received_ns
        if rec is not None:
            recv.append(rec)
            p = r.platform or {}
            est = rec
            if str(p.get("cold", "")).lower() == "true":
                est = rec - int((float(p.get("setup_ms") or 0) + float(p.get("init_ms") or 0)) * 1e6)
            arrival.append(est)
            if r.send_ns is not None:
                waits.append((rec - r.send_ns) / 1e9)
            end = resp.workload_end_ns
            if end is not None:
                runs.append((end - rec) / 1e9)
                if r.send_ns is not None:
                    services.append((end - r.send_ns) / 1e9)
    sent = len(sends)
    return {
        "planned": planned, "sent": sent, "replies": len(results), "statuses": statuses,
        "errors": errors, "throttled": sum(v for k, v in errors.items() if k in THROTTLE_TYPES),
        "failed": sum(v for k, v in statuses.items() if k != "ok"),
        "first_send_ns": min(sends) if sends else None, "last_send_ns": max(sends) if sends else None,
        "send_spread_s": (max(sends) - min(sends)) / 1e9 if sends else None,
        "send_lag_s": dist(lags),
        "received_spread_s": (max(recv) - min(recv)) / 1e9 if recv else None,
        "arrival_spread_est_s": (max(arrival) - min(arrival)) / 1e9 if arrival else None,
        "wait_s": dist(waits), "run_s": dist(runs), "service_s": dist(services),
        "round_trip_s": dist(rts), "cold": cold, "instances": len(instances),
        "sandboxes": len(sandboxes), "hosts": len(hosts), "new_connections": new_conns,
    }


def _ms(v: Optional[float]) -> str:
    return "–" if v is None else (f"{v * 1e3:.1f} ms" if v < 10 else f"{v:.2f} s")


def burst_line(label: str, s: dict) -> str:
    st = ", ".join(f"{v} {k}" for k, v in sorted(s["statuses"].items()))
    return (f"{label}: {s['sent']}/{s['planned']} sent, spread {_ms(s['send_spread_s'])}, "
            f"{st or 'no replies'}"
            + (f", {s['throttled']} throttled" if s["throttled"] else "")
            + f"; wait p50 {_ms(s['wait_s'].get('p50'))} p99 {_ms(s['wait_s'].get('p99'))}, "
              f"service p99 {_ms(s['service_s'].get('p99'))}; {s['cold']} cold, "
              f"{s['instances']} instance(s)")
