#!/usr/bin/python3
"""Sends COUNT frames on DEV as fast as one AF_PACKET socket goes, from a
small set of prebuilt frames, and prints how many it sent.

  blast.py DEV COUNT mix SRC_MAC DST_MAC SRC_IP DST_IP
      a tenant's traffic: unicast UDP to DST_MAC, broadcast, unknown
      unicast, ARP requests and IPv6 neighbour solicitations, in turn
  blast.py DEV COUNT macs
      UDP broadcasts, each from a new random locally administered unicast
      source MAC (a MAC flood; the MACs do not repeat within 2^40)
  blast.py DEV COUNT flows DST_MAC SRC_IP DST_IP
      small UDP datagrams to DST_MAC over 4096 source ports (many flows)
"""
import os
import socket
import struct
import sys

from scapy.all import ARP, ICMPv6ND_NS, IP, IPv6, UDP, Ether, Raw


def frames_mix(src, dst, sip, dip):
    pad = Raw(b"vxswitch-isolation " + src.encode())
    return [bytes(f) for f in (
        Ether(src=src, dst=dst) / IP(src=sip, dst=dip) / UDP(sport=4000, dport=9) / pad,
        Ether(src=src, dst="ff:ff:ff:ff:ff:ff") / IP(src=sip, dst="255.255.255.255") / UDP(sport=4001, dport=9) / pad,
        Ether(src=src, dst="02:99:99:99:99:99") / IP(src=sip, dst=dip) / UDP(sport=4002, dport=9) / pad,
        Ether(src=src, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=src, psrc=sip, pdst=dip),
        Ether(src=src, dst="33:33:ff:00:00:02") / IPv6(src="2001:db8::1", dst="ff02::1:ff00:2") /
        ICMPv6ND_NS(tgt="2001:db8::2"),
    )]


def main():
    dev, count, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    sent = 0
    if kind == "mix":
        fr = frames_mix(*sys.argv[4:8])
        n = len(fr)
        for i in range(count):
            try:
                s.send(fr[i % n])
                sent += 1
            except OSError:
                pass  # ENOBUFS: the device queue is full; the frame is not sent
    elif kind == "macs":
        base = bytearray(bytes(Ether(src="02:00:00:00:00:00", dst="ff:ff:ff:ff:ff:ff") /
                               IP(src="192.0.2.1", dst="255.255.255.255") / UDP(sport=4, dport=9) / Raw(bytes(18))))
        seed = struct.unpack("!I", os.urandom(4))[0]
        for i in range(count):
            # 02:xx:xx:xx:xx:xx, xx = a 40-bit counter mixed with the seed
            v = (i * 0x9E3779B1 + seed) & 0xFFFFFFFFFF
            base[6:12] = b"\x02" + v.to_bytes(5, "big")
            try:
                s.send(base)
                sent += 1
            except OSError:
                pass
    elif kind == "flows":
        dst, sip, dip = sys.argv[4:7]
        tmpl = [bytes(Ether(dst=dst) / IP(src=sip, dst=dip) / UDP(sport=10000 + p, dport=9) / Raw(bytes(18)))
                for p in range(4096)]
        for i in range(count):
            try:
                s.send(tmpl[i & 4095])
                sent += 1
            except OSError:
                pass
    print(sent)


main()
