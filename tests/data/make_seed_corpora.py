#!/usr/bin/python3
"""Seeds the fuzzers' corpora with the golden frames (one file per frame).

    /usr/bin/python3 tests/data/make_seed_corpora.py        (from the repository root)

Reads tests/data/golden_{plain,vxlan,malformed}.pcap and writes, for each
frame, files named golden_<set>_<nnn>_<frame name> into

  fuzz/corpus/fuzz_flow_extract/   control byte + frame (fuzz/fuzz_flow_extract.c):
                                   every frame with decap on 4789, VXLAN frames
                                   also from the VXLAN header on, frames with
                                   payload also split headers/frag
  fuzz/corpus/fuzz_vnet_hdr/       control byte + 10-byte virtio_net_hdr + frame
                                   (input format of fuzz/fuzz_vnet_hdr.c)

Valid TCP/UDP frames get a virtio_net_hdr the validator should accept
(NEEDS_CSUM at the innermost L4 header, and GSO when there is payload), so the
fuzzer starts from headers that reach the deep checks; the rest get a zero
header.  Files named golden_* are rewritten on every run; other seeds in those
directories are left alone.  A corpus whose fuzzer does not exist yet is skipped.
"""
import os
import struct
import sys

from scapy.all import TCP, UDP, VXLAN, Ether, Padding

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SETS = ("golden_plain", "golden_vxlan", "golden_malformed")

# fuzz/fuzz_vnet_hdr.c control byte.
VNET_CTL_VXLAN = 0x02
VNET_CTL_FRAGS = 0x04
# virtio_net_hdr (packet/pkt.h enum pkt_ol_flags, pkt_gso_type).
NEEDS_CSUM = 1
GSO_TCPV4, GSO_TCPV6, GSO_UDP_L4 = 1, 4, 5
TCP_CSUM_OFFSET, UDP_CSUM_OFFSET = 16, 6

# fuzz/fuzz_flow_extract.c control byte: low 2 bits pick the mode, and in
# mode 3 the high 6 bits give the linear part in 4-byte units.
FLOW_MODE_DECAP_4789 = 0     # flow_extract(pkt, 4789, ...)
FLOW_MODE_VXLAN_HDR = 2      # flow_extract_vxlan: the input starts at the VXLAN header
FLOW_MODE_SPLIT = 3          # as mode 0, headers linear and the rest in a frag


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    frames, ofs = [], 24
    while ofs + 16 <= len(data):
        _, _, caplen, _ = struct.unpack(endian + "IIII", data[ofs:ofs + 16])
        frames.append(data[ofs + 16:ofs + 16 + caplen])
        ofs += 16 + caplen
    return frames


def read_names(set_name, count):
    path = os.path.join(HERE, set_name + ".names")
    if set_name == "golden_malformed":
        path = os.path.join(HERE, set_name + ".expect")
        with open(path) as f:
            names = [line.split("#", 1)[1].split()[-1] for line in f
                     if line.strip() and not line.startswith("#")]
    elif os.path.exists(path):
        with open(path) as f:
            names = [line.strip() for line in f]
    else:
        names = []
    return names + ["frame"] * (count - len(names))


def innermost_l4(frame):
    """(offset, L4 layer, IP version, payload size) of the last TCP or UDP header
    scapy finds: the inner one in a VXLAN frame, and never the UDP quoted inside
    an ICMP error (UDPerror is a subclass, hence the exact type test).  None if
    there is none."""
    try:
        layer = Ether(frame)
    except Exception:  # scapy gives up on some malformed frames: no offsets then
        return None
    found, version = None, None
    while layer is not None and layer.name != "NoPayload":
        if layer.name in ("IP", "IPv6"):
            version = 4 if layer.name == "IP" else 6
        if type(layer) in (TCP, UDP):
            padding = layer.getlayer(Padding)
            payload = len(bytes(layer.payload)) - (len(bytes(padding)) if padding else 0)
            found = (len(frame) - len(bytes(layer)), layer, version, payload)
        layer = layer.payload if layer.payload else None
    return found


def vxlan_offset(frame):
    """Offset of the VXLAN header in a frame scapy can dissect, or None."""
    try:
        layer = Ether(frame).getlayer(VXLAN)
    except Exception:
        return None
    return len(frame) - len(bytes(layer)) if layer is not None else None


def flow_seeds(file_name, frame):
    """Every frame as is (mode 0); a VXLAN frame also from its VXLAN header on
    (mode 2); a frame with L4 payload also split after its headers (mode 3)."""
    seeds = [(file_name, bytes([FLOW_MODE_DECAP_4789]) + frame)]
    vx = vxlan_offset(frame)
    if vx is not None:
        seeds.append((file_name + "__at_vxlan", bytes([FLOW_MODE_VXLAN_HDR]) + frame[vx:]))
    l4 = innermost_l4(frame)
    if l4 is not None and l4[3] > 0:
        ofs, layer = l4[0], l4[1]
        headers = ofs + (layer.dataofs * 4 if type(layer) is TCP else 8)
        seeds.append((file_name + "__split", bytes([FLOW_MODE_SPLIT | min(63, headers // 4) << 2]) + frame))
    return seeds


def vnet_seed(frame, vxlan):
    ctl = VNET_CTL_VXLAN if vxlan else 0
    flags = gso_type = hdr_len = gso_size = csum_start = csum_offset = 0
    l4 = innermost_l4(frame)
    if l4 is not None:
        ofs, layer, version, payload = l4
        is_tcp = type(layer) is TCP
        flags, csum_start = NEEDS_CSUM, ofs
        csum_offset = TCP_CSUM_OFFSET if is_tcp else UDP_CSUM_OFFSET
        if payload > 1:
            gso_type = GSO_UDP_L4 if not is_tcp else GSO_TCPV6 if version == 6 else GSO_TCPV4
            gso_size = max(1, payload // 2)
            hdr_len = ofs + (layer.dataofs * 4 if is_tcp else 8)
            ctl |= VNET_CTL_FRAGS | ((((gso_size - 1) // 8) & 0x1f) << 3)
    hdr = struct.pack("<BBHHHH", flags, gso_type, hdr_len, gso_size, csum_start, csum_offset)
    return bytes([ctl]) + hdr + frame


def write_corpus(name, seeds):
    directory = os.path.join(REPO, "fuzz", "corpus", name)
    if not os.path.exists(os.path.join(REPO, "fuzz", name + ".c")):
        print("%s: fuzzer not there yet, skipped" % name)
        return
    os.makedirs(directory, exist_ok=True)
    for old in os.listdir(directory):
        if old.startswith("golden_"):
            os.unlink(os.path.join(directory, old))
    for file_name, data in seeds:
        with open(os.path.join(directory, file_name), "wb") as f:
            f.write(data)
    print("%s: %d golden seeds" % (name, len(seeds)))


def main():
    flow, vnet_seeds = [], []
    for set_name in SETS:
        frames = read_pcap(os.path.join(HERE, set_name + ".pcap"))
        names = read_names(set_name, len(frames))
        for i, (frame, name) in enumerate(zip(frames, names)):
            file_name = "%s_%03d_%s" % (set_name, i + 1, name)
            vxlan = set_name == "golden_vxlan" or name.startswith("vxlan")
            flow.extend(flow_seeds(file_name, frame))
            vnet_seeds.append((file_name, vnet_seed(frame, vxlan)))
    write_corpus("fuzz_flow_extract", flow)
    write_corpus("fuzz_vnet_hdr", vnet_seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
