#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/soak.py - the soak benchmark (issue 13, item 5): many client
processes with random graph shapes against one user-mode ptaskd for a
long time; no leak, no deadlock, no wrong result, and throughput steady.

    bench/soak.py [--clients 64] [--seconds 600] [--backend cpu|sim]
                  [--interval 10] [--out build/bench/soak]
                  [--abandon-permille 5] [--terminate-permille 20]
                  [--stall-s 60] [--ptaskd build/bin/ptaskd] [--seed 1]

It starts ptaskd (--mode user, its own socket under --out) with the
tests' host twins (build/twins), then --clients soak_client processes
(bench/soak_client.c: random graphs, every result checked against a CPU
reference, a few graphs terminated mid-flight and a few clients ending
abruptly with everything open, restarted in their slot).  Every
--interval seconds it records the rounds completed, ptaskd's resident
memory, open fds and threads, and its live object counts (ptaskctl
--json info: the admin tool a user has).  A client that completes no
round for --stall-s seconds is a stall: its and ptaskd's stacks go to
the log (gdb, when installed) and the run fails.

At the end the clients are asked to stop (SIGUSR1), ptaskd's object
counts must come back to what they were before any client (graphs,
ptasks, ports, channels, templates, datablocks, invocations), ptaskd
must still be alive, and it is stopped with SIGTERM.  Output under
--out: soak.csv (one row per interval), soak.png (throughput and memory
against time; needs python3-matplotlib), ptaskd.log, clients.log, and
the summary on stdout, whose last line is

    soak: PASS|FAIL clients=.. seconds=.. rounds=.. rate=../s trend=..%/min
          rss_first=..MiB rss_last=..MiB rss_idle=..MiB wrong=.. stalls=..
          leaked=..

trend: the least-squares slope of the per-interval round rate (the first
interval, warm-up, left out) as a percentage of its mean per minute;
rss_first and rss_last: ptaskd's at the second and the last row;
rss_idle: once every client is gone and the counts are back at base.
Exit status 0 on PASS, 1 on FAIL, 2 on a bad option.
"""
import argparse
import json
import mmap
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

SLOT = struct.Struct("<10Qq5Q")  # struct soak_slot (bench/soak.h)
PHASES = ["starting", "opening", "building", "pushing", "pulling",
          "terminating", "closing", "done"]
# Counts that must come back to their base (clients do not: ptaskctl is one).
COUNTED = ["graphs", "templates", "ptasks", "ports", "channels",
           "datablocks", "invocations"]


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="soak.py", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--backend", choices=["cpu", "sim"], default="cpu")
    ap.add_argument("--interval", type=float, default=10)
    ap.add_argument("--out", default="build/bench/soak")
    ap.add_argument("--abandon-permille", type=int, default=5)
    ap.add_argument("--terminate-permille", type=int, default=20)
    ap.add_argument("--stall-s", type=float, default=60)
    ap.add_argument("--ptaskd", default="build/bin/ptaskd")
    ap.add_argument("--ptaskctl", default="build/bin/ptaskctl")
    ap.add_argument("--client", default="build/bin/soak_client")
    ap.add_argument("--twins", default="build/twins")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    if not 1 <= a.clients <= 1024:
        ap.error("--clients: 1 to 1024")
    if a.seconds <= 0 or a.interval <= 0 or a.interval > a.seconds:
        ap.error("--seconds and --interval: positive, interval <= seconds")
    if not 0 <= a.abandon_permille <= 1000 or \
            not 0 <= a.terminate_permille <= 1000:
        ap.error("--abandon-permille, --terminate-permille: 0 to 1000")
    if a.stall_s <= 0:
        ap.error("--stall-s: positive")
    for path in (a.ptaskd, a.ptaskctl, a.client):
        if not os.access(path, os.X_OK):
            ap.error(f"{path}: not built (make bench-soak-progs)")
    return a


def log(msg):
    print(f"soak: {msg}", flush=True)


def proc_status(pid):
    """ptaskd's VmRSS (KiB), open fds and threads; None once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    rss = int(fields["VmRSS"].split()[0])
    return rss, fds, int(fields["Threads"])


