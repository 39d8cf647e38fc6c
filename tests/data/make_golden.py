#!/usr/bin/python3
"""Writes the golden frames the parser is checked against (tests/golden/check.sh).

    /usr/bin/python3 tests/data/make_golden.py [OUTDIR]     (default: this directory)

Outputs, all deterministic (fixed timestamps, no random fields):
  golden_plain.pcap       every protocol kind we parse, plain on the wire
  golden_vxlan.pcap       every kind again inside Eth/IPv4/UDP 4789/VXLAN, and a
                          subset inside an IPv6 (and a VLAN-tagged) underlay
  golden_malformed.pcap   frames the parser must refuse
  golden_malformed.expect one drop reason name per frame (src/packet/drop_reason.h),
                          with the frame's name as a comment
  golden_plain.names, golden_vxlan.names
                          one frame name per line, so mismatches can say which frame

The valid frames are checked field by field against tshark's decoding of the same
file; the malformed ones against the .expect file.
"""
import os
import struct
import sys

from scapy.all import (AH, ARP, ICMP, IP, LLC, STP, TCP, UDP, VXLAN, Dot1AD, Dot1Q, Dot3, Ether,
                       ICMPv6DestUnreach, ICMPv6EchoReply, ICMPv6EchoRequest, ICMPv6ND_NS, IPv6,
                       IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop,
                       IPv6ExtHdrRouting, IPv6ExtHdrSegmentRouting, IPOption_NOP,
                       IPOption_Router_Alert, IPOption_RR, Jumbo, PadN, Raw,
                       RouterAlert, raw)

BASE_TIME = 1700000000  # fixed, so the pcaps are byte-identical on every run

VM1_MAC, VM2_MAC = "02:00:00:00:01:01", "02:00:00:00:01:02"
H1_MAC, H2_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
VM1_IP4, VM2_IP4 = "192.0.2.1", "192.0.2.2"
H1_IP4, H2_IP4 = "198.51.100.1", "198.51.100.2"
VM1_IP6, VM2_IP6 = "2001:db8:1::1", "2001:db8:1::2"
H1_IP6, H2_IP6 = "2001:db8:ff::1", "2001:db8:ff::2"
PAYLOAD = bytes(range(32))


def eth(src=VM1_MAC, dst=VM2_MAC, **kw):
    return Ether(src=src, dst=dst, **kw)


def ip4(**kw):
    kw.setdefault("src", VM1_IP4)
    kw.setdefault("dst", VM2_IP4)
    kw.setdefault("id", 0x1234)
    kw.setdefault("flags", "DF")
    return IP(**kw)


def ip6(**kw):
    kw.setdefault("src", VM1_IP6)
    kw.setdefault("dst", VM2_IP6)
    return IPv6(**kw)


def pad_to(frame_bytes, size, fill=0xa5):
    """Ethernet padding with a non-zero fill, so a parser that takes padding
    as payload gets caught."""
    if len(frame_bytes) >= size:
        return frame_bytes
    return frame_bytes + bytes([fill]) * (size - len(frame_bytes))


def ipv4_fragments():
    """A UDP datagram cut by hand: first fragment (MF, offset 0, carries the
    UDP header), a middle one and the last one (offset != 0, no L4 header)."""
    whole = ip4(flags=0, id=0x4242) / UDP(sport=5000, dport=6000) / Raw(bytes(range(200)) * 2)
    l4 = raw(whole[UDP])
    hdr = dict(src=VM1_IP4, dst=VM2_IP4, id=0x4242, proto=17, ttl=64)
    first = eth() / IP(flags="MF", frag=0, **hdr) / Raw(l4[:96])
    middle = eth() / IP(flags="MF", frag=12, **hdr) / Raw(l4[96:192])
    last = eth() / IP(flags=0, frag=24, **hdr) / Raw(l4[192:])
    return first, middle, last


def ipv6_fragments():
    whole = UDP(sport=5001, dport=6001) / Raw(bytes(range(200)))
    udp = whole.__class__(raw(ip6() / whole)[40:])  # UDP with its checksum over IPv6
    l4 = raw(udp)
    first = eth() / ip6() / IPv6ExtHdrFragment(nh=17, offset=0, m=1, id=0xabcdef) / Raw(l4[:104])
    later = eth() / ip6() / IPv6ExtHdrFragment(nh=17, offset=13, m=0, id=0xabcdef) / Raw(l4[104:])
    return first, later


