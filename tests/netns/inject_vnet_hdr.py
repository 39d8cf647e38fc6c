#!/usr/bin/python3
"""Frames with lying offload metadata (virtio_net_hdr) into a running
vxswitchd's tap, the way a VM's driver hands them over, and what became of
each: refused by the kernel, dropped by it, or read by vxswitchd and then
counted under a named drop reason or forwarded.

  inject_vnet_hdr.py measure DEV VXCTL SOCK PORT COPIES [CASE...]
  inject_vnet_hdr.py burst DEV ROUNDS

Runs in the VM's namespace.  DEV is the tap's netdev there; the frames go
out of an AF_PACKET socket with PACKET_VNET_HDR, so each carries the
virtio_net_hdr given here into the kernel (virtio_net_hdr_to_skb() checks
part of it and builds the skb's GSO/checksum state from it), and tun hands
vxswitchd a virtio_net_hdr made back from that skb
(virtio_net_hdr_from_skb()): whatever the kernel lets through reaches the
switch's vnet_hdr_validate().

Each case is sent COPIES times on its own, and the counters are read
before and after it (vxctl -j stats through SOCK: PORT's rx_frames, every
drop reason; DEV's tx_dropped):
  sent = refused (sendto failed) + kernel_dropped (DEV tx_dropped)
       + read (PORT rx_frames)
  read = dropped by vxswitchd (by reason) + forwarded
`measure` prints one JSON object per case on a line: name, expect, sent,
refused (with errno), kernel_dropped, read, reasons {reason: count},
forwarded, and verdict ("ok" when it came out as `expect` says -- the
catalogue's oracle below: what the kernel or vxswitchd must make of the
frame, and why -- and adds up); exit 1 if one did not.  `burst` sends the
whole catalogue ROUNDS times without reading counters (under load) and
prints "reason count" lines of what to expect (see burst())."""
import errno
import json
import socket
import struct
import subprocess
import sys
import time

from scapy.all import IP, TCP, UDP, Ether, IPv6, Raw, conf  # noqa: E402

conf.verb = 0
SOL_PACKET = 263
PACKET_VNET_HDR = 15
F_NEEDS_CSUM = 1
GSO_NONE, GSO_TCPV4, GSO_UDP, GSO_TCPV6, GSO_UDP_L4, GSO_ECN = 0, 1, 3, 4, 5, 0x80
# To a MAC and addresses nobody has: the switch floods what it forwards,
# the other VM ignores it (not its MAC), and nobody answers, so no frame
# but the catalogue's crosses the tap while a case is counted.
SRC, DST = "02:00:00:00:00:01", "02:00:00:00:00:99"
A4, B4 = "192.0.2.1", "192.0.2.99"
A6, B6 = "2001:db8:1::1", "2001:db8:1::99"


