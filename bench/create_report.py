"""The tables of bench/create.sh from its create.jsonl (also of a run that stopped early), and of
bench/keygen.sh from its keygen.jsonl:

    python3 bench/create_report.py bench/results/<run>/create.jsonl
"""
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def by(impl, key, val):
    return next(r for r in rows if r["implementation"] == impl and r.get(key) == val)
def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2
# Key generation alone (bench/keygen.sh, and the first step of bench/create.sh): one line per
# implementation and round, the n-th line of an implementation being its round n.
gen = {impl: [r for r in rows if "case" not in r and r["implementation"] == impl]
       for impl in ("openkeel", "magnum")}
measures = [("one RSA key", "key", "key_cpu_ms_mean"),
            ("certificate set, one after the other (x509 operations)", "cluster_set",
             "cluster_set_cpu_ms_mean"),
            ("conductor's generate_certificates_to_cluster", "conductor_certs",
             "conductor_certs_cpu_ms_mean")]
measures = [m for m in measures if all(m[1] in r for rs in gen.values() for r in rs)]
if gen["openkeel"] and gen["magnum"]:
    print(f"Key generation alone (RSA-{gen['openkeel'][0]['bits']}); "
          f"Magnum: {gen['magnum'][0]['library']}; wall ms (median, range) and the mean CPU ms "
          "(generating thread; the conductor's function: the whole process)\n")
    print("| measure | round | impl | n | median ms | min–max ms | CPU ms |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for label, key, cpu in measures:
        for impl, rs in gen.items():
            for i, r in enumerate(rs, 1):
                s = r[key]
                print(f"| {label} | {i} | {impl} | {s['n']} | {s['median_ms']:.1f} | "
                      f"{s['min_ms']:.1f}–{s['max_ms']:.1f} | {r[cpu]:.1f} |")
    print()
    print("Magnum / OpenKeel (median over rounds; above 1 = OpenKeel better)\n")
    print("| measure | median wall | CPU |")
    print("|---|---:|---:|")
    for label, key, cpu in measures:
        def m(impl, f):
            return med([f(r) for r in gen[impl]])
        wall = m("magnum", lambda r: r[key]["median_ms"]) / m("openkeel", lambda r: r[key]["median_ms"])
        c = m("magnum", lambda r: r[cpu]) / m("openkeel", lambda r: r[cpu])
        print(f"| {label} | {wall:.2f} | {c:.2f} |")
    print()
runs = [r for r in rows if "case" in r]
if not runs:
    sys.exit(0)
print("Conductor: cast -> `magnum.cluster.create` pending notification; CPU of the conductor's")
print("process tree per create; `busy`: the whole machine's CPU use (both cores) during the case\n")
print("| case | round | impl | creates | median ms | p90 ms | max ms | batch ms | CPU ms/create | busy | RSS MiB |")
print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
cases = list(dict.fromkeys(r["case"] for r in runs))
for case in cases:
    for r in [r for r in runs if r["case"] == case]:
        l = r["latency"]
        b = r.get("batch_ms", {}).get("median_ms")
        print(f"| {case} | {r.get('round', 1)} | {r['implementation']} | {r['creates']} | {l['median_ms']:.0f} | "
              f"{l['p90_ms']:.0f} | {l['max_ms']:.0f} | {'' if b is None else f'{b:.0f}'} | "
              f"{r['cpu_ms_per_create']:.0f} | {'' if 'machine_busy' not in r else format(r['machine_busy'] * 100, '.0f') + '%'} | {r['rss_kib'] / 1024:.1f} |")
print()
print("Magnum / OpenKeel (median over rounds; above 1 = OpenKeel better)\n")
print("| case | median latency | batch time | CPU per create |")
print("|---|---:|---:|---:|")
for case in cases:
    def m(impl, f):
        return med([f(r) for r in runs if r["case"] == case and r["implementation"] == impl])
    lat = m("magnum", lambda r: r["latency"]["median_ms"]) / m("openkeel", lambda r: r["latency"]["median_ms"])
    cpu = m("magnum", lambda r: r["cpu_ms_per_create"]) / m("openkeel", lambda r: r["cpu_ms_per_create"])
    if all("batch_ms" in r for r in runs if r["case"] == case):
        bt = m("magnum", lambda r: r["batch_ms"]["median_ms"]) / m("openkeel", lambda r: r["batch_ms"]["median_ms"])
        bts = f"{bt:.2f}"
    else:
        bts = ""
    print(f"| {case} | {lat:.2f} | {bts} | {cpu:.2f} |")
