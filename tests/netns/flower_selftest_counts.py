#!/usr/bin/python3
"""tc_check_packets for test_flower_selftests.sh, every rule of a case at once.

usage: flower_selftest_counts.py "H=N[/F] ..." VXCTL-COMMAND...

VXCTL-COMMAND is `vxctl ... -j -s filter show dev D DIR` (tc's JSON).  Runs
it until every rule of handle H counted exactly N packets, F of them on
the fast path (Sent hardware, hw_packets) when /F is given (10 s at most,
generous for a loaded machine: frames reach the counters through a worker
or an upcall), then once more 0.3 s later, so a count that goes past its
value is caught too.  Prints what differs then (nothing: all equal).
"""
import json
import subprocess
import sys
import time

want = {}
for w in sys.argv[1].split():
    h, n = w.split("=")
    want[int(h)] = tuple(int(x) for x in n.split("/"))


def diff():
    got = {}
    out = subprocess.run(sys.argv[2:], check=True, capture_output=True).stdout
    for r in json.loads(out):
        o = r.get("options")
        if o and "handle" in o:
            st = o["actions"][0]["stats"]
            got[o["handle"]] = (st["packets"], st.get("hw_packets", 0))
    bad = []
    for h, n in sorted(want.items()):
        g = got.get(h)
        if g is None or g[:len(n)] != n:
            bad.append("handle %d: %s, want %s" % (h, "no rule" if g is None else "%d packets (%d fast)" % g,
                                                  "%d packets" % n[0] + (" (%d fast)" % n[1] if len(n) > 1 else "")))
    return "; ".join(bad)


end = time.monotonic() + 10
while diff() and time.monotonic() < end:
    time.sleep(0.05)
time.sleep(0.3)
print(diff())
