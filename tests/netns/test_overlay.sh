#!/bin/bash
# Two vxswitchd joined by a veth underlay: ping and one iperf3 TCP stream
# each way between the VMs, IPv4 and IPv6 inside the overlay, over an IPv4
# and then an IPv6 underlay, with our GSO (TSO frames cut into UDP_SEGMENT
# trains) and GRO (64 KB frames written to the tap) on the path.
#
#   vxt1-PID-vm1        vxt1-PID-h1                         vxt1-PID-h2        vxt1-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
#   2001:db8:1::1       198.51.100.1 / 2001:db8:ff::1   198.51.100.2 / 2001:db8:ff::2   2001:db8:1::2
#                                       VNI 99
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt1-$$"
trap rig_cleanup EXIT

for underlay in 4 6; do
	rig_create "$underlay"
	rig_vxswitchd 1
	rig_vxswitchd 2

	nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "IPv4 ping over IPv$underlay underlay"
	nvm2 ping -c 3 -i 0.2 -W 2 "$(vm_addr6 1)" >/dev/null || fail "IPv6 ping over IPv$underlay underlay"
	# A ping larger than the inner MTU: fragmented by the VM, reassembled at the far VM.
	nvm1 ping -c 2 -i 0.2 -W 2 -s 3000 "$(vm_addr4 2)" >/dev/null || fail "3000-byte ping"
	pass "ping IPv4 and IPv6 over an IPv$underlay underlay"

	up=$(rig_iperf 2 1); down=$(rig_iperf 2 2)
	echo "  iperf3 vm1->vm2 $up Gbit/s, vm2->vm1 $down Gbit/s (IPv$underlay underlay)"
	/usr/bin/python3 -c "import sys; sys.exit(0 if $up > 0.05 and $down > 0.05 else 1)" || fail "iperf3 too slow: $up / $down"
	# IPv6 inside the overlay too.
	nvm2 iperf3 -s -1 -D -B "$(vm_addr6 2)" -p 5202 >/dev/null 2>&1
	sleep 0.3
	nvm1 iperf3 -6 -c "$(vm_addr6 2)" -p 5202 -t 1 >/dev/null || fail "iperf3 over IPv6 in the overlay"

	gso=$(vx_stat 1 'port("vx99")["vxlan"]["gso_frames"]')
	segs=$(vx_stat 1 'port("vx99")["vxlan"]["gso_segments"]')
	gsosends=$(vx_stat 1 'port("vx99")["vxlan"]["socket"]["tx_gso_sends"]')
	merged=$(vx_stat 2 'd["gro"]["merged_frames"]')
	share=$(vx_stat 2 'big_share("vnet2")')
	echo "  h1: $gso TSO frames cut into $segs segments, $gsosends UDP_SEGMENT sends; h2: $merged GRO frames, ${share} of bytes to vnet2 in frames >= 32 KB"
	[ "$gso" -gt 100 ] || fail "GSO did not run on h1 ($gso frames)"
	[ "$gsosends" -gt 100 ] || fail "UDP_SEGMENT not used ($gsosends sends)"
	[ "$merged" -gt 100 ] || fail "GRO did not merge on h2 ($merged frames)"
	/usr/bin/python3 -c "import sys; sys.exit(0 if $share >= 0.5 else 1)" || fail "frames to vnet2 are small: $share"
	[ "$(vx_stat 2 'port("vnet2")["tap"]["tx_errors"]')" = 0 ] || fail "tap write errors"
	pass "iperf3 both ways over an IPv$underlay underlay with GSO and GRO on the path"

	rig_cleanup
	rig_init "vxt1-$$"
done