def kinds():
    """(name, frame bytes) for every valid kind; reused as VXLAN inner frames."""
    syn_opts = [("MSS", 1460), ("SAckOK", b""), ("Timestamp", (123456789, 0)),
                ("NOP", None), ("WScale", 7)]
    ts_opts = [("NOP", None), ("NOP", None), ("Timestamp", (3000000001, 123456789))]
    frag4_first, frag4_middle, frag4_last = ipv4_fragments()
    frag6_first, frag6_later = ipv6_fragments()
    k = [
        # TCP/IPv4
        ("tcp4_syn_options", eth() / ip4(ttl=64) /
         TCP(sport=40000, dport=80, flags="S", seq=1000, window=64240, options=syn_opts)),
        ("tcp4_synack_mss_wscale", eth(src=VM2_MAC, dst=VM1_MAC) / ip4(src=VM2_IP4, dst=VM1_IP4) /
         TCP(sport=80, dport=40000, flags="SA", options=[("MSS", 1400), ("NOP", None), ("WScale", 14)])),
        ("tcp4_ack_timestamps", eth() / ip4(tos=0x10) /
         TCP(sport=40000, dport=80, flags="PA", options=ts_opts) / Raw(PAYLOAD)),
        ("tcp4_sack_blocks", eth() / ip4() /
         TCP(sport=40000, dport=80, flags="A",
             options=[("NOP", None), ("NOP", None), ("SAck", (1000, 2000, 3000, 4000))])),
        ("tcp4_fin_ece_cwr", eth() / ip4(tos=0x02) / TCP(sport=40001, dport=443, flags="FAEC")),
        ("tcp4_rst_urg_ns", eth() / ip4() / TCP(sport=40002, dport=22, flags="RUN", urgptr=1)),
        ("tcp4_ack_padded_to_60", pad_to(raw(eth() / ip4() / TCP(sport=40003, dport=80, flags="A")), 60)),
        # UDP, ICMP, IPv4 corners
        ("udp4", eth() / ip4(tos=0xb8, ttl=1) / UDP(sport=5353, dport=53) / Raw(PAYLOAD)),
        ("udp4_zero_csum", eth() / ip4() / UDP(sport=1234, dport=5678, chksum=0) / Raw(PAYLOAD)),
        ("udp4_short_ip_padded_to_60", pad_to(raw(eth() / ip4() / UDP(sport=7, dport=7) / Raw(b"hi")), 60)),
        ("icmp4_echo_request", eth() / ip4(flags=0) / ICMP(type=8, code=0, id=1, seq=1) / Raw(PAYLOAD)),
        ("icmp4_echo_reply", eth(src=VM2_MAC, dst=VM1_MAC) / ip4(src=VM2_IP4, dst=VM1_IP4, flags=0) /
         ICMP(type=0, code=0, id=1, seq=1) / Raw(PAYLOAD)),
        ("icmp4_dest_unreach_quoting_udp", eth(src=VM2_MAC, dst=VM1_MAC) / ip4(src=VM2_IP4, dst=VM1_IP4, flags=0) /
         ICMP(type=3, code=3) / Raw(raw(ip4() / UDP(sport=33434, dport=33435) / Raw(PAYLOAD))[:28])),
        ("icmp4_timestamp", eth() / ip4(flags=0) / ICMP(type=13, code=0, ts_ori=12345678, ts_rx=0, ts_tx=0)),
        ("ipv4_options_router_alert_udp", eth() / ip4(options=[IPOption_Router_Alert()]) /
         UDP(sport=5000, dport=5001) / Raw(PAYLOAD)),
        ("ipv4_options_max_ihl_tcp", eth() / ip4(options=[IPOption_RR(routers=["203.0.113.%d" % i for i in range(1, 10)]),
                                                         IPOption_NOP()]) /
         TCP(sport=40004, dport=80, flags="A")),
        ("ipv4_proto_0", pad_to(raw(eth() / ip4(proto=0) / Raw(b"\x3b\x00" + bytes(6))), 60)),
        ("ipv4_proto_unknown_253", eth() / ip4(proto=253) / Raw(PAYLOAD)),
        ("ipv4_frag_first_udp", frag4_first),
        ("ipv4_frag_middle", frag4_middle),
        ("ipv4_frag_last", frag4_last),
        # A later fragment of a datagram to the VXLAN port has no UDP header: never decapsulated.
        ("ipv4_frag_later_of_udp_4789", eth() / IP(src=H1_IP4, dst=H2_IP4, flags=0, frag=100, proto=17, id=7) /
         Raw(raw(VXLAN(vni=5) / eth()))),
        # ARP
        ("arp_request_padded", pad_to(raw(eth(dst="ff:ff:ff:ff:ff:ff") /
                                          ARP(op=1, hwsrc=VM1_MAC, psrc=VM1_IP4, hwdst="00:00:00:00:00:00",
                                              pdst=VM2_IP4)), 60, fill=0)),
        ("arp_reply", eth(src=VM2_MAC, dst=VM1_MAC) /
         ARP(op=2, hwsrc=VM2_MAC, psrc=VM2_IP4, hwdst=VM1_MAC, pdst=VM1_IP4)),
        # VLAN
        ("vlan1_tcp4", eth() / Dot1Q(vlan=100, prio=5) / ip4() / TCP(sport=40005, dport=80, flags="S",
                                                                     options=[("MSS", 1460)])),
        ("vlan1_dei_arp", pad_to(raw(eth(dst="ff:ff:ff:ff:ff:ff") / Dot1Q(vlan=4094, prio=7, id=1) /
                                     ARP(op=1, hwsrc=VM1_MAC, psrc=VM1_IP4, pdst=VM2_IP4)), 64, fill=0)),
        ("vlan2_qinq_88a8_udp4", eth(type=0x88a8) / Dot1AD(vlan=200, prio=3, type=0x8100) /
         Dot1Q(vlan=300) / ip4() / UDP(sport=5000, dport=5002) / Raw(PAYLOAD)),
        ("vlan2_8100_8100_tcp6", eth() / Dot1Q(vlan=10) / Dot1Q(vlan=20) / ip6() /
         TCP(sport=40006, dport=80, flags="A")),
        # IPv6
        ("tcp6_syn_options", eth() / ip6(tc=0xb8, fl=0x12345, hlim=64) /
         TCP(sport=40010, dport=80, flags="S", options=syn_opts)),
        ("udp6", eth() / ip6(hlim=255) / UDP(sport=546, dport=547) / Raw(PAYLOAD)),
        ("icmp6_echo_request", eth() / ip6() / ICMPv6EchoRequest(id=7, seq=1, data=PAYLOAD)),
        ("icmp6_echo_reply", eth(src=VM2_MAC, dst=VM1_MAC) / ip6(src=VM2_IP6, dst=VM1_IP6) /
         ICMPv6EchoReply(id=7, seq=1, data=PAYLOAD)),
        ("icmp6_neighbor_solicit", eth(dst="33:33:ff:00:00:02") / ip6(dst="ff02::1:ff00:2", hlim=255) /
         ICMPv6ND_NS(tgt=VM2_IP6)),
        ("icmp6_dest_unreach_quoting_udp6", eth(src=VM2_MAC, dst=VM1_MAC) / ip6(src=VM2_IP6, dst=VM1_IP6) /
         ICMPv6DestUnreach(code=4) / Raw(raw(ip6() / UDP(sport=33434, dport=33435) / Raw(PAYLOAD)))),
        ("ipv6_hopbyhop_udp", eth() / ip6() / IPv6ExtHdrHopByHop(options=[RouterAlert()]) /
         UDP(sport=5000, dport=5003) / Raw(PAYLOAD)),
        ("ipv6_routing_type0_tcp", eth() / ip6() /
         IPv6ExtHdrRouting(addresses=["2001:db8:2::1", "2001:db8:2::2"], segleft=0) /
         TCP(sport=40011, dport=80, flags="A")),
        ("ipv6_segment_routing_udp", eth() / ip6() /
         IPv6ExtHdrSegmentRouting(addresses=["2001:db8:3::1", "2001:db8:3::2"], segleft=1, nh=17) /
         UDP(sport=5000, dport=5004) / Raw(PAYLOAD)),
        ("ipv6_dstopts_udp", eth() / ip6() / IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\x00" * 4)]) /
         UDP(sport=5000, dport=5005)),
        ("ipv6_frag_first_udp", frag6_first),
        ("ipv6_frag_later", frag6_later),
        ("ipv6_ext_chain_hbh_dst_rt_dst_tcp", eth() / ip6() / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() /
         IPv6ExtHdrRouting(addresses=["2001:db8:2::9"], segleft=0) / IPv6ExtHdrDestOpt() /
         TCP(sport=40012, dport=8080, flags="PA", options=[("NOP", None), ("NOP", None),
                                                         ("Timestamp", (42, 24))]) / Raw(PAYLOAD)),
        ("ipv6_ext_chain_frag_first_icmp6", eth() / ip6() / IPv6ExtHdrHopByHop() /
         IPv6ExtHdrFragment(nh=58, offset=0, m=1, id=7) /
         Raw(raw(ip6(nh=58) / ICMPv6EchoRequest(id=9, seq=9, data=PAYLOAD * 2))[40:80])),
        ("ipv6_atomic_fragment_udp", eth() / ip6() / IPv6ExtHdrFragment(nh=17, offset=0, m=0, id=99) /
         UDP(sport=5000, dport=5006) / Raw(PAYLOAD)),
        ("ipv6_ah_tcp", eth() / ip6() / AH(nh=6, payloadlen=4, spi=0x100, seq=1, icv=bytes(12)) /
         TCP(sport=40013, dport=179, flags="A")),
        ("ipv6_no_next_header", eth() / ip6(nh=59)),
        # L2 corners
        ("llc_8023_stp", pad_to(raw(Dot3(src=VM1_MAC, dst="01:80:c2:00:00:00") / LLC() / STP()), 60, fill=0)),
        ("vlan2_9100_8100_udp4", eth(type=0x9100) / Dot1Q(vlan=7, type=0x8100) / Dot1Q(vlan=8) / ip4() /
         UDP(sport=5000, dport=5007) / Raw(PAYLOAD)),
        ("unknown_ethertype_88b5", pad_to(raw(eth(type=0x88b5) / Raw(b"local experimental")), 60, fill=0)),
        ("broadcast_ipv4_udp", eth(dst="ff:ff:ff:ff:ff:ff") / ip4(dst="192.0.2.255", flags=0) /
         UDP(sport=68, dport=67) / Raw(PAYLOAD)),
    ]
    return [(name, raw(frame)) for name, frame in k]


