#!/usr/bin/python3
"""Turns tshark's decoding of a pcap into the canonical flow-key lines that
tests/tools/golden_dump prints, so the two can be diffed (tests/golden/check.sh).

    tshark_to_key.py --fields          print the tshark -e arguments, one per line
    tshark ... -T fields -E separator=/t -E occurrence=a -E aggregator='|' \\
        $(tshark_to_key.py --fields | sed 's/^/-e /') | tshark_to_key.py [--pdml FILE]

With --pdml (tshark -T pdml of the same file), the layer offsets are added:
where tshark's dissectors placed each header is where pkt's offsets must point.

tshark lists every occurrence of a field in frame order.  A VXLAN frame has
each protocol twice or more (outer and inner Ethernet, IP, UDP), so the
occurrences are split with frame.protocols: the ones of a protocol that
appears before "vxlan" belong to the underlay (the key's tunnel section),
the rest to the inner frame (the key's L2..L4 sections).  The line format is
documented in tests/tools/golden_dump.c; both sides must print the same.
"""
import ipaddress
import sys
import xml.etree.ElementTree as ET

FIELDS = [
    "frame.number", "frame.protocols", "frame.len", "eth.padding", "eth.trailer", "vlan.trailer",
    "eth.src", "eth.dst", "eth.type",
    "vlan.priority", "vlan.dei", "vlan.id", "vlan.etype",
    "ieee8021ad.priority", "ieee8021ad.dei", "ieee8021ad.id", "ieee8021ah.etype",
    "arp.opcode", "arp.src.hw_mac", "arp.dst.hw_mac", "arp.src.proto_ipv4", "arp.dst.proto_ipv4",
    "ip.src", "ip.dst", "ip.proto", "ip.dsfield", "ip.ttl", "ip.flags.mf", "ip.frag_offset",
    "ipv6.src", "ipv6.dst", "ipv6.nxt", "ipv6.tclass", "ipv6.hlim", "ipv6.flow",
    "ipv6.hopopts.nxt", "ipv6.routing.nxt", "ipv6.dstopts.nxt",
    "ipv6.fraghdr.nxt", "ipv6.fraghdr.offset", "ipv6.fraghdr.more", "ah.next_header",
    "tcp.srcport", "tcp.dstport", "tcp.flags",
    "tcp.options.mss_val", "tcp.options.wscale.shift", "tcp.options.sack_perm", "tcp.options.sack",
    "tcp.options.timestamp.tsval", "tcp.options.timestamp.tsecr",
    "udp.srcport", "udp.dstport", "sctp.srcport", "sctp.dstport",
    "icmp.type", "icmp.code", "icmpv6.type", "icmpv6.code",
    "vxlan.vni",
]

# The frame.protocols token each field's occurrences are counted by.
PROTO_OF_FIELD_PREFIX = {
    "ieee8021ah": "ieee8021ad",  # the 802.1ad tag's inner type field
    "ipv6.hopopts": "ipv6.hopopts", "ipv6.routing": "ipv6.routing",
    "ipv6.dstopts": "ipv6.dstopts", "ipv6.fraghdr": "ipv6.fraghdr",
}

IPV6_EXT_FIELD = {0: "ipv6.hopopts.nxt", 43: "ipv6.routing.nxt",
                  44: "ipv6.fraghdr.nxt", 51: "ah.next_header", 60: "ipv6.dstopts.nxt"}
IPV6_EXT_TOKENS = ("ipv6.hopopts", "ipv6.routing", "ipv6.fraghdr", "ipv6.dstopts", "ah")
FLOW_DL_TYPE_NONE = 0x05ff  # src/parse/flow.h: the key's dl_type of an 802.3 (length) frame

ZERO_MAC = "00:00:00:00:00:00"


def proto_of(field):
    for prefix, proto in PROTO_OF_FIELD_PREFIX.items():
        if field.startswith(prefix + "."):
            return proto
    return field.split(".")[0]


def num(text):
    return int(text, 0) if text.startswith("0x") else int(text)


