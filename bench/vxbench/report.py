#!/usr/bin/python3
"""vxbench report: raw per-repetition lines -> table, JSON, CSV and a PNG chart.

raw.txt, one line per (datapath, mode, repetition):
  dp mode rep status  F R F4 R4  p50 p99 note
where F, R, F4, R4 are "gbps bytes cpu_us_per_kb big_share retransmits" for
single-stream forward (vm1->vm2), reverse, and 4-stream forward/reverse.
A value of -1 means "not measured" (the case failed).
"""
import argparse, csv, json, os, statistics, subprocess, sys, datetime

FLOW_FIELDS = ["gbps", "bytes", "cpu_us_per_kb", "big_share", "retransmits"]
RUNS = [("1x_fwd", "single stream vm1->vm2"), ("1x_rev", "single stream vm2->vm1"),
        ("4x_fwd", "4 streams vm1->vm2"), ("4x_rev", "4 streams vm2->vm1")]


def parse_raw(path):
    cases = {}
    for line in open(path):
        w = line.split()
        if len(w) < 26:
            continue
        dp, mode, rep, status = w[0], w[1], int(w[2]), w[3]
        vals = [float(x) for x in w[4:24]]
        p50, p99 = float(w[24]), float(w[25])
        note = " ".join(w[26:]).replace("_", " ").strip() if len(w) > 26 else ""
        c = cases.setdefault((dp, mode), {"datapath": dp, "mode": mode, "reps": [], "notes": set()})
        rec = {"status": status, "ping_p50_ms": p50, "ping_p99_ms": p99}
        for i, (run, _) in enumerate(RUNS):
            for j, f in enumerate(FLOW_FIELDS):
                rec[f"{run}_{f}"] = vals[i * 5 + j]
        c["reps"].append(rec)
        if note:
            c["notes"].add(note)
    return cases


def summarize(c):
    keys = [k for k in c["reps"][0] if k != "status"]
    out = {"datapath": c["datapath"], "mode": c["mode"], "repetitions": len(c["reps"]),
           "ok": all(r["status"] == "ok" for r in c["reps"]), "notes": sorted(c["notes"])}
    for k in keys:
        xs = [r[k] for r in c["reps"] if r[k] >= 0]
        out[k] = {"median": statistics.median(xs) if xs else None,
                  "min": min(xs) if xs else None, "max": max(xs) if xs else None}
    return out


def fmt(cell, digits=2):
    m = cell["median"]
    if m is None:
        return "-"
    s = f"{m:.{digits}f}"
    if cell["max"] is not None and cell["max"] != cell["min"]:
        s += f" ({cell['min']:.{digits}f}..{cell['max']:.{digits}f})"
    return s


COLUMNS = [("1x fwd Gb/s", "1x_fwd_gbps", 2), ("1x rev Gb/s", "1x_rev_gbps", 2),
           ("4x fwd Gb/s", "4x_fwd_gbps", 2), ("4x rev Gb/s", "4x_rev_gbps", 2),
           ("us/KB fwd", "1x_fwd_cpu_us_per_kb", 2), ("us/KB rev", "1x_rev_cpu_us_per_kb", 2),
           (">=32K fwd", "1x_fwd_big_share", 2), (">=32K rev", "1x_rev_big_share", 2),
           ("retr fwd", "1x_fwd_retransmits", 0),
           ("ping p50 ms", "ping_p50_ms", 3), ("ping p99 ms", "ping_p99_ms", 3)]


def table(rows):
    head = ["datapath", "mode"] + [c[0] for c in COLUMNS]
    body = [[r["datapath"], r["mode"]] + [fmt(r[k], d) for _, k, d in COLUMNS] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(x.ljust(w) for x, w in zip(b, widths)) for b in body]
    for r in rows:
        for n in r["notes"]:
            lines.append(f"note: {r['datapath']} {r['mode']}: {n}")
        if not r["ok"]:
            lines.append(f"note: {r['datapath']} {r['mode']}: some repetitions failed")
    return "\n".join(lines)


PAIRED = [("1x fwd", "1x_fwd_gbps"), ("1x rev", "1x_rev_gbps"), ("4x fwd", "4x_fwd_gbps"),
          ("4x rev", "4x_rev_gbps"), ("us/KB fwd", "1x_fwd_cpu_us_per_kb"), ("us/KB rev", "1x_rev_cpu_us_per_kb")]


