#!/bin/bash
# diagnose names a peer that sends IPv4 VXLAN with zero outer UDP checksums
# (zero_csum_peer), which the kernel's UDP GRO never coalesces: a kernel
# vxlan peer with `noudpcsum` (its IPv4 default) sends bulk TCP into our VM
# over mtu-wire (segments on the wire, GRO on the receiving veth, as a
# NIC).  The count comes from the socket's eBPF filter
# (ports[].vxlan.socket.rx_zero_csum) and must match the datagrams.  With
# `udpcsum` on the peer: no zero checksum counted, no finding, exit 0.  On
# gso-wire the kernel's GSO packets reach the socket whole (one ~64 KB
# "datagram" each): zero checksums, but nothing UDP GRO could have
# coalesced, so no finding either.  An Open vSwitch peer (userspace
# datapath, its default options:csum=false) is named too; with csum=true it
# is test_diagnose_healthy.sh's healthy OVS peer.
#
#   vxt65-PID-vm1       vxt65-PID-h1                      vxt65-PID-h2         vxt65-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ========== u2 -- kernel vxlan (noudpcsum | udpcsum) <-- vnet2 (iperf3 -c)
set -e
cd "$(dirname "$0")/../.."
TOP=$PWD
. bench/vxbench/datapaths.sh # lib.sh, and ovs_start
rig_init "vxt65-$$"
trap rig_cleanup EXIT

# run MODE CSUM: a fresh rig, iperf3 vm2 -> vm1; Gbit/s in $GBIT.
run() {
	rig_create 4
	rig_wire_mode "$1"
	# The kernel segments tunnel packets with outer checksums on the wire
	# too (rig_wire_mode leaves the csum variant of the feature on).
	[ "$1" = gso ] || nh2 ethtool -K u2 tx-udp_tnl-csum-segmentation off >/dev/null 2>&1 || true
	rig_vxswitchd 1
	KERNEL_UDPCSUM=$2 rig_kernel 2
	nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping ($1-wire, udpcsum $2)"
	GBIT=$(rig_iperf 4 2)
}
sock() { vx_stat 1 "port(\"vx$VNI\")[\"vxlan\"][\"socket\"][\"$1\"]"; }

# ---- 1. noudpcsum, mtu-wire: named ------------------------------------------------
run mtu 0; gbit=$GBIT
[ "$(sock rx_zero_csum_counted)" = True ] || fail "rx_zero_csum not counted: $(cat "$RIG_DIR/h1.log")"
dg=$(sock rx_datagrams); zc=$(sock rx_zero_csum); co=$(sock rx_gro_buffers)
[ "$dg" -ge 10000 ] || fail "only $dg datagrams"
# Every datagram the socket read came with a zero checksum (ARP/ND aside,
# which are not VXLAN datagrams: the two counts may differ by a handful).
[ $((dg - zc)) -le 5 ] && [ $((zc - dg)) -le 5 ] || fail "$zc zero-checksum datagrams of $dg"
line=$(diag_names 1 zero_csum_peer 'f["port"] == "vx99" and f["zero_csum"] * 2 >= f["datagrams"] and f["coalesced"] * 100 < f["datagrams"]' \
	"vx99: the peer sends zero UDP checksums: [0-9]+ of [0-9]+ datagrams.*udpcsum")
pass "noudpcsum peer, mtu-wire ($gbit Gbit/s): $zc of $dg datagrams with a zero checksum, $co coalesced; diagnose: $line"
rig_cleanup; rig_init "vxt65-$$"

# ---- 2. udpcsum, mtu-wire: no finding --------------------------------------------------
run mtu 1; gbit=$GBIT
dg=$(sock rx_datagrams); zc=$(sock rx_zero_csum)
[ "$dg" -ge 10000 ] && [ "$zc" = 0 ] || fail "udpcsum peer: $zc zero-checksum datagrams of $dg"
out=$(vx 1 diagnose) || fail "udpcsum peer, mtu-wire: diagnose exits $?: $out"
grep -qx "no problem found" <<<"$out" || fail "udpcsum peer, mtu-wire: $out"
pass "udpcsum peer, mtu-wire ($gbit Gbit/s): 0 of $dg datagrams with a zero checksum; diagnose: no problem found, exit 0"
rig_cleanup; rig_init "vxt65-$$"

# ---- 3. noudpcsum, gso-wire: whole GSO packets, no finding ----------------------------------
run gso 0; gbit=$GBIT
dg=$(sock rx_datagrams); zc=$(sock rx_zero_csum); by=$(sock rx_bytes)
out=$(vx 1 diagnose) || fail "noudpcsum peer, gso-wire: diagnose exits $?: $out"
grep -qx "no problem found" <<<"$out" || fail "noudpcsum peer, gso-wire: $out"
pass "noudpcsum peer, gso-wire ($gbit Gbit/s): $zc of $dg datagrams with a zero checksum, $((by / (dg ? dg : 1))) bytes each: diagnose: no problem found, exit 0"

# ---- 4. Open vSwitch with its default csum=false: named ---------------------------------
command -v ovs-vswitchd >/dev/null || { echo "  (no Open vSwitch: its case is skipped)"; exit 0; }
rig_cleanup; rig_init "vxt65-$$"
rig_create 4
rig_vxswitchd 1
nh1 ethtool -K u1 tx off >/dev/null # OVS drops unfinished checksums (docs/INTEROP.md)
ovs_start 2 false afpacket > "$RIG_DIR/ovs-start.log" 2>&1
nh1 ping -c 1 -W 2 "$(u_addr 2)" >/dev/null 2>&1 || true # OVS learns the next hop by ARP
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping (OVS peer)"
gbit=$(rig_iperf 4 2)
dg=$(sock rx_datagrams); zc=$(sock rx_zero_csum)
line=$(diag_names 1 zero_csum_peer 'f["port"] == "vx99" and f["zero_csum"] * 2 >= f["datagrams"]' \
	"vx99: the peer sends zero UDP checksums.*options:csum=true")
pass "Open vSwitch peer, csum=false ($gbit Gbit/s): $zc of $dg datagrams with a zero checksum; diagnose: $line"
