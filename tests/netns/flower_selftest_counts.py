#!/usr/bin/python3
"""tc_check_packets for test_flower_selftests.sh, every rule of a case at once.

usage: flower_selftest_counts.py "H=N ..." VXCTL-COMMAND...

VXCTL-COMMAND is `vxctl ... -j -s filter show dev D DIR` (tc's JSON).  Runs
it until every rule of handle H counted exactly N packets (10 s at most,
generous for a loaded machine: frames reach the counters through a worker
or an upcall), then once more 0.3 s later, so a count that goes past its
value is caught too.  Prints what differs then (nothing: all equal).
"""
import json
import subprocess
import sys
import time

want = {int(h): int(n) for h, n in (w.split("=") for w in sys.argv[1].split())}


def diff():
    got = {}
    out = subprocess.run(sys.argv[2:], check=True, capture_output=True).stdout
    for r in json.loads(out):
        o = r.get("options")
        if o and "handle" in o:
            got[o["handle"]] = o["actions"][0]["stats"]["packets"]
    return "; ".join("handle %d: %s packets, want %d" % (h, got.get(h, "no rule,"), n)
                     for h, n in sorted(want.items()) if got.get(h) != n)


end = time.monotonic() + 10
while diff() and time.monotonic() < end:
    time.sleep(0.05)
time.sleep(0.3)
print(diff())
