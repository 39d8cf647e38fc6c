#!/usr/bin/python3
"""vxbench micro: run the micro-benchmarks of bench/ and print one table.

Each bench program prints its own detailed table (kept below the summary);
this picks one headline figure per line of it.  A figure that cannot be
found prints as "-" rather than being guessed."""
import os, re, subprocess, sys

build, top = sys.argv[1], sys.argv[2]
os.chdir(top)
BENCHES = [("parse", ["bench_parse", "bench/data/vxlan_tcp4.pcap", "bench/data/tcp4.pcap"]),
           ("checksum", ["bench_csum"]),
           ("gro", ["bench_gro"]),
           ("gso", ["bench_gso"]),
           ("fdb", ["bench_fdb"]),
           ("classifier", ["bench_classifier"])]


def run(args):
    path = os.path.join(build, "bench", args[0])
    if not os.access(path, os.X_OK):
        return f"(missing: {path})"
    try:
        return subprocess.run([path] + args[1:], capture_output=True, text=True, timeout=300).stdout
    except subprocess.TimeoutExpired:
        return "(timed out)"


def rows_for(name, out):
    rows = []
    if name == "parse":
        for m in re.finditer(r"^(\S+\.pcap)\s+\d+\s+\d+\s+\d+\s+([\d.]+)\s+([\d.]+)", out, re.M):
            rows.append((f"flow_extract {os.path.basename(m.group(1))}", f"{m.group(2)} Mpps", f"{m.group(3)} ns/pkt"))
    elif name == "checksum":
        for m in re.finditer(r"^csum_partial (\d+)\s+([\d.]+)\s+([\d.]+)", out, re.M):
            rows.append((f"csum_partial {m.group(1)} B", f"{m.group(3)} GB/s", f"plain loop {m.group(2)} GB/s"))
        for m in re.finditer(r"^csum_pkt (.+?)\s+-\s+([\d.]+)", out, re.M):
            rows.append((f"csum_pkt {m.group(1)}", f"{m.group(2)} GB/s", ""))
    elif name == "gro":
        trace = None
        for line in out.splitlines():
            t = re.match(r"trace=(\S+)", line)
            if t:
                trace = os.path.basename(t.group(1))
            m = re.match(r"(burst32|held)\s+(verify|trusted)\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+(\d+)", line)
            if m and trace:
                rows.append((f"gro {trace} {m.group(1)} csum={m.group(2)}", f"{m.group(3)} Mpps (median)",
                             f"{m.group(4)} B/frame out"))
    elif name == "gso":
        for m in re.finditer(r"^(\S+)\s+\((.*?)\)\s+(\d+)\s+([\d.]+)\s+([\d.]+)", out, re.M):
            rows.append((f"gso {m.group(1)} ({m.group(2)})", f"{m.group(4)} Mpps out", f"{m.group(5)} Gbit/s payload"))
    elif name == "fdb":
        for m in re.finditer(r"^entries\s+(\d+)\s+learn\s+([\d.]+) M/s\s+lookup-hit\s+([\d.]+) M/s.*fwd_frame\(unicast\)\s+([\d.]+) M/s", out, re.M):
            rows.append((f"fdb {m.group(1)} entries", f"{m.group(3)} M lookups/s", f"fwd_frame {m.group(4)} M/s"))
    elif name == "classifier":
        for m in re.finditer(r"^(\d+(?:\+1)?)\s+(\d+)\s+(friendly|busting|last/frnd|last/bust)\s+(on|off)\s+([\d.]+)\s+([\d.]+)", out, re.M):
            rows.append((f"flower {m.group(1)} rules {m.group(2)} masks {m.group(3)} cache {m.group(4)}",
                         f"{m.group(5)} M lookups/s", f"{m.group(6)} ns/lookup"))
    return rows or [(name, "-", "(no figure found)")]


outputs, summary = [], []
for name, args in BENCHES:
    out = run(args)
    outputs.append((name, out))
    summary += rows_for(name, out)
w = [max(len(r[i]) for r in summary) for i in range(3)]
print("vxbench micro (one core; figures drift with load: compare within one run)\n")
for r in summary:
    print("  ".join(c.ljust(w[i]) for i, c in enumerate(r)))
for name, out in outputs:
    print(f"\n== {name}\n{out.rstrip()}")