def vxlan_underlay4(vni, sport, csum=0, outer=None):
    outer = outer if outer is not None else eth(src=H1_MAC, dst=H2_MAC)
    return outer / IP(src=H1_IP4, dst=H2_IP4, ttl=64, id=0, flags="DF") / \
        UDP(sport=sport, dport=4789, chksum=csum) / VXLAN(flags=0x08, vni=vni)


def vxlan_underlay6(vni, sport):
    return eth(src=H1_MAC, dst=H2_MAC) / IPv6(src=H1_IP6, dst=H2_IP6, hlim=64) / \
        UDP(sport=sport, dport=4789) / VXLAN(flags=0x08, vni=vni)


def vxlan_kinds(inner):
    out = []
    for i, (name, frame) in enumerate(inner):
        sport = 49152 + (i * 977) % 16384
        # Half with a zero outer UDP checksum (what the kernel sends), half with one.
        under = vxlan_underlay4(vni=99 + i, sport=sport, csum=0 if i % 2 == 0 else None)
        out.append(("vxlan4_" + name, raw(under / Raw(frame))))
    for i, (name, frame) in enumerate(inner):
        if i % 3 == 0:
            out.append(("vxlan6_" + name, raw(vxlan_underlay6(vni=0xabcdef - i, sport=50000 + i) / Raw(frame))))
    # Largest VNI, VNI 0, and an underlay that is itself VLAN-tagged.
    tcp = dict(inner)["tcp4_ack_timestamps"]
    out.append(("vxlan4_vni_max", raw(vxlan_underlay4(vni=0xffffff, sport=60000) / Raw(tcp))))
    out.append(("vxlan4_vni_0", raw(vxlan_underlay4(vni=0, sport=60001) / Raw(tcp))))
    out.append(("vxlan4_outer_vlan", raw(vxlan_underlay4(
        vni=4242, sport=60002, outer=eth(src=H1_MAC, dst=H2_MAC) / Dot1Q(vlan=42)) / Raw(tcp))))
    return out


