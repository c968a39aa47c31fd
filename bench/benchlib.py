#!/usr/bin/env python3
"""Helpers for bench/clusters_detail.sh (standard library; `sqlcount` also needs PyMySQL).

Subcommands (each prints one JSON object on stdout unless noted):

  startup  --url URL --runs K [--log FILE] -- CMD...
      exec CMD K times; time from exec to the first successful (2xx) GET URL, then
      SIGTERM it and wait. Polls every 2 ms.
  check    --expect N --header H ... NAME=URL ...
      GET every URL once; count `clusters`; compare the bodies after replacing each
      server's own http://host:port with a placeholder.
  load     --case C --server S --run I --pids P[,P] [--label-pids L=P,...] --out FILE -- WRK...
      run wrk, sample VmRSS / Pss of the given processes and their descendants every
      0.25 s during the load, read VmRSS / VmHWM / Pss again 1 s after it, append a JSON
      line to FILE.
  mem      --pids P[,P]      current VmRSS / VmHWM / Pss of processes and descendants
  sqlcount (--mysql DBURL | --socket SOCK) --url URL --header H ... [--tries K]
      SHOW GLOBAL STATUS Questions / Com_select around one GET, as DBURL's user
      (mysql://user:pass@host:port) or as root over the socket; the minimum over K tries,
      minus the cost of the status query itself. The counters are the server's: exact only
      while nothing else uses that MariaDB.
  report   FILE [--meta FILE]   Markdown tables from the JSON lines (prints Markdown)
"""

import argparse
import collections
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse


# ----------------------------------------------------------------- HTTP helpers

def http_get(url, headers=(), timeout=120):
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=timeout)
    path = u.path or "/"
    if u.query:
        path += "?" + u.query
    hdrs = {}
    for h in headers:
        k, v = h.split(":", 1)
        hdrs[k.strip()] = v.strip()
    conn.request("GET", path, headers=hdrs)
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, body


# ----------------------------------------------------------------- /proc helpers