class Layer:
    """The occurrences of every field that belong to one side (outer or inner)."""

    def __init__(self):
        self.values = {}
        self.used = {}

    def all(self, field):
        return self.values.get(field, [])

    def last(self, field, default=None):
        v = self.all(field)
        return v[-1] if v else default

    def next(self, field, default=None):
        """Consumes occurrences in order, for headers that repeat in one frame
        (VLAN tags, IPv6 extension headers)."""
        i = self.used.get(field, 0)
        self.used[field] = i + 1
        v = self.all(field)
        return v[i] if i < len(v) else default


def split(row):
    protocols = row["frame.protocols"][0].split(":")
    if "vxlan" in protocols:
        cut = protocols.index("vxlan")
        outer_tokens, inner_tokens = protocols[:cut], protocols[cut + 1:]
    else:
        outer_tokens, inner_tokens = [], protocols
    outer, inner = Layer(), Layer()
    for field, values in row.items():
        n_outer = outer_tokens.count(proto_of(field))
        outer.values[field] = values[:n_outer]
        inner.values[field] = values[n_outer:]
    inner.values["vxlan.vni"] = row.get("vxlan.vni", [])
    return outer_tokens, inner_tokens, outer, inner


def key_line(row):
    outer_tokens, inner_tokens, outer, inner = split(row)
    k = {"frame": row["frame.number"][0]}

    # Tunnel section.
    if outer_tokens:
        family = 6 if "ipv6" in outer_tokens else 4
        ipf = "ipv6" if family == 6 else "ip"
        k["tun"] = str(family)
        k["tun_src"] = str(ipaddress.ip_address(outer.last(ipf + ".src")))
        k["tun_dst"] = str(ipaddress.ip_address(outer.last(ipf + ".dst")))
        k["tun_sport"] = outer.last("udp.srcport")
        k["tun_dport"] = outer.last("udp.dstport")
        k["vni"] = str(num(inner.last("vxlan.vni")))
    else:
        k.update(tun="-", tun_src="-", tun_dst="-", tun_sport="0", tun_dport="0", vni="0")

    # L2: the tags in the order they appear after the innermost Ethernet header.
    k["dl_src"] = inner.last("eth.src")
    k["dl_dst"] = inner.last("eth.dst")
    # An 802.3 frame has a length where the type would be (tshark: eth.len and
    # no "ethertype" layer after eth); the outer frame never does, so the
    # occurrence count of eth.type would be off by one: decide by the tokens.
    if inner_tokens[1:2] != ["ethertype"]:
        ethertype = FLOW_DL_TYPE_NONE
    else:
        ethertype = num(inner.last("eth.type"))
    tags = []
    for tok in inner_tokens:
        if tok == "vlan":
            tci = num(inner.next("vlan.priority")) << 13 | num(inner.next("vlan.dei")) << 12 | \
                num(inner.next("vlan.id"))
            tags.append("%04x/%04x" % (ethertype, tci))
            ethertype = num(inner.next("vlan.etype"))
        elif tok == "ieee8021ad":
            tci = num(inner.next("ieee8021ad.priority")) << 13 | num(inner.next("ieee8021ad.dei")) << 12 | \
                num(inner.next("ieee8021ad.id"))
            tags.append("%04x/%04x" % (ethertype, tci))
            ethertype = num(inner.next("ieee8021ah.etype"))
    k["vlans"] = ",".join(tags) or "-"
    k["dl_type"] = "0x%04x" % ethertype

    # L3.
    nw = dict(nw_family="0", nw_src="-", nw_dst="-", nw_proto="0", nw_tos="0x00", nw_ttl="0",
              nw_frag="0", ipv6_label="0x00000", arp_sha="-", arp_tha="-")
    l4_tok = None
    if "arp" in inner_tokens:
        nw.update(nw_src=inner.last("arp.src.proto_ipv4"), nw_dst=inner.last("arp.dst.proto_ipv4"),
                  nw_proto=str(num(inner.last("arp.opcode")) & 0xff),
                  arp_sha=inner.last("arp.src.hw_mac"), arp_tha=inner.last("arp.dst.hw_mac"))
    elif "ip" in inner_tokens:
        first_l3 = inner_tokens.index("ip")
        more, offset = num(inner.next("ip.flags.mf")), num(inner.next("ip.frag_offset"))
        frag = (1 | (2 if offset else 0)) if (more or offset) else 0
        nw.update(nw_family="4", nw_src=inner.next("ip.src"), nw_dst=inner.next("ip.dst"),
                  nw_proto=str(num(inner.next("ip.proto"))),
                  nw_tos="0x%02x" % num(inner.next("ip.dsfield")),
                  nw_ttl=str(num(inner.next("ip.ttl"))), nw_frag=str(frag))
        l4_tok = inner_tokens[first_l3 + 1] if first_l3 + 1 < len(inner_tokens) else None
    elif "ipv6" in inner_tokens:
        first_l3 = inner_tokens.index("ipv6")
        proto = num(inner.next("ipv6.nxt"))
        frag = 0
        while proto in IPV6_EXT_FIELD:
            if proto == 44:
                # Any fragment header makes a fragment, an atomic one (offset 0,
                # no M flag, RFC 6946) included: the convention of the kernel's
                # flow dissector (FLOW_DIS_IS_FRAGMENT) and OVS's flow.c.
                offset = num(inner.next("ipv6.fraghdr.offset"))
                inner.next("ipv6.fraghdr.more")
                frag = 1 | (2 if offset else 0)
            proto = num(inner.next(IPV6_EXT_FIELD[proto]))
        nw.update(nw_family="6", nw_src=str(ipaddress.ip_address(inner.next("ipv6.src"))),
                  nw_dst=str(ipaddress.ip_address(inner.next("ipv6.dst"))), nw_proto=str(proto),
                  nw_tos="0x%02x" % num(inner.next("ipv6.tclass")),
                  nw_ttl=str(num(inner.next("ipv6.hlim"))), nw_frag=str(frag),
                  ipv6_label="0x%05x" % num(inner.next("ipv6.flow")))
        after = [t for t in inner_tokens[first_l3 + 1:] if t not in IPV6_EXT_TOKENS]
        l4_tok = after[0] if after else None
    k.update(nw)

    # L4: only what tshark dissected as the protocol right above IP counts, so a
    # later fragment (dissected as "data") has none.
    l4 = dict(tp_src="0", tp_dst="0", tcp_flags="0x000",
              mss="-", wscale="-", sackok="-", sack="-", tsval="-", tsecr="-")
    if l4_tok == "tcp":
        l4.update(tp_src=inner.last("tcp.srcport"), tp_dst=inner.last("tcp.dstport"),
                  tcp_flags="0x%03x" % (num(inner.last("tcp.flags")) & 0x1ff))
        for name, field in (("mss", "tcp.options.mss_val"), ("wscale", "tcp.options.wscale.shift"),
                            ("tsval", "tcp.options.timestamp.tsval"),
                            ("tsecr", "tcp.options.timestamp.tsecr")):
            if inner.all(field):
                l4[name] = str(num(inner.last(field)))
        l4["sackok"] = "1" if inner.all("tcp.options.sack_perm") else "-"
        l4["sack"] = "1" if inner.all("tcp.options.sack") else "-"
    elif l4_tok == "udp":
        l4.update(tp_src=inner.last("udp.srcport"), tp_dst=inner.last("udp.dstport"))
    elif l4_tok == "sctp" and inner.all("sctp.srcport"):
        l4.update(tp_src=inner.last("sctp.srcport"), tp_dst=inner.last("sctp.dstport"))
    elif l4_tok in ("icmp", "icmpv6"):
        l4.update(tp_src=str(num(inner.last(l4_tok + ".type"))), tp_dst=str(num(inner.last(l4_tok + ".code"))))
    k.update(l4)

    # Frame length once the parser has cut what follows the innermost IP
    # datagram (Ethernet padding, outer or inner): what tshark calls padding
    # or trailer is exactly that.  Only checked for IP; ARP is not trimmed.
    if nw["nw_family"] in ("4", "6"):
        cut = sum(len(v) // 2 for f in ("eth.padding", "eth.trailer", "vlan.trailer") for v in row[f])
        k["len"] = str(num(row["frame.len"][0]) - cut)
    else:
        k["len"] = "-"
    return " ".join("%s=%s" % item for item in k.items())


# Header sizes the parser's payload offset skips, past the L4 offset (ICMP:
# type, code, checksum, as packet/hdr.h ICMP_HDR_LEN).
L4_FIXED_HDR = {"udp": 8, "icmp": 4, "icmpv6": 4}


def field_value(elem, name):
    for f in elem.iter("field"):
        if f.get("name") == name:
            return f.get("show")
    return None


def side_offsets(protos):
    """l2,l3,l4,payload of one frame (outer or inner) from tshark's top-level
    protocol elements in order, "-" where absent, in the parser's conventions:
    l4 is the end of the IP header chain (any protocol) except for a later
    fragment; payload follows a TCP, UDP or ICMP header only."""
    names = [p.get("name") for p in protos]
    if "eth" not in names:
        return "-,-,-,-"
    i2 = names.index("eth")
    l2 = int(protos[i2].get("pos"))
    l3 = l4 = payload = None
    i3 = next((i for i in range(i2 + 1, len(protos)) if names[i] in ("ip", "ipv6", "arp")), None)
    if i3 is not None:
        ip = protos[i3]
        l3 = int(ip.get("pos"))
        later = {"ip": field_value(ip, "ip.frag_offset"),
                 "ipv6": field_value(ip, "ipv6.fraghdr.offset")}.get(names[i3])
        if names[i3] != "arp" and num(later or "0") == 0:
            l4 = l3 + int(ip.get("size"))
            nxt = protos[i3 + 1] if i3 + 1 < len(protos) else None
            if nxt is not None and int(nxt.get("pos")) == l4:
                if nxt.get("name") == "tcp":
                    payload = l4 + num(field_value(nxt, "tcp.hdr_len"))
                elif nxt.get("name") in L4_FIXED_HDR:
                    payload = l4 + L4_FIXED_HDR[nxt.get("name")]
    return ",".join("-" if v is None else str(v) for v in (l2, l3, l4, payload))


def pdml_offsets(path):
    """{frame number: the offset fields of its canonical line}."""
    out = {}
    for packet in ET.parse(path).getroot().iter("packet"):
        # fake-field-wrapper holds fields asked for with -e that have no place; no position.
        protos = [p for p in packet.findall("proto")
                  if p.get("name") not in ("geninfo", "frame") and p.get("pos") is not None]
        frame = field_value(packet, "frame.number")
        names = [p.get("name") for p in protos]
        if "vxlan" in names:
            cut = names.index("vxlan")
            vx = int(protos[cut].get("pos"))
            outer = side_offsets(protos[:cut]).rsplit(",", 1)[0] + ",%d" % vx
            out[frame] = "ofs=%s vx_ofs=%d outer_ofs=%s" % (side_offsets(protos[cut + 1:]), vx, outer)
        else:
            out[frame] = "ofs=%s vx_ofs=- outer_ofs=-" % side_offsets(protos)
    return out


def main():
    args = sys.argv[1:]
    if args == ["--fields"]:
        print("\n".join(FIELDS))
        return 0
    offsets = pdml_offsets(args[1]) if args[:1] == ["--pdml"] and len(args) == 2 else None
    if args and offsets is None:
        sys.exit("usage: tshark_to_key.py [--fields | --pdml FILE] < tshark-fields-output")
    for line in sys.stdin:
        cols = line.rstrip("\n").split("\t")
        if len(cols) != len(FIELDS):
            sys.exit("tshark_to_key: expected %d columns, got %d: %r" % (len(FIELDS), len(cols), line))
        row = {f: (c.split("|") if c else []) for f, c in zip(FIELDS, cols)}
        text = key_line(row)
        if offsets is not None:
            text += " " + offsets[row["frame.number"][0]]
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
