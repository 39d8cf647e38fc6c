#!/usr/bin/python3
"""Numbered UDP flows for test_kdp_rules.sh and test_kdp_rules_vx.sh.

recv OUT PORT...      bind the ports, append "PORT SEQ" per datagram to OUT
                      (flushed each line) until SIGTERM.
send DST PORT COUNT [GAP_US]
                      COUNT datagrams "SEQ" to DST:PORT.
sports DST PORT COUNT the same, each from a socket (a source port) of its own.
marked DST MARKED OTHER COUNT AT_ADD AT_DEL CMD_ADD CMD_DEL
                      alternates datagrams to ports MARKED and OTHER, seq
                      1..COUNT each; before seq AT_ADD it runs CMD_ADD (a
                      shell line) and waits for it, before AT_DEL CMD_DEL,
                      and prints "added A" / "deleted D": the first seq sent
                      after each command returned.
check-marked RX MARKS STATS PORT|- LABEL
                      judges a `marked 5001 5002 1500 ...` run from what
                      `recv` wrote (RX), what `marked` printed (MARKS) and
                      `vxctl -j stats` after it (STATS): no marked
                      datagram delivered from the one sent after the add
                      returned to the one before the del returned, none
                      lost after, none lost well before the add; the other
                      flow loses at most PORT's rules upcall_drops (- : it
                      loses none).  Exits non-zero with the reason; prints
                      LABEL and the figures.
"""
import os
import select
import signal
import socket
import subprocess
import sys
import time


def recv(out, ports):
    socks = []
    for p in ports:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.bind(("0.0.0.0", int(p)))
        socks.append((s, p))
    f = open(out, "a", buffering=1)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    while True:
        r, _, _ = select.select([s for s, _ in socks], [], [], 1.0)
        for s in r:
            data = s.recv(2048)
            port = s.getsockname()[1]
            f.write("%d %s\n" % (port, data.split(b" ")[0].decode()))


def send(dst, port, count, gap_us=1000):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(1, count + 1):
        s.sendto(b"%d pad" % i, (dst, port))
        time.sleep(gap_us / 1e6)


def sports(dst, port, count, gap_us=1000):
    for i in range(1, count + 1):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # a new source port each
        s.sendto(b"%d pad" % i, (dst, port))
        s.close()
        time.sleep(gap_us / 1e6)


def marked(dst, mport, oport, count, at_add, at_del, cmd_add, cmd_del):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(1, count + 1):
        if i == at_add:
            subprocess.run(cmd_add, shell=True, check=True)
            print("added", i, flush=True)
        if i == at_del:
            subprocess.run(cmd_del, shell=True, check=True)
            print("deleted", i, flush=True)
        s.sendto(b"%d m" % i, (dst, mport))
        s.sendto(b"%d o" % i, (dst, oport))
        time.sleep(0.001)


def check_marked(rx, marks, stats, port, label):
    """Used by test_kdp_rules.sh and test_kdp_rules_vx.sh (see the docstring)."""
    import json
    pos = dict(l.split()[:2] for l in open(marks) if l.startswith(("added", "deleted")))
    add, dele = int(pos["added"]), int(pos["deleted"])
    drops = 0
    if port != "-":
        st = json.load(open(stats))
        drops = [p for p in st["ports"] if p["name"] == port][0]["rules"]["upcall_drops"]
    got = {}
    for l in open(rx):
        p, s = l.split()
        got.setdefault(int(p), set()).add(int(s))
    m, o = got.get(5001, set()), got.get(5002, set())
    late = sorted(s for s in m if add <= s < dele)
    assert not late, "marked datagrams sent after filter add returned were delivered: %s" % late[:10]
    missing_after = sorted(s for s in range(dele, 1501) if s not in m)
    assert not missing_after, "marked datagrams sent after filter del returned were lost: %s" % missing_after[:10]
    # A frame is lost only when its upcall is refused (the port's token
    # bucket: iperf3's window of missed GSO frames after a rule change can
    # take it all), and every such refusal is counted.
    lost_o = sorted(set(range(1, 1501)) - o)
    assert len(lost_o) <= drops, "the other flow lost %d datagrams (%s), only %d upcalls refused" % (
        len(lost_o), lost_o[:10], drops)
    missing_before = sorted(s for s in range(1, add - 20) if s not in m)
    assert not missing_before, "marked datagrams before the rule were lost: %s" % missing_before[:10]
    print("marked (%s): %d delivered before add at %d, none in [%d, %d), all %d after del; other flow %d/1500, "
          "upcalls refused%s: %d" % (label, len([s for s in m if s < add]), add, add, dele, 1501 - dele,
                                    len(o), " on " + port + " (counted)" if port != "-" else "", drops))


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "recv":
        recv(a[1], a[2:])
    elif a[0] == "send":
        send(a[1], int(a[2]), int(a[3]), int(a[4]) if len(a) > 4 else 1000)
    elif a[0] == "sports":
        sports(a[1], int(a[2]), int(a[3]))
    elif a[0] == "marked":
        marked(a[1], int(a[2]), int(a[3]), int(a[4]), int(a[5]), int(a[6]), a[7], a[8])
    elif a[0] == "check-marked":
        check_marked(a[1], a[2], a[3], a[4], a[5])
    else:
        sys.exit("usage: see the docstring")