def malformed():
    """(name, frame bytes, expected drop reason).  Each frame has one defect."""
    def tcp4(**kw):
        return raw(eth() / ip4() / TCP(sport=40000, dport=80, flags="A", **kw))

    def set_byte(b, ofs, val):
        b = bytearray(b)
        b[ofs] = val
        return bytes(b)

    def put16(b, ofs, val):
        b = bytearray(b)
        struct.pack_into("!H", b, ofs, val)
        return bytes(b)

    udp4 = raw(eth() / ip4() / UDP(sport=1, dport=2) / Raw(PAYLOAD))
    tcp6 = raw(eth() / ip6() / TCP(sport=40000, dport=80, flags="A"))
    inner_tcp = raw(eth() / ip4() / TCP(sport=40000, dport=80, flags="A"))
    vx = raw(vxlan_underlay4(vni=99, sport=50000) / Raw(inner_tcp))
    VX_FLAGS = 14 + 20 + 8  # offset of the VXLAN flags word in `vx`
    ihl15_in_20 = set_byte(udp4, 14, 0x4f)  # IHL says 60 bytes

    m = [
        ("eth_13_bytes", raw(eth())[:13], "truncated_eth"),
        ("vlan_tag_cut", raw(eth(type=0x8100))[:14] + b"\x00\x64", "truncated_vlan"),
        ("vlan_three_tags", raw(eth() / Dot1Q(vlan=1) / Dot1Q(vlan=2) / Dot1Q(vlan=3) / ip4() / UDP()),
         "vlan_too_many_tags"),
        ("vlan_three_tags_88a8_8100_8100", raw(eth(type=0x88a8) / Dot1AD(vlan=1, type=0x8100) / Dot1Q(vlan=2) /
                                               Dot1Q(vlan=3) / ip4() / UDP()), "vlan_too_many_tags"),
        ("arp_cut_at_20", raw(eth() / ARP())[:14 + 20], "truncated_arp"),
        ("ipv4_cut_at_10", udp4[:14 + 10], "truncated_ipv4"),
        ("ipv4_version_5", set_byte(udp4, 14, 0x55), "bad_ip_version"),
        ("ipv4_ihl_4", set_byte(udp4, 14, 0x44), "bad_ihl"),
        # Total length below the header length is a length error, as total length < 20 is.
        ("ipv4_total_len_below_ihl_60", put16(ihl15_in_20, 16, 40), "ipv4_total_len"),
        ("ipv4_total_len_past_frame", put16(udp4, 16, 1000), "ipv4_total_len"),
        ("ipv4_total_len_below_ihl", put16(udp4, 16, 10), "ipv4_total_len"),
        ("ipv6_cut_at_30", tcp6[:14 + 30], "truncated_ipv6"),
        ("ipv6_version_4_in_86dd", set_byte(tcp6, 14, 0x40), "bad_ip_version"),
        ("ipv6_fragment_hdr_cut_at_4", raw(eth() / ip6(nh=44, plen=4) / Raw(b"\x11\x00\x00\x00")),
         "truncated_ipv6_ext"),
        ("ipv6_routing_hdr_len_past_payload", raw(eth() / ip6(nh=43, plen=8) / Raw(b"\x06\x04\x00\x00" + bytes(4))),
         "truncated_ipv6_ext"),
        ("ipv6_payload_len_past_frame", put16(tcp6, 14 + 4, 500), "ipv6_payload_len"),
        ("ipv6_hbh_len_past_payload", raw(eth() / ip6() / IPv6ExtHdrHopByHop(len=5, autopad=0, options=[PadN(optdata=b"\x00" * 4)]) /
                                          UDP(sport=1, dport=2)), "truncated_ipv6_ext"),
        ("ipv6_nine_ext_headers", raw(eth() / ip6() / (IPv6ExtHdrDestOpt() / IPv6ExtHdrRouting()) /
                                      IPv6ExtHdrDestOpt() / IPv6ExtHdrRouting() / IPv6ExtHdrDestOpt() /
                                      IPv6ExtHdrRouting() / IPv6ExtHdrDestOpt() / IPv6ExtHdrRouting() /
                                      IPv6ExtHdrDestOpt() / UDP(sport=1, dport=2)), "ipv6_ext_chain"),
        ("ipv6_jumbo_option", raw(eth() / ip6(plen=0) / IPv6ExtHdrHopByHop(options=[Jumbo(jumboplen=70000)]) /
                                  UDP(sport=1, dport=2) / Raw(PAYLOAD)), "ipv6_jumbo"),
        ("tcp_cut_at_10", raw(eth() / ip4(len=30, proto=6) / Raw(tcp4()[34:44])), "truncated_tcp"),
        ("tcp_doff_4", set_byte(tcp4(), 14 + 20 + 12, 0x40), "bad_tcp_doff"),
        ("tcp_option_mss_len_3", tcp4(options=[("NOP", None), ("NOP", None), ("NOP", None), ("NOP", None)])
         [:54] + b"\x02\x03\x05\xb4", "bad_tcp_options"),
        ("tcp_option_len_0", tcp4(options=[("NOP", None), ("NOP", None), ("NOP", None), ("NOP", None)])
         [:54] + b"\x08\x00\x00\x00", "bad_tcp_options"),
        ("tcp_option_past_header", tcp4(options=[("NOP", None), ("NOP", None), ("NOP", None), ("NOP", None)])
         [:54] + b"\x01\x01\x08\x0a", "bad_tcp_options"),
        ("udp_cut_at_4", raw(eth() / ip4(len=24, proto=17) / Raw(udp4[34:38])), "truncated_udp"),
        ("udp_len_past_ip", put16(udp4, 14 + 20 + 4, 100), "udp_len"),
        ("udp_len_below_8", put16(udp4, 14 + 20 + 4, 4), "udp_len"),
        ("icmp_cut_at_2", raw(eth() / ip4(len=22, proto=1) / Raw(b"\x08\x00")), "truncated_icmp"),
        ("icmp6_cut_at_2", raw(eth() / ip6(plen=2, nh=58) / Raw(b"\x80\x00")), "truncated_icmp"),
        ("vxlan_only_4_bytes", raw(eth(src=H1_MAC, dst=H2_MAC) / IP(src=H1_IP4, dst=H2_IP4) /
                                   UDP(sport=50000, dport=4789) / Raw(b"\x08\x00\x00\x00")), "truncated_vxlan"),
        ("vxlan_no_i_flag", set_byte(vx, VX_FLAGS, 0x00), "vxlan_no_vni_flag"),
        ("vxlan_reserved_flag_bit", set_byte(vx, VX_FLAGS, 0x0c), "vxlan_reserved_bits"),
        ("vxlan_reserved_vni_low_byte", set_byte(vx, VX_FLAGS + 7, 0x01), "vxlan_reserved_bits"),
        ("vxlan_inner_eth_cut", raw(vxlan_underlay4(vni=99, sport=50000) / Raw(inner_tcp[:10])), "truncated_eth"),
        ("vxlan_inner_ipv4_ihl_4", raw(vxlan_underlay4(vni=99, sport=50000) / Raw(set_byte(inner_tcp, 14, 0x44))),
         "bad_ihl"),
        ("vxlan6_inner_tcp_doff_4", raw(vxlan_underlay6(vni=99, sport=50000) /
                                        Raw(set_byte(inner_tcp, 14 + 20 + 12, 0x40))), "bad_tcp_doff"),
        ("vxlan_outer_ipv4_total_len", put16(vx, 14 + 2, 2000), "ipv4_total_len"),
    ]
    return m