def counts(a, sock):
    """ptaskd's live object counts through ptaskctl, or None."""
    try:
        out = subprocess.run([a.ptaskctl, "--json", "--mode", "user",
                              "--socket", sock, "info"], check=True,
                             capture_output=True, text=True,
                             timeout=30).stdout
        return json.loads(out)["objects"]
    except (subprocess.SubprocessError, ValueError, KeyError):
        return None


def stacks(pid, out):
    """Every thread's stack of @pid into @out, if gdb is there."""
    if not shutil.which("gdb"):
        out.write(f"(no gdb: no stacks of {pid})\n")
        return
    r = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex",
                        "thread apply all bt"], capture_output=True,
                       text=True, timeout=120)
    out.write(r.stdout[-20000:])


class Slots:
    """The clients' progress file (struct soak_slot each)."""

    def __init__(self, path, n):
        with open(path, "wb") as f:
            f.truncate(n * SLOT.size)
        self.f = open(path, "r+b")
        self.m = mmap.mmap(self.f.fileno(), n * SLOT.size)
        self.n = n

    def read(self, i):
        v = SLOT.unpack_from(self.m, i * SLOT.size)
        return {"pid": v[0], "phase": v[2], "rounds": v[3], "graphs": v[4],
                "contexts": v[5], "wrong": v[6], "errors": v[7],
                "abandoned": v[8], "last_ok_ns": v[9], "last_err": v[10]}

    def clear(self, i):
        SLOT.pack_into(self.m, i * SLOT.size, *([0] * 16))


def trend(times, rates):
    """Least-squares slope of @rates over @times (s): % of the mean/min."""
    n = len(rates)
    if n < 3:
        return 0.0
    mt, mr = sum(times) / n, sum(rates) / n
    var = sum((t - mt) ** 2 for t in times)
    if var == 0 or mr == 0:
        return 0.0
    slope = sum((t - mt) * (r - mr) for t, r in zip(times, rates)) / var
    return slope * 60 / mr * 100


