#!/bin/bash
# Tenant isolation with overlapping addresses: two tenants (VNI 99 and 100)
# on the same two hosts, whose VMs have the same MACs and the same IPv4
# addresses.  Each tenant in turn sends 1,000,000 frames (unicast to its
# peer, broadcast, unknown unicast, ARP requests, IPv6 neighbour
# solicitations) while the other is silent:
#   - the silent tenant's VMs receive nothing (their interfaces' kernel
#     counters, taken with IPv6 and ARP quiet on them);
#   - on the underlay, no datagram carries the silent tenant's VNI
#     (counted in-kernel by a BPF filter on the VXLAN header, so a capture
#     of a million frames loses none of the ones that matter);
#   - the sending tenant's peer VM does receive its frames.
#
#   vm1 vnet1 192.0.2.1 02:00:00:00:00:01 --+                        +-- vnet2 192.0.2.2 02:00:00:00:00:02 vm2  VNI 99
#                                           vxswitchd -- u1 == u2 -- vxswitchd
#   vm3 vnet3 192.0.2.1 02:00:00:00:00:01 --+   (h1)               (h2) +-- vnet4 192.0.2.2 02:00:00:00:00:02 vm4  VNI 100
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt20-$$"
trap rig_cleanup EXIT
VM3=$P-vm3; VM4=$P-vm4
FRAMES=${ISOLATION_FRAMES:-1000000}
MAC1=02:00:00:00:00:01 MAC2=02:00:00:00:00:02

rig_create 4
rig_ns_add "$VM3"
rig_ns_add "$VM4"
# The rig's own vnet1/vnet2 get their MACs by `mac` (a tap the switch makes).
RIG_EXTRA_CONF="port add vx100 type vxlan vni 100 local 198.51.100.1 remote 198.51.100.2
port add vnet3 type tap vni 100 netns $VM3 mtu 1450 mac $MAC1" rig_vxswitchd 1
RIG_EXTRA_CONF="port add vx100 type vxlan vni 100 local 198.51.100.2 remote 198.51.100.1
port add vnet4 type tap vni 100 netns $VM4 mtu 1450 mac $MAC2" rig_vxswitchd 2
nvm1 ip link set vnet1 address $MAC1
nvm2 ip link set vnet2 address $MAC2
# vm: NS DEV ADDR — quiet (no IPv6, no ARP of its own), up, addressed.
quiet() {
	n "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1"
	n "$1" ip link set "$2" arp off up
	n "$1" ip addr replace "$3/24" dev "$2"
}
quiet "$VM1" vnet1 192.0.2.1; quiet "$VM2" vnet2 192.0.2.2
quiet "$VM3" vnet3 192.0.2.1; quiet "$VM4" vnet4 192.0.2.2
# With ARP off the VMs need their neighbour entries by hand.
nvm1 ip neigh replace 192.0.2.2 lladdr $MAC2 dev vnet1
nvm2 ip neigh replace 192.0.2.1 lladdr $MAC1 dev vnet2
n "$VM3" ip neigh replace 192.0.2.2 lladdr $MAC2 dev vnet3
n "$VM4" ip neigh replace 192.0.2.1 lladdr $MAC1 dev vnet4
nvm1 ping -c 2 -i 0.2 -W 2 192.0.2.2 >/dev/null || fail "ping in VNI 99"
n "$VM3" ping -c 2 -i 0.2 -W 2 192.0.2.2 >/dev/null || fail "ping in VNI 100"
pass "two tenants with the same MACs and IPv4 addresses ping each inside their own VNI"

rx() { n "$1" cat "/sys/class/net/$2/statistics/rx_packets"; }

# vni_count FILE: datagrams counted by a tcpdump that matched in-kernel.
vni_count() { tcpdump -r "$1" 2>/dev/null | wc -l; }

# blast TENANT_VNI: that tenant's VM on host 1 sends FRAMES frames; checks
# that the other tenant saw nothing, on the VMs and on the underlay.
blast() {
	local vni=$1 sender recv other_a other_b sdev rdev oa ob other_vni
	if [ "$vni" = 99 ]; then
		sender=$VM1 sdev=vnet1 recv=$VM2 rdev=vnet2 other_a=$VM3 oa=vnet3 other_b=$VM4 ob=vnet4 other_vni=100
	else
		sender=$VM3 sdev=vnet3 recv=$VM4 rdev=vnet4 other_a=$VM1 oa=vnet1 other_b=$VM2 ob=vnet2 other_vni=99
	fi
	local cap_other=$RIG_DIR/u1-vni$other_vni.pcap cap_own=$RIG_DIR/u1-vni$vni.pcap
	rig_capture "$H1" u1 "$cap_other" "udp dst port 4789 and (udp[12:4] >> 8) = $other_vni"
	local pid_other=$RIG_CAPTURE_PID
	rig_capture "$H1" u1 "$cap_own" -s 64 "udp dst port 4789 and (udp[12:4] >> 8) = $vni"
	local a0 b0 r0 sent
	a0=$(rx "$other_a" "$oa"); b0=$(rx "$other_b" "$ob"); r0=$(rx "$recv" "$rdev")
	sent=$(n "$sender" /usr/bin/python3 tests/netns/blast.py "$sdev" "$FRAMES" mix $MAC1 $MAC2 192.0.2.1 192.0.2.2)
	sleep 1.5
	rig_capture_stop
	RIG_CAPTURE_PID=$pid_other rig_capture_stop
	local da db dr wrong own
	da=$(( $(rx "$other_a" "$oa") - a0 )); db=$(( $(rx "$other_b" "$ob") - b0 )); dr=$(( $(rx "$recv" "$rdev") - r0 ))
	wrong=$(vni_count "$cap_other"); own=$(vni_count "$cap_own")
	echo "  VNI $vni sent $sent frames: its peer received $dr; VNI $other_vni VMs received $da + $db; underlay datagrams with VNI $vni: $own, with VNI $other_vni: $wrong"
	[ "$sent" -ge $((FRAMES / 2)) ] || fail "VNI $vni: only $sent of $FRAMES frames left the VM"
	[ "$da" = 0 ] && [ "$db" = 0 ] || fail "VNI $vni traffic reached VNI $other_vni's VMs ($da, $db frames)"
	[ "$wrong" = 0 ] || fail "$wrong datagrams with VNI $other_vni on the underlay while only VNI $vni sent"
	[ "$dr" -gt $((sent / 10)) ] || fail "VNI $vni's peer received only $dr of $sent frames"
	[ "$own" -gt $((sent / 10)) ] || fail "only $own VNI $vni datagrams on the underlay for $sent frames"
	CHECKED=$(( ${CHECKED:-0} + sent ))
}

blast 99
blast 100
pass "$CHECKED frames (unicast, broadcast, unknown unicast, ARP, ND) with overlapping MACs and IPs: none crossed tenants, on the VMs or on the underlay"
vx 1 fdb show vni 99 | grep -q "^$MAC1 vni 99 port vnet1" || fail "VNI 99 lost its entry for $MAC1"
vx 1 fdb show vni 100 | grep -q "^$MAC1 vni 100 port vnet3" || fail "VNI 100 lost its entry for $MAC1"
pass "the same MAC is learned in both VNIs, each behind its own tenant's port"