def children_map():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
        except OSError:
            continue
        ppid = int(s[s.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree(pids):
    kids = children_map()
    out, todo = [], list(pids)
    while todo:
        p = todo.pop()
        if p in out:
            continue
        out.append(p)
        todo.extend(kids.get(p, []))
    return sorted(out)


def proc_mem(pid):
    """(VmRSS KiB, VmHWM KiB, Pss KiB) or None when gone."""
    try:
        rss = hwm = None
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
        pss = None
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        pss = int(line.split()[1])
                        break
        except OSError:
            pass
        return rss, hwm, pss
    except OSError:
        return None


def proc_name(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            parts = f.read().split(b"\0")
        return " ".join(p.decode(errors="replace") for p in parts if p)[:120]
    except OSError:
        return "?"


def mem_snapshot(roots):
    procs = {}
    for p in tree(roots):
        m = proc_mem(p)
        if m is None or m[0] is None:
            continue  # kernel thread or gone
        procs[p] = {"rss_kib": m[0], "hwm_kib": m[1], "pss_kib": m[2], "cmd": proc_name(p)}
    return procs


def parse_pids(s):
    return [int(x) for x in s.split(",") if x.strip()]


def parse_label_pids(items):
    """['api=1,2', 'conductor=3'] -> {'api': [1, 2], 'conductor': [3]}"""
    out = {}
    for it in items or []:
        k, v = it.split("=", 1)
        out[k] = parse_pids(v)
    return out


# ----------------------------------------------------------------- startup

def cmd_startup(a):
    runs = []
    log = open(a.log, "ab") if a.log else subprocess.DEVNULL
    for i in range(a.runs):
        t0 = time.monotonic()
        p = subprocess.Popen(a.cmd, stdout=log, stderr=log, start_new_session=True)
        ok = False
        try:
            while time.monotonic() - t0 < a.timeout:
                if p.poll() is not None:
                    break
                try:
                    st, _ = http_get(a.url, timeout=2)
                    if 200 <= st < 300:
                        ok = True
                        break
                except OSError:
                    pass
                time.sleep(0.002)
            dt = (time.monotonic() - t0) * 1000.0
            mem = proc_mem(p.pid) if ok else None
        finally:
            # the whole process group (gunicorn's workers too): ours, a new session
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        if not ok:
            print(json.dumps({"error": "no successful GET %s (exit %s)" % (a.url, p.returncode)}))
            return 1
        runs.append({"ms": round(dt, 1), "rss_kib_at_ready": mem[0] if mem else None})
        time.sleep(0.2)
    ms = [r["ms"] for r in runs]
    print(json.dumps({"runs": runs, "median_ms": round(statistics.median(ms), 1),
                      "min_ms": min(ms), "max_ms": max(ms)}))
    return 0


# ----------------------------------------------------------------- check

HOST_RE = re.compile(rb"http://127\.0\.0\.1:\d+")


def cmd_check(a):
    res, norm = {}, {}
    for item in a.targets:
        name, url = item.split("=", 1)
        t0 = time.monotonic()
        st, body = http_get(url, a.header)
        dt = time.monotonic() - t0
        entry = {"status": st, "bytes": len(body), "seconds": round(dt, 3)}
        try:
            doc = json.loads(body)
            if "clusters" in doc:
                entry["clusters"] = len(doc["clusters"])
                entry["next"] = doc.get("next")
            else:
                entry["keys"] = len(doc)
        except ValueError:
            entry["error"] = body[:200].decode(errors="replace")
        res[name] = entry
        norm[name] = HOST_RE.sub(b"http://HOST", body)
    names = list(norm)
    same = {}
    for n in names[1:]:
        same["%s==%s" % (names[0], n)] = norm[n] == norm[names[0]]
    ok = all(200 <= e["status"] < 300 for e in res.values())
    if a.expect is not None:
        ok = ok and all(e.get("clusters") == a.expect for e in res.values())
    print(json.dumps({"ok": ok, "servers": res, "identical_bodies": same}))
    if a.diff_dir:
        os.makedirs(a.diff_dir, exist_ok=True)
        for n, b in norm.items():
            with open(os.path.join(a.diff_dir, "%s.json" % n), "wb") as f:
                f.write(b)
    return 0 if ok else 1


# ----------------------------------------------------------------- load

WRK_RPS = re.compile(r"Requests/sec:\s+([\d.]+)")
WRK_PCT = re.compile(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s)\s*$", re.M)
WRK_NON2XX = re.compile(r"Non-2xx or 3xx responses:\s+(\d+)")
WRK_SOCK = re.compile(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")
WRK_REQS = re.compile(r"(\d+) requests in ([\d.]+)(s|m)")


def to_ms(v, unit):
    return float(v) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def parse_wrk(text):
    out = {}
    m = WRK_RPS.search(text)
    out["rps"] = float(m.group(1)) if m else None
    for p, v, u in WRK_PCT.findall(text):
        out["p%s_ms" % p] = round(to_ms(v, u), 2)
    m = WRK_NON2XX.search(text)
    out["non2xx"] = int(m.group(1)) if m else 0
    m = WRK_SOCK.search(text)
    out["socket_errors"] = sum(int(x) for x in m.groups()) if m else 0
    out["timeouts"] = int(m.group(4)) if m else 0
    m = WRK_REQS.search(text)
    out["requests"] = int(m.group(1)) if m else None
    return out


def cpu_ticks(pids):
    """utime + stime (clock ticks) of the processes and their descendants."""
    tot = 0
    for p in tree(pids):
        try:
            with open("/proc/%d/stat" % p) as f:
                s = f.read()
        except OSError:
            continue
        fields = s[s.rindex(")") + 2:].split()
        tot += int(fields[11]) + int(fields[12])
    return tot


def system_busy():
    """(busy, total) jiffies over all CPUs from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def cmd_load(a):
    import resource
    groups = parse_label_pids(a.label_pids) or {"server": parse_pids(a.pids)}
    peak = {}
    samples = {g: [] for g in groups}
    stop = threading.Event()

    def sampler():
        while not stop.is_set():
            for g, ps in groups.items():
                snap = mem_snapshot(ps)
                tot = sum(v["rss_kib"] for v in snap.values())
                samples[g].append(tot)
                for pid, v in snap.items():
                    peak[pid] = max(peak.get(pid, 0), v["rss_kib"])
            stop.wait(0.25)

    hz = os.sysconf("SC_CLK_TCK")
    cpu0 = {g: cpu_ticks(ps) for g, ps in groups.items()}
    busy0, total0 = system_busy()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0 = os.getloadavg()[0]
    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    t0 = time.time()
    wrk = subprocess.run(a.wrk, capture_output=True, text=True)
    elapsed = time.time() - t0
    stop.set()
    th.join()
    busy1, total1 = system_busy()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu1 = {g: cpu_ticks(ps) for g, ps in groups.items()}
    time.sleep(1.0)
    after = {g: mem_snapshot(ps) for g, ps in groups.items()}
    ncpu = os.cpu_count() or 1
    cpu = {"wall_s": round(elapsed, 2), "loadavg1_before": load0,
           "machine_busy_cores": round((busy1 - busy0) / max(1, total1 - total0) * ncpu, 2),
           "wrk_cpu_s": round((ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime), 2)}
    for g in groups:
        cpu["%s_cpu_s" % g] = round((cpu1[g] - cpu0[g]) / hz, 2)
    busy_s = (busy1 - busy0) / hz
    cpu["other_cpu_s"] = round(busy_s - cpu["wrk_cpu_s"] - sum(
        cpu["%s_cpu_s" % g] for g in groups), 2)
    rec = {"case": a.case, "server": a.server, "run": a.run, "started": round(t0, 1),
           "wrk_rc": wrk.returncode, "wrk_args": a.wrk, "cpu": cpu}
    rec.update(parse_wrk(wrk.stdout))
    mem = {}
    for g in groups:
        procs = after[g]
        mem[g] = {
            "rss_peak_during_kib": max(samples[g]) if samples[g] else None,
            "rss_after_kib": sum(v["rss_kib"] for v in procs.values()),
            "hwm_after_kib": sum((v["hwm_kib"] or 0) for v in procs.values()),
            "pss_after_kib": sum((v["pss_kib"] or 0) for v in procs.values()),
            "procs": {str(p): dict(v, rss_peak_during_kib=peak.get(p)) for p, v in procs.items()},
        }
    rec["mem"] = mem
    with open(a.out, "a") as f:
        f.write(json.dumps(rec) + "\n")
    with open(a.out + ".wrk.txt", "a") as f:
        f.write("### %s %s run %s\n%s\n%s\n" % (a.server, a.case, a.run, wrk.stdout, wrk.stderr))
    summary = {k: rec.get(k) for k in ("case", "server", "run", "rps", "p50_ms", "p99_ms",
                                        "requests", "non2xx", "socket_errors")}
    summary["rss_after_mib"] = {g: round(m["rss_after_kib"] / 1024, 1) for g, m in mem.items()}
    summary["cpu"] = cpu
    print(json.dumps(summary))
    return 0 if wrk.returncode == 0 else 1


def cmd_mem(a):
    snap = mem_snapshot(parse_pids(a.pids))
    print(json.dumps({
        "rss_kib": sum(v["rss_kib"] for v in snap.values()),
        "hwm_kib": sum((v["hwm_kib"] or 0) for v in snap.values()),
        "pss_kib": sum((v["pss_kib"] or 0) for v in snap.values()),
        "procs": snap}))
    return 0


def smaps_summary(pid):
    """Where a process's resident memory is (/proc/PID/smaps), in KiB: per mapping kind
    (the executable's file pages and its private dirty pages such as relocated
    .data.rel.ro, shared libraries, [heap], anonymous mappings, thread stacks) and the
    number of threads."""
    exe = os.path.realpath("/proc/%d/exe" % pid)
    out = collections.Counter()
    name = None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            first = line.split()
            if not first:
                continue
            if not first[0].endswith(":") or "-" in first[0]:
                parts = line.split(None, 5)
                name = parts[5].strip() if len(parts) > 5 else ""
                continue
            key = first[0][:-1]
            if key not in ("Rss", "Private_Dirty"):
                continue
            kib = int(first[1])
            if name == exe:
                kind = "exe"
            elif name == "[heap]":
                kind = "heap"
            elif name.startswith("[stack"):
                kind = "stack"
            elif name.startswith("/"):
                kind = "libs"
            elif name == "":
                kind = "anon"
            else:
                kind = name
            out["%s_%s_kib" % (kind, "rss" if key == "Rss" else "dirty")] += kib
    out["threads"] = len(os.listdir("/proc/%d/task" % pid))
    return dict(sorted(out.items()))


def cmd_smaps(a):
    print(json.dumps({str(p): smaps_summary(p) for p in parse_pids(a.pids)}))
    return 0


# ----------------------------------------------------------------- sqlcount

def cmd_sqlcount(a):
    import pymysql
    if a.mysql:
        u = urllib.parse.urlparse(a.mysql)
        conn = pymysql.connect(host=u.hostname, port=u.port or 3306,
                               user=urllib.parse.unquote(u.username or ""),
                               password=urllib.parse.unquote(u.password or ""),
                               autocommit=True)
    else:
        conn = pymysql.connect(unix_socket=a.socket, user="root", autocommit=True)
    cur = conn.cursor()

    def status():
        cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Com_select')")
        return {k: int(v) for k, v in cur.fetchall()}

    # cost of the status query itself, measured back to back
    base = []
    for _ in range(3):
        s0 = status()
        s1 = status()
        base.append({k: s1[k] - s0[k] for k in s0})
    bq = min(b["Questions"] for b in base)
    bs = min(b["Com_select"] for b in base)
    tries = []
    for _ in range(a.tries):
        s0 = status()
        st, body = http_get(a.url, a.header)
        s1 = status()
        if st != 200:
            print(json.dumps({"error": "HTTP %d" % st}))
            return 1
        tries.append({"questions": s1["Questions"] - s0["Questions"] - bq,
                      "com_select": s1["Com_select"] - s0["Com_select"] - bs})
        time.sleep(0.3)
    q = [t["questions"] for t in tries]
    print(json.dumps({"questions_min": min(q), "questions_max": max(q),
                      "com_select_min": min(t["com_select"] for t in tries),
                      "tries": tries}))
    return 0


# ----------------------------------------------------------------- report

LABELS = {
    "openkeel-sqlite": "OpenKeel, SQLite",
    "openkeel-mariadb": "OpenKeel, MariaDB",
    "magnum-gunicorn": "magnum-api, gunicorn 2 workers, MariaDB",
    "magnum-rig": "magnum-api as the rig runs it (werkzeug, 1 process, reads by RPC), MariaDB",
}
CASE_LABELS = {"list": "`GET /v1/clusters/detail`", "show": "`GET /v1/clusters/<uuid>`"}
TARGETS = {"list": 20, "show": 50}


def mib(kib):
    return "%.1f" % (kib / 1024.0) if kib else "–"


def fmt_rps(v):
    if v is None:
        return "–"
    return "%.0f" % v if v >= 100 else ("%.1f" % v if v >= 1 else "%.2f" % v)


def fmt_ms(v):
    if v is None:
        return "–"
    return "%.0f" % v if v >= 100 else ("%.1f" % v if v >= 1 else "%.2f" % v)


def cmd_report(a):
    recs = [json.loads(l) for l in open(a.file) if l.strip()]
    meta = json.load(open(a.meta)) if a.meta and os.path.exists(a.meta) else {}
    servers = [s for s in LABELS if any(r["server"] == s for r in recs)]
    rig = "magnum-rig" in servers  # the conductor / RabbitMQ columns are the rig's only
    out = []
    best = {}
    out.append("Throughput and latency (best run by req/s; p50/p99 of that run; errors = non-2xx "
               "+ socket errors over all runs; CPU per request = CPU-seconds used during the "
               "run / requests completed, median over runs; others' CPU = the machine's busy "
               "time not used by wrk or the processes named here, min–max over runs):")
    out.append("")
    out.append("| request | server | req/s (best) | req/s (every run) | p50 ms | p99 ms | "
               "errors | server CPU ms/req | mariadbd CPU ms/req | " +
               ("conductor CPU ms/req | RabbitMQ CPU ms/req | " if rig else "") +
               "others' CPU (cores) |")
    out.append("|---|---|---:|---|---:|---:|---:|---:|---:|" + ("---:|---:|" if rig else "") +
               "---:|")
    for case in ("list", "show"):
        for s in servers:
            rs = [r for r in recs if r["server"] == s and r["case"] == case]
            if not rs:
                continue
            ok = [r for r in rs if r.get("rps")]
            b = max(ok, key=lambda r: r["rps"]) if ok else rs[0]
            best[(case, s)] = b
            errs = sum(r.get("non2xx", 0) + r.get("socket_errors", 0) for r in rs)

            def per_req(g):
                v = [r["cpu"].get("%s_cpu_s" % g, 0) * 1000.0 / r["requests"]
                     for r in rs if r.get("requests")]
                return fmt_ms(statistics.median(v)) if v else "–"

            others = [r["cpu"]["other_cpu_s"] / r["cpu"]["wall_s"] for r in rs]
            cells = [CASE_LABELS[case], LABELS[s], fmt_rps(b.get("rps")),
                     ", ".join(fmt_rps(r.get("rps")) for r in rs),
                     fmt_ms(b.get("p50_ms")), fmt_ms(b.get("p99_ms")), "%d" % errs,
                     per_req("server"),
                     per_req("mariadbd") if s != "openkeel-sqlite" else "–"]
            if rig:
                cells += [per_req("conductor") if s == "magnum-rig" else "–",
                          per_req("rabbitmq") if s == "magnum-rig" else "–"]
            cells.append("%.2f–%.2f" % (min(others), max(others)))
            out.append("| %s |" % " | ".join(cells))
    out.append("")
    out.append("Ratios (best req/s of OpenKeel / best req/s of magnum-api; project targets: "
               "≥20× lists, ≥100× aspirational, ≥50× shows):")
    out.append("")
    refs = ["magnum-gunicorn"] + (["magnum-rig"] if rig else [])
    out.append("| request | OpenKeel on | vs magnum-api, gunicorn 2 workers |" +
               (" vs the rig's magnum-api |" if rig else ""))
    out.append("|---|---|---:|" + ("---:|" if rig else ""))
    for case in ("list", "show"):
        for s in ("openkeel-sqlite", "openkeel-mariadb"):
            if (case, s) not in best:
                continue
            cells = []
            for ref in refs:
                r = best.get((case, ref))
                if r and r.get("rps") and best[(case, s)].get("rps"):
                    x = best[(case, s)]["rps"] / r["rps"]
                    mark = " ✔" if ref == "magnum-gunicorn" and x >= TARGETS[case] else (
                        " ✘" if ref == "magnum-gunicorn" else "")
                    cells.append("%.0f×%s" % (x, mark))
                else:
                    cells.append("–")
            out.append("| %s |" % " | ".join([
                CASE_LABELS[case], s.split("-")[1].replace("sqlite", "SQLite")
                .replace("mariadb", "MariaDB")] + cells))
    out.append("")
    out.append("Resident memory (MiB; sum over the server's processes; \"during\" = highest "
               "VmRSS sampled every 0.25 s under load, \"after\" = 1 s after the run, HWM = "
               "VmHWM, largest over runs):")
    out.append("")
    out.append("| server | processes | RSS at start-up | RSS during list load | RSS during show load "
               "| RSS after | PSS after | VmHWM |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    st = meta.get("startup", {})
    groups = [(s, "server") for s in servers]
    if any("conductor" in r["mem"] for r in recs if r["server"] == "magnum-rig"):
        groups.append(("magnum-rig", "conductor"))
    for s, g in groups:
        rs = [r for r in recs if r["server"] == s and g in r["mem"]]
        if not rs:
            continue

        def peak(case):
            v = [r["mem"][g]["rss_peak_during_kib"] or 0 for r in rs if r["case"] == case]
            return mib(max(v)) if v else "–"

        last = rs[-1]["mem"][g]
        nproc = len(last["procs"])
        hwm = max(r["mem"][g]["hwm_after_kib"] for r in rs)
        at_start = "–"
        if s in st and st[s].get("runs"):
            v = [x.get("rss_kib_at_ready") for x in st[s]["runs"] if x.get("rss_kib_at_ready")]
            if v:
                at_start = mib(statistics.median(v)) + (" (master)" if s == "magnum-gunicorn" else "")
        name = LABELS[s] if g == "server" else "magnum-conductor of the rig (master + worker)"
        out.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
            name, nproc, at_start, peak("list"), peak("show"), mib(last["rss_after_kib"]),
            mib(last["pss_after_kib"]), mib(hwm)))
    if st:
        out.append("")
        out.append("Start-up (exec → first 2xx `GET /`, ms):")
        out.append("")
        out.append("| server | median | min | max | runs |")
        out.append("|---|---:|---:|---:|---:|")
        for key, name in (("openkeel-sqlite", "OpenKeel, SQLite (seeded database)"),
                          ("openkeel-mariadb", "OpenKeel, MariaDB"),
                          ("magnum-gunicorn", "magnum-api, gunicorn 2 workers")):
            if key in st:
                v = st[key]
                out.append("| %s | %s | %s | %s | %d |" % (name, fmt_ms(v["median_ms"]),
                           fmt_ms(v["min_ms"]), fmt_ms(v["max_ms"]), len(v["runs"])))
        fr = st.get("openkeel-sqlite-fresh-datadir") or []
        if fr:
            ms = [x["median_ms"] for x in fr]
            out.append("| OpenKeel, SQLite, empty data directory (creates the schema) | %s | %s | %s | %d |" % (
                fmt_ms(statistics.median(ms)), fmt_ms(min(ms)), fmt_ms(max(ms)), len(ms)))
    sql = meta.get("sql_per_request") or {}
    if sql:
        out.append("")
        out.append("SQL per request (MariaDB `Questions` / `Com_select` deltas around one "
                   "request, minimum over tries, server otherwise quiet):")
        out.append("")
        out.append("| server | list: statements | list: SELECTs | show: statements | show: SELECTs |")
        out.append("|---|---:|---:|---:|---:|")
        for s in servers:
            if s in sql:
                d = sql[s]
                out.append("| %s | %s | %s | %s | %s |" % (
                    LABELS[s], d["list"]["questions_min"], d["list"]["com_select_min"],
                    d["show"]["questions_min"], d["show"]["com_select_min"]))
    for phase, chk in sorted((meta.get("checks") or {}).items()):
        lst, show = chk.get("list"), chk.get("show")
        if not lst:
            continue
        sv = lst["servers"]
        out.append("")
        out.append("Same answers (phase %s): %s; list bodies %s bytes, byte-identical after "
                   "replacing host:port: %s; show bodies identical: %s." % (
                       phase.upper(),
                       ", ".join("%s %s clusters" % (k, v.get("clusters")) for k, v in sv.items()),
                       "/".join(str(v["bytes"]) for v in sv.values()),
                       all(lst["identical_bodies"].values()),
                       all((show or {}).get("identical_bodies", {}).values())))
    print("\n".join(out))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="sub", required=True)

    s = sub.add_parser("startup")
    s.add_argument("--url", required=True)
    s.add_argument("--runs", type=int, default=5)
    s.add_argument("--timeout", type=float, default=30)
    s.add_argument("--log")
    s.add_argument("cmd", nargs=argparse.REMAINDER)

    s = sub.add_parser("check")
    s.add_argument("--expect", type=int)
    s.add_argument("--header", action="append", default=[])
    s.add_argument("--diff-dir")
    s.add_argument("targets", nargs="+")

    s = sub.add_parser("load")
    s.add_argument("--case", required=True)
    s.add_argument("--server", required=True)
    s.add_argument("--run", type=int, default=1)
    s.add_argument("--pids", default="")
    s.add_argument("--label-pids", action="append")
    s.add_argument("--out", required=True)
    s.add_argument("wrk", nargs=argparse.REMAINDER)

    s = sub.add_parser("mem")
    s.add_argument("--pids", required=True)

    s = sub.add_parser("smaps")
    s.add_argument("--pids", required=True)

    s = sub.add_parser("sqlcount")
    db = s.add_mutually_exclusive_group(required=True)
    db.add_argument("--mysql", metavar="DBURL",
                    help="mysql://user:pass@host:port of a user allowed SHOW GLOBAL STATUS")
    db.add_argument("--socket", help="the server's socket, connected to as root")
    s.add_argument("--url", required=True)
    s.add_argument("--header", action="append", default=[])
    s.add_argument("--tries", type=int, default=5)

    s = sub.add_parser("report")
    s.add_argument("file")
    s.add_argument("--meta")

    a = p.parse_args()
    for attr in ("cmd", "wrk"):
        v = getattr(a, attr, None)
        if isinstance(v, list) and v and v[0] == "--":
            setattr(a, attr, v[1:])
    return {"startup": cmd_startup, "check": cmd_check, "load": cmd_load, "mem": cmd_mem,
            "smaps": cmd_smaps, "sqlcount": cmd_sqlcount, "report": cmd_report}[a.sub](a)


if __name__ == "__main__":
    sys.exit(main())
