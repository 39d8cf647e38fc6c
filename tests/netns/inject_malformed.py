#!/usr/bin/python3
"""Sends the malformed frames of tests/data/golden_malformed.pcap at a
running vxswitchd through its real ports, interleaved (by the caller) with
a valid stream, and prints what it sent as "reason count" lines.

  inject_malformed.py tap DEV ROUNDS        frames 1-29 of 14 bytes or more
                                            (and a jumbo) on DEV, in the VM's
                                            namespace: the tap port reads them
  inject_malformed.py underlay DST ROUNDS VNI
                                            the VXLAN payloads of frames
                                            30-36, one for a VNI with no port,
                                            frames 1-29 as inner frames of VNI
                                            and runt datagrams, in UDP to
                                            DST:4789

  inject_malformed.py spoof DST ROUNDS SRC VNI
                                            well-formed VXLAN from SRC, which is
                                            not a remote of the port

Reasons come from golden_malformed.expect, the same oracle `make golden`
checks the parser against offline; here the running daemon must count each
frame under that reason."""
import os
import socket
import struct
import sys
import time

from scapy.all import rdpcap, conf  # noqa: E402

conf.verb = 0
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")


def catalogue():
    frames = [bytes(p) for p in rdpcap(os.path.join(DATA, "golden_malformed.pcap"))]
    reasons = []
    for line in open(os.path.join(DATA, "golden_malformed.expect")):
        line = line.split("#")[0].strip()
        if line:
            reasons.append(line)
    assert len(frames) == len(reasons), (len(frames), len(reasons))
    return list(zip(frames, reasons))


def send_tap(dev, rounds):
    # Frames under 14 bytes cannot leave an Ethernet device (AF_PACKET
    # refuses them: dev_validate_header), so no tap ever hands one to the
    # switch; the underlay path gets its cut inner Ethernet header below.
    cat = [(f, r) for f, r in catalogue()[:29] if len(f) >= 14]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    counts = {}
    # A jumbo for the VM's MTU: the caller set DEV's MTU to 9000, above what
    # the vxlan port takes without TSO.
    from scapy.all import Ether, IP, UDP, Raw
    jumbo = bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:09") /
                  IP(src="192.0.2.1", dst="192.0.2.9") / UDP(sport=9, dport=9) / Raw(bytes(8972)))
    # Only when DEV takes it (the soak leaves the MTU alone, for iperf3).
    with open("/sys/class/net/%s/mtu" % dev) as f:
        extra = [(jumbo, "jumbo")] if int(f.read()) >= len(jumbo) - 14 else []
    for _ in range(rounds):
        for frame, reason in cat + extra:
            s.send(frame)
            counts[reason] = counts.get(reason, 0) + 1
        time.sleep(0.002)
    return counts


def send_underlay(dst, rounds, vni):
    cat = catalogue()[29:36]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    counts = {}
    payloads = []
    for frame, reason in cat:
        # Ethernet 14 + IPv4 (IHL) + UDP 8 of the outer frame (IPv6 outer: 40).
        if frame[12:14] == b"\x86\xdd":
            off = 14 + 40 + 8
        else:
            off = 14 + (frame[14] & 0x0F) * 4 + 8
        vx = bytearray(frame[off:])
        if reason in ("truncated_eth", "bad_ihl", "bad_tcp_doff") and len(vx) >= 8:
            vx[4:7] = struct.pack("!I", vni)[1:]  # a VNI the switch has: the inner frame is parsed
        payloads.append((bytes(vx), reason))
    # A well-formed VXLAN header for a VNI with no port.
    payloads.append((struct.pack("!II", 0x08000000, 4242 << 8) + bytes(60), "vxlan_unknown_vni"))
    # The tap's catalogue (frames 1-29: every layer cut, lying lengths, long
    # IPv6 extension chains...) as inner frames of VNI `vni`: the same parser
    # behind the other port, runts under 14 bytes included (a VM cannot send
    # those, a host on the underlay can).
    hdr = struct.pack("!II", 0x08000000, vni << 8)
    payloads += [(hdr + f, r) for f, r in catalogue()[:29]]
    # Runt datagrams: empty, and one byte short of a VXLAN header.
    payloads += [(b"", "truncated_vxlan"), (hdr[:7], "truncated_vxlan")]
    # A jumbo inner frame (9000 bytes of UDP, IP-fragmented on the underlay
    # and reassembled before our socket) for an unknown MAC: flooded to the
    # VM, whose tap's MTU it exceeds.
    from scapy.all import Ether, IP, UDP, Raw
    jumbo = bytes(Ether(src="02:00:00:00:00:77", dst="02:00:00:00:00:09") /
                  IP(src="192.0.2.77", dst="192.0.2.9") / UDP(sport=9, dport=9) / Raw(bytes(8972)))
    payloads.append((hdr + jumbo, "mtu_exceeded"))
    for _ in range(rounds):
        for p, reason in payloads:
            s.sendto(p, (dst, 4789))
            counts[reason] = counts.get(reason, 0) + 1
        time.sleep(0.002)
    return counts


def send_spoofed(dst, rounds, src, vni):
    """Well-formed VXLAN in VNI `vni` from `src`, an address that is not a
    remote of the port: an inner ARP request and a unicast frame from
    02:00:00:00:66:66, which the switch must neither forward nor learn."""
    from scapy.all import ARP, Ether, IP, UDP, Raw
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 0))
    hdr = struct.pack("!II", 0x08000000, vni << 8)
    inner = [bytes(Ether(src="02:00:00:00:66:66", dst="ff:ff:ff:ff:ff:ff") /
                   ARP(op=1, hwsrc="02:00:00:00:66:66", psrc="192.0.2.66", pdst="192.0.2.1")),
             bytes(Ether(src="02:00:00:00:66:66", dst="02:00:00:00:00:01") /
                   IP(src="192.0.2.66", dst="192.0.2.1") / UDP(sport=9, dport=9) / Raw(b"spoofed"))]
    n = 0
    for _ in range(rounds):
        for f in inner:
            s.sendto(hdr + f, (dst, 4789))
            n += 1
        time.sleep(0.002)
    return {"vxlan_unknown_remote": n}


def main():
    mode, target, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "tap":
        counts = send_tap(target, rounds)
    elif mode == "spoof":
        counts = send_spoofed(target, rounds, sys.argv[4], int(sys.argv[5]))
    else:
        counts = send_underlay(target, rounds, int(sys.argv[4]) if len(sys.argv) > 4 else 99)
    for reason in sorted(counts):
        print(reason, counts[reason])


main()
