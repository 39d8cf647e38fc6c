#!/usr/bin/python3
"""Frame sender for test_flower_selftests.sh: one scapy process for a whole
run (scapy takes about a second to import; the test sends ~100 batches).

usage: flower_selftest_send.py IFACE SRC_MAC DST_MAC

Reads one line per batch on stdin: a Python expression over the helpers
below that gives a frame or a list of frames; sends them on IFACE in
order and answers "sent N" (or "error ...") on stdout, flushed, so the
test knows the frames left before it reads counters.

The helpers build what the kernel selftests make with mausezahn: the
source and destination MACs are the two VMs' (the selftests' $h1mac and
$h2mac), each frame padded with PAD bytes of payload (mausezahn's -p).
"""
import struct
import sys

from scapy.all import IP, TCP, UDP, Dot1Q, Ether, IPv6, Raw, sendp

IFACE, SRC, DST = sys.argv[1], sys.argv[2], sys.argv[3]
# IP protocol of the selftests' "-t ip" frames (no L4 header): 253, one
# of RFC 3692's experiment numbers, parsed by nobody.
EXP_PROTO = 253


def eth(**kw):
    kw.setdefault("src", SRC)
    kw.setdefault("dst", DST)
    return Ether(**kw)


def ip4(pad=64, src="192.0.2.1", dst="192.0.2.2", frag=0, mf=False, smac=None, dmac=None, **kw):
    """mausezahn -t ip: an IPv4 header and PAD bytes; frag is the offset
    field (8-byte units, mausezahn's frag=), mf the more-fragments flag."""
    e = eth(**{k: v for k, v in (("src", smac), ("dst", dmac)) if v})
    return e / IP(src=src, dst=dst, proto=EXP_PROTO, frag=frag, flags="MF" if mf else 0, **kw) / Raw(b"\0" * pad)


def vlan(prio, vid, dst="192.0.2.11", pad=64):
    """mausezahn -Q PRIO:VID -B DST -t ip."""
    return eth() / Dot1Q(prio=prio, vlan=vid) / IP(src="192.0.2.1", dst=dst, proto=EXP_PROTO) / Raw(b"\0" * pad)


def lse(label, tc, bos, ttl):
    """One MPLS label stack entry, as the selftest's mpls_lse() writes it."""
    return struct.pack("!I", (label << 12) | (tc << 9) | (bos << 8) | ttl)


def mpls(*entries, pad=64):
    """Ethertype 0x8847 then the entries (each a lse() tuple), then PAD bytes."""
    return eth(type=0x8847) / Raw(b"".join(lse(*e) for e in entries) + b"\0" * pad)


def l4(family, proto, sport, dport, pad=100):
    """mausezahn -4|-6 -t udp|tcp "sp=..,dp=..": a TCP frame is a SYN."""
    if family == 4:
        net = IP(src="192.0.2.1", dst="192.0.2.2")
    else:
        net = IPv6(src="2001:db8:1::1", dst="2001:db8:1::2")
    hdr = UDP(sport=sport, dport=dport) if proto == "udp" else TCP(sport=sport, dport=dport, flags="S")
    return eth() / net / hdr / Raw(b"\0" * pad)


def main():
    env = {k: v for k, v in globals().items() if not k.startswith("_")}
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            frames = eval(line, env)
            if not isinstance(frames, list):
                frames = [frames]
            sendp(frames, iface=IFACE, verbose=False)
            print("sent %d" % len(frames), flush=True)
        except Exception as e:  # the test reports the line that failed
            print("error %s: %s" % (type(e).__name__, e), flush=True)


main()
