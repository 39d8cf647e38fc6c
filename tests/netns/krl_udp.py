#!/usr/bin/python3
"""Numbered UDP flows for test_kdp_rules.sh.

recv OUT PORT...      bind the ports, append "PORT SEQ" per datagram to OUT
                      (flushed each line) until SIGTERM.
send DST PORT COUNT [GAP_US]
                      COUNT datagrams "SEQ" to DST:PORT.
marked DST MARKED OTHER COUNT AT_ADD AT_DEL CMD_ADD CMD_DEL
                      alternates datagrams to ports MARKED and OTHER, seq
                      1..COUNT each; before seq AT_ADD it runs CMD_ADD (a
                      shell line) and waits for it, before AT_DEL CMD_DEL,
                      and prints "added A" / "deleted D": the first seq sent
                      after each command returned.
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


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "recv":
        recv(a[1], a[2:])
    elif a[0] == "send":
        send(a[1], int(a[2]), int(a[3]), int(a[4]) if len(a) > 4 else 1000)
    elif a[0] == "marked":
        marked(a[1], int(a[2]), int(a[3]), int(a[4]), int(a[5]), int(a[6]), a[7], a[8])
    else:
        sys.exit("usage: see the docstring")
