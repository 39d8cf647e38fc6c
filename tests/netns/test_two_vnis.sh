#!/bin/bash
# Two VNIs on the same two hosts share one UDP socket per host (demux by
# VNI); traffic of VNI 99 is never seen in VNI 100 (captured in a VNI 100
# VM while VNI 99 pings, ARPs and streams), and a datagram for a VNI no
# port serves is dropped and counted (vxlan_unknown_vni).
#
#   vxt5-PID-vm1 vnet1 192.0.2.1   --+                          +-- vnet2 192.0.2.2   vxt5-PID-vm2   VNI 99
#                                    vxswitchd -- u1 ==== u2 -- vxswitchd
#   vxt5-PID-vm3 vnet3 203.0.113.3 --+  (h1)  198.51.100.1/.2   (h2) +-- vnet4 203.0.113.4 vxt5-PID-vm4  VNI 100
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt5-$$"
trap rig_cleanup EXIT
VM3=$P-vm3; VM4=$P-vm4

rig_create 4
rig_ns_add "$VM3"
rig_ns_add "$VM4"
RIG_EXTRA_CONF="port add vx100 type vxlan vni 100 local 198.51.100.1 remote 198.51.100.2
port add vnet3 type tap vni 100 netns $VM3 mtu 1450" rig_vxswitchd 1
RIG_EXTRA_CONF="port add vx100 type vxlan vni 100 local 198.51.100.2 remote 198.51.100.1
port add vnet4 type tap vni 100 netns $VM4 mtu 1450" rig_vxswitchd 2
n "$VM3" ip link set vnet3 up; n "$VM3" ip addr add 203.0.113.3/24 dev vnet3
n "$VM4" ip link set vnet4 up; n "$VM4" ip addr add 203.0.113.4/24 dev vnet4

# One socket per worker (reuseport lanes), shared by both VNIs.
workers=$(vx_stat 1 "d['workers']['n']")
[ "$(nh1 ss -Hulpn 'sport = :4789' | wc -l)" = "$workers" ] ||
	fail "expected one shared UDP socket per worker ($workers) on h1: $(nh1 ss -ulpn)"
pass "two VNIs share one UDP socket per host and worker ($workers)"

PCAP=$RIG_DIR/vm3.pcap
rig_capture "$VM3" vnet3 "$PCAP"
nvm1 ip neigh flush all
nvm1 ping -c 5 -i 0.1 -W 2 "$(vm_addr4 2)" >/dev/null || fail "VNI 99 ping"
nvm1 arping -c 2 -I vnet1 "$(vm_addr4 2)" >/dev/null 2>&1 || true
rig_iperf 1 1 >/dev/null || fail "VNI 99 iperf3"
n "$VM3" ping -c 3 -i 0.2 -W 2 203.0.113.4 >/dev/null || fail "VNI 100 ping"
rig_capture_stop
leaked=$(tcpdump -nn -r "$PCAP" 'host 192.0.2.1 or host 192.0.2.2 or (arp and (net 192.0.2.0/24))' 2>/dev/null | wc -l)
own=$(tcpdump -nn -r "$PCAP" 'host 203.0.113.4' 2>/dev/null | wc -l)
echo "  capture in the VNI 100 VM: $own frames of its own traffic, $leaked of VNI 99"
[ "$own" -gt 0 ] || { ls -la "$RIG_DIR"; cat "$PCAP.err"; tcpdump -nn -r "$PCAP" | head; fail "the capture saw nothing at all"; }
[ "$leaked" = 0 ] || fail "$leaked VNI 99 frames seen in VNI 100"
pass "VNI 99 traffic never reached the VNI 100 VM"

nh2 /usr/bin/python3 -c '
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
frame = bytes(6) + bytes([2, 0, 0, 0, 0, 1]) + b"\x08\x00" + bytes(46)
for _ in range(3):
	s.sendto(struct.pack("!II", 0x08000000, 555 << 8) + frame, ("198.51.100.1", 4789))'
sleep 0.3
[ "$(vx_stat 1 'd["drops"].get("vxlan_unknown_vni", 0)')" -ge 3 ] || fail "unknown VNI not counted: $(vx 1 stats | grep -i drops)"
pass "datagrams for VNI 555 dropped as vxlan_unknown_vni"
