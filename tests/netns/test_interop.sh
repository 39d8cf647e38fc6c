#!/bin/bash
# Interop: one host runs vxswitchd, the other the kernel's vxlan device and a
# bridge (bridge-nf-call-* = 0).  Ping and one iperf3 stream both ways, in
# gso-wire and mtu-wire over IPv4, and gso-wire over IPv6; in IPv4
# mtu-wire the kernel sends zero outer UDP checksums (its IPv4 default),
# otherwise it computes them.
#
#   vxt2-PID-vm1        vxt2-PID-h1                          vxt2-PID-h2                  vxt2-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- kvx (kernel vxlan) -- kbr -- kv2 == vnet2 192.0.2.2
#                      198.51.100.1                  198.51.100.2      VNI 99
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt2-$$"
trap rig_cleanup EXIT

for combo in "4 gso" "4 mtu" "6 gso"; do
	set -- $combo
	underlay=$1 mode=$2
	rig_create "$underlay"
	rig_wire_mode "$mode"
	rig_vxswitchd 1
	KERNEL_UDPCSUM=$([ "$mode" = gso ] && echo 1 || echo 0) rig_kernel 2
	# The kernel's side keeps its veth defaults (tx checksum offload on):
	# a veth delivers CHECKSUM_PARTIAL packets unfinished, so the kernel
	# vxlan's inner TCP/UDP checksums reach our UDP socket as bare
	# pseudo-header sums.  rx-csum (on by default) finishes them; without
	# it the VM would drop every TCP segment (OVS documents `ethtool -K
	# DEV tx off` on the peer for this).
	sleep 1 # IPv6 underlay: neighbour discovery on u1/u2

	nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping vxswitchd -> kernel ($mode-wire, IPv$underlay underlay)"
	nvm2 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 1)" >/dev/null || fail "ping kernel -> vxswitchd ($mode-wire, IPv$underlay underlay)"
	nvm2 ping -6 -c 2 -i 0.2 -W 2 "$(vm_addr6 1)" >/dev/null || fail "IPv6 ping kernel -> vxswitchd ($mode-wire, IPv$underlay underlay)"
	pass "ping both ways with the kernel vxlan, $mode-wire, IPv$underlay underlay"

	up=$(rig_iperf 2 1); down=$(rig_iperf 2 2)
	echo "  iperf3 vxswitchd->kernel $up Gbit/s, kernel->vxswitchd $down Gbit/s ($mode-wire, IPv$underlay underlay)"
	/usr/bin/python3 -c "import sys; sys.exit(0 if $up > 0.05 and $down > 0.05 else 1)" || fail "iperf3 too slow: $up / $down"
	merged=$(vx_stat 1 'd["gro"]["merged_frames"]')
	if [ "$mode" = mtu ]; then
		[ "$merged" -gt 10 ] || fail "GRO did not merge the kernel's datagrams ($merged frames)"
		# The kernel's IPv4 default is a zero outer UDP checksum, which
		# its UDP GRO never coalesces: datagrams arrive a few per read,
		# and only runs held across the reads of one poll make big frames.
		per=$(vx_stat 1 'round(d["gro"]["merged_segments"] / max(1, d["gro"]["merged_frames"]), 1)')
		/usr/bin/python3 -c "import sys; sys.exit(0 if $per >= 15 else 1)" ||
			fail "GRO merged only $per segments per frame from the kernel's zero-checksum datagrams"
		echo "  GRO: $per segments per merged frame from the kernel's zero-checksum datagrams"
	else
		# gso-wire: the kernel's GSO packets cross the veth whole and
		# reach us as single big datagrams: nothing to merge, and the
		# VM gets them big.
		big=$(vx_stat 1 'big_share("vnet1")')
		/usr/bin/python3 -c "import sys; sys.exit(0 if $big >= 0.5 else 1)" ||
			fail "kernel's GSO frames did not reach VM1 big ($big of bytes in frames >= 32 KB)"
		# ... and as GSO frames (gso_size from the tap's MTU), not as
		# 64 KB frames no MTU allows.
		marked=$(vx_stat 1 'd["gro"]["whole_big_tcp_marked"]')
		tapgso=$(vx_stat 1 'port("vnet1")["tap"]["tx_gso_frames"]')
		[ "$marked" -gt 100 ] && [ "$tapgso" -ge "$marked" ] ||
			fail "whole big segments not given GSO metadata ($marked marked, $tapgso GSO frames to vnet1)"
	fi
	[ "$(vx_stat 1 'port("vx99")["vxlan"]["socket"]["tx_errors"]')" = 0 ] || fail "send errors towards the kernel"
	pass "iperf3 both ways with the kernel vxlan, $mode-wire, IPv$underlay underlay ($merged GRO frames)"
	finished=$(vx_stat 1 'd["rx_csum"]["finished"]')
	[ "$finished" -gt 100 ] || fail "rx-csum finished only $finished unfinished checksums from the kernel's veth"
	vx 1 diagnose | grep -q "arrived unfinished" || fail "diagnose does not name the unfinished checksums"
	csum_errors=$(nvm1 nstat -az TcpInCsumErrors | awk '/TcpInCsumErrors/ { print $2 }')
	[ "$csum_errors" = 0 ] || fail "VM1 saw $csum_errors TCP checksum errors"
	pass "$finished unfinished inner checksums from the kernel's veth finished, 0 checksum errors in the VM"
	rig_cleanup
	rig_init "vxt2-$$"
done

# A pool barely larger than one receive round, against the kernel's
# zero-checksum datagrams (one buffer each, pinned by held GRO runs): runs
# are completed early instead of the next round finding no buffer.
rig_create 4
rig_wire_mode mtu
printf '#!/bin/sh\nexec %s -p 600 "$@"\n' "$(cd "$(dirname "$VXSWITCHD")" && pwd)/$(basename "$VXSWITCHD")" > "$RIG_DIR/vxswitchd-small-pool"
chmod +x "$RIG_DIR/vxswitchd-small-pool"
VXSWITCHD=$RIG_DIR/vxswitchd-small-pool rig_vxswitchd 1
KERNEL_UDPCSUM=0 rig_kernel 2
nvm2 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 1)" >/dev/null || fail "ping with a 600-buffer pool"
down=$(rig_iperf 2 2 -P 4) || fail "iperf3 kernel->vxswitchd with a 600-buffer pool"
early=$(vx_stat 1 'd["gro"]["pool_low_flushes"]')
nobuf=$(vx_stat 1 'port("vx99")["vxlan"]["socket"]["rx_no_buffer"] + d["pool"]["alloc_failures"]')
[ "$early" -gt 0 ] || fail "a 600-buffer pool never made GRO complete its runs early"
[ "$nobuf" = 0 ] || fail "$nobuf receives found no buffer with a 600-buffer pool"
pass "600-buffer pool: $down Gbit/s from the kernel, GRO completed runs early $early times, 0 receives without a buffer"