def write_pcap(path, frames):
    """Classic little-endian pcap, linktype Ethernet, written by hand so the
    bytes are exactly the frames given (no re-dissection) and timestamps fixed."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, frame in enumerate(frames):
            f.write(struct.pack("<IIII", BASE_TIME + i, 0, len(frame), len(frame)))
            f.write(frame)


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    plain = kinds()
    vxlan = vxlan_kinds(plain)
    bad = malformed()
    for fname, frames in (("golden_plain", plain), ("golden_vxlan", vxlan)):
        write_pcap(os.path.join(outdir, fname + ".pcap"), [f for _, f in frames])
        with open(os.path.join(outdir, fname + ".names"), "w") as f:
            f.writelines(name + "\n" for name, _ in frames)
    write_pcap(os.path.join(outdir, "golden_malformed.pcap"), [f for _, f, _ in bad])
    with open(os.path.join(outdir, "golden_malformed.expect"), "w") as f:
        f.write("# one drop reason per frame of golden_malformed.pcap, in order; made by make_golden.py\n")
        f.writelines("%-22s # %d %s\n" % (reason, i + 1, name) for i, (name, _, reason) in enumerate(bad))
    print("plain %d, vxlan %d, malformed %d frames" % (len(plain), len(vxlan), len(bad)))


if __name__ == "__main__":
    main()