def pseudo_sum(frame, l3, proto, l4len):
    """The partial checksum a stack leaves in the L4 checksum field for
    NEEDS_CSUM: the folded pseudo-header sum (not complemented)."""
    if frame[12:14] == b"\x86\xdd":
        words = frame[l3 + 8:l3 + 40] + struct.pack("!IxxxB", l4len, proto)
    else:
        words = frame[l3 + 12:l3 + 20] + struct.pack("!xBH", proto, l4len)
    s = sum(struct.unpack("!%dH" % (len(words) // 2), words))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def frame(l3="4", l4="tcp", payload=4000, seed=True):
    """A frame vm1 -> vm2 with its L4 checksum field holding the partial
    sum (as for NEEDS_CSUM) when seed, and its offsets."""
    ip = IP(src=A4, dst=B4) if l3 == "4" else IPv6(src=A6, dst=B6)
    l4h = TCP(sport=40000, dport=5999, flags="A", seq=1) if l4 == "tcp" else UDP(sport=40000, dport=5999)
    f = bytearray(bytes(Ether(src=SRC, dst=DST) / ip / l4h / Raw(bytes(payload))))
    l3ofs = 14
    l4ofs = 14 + (20 if l3 == "4" else 40)
    proto, coff, hlen = (6, 16, 20) if l4 == "tcp" else (17, 6, 8)
    if seed:
        f[l4ofs + coff:l4ofs + coff + 2] = struct.pack("!H", pseudo_sum(bytes(f), l3ofs, proto, len(f) - l4ofs))
    return bytes(f), l4ofs, coff, l4ofs + hlen


def vnet(flags=0, gso=GSO_NONE, hdr_len=0, gso_size=0, start=0, off=0):
    return struct.pack("<BBHHHH", flags, gso, hdr_len, gso_size, start, off)


def cases():
    """(name, expect, virtio_net_hdr, frame).  expect is one of
    refused:ERRNO (sendto fails), kernel_dropped (the kernel takes it and
    drops it before tun), forwarded (vxswitchd forwards it: the kernel
    made the metadata honest), or a vxswitchd drop reason."""
    t4, l4, co, pl = frame("4", "tcp")
    t6, l6, co6, pl6 = frame("6", "tcp")
    u4, lu, cou, plu = frame("4", "udp")
    s4, ls, cos, pls = frame("4", "tcp", payload=100)
    tso4 = dict(flags=F_NEEDS_CSUM, gso=GSO_TCPV4, hdr_len=pl, gso_size=1398, start=l4, off=co)
    uso = dict(flags=F_NEEDS_CSUM, gso=GSO_UDP_L4, hdr_len=plu, gso_size=1000, start=lu, off=cou)
    K, R = "kernel_dropped", "refused:EINVAL"
    out = [
        # The honest ones, controls: TSO and USO frames of 4000 bytes and a
        # NEEDS_CSUM one pass whole and are forwarded (cut by our GSO).
        ("tso4_valid", "forwarded", vnet(**tso4), t4),
        ("tso4_ecn_valid", "forwarded", vnet(**dict(tso4, gso=GSO_TCPV4 | GSO_ECN)), t4),
        ("tso6_valid", "forwarded", vnet(F_NEEDS_CSUM, GSO_TCPV6, pl6, 1378, l6, co6), t6),
        ("uso4_valid", "forwarded", vnet(**uso), u4),
        ("csum_partial_valid", "forwarded", vnet(F_NEEDS_CSUM, GSO_NONE, 0, 0, ls, cos), s4),
        # TSO metadata that does not match the frame.  virtio_net_hdr_to_skb()
        # refuses a csum_offset that is not the GSO type's (16 TCP, 6 UDP) and
        # a GSO type whose protocol is not the frame's when it can tell; the
        # rest it takes, and GSO (validate_xmit_skb -> tcp/udp_gso_segment,
        # which checks a DODGY skb's headers) drops it before tun.
        ("tcpv4_on_udp", K, vnet(**dict(tso4, start=lu, off=16)), u4),
        ("tcpv4_on_udp_udp_csum", R, vnet(**dict(tso4, start=lu, off=6)), u4),
        ("tcpv4_on_ipv6", K, vnet(**dict(tso4, start=l6, off=co6)), t6),
        ("tcpv6_on_ipv4", R, vnet(**dict(tso4, gso=GSO_TCPV6)), t4),
        ("udp_l4_on_tcp", R, vnet(**dict(tso4, gso=GSO_UDP_L4)), t4),
        ("udp_l4_on_tcp_udp_csum", K, vnet(**dict(tso4, gso=GSO_UDP_L4, off=6)), t4),
        ("gso_type_unknown", R, vnet(**dict(tso4, gso=2)), t4),
        ("ecn_on_udp_l4", R, vnet(F_NEEDS_CSUM, GSO_UDP_L4 | GSO_ECN, plu, 1000, lu, cou), u4),
        ("ecn_without_gso", R, vnet(F_NEEDS_CSUM, GSO_ECN, 0, 0, l4, co), t4),
        # Legacy UFO: tun does not offer it, so the kernel fragments the
        # datagram itself: vxswitchd reads three honest IPv4 fragments.
        ("ufo_legacy", "kernel_fragments:3", vnet(**dict(tso4, gso=GSO_UDP, start=lu, off=cou)), u4),
        # GSO without NEEDS_CSUM: tcp4_gso_segment() seeds the checksum and
        # makes it CHECKSUM_PARTIAL: honest by the time tun reads it.
        ("gso_without_needs_csum", "forwarded", vnet(**dict(tso4, flags=0)), t4),
        # gso_size 0 or huge, or past the payload.
        ("gso_size_0", R, vnet(**dict(tso4, gso_size=0)), t4),
        ("gso_size_65535", R, vnet(**dict(tso4, gso_size=65535)), t4),
        # payload <= gso_size: the kernel drops the GSO state ("not really
        # GSO"), so vxswitchd reads a 4054-byte plain frame, bigger than
        # the underlay takes unsegmented.
        ("gso_size_past_payload", "mtu_exceeded", vnet(**dict(tso4, gso_size=5000)), t4),
        # Valid metadata, but 4000 one-byte segments: more than our GSO cuts.
        ("gso_size_1_tcp", "gso_unsupported", vnet(**dict(tso4, gso_size=1)), t4),
        ("udp_l4_300_segments", R, vnet(F_NEEDS_CSUM, GSO_UDP_L4, plu, 13, lu, cou), u4),
        # hdr_len or csum_start past the end (hdr_len never reaches us: tun
        # writes skb_headlen() there), csum_offset outside the L4 header.
        ("hdr_len_past_end", R, vnet(**dict(tso4, hdr_len=9000)), t4),
        ("hdr_len_past_end_no_gso", R, vnet(F_NEEDS_CSUM, GSO_NONE, 9000, 0, ls, cos), s4),
        ("csum_start_past_end", R, vnet(F_NEEDS_CSUM, GSO_NONE, 0, 0, len(s4) + 10, cos), s4),
        ("csum_start_in_ip_header", R, vnet(F_NEEDS_CSUM, GSO_NONE, 0, 0, 14, 10), s4),
        ("tso_csum_offset_udp", R, vnet(**dict(tso4, off=6)), t4),
        ("tso_csum_start_in_payload", K, vnet(**dict(tso4, start=pl + 8)), t4),
        # Without GSO the kernel checks only that the field lies in the
        # frame: these reach vxswitchd, whose vnet_hdr_validate() names them.
        ("csum_start_at_end", "vnet_hdr_csum_start", vnet(F_NEEDS_CSUM, GSO_NONE, 0, 0, len(s4) - 2, 0), s4),
        ("csum_start_in_payload", "vnet_hdr_csum_start", vnet(F_NEEDS_CSUM, GSO_NONE, 0, 0, pls + 8, 16), s4),
        ("csum_offset_in_payload", "vnet_hdr_csum_offset", vnet(F_NEEDS_CSUM, GSO_NONE, 0, 0, ls, 40), s4),
        ("csum_offset_udp_on_tcp", "vnet_hdr_csum_offset", vnet(F_NEEDS_CSUM, GSO_NONE, 0, 0, ls, 6), s4),
        ("csum_udp_offset_on_udp_in_tcp_slot", "vnet_hdr_csum_offset",
         vnet(F_NEEDS_CSUM, GSO_NONE, 0, 0, lu, 16), frame("4", "udp", payload=100)[0]),
    ]
    return out


class Counters:
    def __init__(self, dev, vxctl, sock, port):
        self.dev, self.vxctl, self.sock, self.port = dev, vxctl, sock, port

    def read(self):
        d = json.loads(subprocess.check_output([self.vxctl, "--socket", self.sock, "-j", "stats"]))
        drops = {}
        for src in [d["drops"]] + [p["drops"] for p in d["ports"]]:
            for k, v in src.items():
                drops[k] = drops.get(k, 0) + v
        rx = [p for p in d["ports"] if p["name"] == self.port][0]["rx_frames"]
        with open("/sys/class/net/%s/statistics/tx_dropped" % self.dev) as f:
            txd = int(f.read())
        return rx, drops, txd

    def settled(self):
        """Counters once they have not moved for 300 ms (the worker has read
        the tap; on a loaded machine, with ASan, it may lag by tens of ms)."""
        last, still = self.read(), 0
        for _ in range(100):
            time.sleep(0.1)
            now = self.read()
            still = still + 1 if now == last else 0
            if still == 3:
                return now
            last = now
        return last


def run_case(s, ctr, name, expect, hdr, frm, copies):
    before = ctr.settled()
    refused, errs = 0, {}
    for _ in range(copies):
        try:
            s.send(hdr + frm)
        except OSError as e:
            refused += 1
            errs[errno.errorcode.get(e.errno, str(e.errno))] = 1
    after = ctr.settled()
    read = after[0] - before[0]
    reasons = {k: v - before[1].get(k, 0) for k, v in after[1].items() if v != before[1].get(k, 0)}
    return {"name": name, "expect": expect, "sent": copies, "refused": refused,
            "errno": ",".join(sorted(errs)), "kernel_dropped": after[2] - before[2], "read": read,
            "reasons": reasons, "forwarded": read - sum(reasons.values())}


def verdict(r):
    """None if the case came out as its `expect` says (and adds up), else why not."""
    exp, n = r["expect"], r["sent"]
    per_read = int(exp.split(":")[1]) if exp.startswith("kernel_fragments:") else 1
    if r["refused"] + r["kernel_dropped"] + r["read"] // per_read != n or r["read"] % per_read:
        return "does not add up"
    if exp.startswith("refused:"):
        ok = r["refused"] == n and r["errno"] == exp.split(":")[1]
    elif exp == "kernel_dropped":
        ok = r["kernel_dropped"] == n
    elif exp == "forwarded" or per_read > 1:
        ok = r["read"] == n * per_read and not r["reasons"]
    else:
        ok = r["read"] == n and r["reasons"] == {exp: n}
    return None if ok else "expected " + exp


def open_sock(dev):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
    s.bind((dev, 0))
    return s


def measure(dev, vxctl, sock, port, copies, only):
    s, ctr, bad = open_sock(dev), Counters(dev, vxctl, sock, port), 0
    for name, expect, hdr, frm in cases():
        if only and name not in only:
            continue
        r = run_case(s, ctr, name, expect, hdr, frm, copies)
        r["verdict"] = verdict(r) or "ok"
        bad += r["verdict"] != "ok"
        print(json.dumps(r), flush=True)
    return 1 if bad else 0


def burst(dev, rounds):
    """Every case `rounds` times, interleaved, no counters read (for use
    under load): prints "reason count" for what vxswitchd must count (the
    cases whose expect is a drop reason) and checks on the spot that the
    ones the kernel refuses are refused.  Exit 1 if one is not."""
    s, counts, wrong = open_sock(dev), {}, 0
    cat = cases()
    for _ in range(rounds):
        for name, expect, hdr, frm in cat:
            try:
                s.send(hdr + frm)
                ok = not expect.startswith("refused:")
            except OSError:
                ok = expect.startswith("refused:")
            wrong += not ok
            key = expect.split(":")[0]
            counts[key] = counts.get(key, 0) + 1
        time.sleep(0.002)
    for key in sorted(counts):
        print(key, counts[key])
    if wrong:
        print("%d sends were refused or taken against the catalogue" % wrong, file=sys.stderr)
    return 1 if wrong else 0


def main():
    if sys.argv[1] == "measure":
        sys.exit(measure(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]), set(sys.argv[7:])))
    sys.exit(burst(sys.argv[2], int(sys.argv[3])))


main()
