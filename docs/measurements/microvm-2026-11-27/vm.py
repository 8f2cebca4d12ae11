#!/usr/bin/env python3
"""Boot one microVM (qemu -M microvm), run a job inside it, time it.

Prints one JSON line: boot_to_ready_s (host: qemu's exec -> the guest's "@@READY"
line on the serial console), total_s (exec -> qemu's exit), guest_uptime_at_ready_s,
rss_kb/pss_kb of the qemu process while the guest idles at READY, peak_rss_kb (VmHWM at the end),
and the job's output lines. With --quota SHARE the whole qemu process is moved at READY
into a cgroup v1 cpu group with cfs_period 20 ms (Lambda's, the lambda profile's cpu_period)
and quota SHARE*20 ms; the guest sleeps 1 s after READY so the move happens before the job.
"""
import argparse, base64, json, os, re, subprocess, sys, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("--w", default="/tmp/vm26")
ap.add_argument("--accel", default="kvm", choices=["kvm", "tcg"])
ap.add_argument("--cpu", default=None)
ap.add_argument("--tb-size", type=int, default=0, help="TCG translation cache MiB (0: qemu's default)")
ap.add_argument("--kernel", default="vmlinuz")
ap.add_argument("--mem", type=int, default=128)
ap.add_argument("--iops", type=int, default=0, help="qemu throttling.iops-total (0: none)")
ap.add_argument("--bps", type=int, default=0, help="qemu throttling.bps-total (0: none)")
ap.add_argument("--cache", default="none", help="qemu -drive cache= (none: O_DIRECT on the host)")
ap.add_argument("--quota", type=float, default=0.0, help="vCPU share (0: no cgroup)")
ap.add_argument("--job", required=True, help="shell script run by the guest's busybox sh")
ap.add_argument("--timeout", type=float, default=900)
ap.add_argument("--ready-timeout", type=float, default=25, help="kill if no READY by then (a hung boot)")
ap.add_argument("--tag", default="")
ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for the job (kernel cmdline -> init's environment)")
a = ap.parse_args()

W = a.w
img = os.path.join(W, f"tmp-{os.getpid()}.img")
t_img = time.monotonic()
subprocess.run(["cp", "--sparse=always", os.path.join(W, "tmp.tmpl.img"), img], check=True)
img_s = time.monotonic() - t_img
job = open(a.job, "rb").read()
if a.quota:
    job = b"sleep 1\n" + job
jb64 = base64.b64encode(job).decode()
drive = f"id=tmp,file={img},format=raw,if=none,cache={a.cache},aio=threads"
if a.iops:
    drive += f",throttling.iops-total={a.iops}"
if a.bps:
    drive += f",throttling.bps-total={a.bps}"
accel = ["-enable-kvm", "-cpu", a.cpu or "host,-arch-capabilities,-cx16"] if a.accel == "kvm" \
    else ["-accel", "tcg" + (f",tb-size={a.tb_size}" if a.tb_size else ""), "-cpu", a.cpu or "max"]
# TCG: microvm has no PIT/PIC/RTC by default and, without kvm-clock, the guest cannot
# calibrate its TSC and hangs; KVM guests keep the lean default.
machine = "microvm" if a.accel == "kvm" else "microvm,pit=on,pic=on,rtc=on"
cmd = ["qemu-system-x86_64", "-M", machine, *accel, "-m", str(a.mem), "-smp", "1",
       "-nodefaults", "-no-user-config", "-nographic", "-serial", "stdio", "-no-reboot",
       "-kernel", os.path.join(W, a.kernel), "-initrd", os.path.join(W, "initrd.gz"),
       "-append", f"console=ttyS0 quiet reboot=t panic=-1 " + " ".join(a.env) + f" job={jb64}",
       "-drive", drive, "-device", "virtio-blk-device,drive=tmp"]
if len(" ".join(cmd)) > 4000:
    sys.exit("job too long for the kernel command line")

def mem(pid):
    r = {}
    try:
        for l in open(f"/proc/{pid}/status"):
            k, v = l.split(":", 1)
            if k in ("VmRSS", "VmHWM"):
                r[k] = int(v.split()[0])
        for l in open(f"/proc/{pid}/smaps_rollup"):
            if l.startswith("Pss:"):
                r["Pss"] = int(l.split()[1])
    except OSError:
        pass
    return r

cg = None
t0 = time.monotonic()
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
out, ready, at_ready, guest_up, hwm = [], None, {}, None, None
deadline = t0 + a.timeout
killer = threading.Timer(a.timeout, p.kill)
killer.start()
def ready_watch():
    if ready is None:
        p.kill()
rkiller = threading.Timer(a.ready_timeout, ready_watch)
rkiller.start()
for raw in p.stdout:
    line = raw.decode(errors="replace").rstrip("\r\n")
    now = time.monotonic()
    if ready is None and line.startswith("@@READY"):
        ready = now - t0
        guest_up = float(line.split()[1])
        at_ready = mem(p.pid)
        if a.quota:
            cg = f"/sys/fs/cgroup/cpu/vm26-{os.getpid()}"
            os.makedirs(cg, exist_ok=True)
            open(f"{cg}/cpu.cfs_period_us", "w").write("20000")
            open(f"{cg}/cpu.cfs_quota_us", "w").write(str(max(1000, int(a.quota * 20000))))
            open(f"{cg}/cgroup.procs", "w").write(str(p.pid))
        continue
    if line.startswith("@@DONE"):
        hwm = mem(p.pid).get("VmHWM")
    out.append(line)
    if now > deadline:
        p.kill()
        break
rc = p.wait()
killer.cancel()
rkiller.cancel()
total = time.monotonic() - t0
os.unlink(img)
if cg:
    try:
        os.rmdir(cg)
    except OSError:
        pass
print(json.dumps({"tag": a.tag, "accel": a.accel, "mem": a.mem, "iops": a.iops, "bps": a.bps,
                  "quota": a.quota, "cache": a.cache, "img_copy_s": round(img_s, 4),
                  "boot_to_ready_s": ready and round(ready, 4), "guest_uptime_at_ready_s": guest_up,
                  "total_s": round(total, 4), "rc": rc,
                  "rss_kb_at_ready": at_ready.get("VmRSS"), "pss_kb_at_ready": at_ready.get("Pss"),
                  "peak_rss_kb": hwm, "out": out}))