def paired(cases, ref):
    """Each datapath against `ref`, repetition by repetition: the reps of one
    round run back to back (vxbench runs every datapath of a round before the
    next round), so a pair's ratio leaves out what the machine did between
    rounds.  Per column: the median ratio, its min..max, and in how many
    pairs the datapath was at least ref's (throughput) or at most (CPU)."""
    lines = []
    for (dp, mode), c in sorted(cases.items()):
        r = cases.get((ref, mode))
        if dp == ref or not r:
            continue
        cells = []
        for name, k in PAIRED:
            xs = [(a[k], b[k]) for a, b in zip(c["reps"], r["reps"]) if a[k] > 0 and b[k] > 0]
            if not xs:
                cells.append(f"{name} -")
                continue
            q = [a / b for a, b in xs]
            good = sum(1 for v in q if (v <= 1.0 if "us/KB" in name else v >= 1.0))
            cells.append(f"{name} {statistics.median(q):.2f}x ({min(q):.2f}..{max(q):.2f}, {good}/{len(q)})")
        lines.append(f"{dp} / {ref}, {mode}: " + "; ".join(cells))
    if lines:
        lines.insert(0, f"paired ratios against {ref}, round by round: median (min..max, rounds at least "
                        f"{ref}'s throughput or at most its CPU per KB)")
    return "\n".join(lines)


def chart(rows, out):
    modes = sorted({r["mode"] for r in rows})
    dps = list(dict.fromkeys(r["datapath"] for r in rows))
    dat = os.path.join(out, "chart.dat")
    with open(dat, "w") as f:
        f.write("datapath " + " ".join(f"{m}-fwd {m}-rev" for m in modes) + "\n")
        for dp in dps:
            vals = []
            for m in modes:
                r = next((x for x in rows if x["datapath"] == dp and x["mode"] == m), None)
                for k in ("1x_fwd_gbps", "1x_rev_gbps"):
                    v = r[k]["median"] if r and r[k]["median"] is not None else 0
                    vals.append(f"{v:.3f}")
            f.write(dp + " " + " ".join(vals) + "\n")
    ncol = 2 * len(modes)
    plot = f"""
set terminal pngcairo size 1100,600 font ",11" noenhanced
set output '{os.path.join(out, "chart.png")}'
set title 'Single TCP stream through the VXLAN overlay (median of repetitions)'
set ylabel 'Gbit/s'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set key outside right top
set grid ytics
set yrange [0:*]
plot for [i=2:{ncol + 1}] '{dat}' using i:xtic(1) title columnhead(i)
"""
    try:
        subprocess.run(["gnuplot"], input=plot.encode(), check=True)
    except Exception as e:  # the table and files still stand without a chart
        print(f"vxbench: chart not drawn: {e}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("out")
    ap.add_argument("--command", default="vxbench compare")
    ap.add_argument("--check-filled", action="store_true",
                    help="exit 1 unless every datapath passed traffic and every column has a value")
    a = ap.parse_args()
    cases = parse_raw(a.raw)
    rows = [summarize(c) for c in cases.values()]
    meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "command": a.command,
            "kernel": os.uname().release, "cpus": os.cpu_count()}
    json.dump({"meta": meta, "results": rows}, open(os.path.join(a.out, "results.json"), "w"), indent=1)
    with open(os.path.join(a.out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["datapath", "mode", "ok"] + [k for _, k, _ in COLUMNS])
        for r in rows:
            w.writerow([r["datapath"], r["mode"], r["ok"]] + [r[k]["median"] for _, k, _ in COLUMNS])
    chart(rows, a.out)
    print(table(rows))
    pr = paired(cases, "kernel")
    if pr:
        print("\n" + pr)
    print(f"\nfiles: {a.out}/results.json results.csv chart.png  ({meta['date']}, kernel {meta['kernel']})")
    if a.check_filled:
        missing = []
        for r in rows:
            if any(n.startswith("known limitation") for n in r["notes"]):
                # A documented failure of that datapath, detected from its own log:
                # it still must have answered ping through the overlay.
                if r["ping_p50_ms"]["median"] is None:
                    missing.append(f"{r['datapath']} {r['mode']}: no ping through the overlay")
                continue
            if not r["ok"]:
                missing.append(f"{r['datapath']} {r['mode']}: failed")
            for _, k, _ in COLUMNS:
                if r[k]["median"] is None:
                    missing.append(f"{r['datapath']} {r['mode']}: {k} empty")
            for k in ("1x_fwd_gbps", "1x_rev_gbps", "4x_fwd_gbps", "4x_rev_gbps"):
                if not r[k]["median"]:
                    missing.append(f"{r['datapath']} {r['mode']}: {k} passed no traffic")
        if missing:
            print("vxbench: smoke check failed:\n  " + "\n  ".join(missing), file=sys.stderr)
            sys.exit(1)
        print("vxbench: smoke check passed: every datapath passed traffic, every column filled")


if __name__ == "__main__":
    main()