def plot(rows, png, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("no matplotlib (python3-matplotlib): no plot")
        return
    t = [r["t_s"] / 60 for r in rows]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    ax1.plot(t, [r["rate"] for r in rows], marker=".")
    ax1.set_ylabel("rounds/s (all clients)")
    ax1.set_ylim(bottom=0)
    ax1.grid(True, alpha=0.3)
    ax1.set_title(title, fontsize=9)
    ax2.plot(t, [r["rss_kib"] / 1024 for r in rows], marker=".",
             label="ptaskd RSS (MiB)")
    ax2.plot(t, [r["datablocks"] for r in rows], marker=".",
             label="live datablocks")
    ax2.plot(t, [r["fds"] for r in rows], marker=".", label="ptaskd fds")
    ax2.set_xlabel("minutes")
    ax2.set_ylim(bottom=0)
    ax2.grid(True, alpha=0.3)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main(argv):
    a = parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    sock = os.path.join(a.out, "ptaskd.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    env = dict(os.environ, PTASKD_HOST_KERNELS=os.path.abspath(a.twins))
    dlog = open(os.path.join(a.out, "ptaskd.log"), "w")
    clog = open(os.path.join(a.out, "clients.log"), "w")
    daemon = subprocess.Popen([a.ptaskd, "--mode", "user", "--backend",
                               a.backend, "--socket", sock], env=env,
                              stdout=dlog, stderr=subprocess.STDOUT)
    failures = []
    base = None
    for _ in range(200):
        if daemon.poll() is not None:
            break
        base = counts(a, sock) if os.path.exists(sock) else None
        if base:
            break
        time.sleep(0.05)
    if not base:
        log(f"ptaskd did not come up (see {dlog.name})")
        daemon.kill()
        return 1
    slots = Slots(os.path.join(a.out, "slots"), a.clients)
    procs = [None] * a.clients
    starts = [0] * a.clients
    restarted = 0

    def start(i):
        slots.clear(i)
        starts[i] += 1
        procs[i] = subprocess.Popen(
            [a.client, "--slots", slots.f.name, "--slot", str(i),
             "--seed", str(a.seed * 1000003 + i * 7919 + starts[i]),
             "--socket", sock,
             "--abandon-permille", str(a.abandon_permille),
             "--terminate-permille", str(a.terminate_permille)],
            stdout=clog, stderr=clog)

    log(f"{a.clients} clients, {a.seconds:.0f} s, backend {a.backend}, "
        f"ptaskd pid {daemon.pid}; every {a.interval:.0f} s a row")
    for i in range(a.clients):
        start(i)
    t0 = time.monotonic()
    rows = []
    done_rounds = 0      # rounds of clients that exited, restarted or not
    totals = {"wrong": 0, "errors": 0, "abandoned": 0}
    last_total = 0
    stalls = 0
    next_row = t0 + a.interval
    csv = open(os.path.join(a.out, "soak.csv"), "w")
    csv.write("t_s,rounds,rate,rss_kib,fds,threads,graphs,datablocks,"
              "invocations,wrong,errors,abandoned,restarts\n")

    def live_sum(key):
        return sum(slots.read(i)[key] for i in range(a.clients))

    while True:
        now = time.monotonic()
        # clients that ended: an abandon is restarted, anything else noted
        for i, p in enumerate(procs):
            if p is None or p.poll() is None:
                continue
            s = slots.read(i)
            done_rounds += s["rounds"]
            for k in totals:
                totals[k] += s[k]
            if p.returncode != 3:
                failures.append(f"client {i} exited with {p.returncode}")
            restarted += 1
            start(i)
        if daemon.poll() is not None:
            failures.append(f"ptaskd died: status {daemon.returncode}")
            break
        mono_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        for i in range(a.clients):
            s = slots.read(i)
            if s["pid"] and s["last_ok_ns"] and \
                    mono_ns - s["last_ok_ns"] > a.stall_s * 1e9 and \
                    procs[i].poll() is None:
                stalls += 1
                failures.append(
                    f"client {i} (pid {s['pid']}) stalled "
                    f"{PHASES[s['phase'] % len(PHASES)]}: no result for "
                    f"{(mono_ns - s['last_ok_ns']) / 1e9:.0f} s")
                with open(os.path.join(a.out, "stalls.log"), "a") as f:
                    f.write(f"=== client {i} pid {s['pid']}\n")
                    stacks(s["pid"], f)
                    f.write(f"=== ptaskd pid {daemon.pid}\n")
                    stacks(daemon.pid, f)
                procs[i].kill()
        if stalls:
            break
        if now >= next_row:
            total = done_rounds + live_sum("rounds")
            st = proc_status(daemon.pid) or (0, 0, 0)
            c = counts(a, sock) or {}
            row = {"t_s": now - t0, "rounds": total,
                   "rate": (total - last_total) / a.interval,
                   "rss_kib": st[0], "fds": st[1], "threads": st[2],
                   "graphs": c.get("graphs", -1),
                   "datablocks": c.get("datablocks", -1),
                   "invocations": c.get("invocations", -1),
                   "wrong": totals["wrong"] + live_sum("wrong"),
                   "errors": totals["errors"] + live_sum("errors"),
                   "abandoned": totals["abandoned"] + live_sum("abandoned"),
                   "restarts": restarted}
            rows.append(row)
            csv.write(",".join(str(round(v, 3)) if isinstance(v, float)
                               else str(v) for v in row.values()) + "\n")
            csv.flush()
            log(f"{row['t_s']:6.0f} s: {row['rate']:8.0f} rounds/s, "
                f"RSS {row['rss_kib'] / 1024:6.1f} MiB, {row['fds']} fds, "
                f"{row['threads']} threads, {row['graphs']} graphs, "
                f"{row['datablocks']} datablocks, wrong {row['wrong']}, "
                f"errors {row['errors']}, restarts {restarted}")
            last_total = total
            next_row += a.interval
            if row["t_s"] >= a.seconds - a.interval / 2:
                break
        time.sleep(0.2)

    # Ask every client to stop; each closes its graphs and context.
    for p in procs:
        if p and p.poll() is None:
            p.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 120
    for i, p in enumerate(procs):
        try:
            p.wait(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            failures.append(f"client {i} did not stop")
            with open(os.path.join(a.out, "stalls.log"), "a") as f:
                f.write(f"=== client {i} pid {p.pid} (asked to stop)\n")
                stacks(p.pid, f)
            p.kill()
            p.wait()
        if p.returncode not in (0, 3, -signal.SIGKILL):
            failures.append(f"client {i} exited with {p.returncode}")
        s = slots.read(i)
        done_rounds += s["rounds"]
        for k in totals:
            totals[k] += s[k]
    # Everything the clients made is gone again.
    leaked = []
    c = None
    for _ in range(300):
        c = counts(a, sock)
        if c and all(c[k] == base[k] for k in COUNTED):
            break
        time.sleep(0.1)
    if not c:
        failures.append("ptaskd does not answer after the clients")
    else:
        leaked = [f"{k} {c[k]} (was {base[k]})" for k in COUNTED
                  if c[k] != base[k]]
        if leaked:
            failures.append("left behind: " + ", ".join(leaked))
    # What ptaskd still holds with every client gone (SOAK_HOLD_S: time
    # to look at it, e.g. with gdb, before it is stopped).
    st = proc_status(daemon.pid)
    rss_idle = st[0] / 1024 if st else 0
    if os.environ.get("SOAK_HOLD_S"):
        log(f"clients gone; ptaskd pid {daemon.pid} held "
            f"{os.environ['SOAK_HOLD_S']} s")
        time.sleep(float(os.environ["SOAK_HOLD_S"]))
    if daemon.poll() is None:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            failures.append("ptaskd did not stop on SIGTERM")
            daemon.kill()
            daemon.wait()
        if daemon.returncode != 0:
            failures.append(f"ptaskd exited with {daemon.returncode}")
    if totals["wrong"]:
        failures.append(f"{totals['wrong']} wrong results "
                        f"(see {clog.name})")
    span = rows[-1]["t_s"] if rows else time.monotonic() - t0
    rates = [r["rate"] for r in rows[1:]]
    times = [r["t_s"] for r in rows[1:]]
    tr = trend(times, rates)
    rss_first = rows[1]["rss_kib"] / 1024 if len(rows) > 1 else 0
    rss_last = rows[-1]["rss_kib"] / 1024 if rows else 0
    title = (f"soak: {a.clients} clients, backend {a.backend}, "
             f"{span:.0f} s, {os.uname().nodename}, "
             f"{time.strftime('%Y-%m-%d')}")
    if rows:
        plot(rows, os.path.join(a.out, "soak.png"), title)
    for f in failures:
        log(f"FAIL: {f}")
    log(f"{totals['errors']} rounds or graphs failed with an error "
        f"(graphs terminated on purpose are not errors), "
        f"{totals['abandoned']} clients ended on purpose, {restarted} "
        f"restarts")
    log(f"{'FAIL' if failures else 'PASS'} clients={a.clients} "
        f"seconds={span:.0f} rounds={done_rounds} "
        f"rate={done_rounds / span if span else 0:.0f}/s "
        f"trend={tr:+.2f}%/min rss_first={rss_first:.1f}MiB "
        f"rss_last={rss_last:.1f}MiB rss_idle={rss_idle:.1f}MiB "
        f"wrong={totals['wrong']} "
        f"stalls={stalls} leaked={len(leaked)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
