"""The tables of bench/create.sh from its create.jsonl (also of a run that stopped early):

    python3 bench/create_report.py bench/results/<run>/create.jsonl
"""
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def by(impl, key, val):
    return next(r for r in rows if r["implementation"] == impl and r.get(key) == val)
ok = [r for r in rows if "case" not in r and r["implementation"] == "openkeel"][0]
mg = [r for r in rows if "case" not in r and r["implementation"] == "magnum"][0]
print(f"Key generation alone (RSA-{ok['bits']}); Magnum: {mg['library']}\n")
print("| | OpenKeel | Magnum | Magnum / OpenKeel |")
print("|---|---:|---:|---:|")
for label, key in [("one key, median wall ms", ("key", "median_ms")),
                   ("one key, mean CPU ms", ("key_cpu_ms_mean",)),
                   ("cluster certificate set, median wall ms", ("cluster_set", "median_ms")),
                   ("cluster certificate set, mean CPU ms", ("cluster_set_cpu_ms_mean",))]:
    o = ok[key[0]] if len(key) == 1 else ok[key[0]][key[1]]
    m = mg[key[0]] if len(key) == 1 else mg[key[0]][key[1]]
    print(f"| {label} | {o:.1f} | {m:.1f} | {m / o:.2f} |")
print()
print("Conductor: cast -> `magnum.cluster.create` pending notification; CPU of the conductor's")
print("process tree per create; `busy`: the whole machine's CPU use (both cores) during the case\n")
print("| case | round | impl | creates | median ms | p90 ms | max ms | batch ms | CPU ms/create | busy | RSS MiB |")
print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
runs = [r for r in rows if "case" in r]
cases = list(dict.fromkeys(r["case"] for r in runs))
for case in cases:
    for r in [r for r in runs if r["case"] == case]:
        l = r["latency"]
        b = r.get("batch_ms", {}).get("median_ms")
        print(f"| {case} | {r.get('round', 1)} | {r['implementation']} | {r['creates']} | {l['median_ms']:.0f} | "
              f"{l['p90_ms']:.0f} | {l['max_ms']:.0f} | {'' if b is None else f'{b:.0f}'} | "
              f"{r['cpu_ms_per_create']:.0f} | {'' if 'machine_busy' not in r else format(r['machine_busy'] * 100, '.0f') + '%'} | {r['rss_kib'] / 1024:.1f} |")
print()
def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2
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
