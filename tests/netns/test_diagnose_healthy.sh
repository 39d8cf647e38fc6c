#!/bin/bash
# diagnose on healthy bulk TCP: no finding, exit 0, with a vxswitchd peer,
# a kernel vxlan peer (udpcsum) and an Open vSwitch peer (userspace
# datapath, userspace tunnelling, no TSO, options:csum=true: set up as
# bench/vxbench does; skipped when OVS is not installed), one iperf3 stream
# each way (so each side sees both the data direction and the ACK-only
# direction), on the default underlay (gso-wire) and on mtu-wire (the kernel cuts frames to MTU size
# and the receiving veth runs GRO, as a NIC would).  Then a VNI without a local port: floods
# from the other host are a note, not a problem.
#
#   vxt61-PID-vm1       vxt61-PID-h1                          vxt61-PID-h2          vxt61-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd | kernel vxlan | OVS --> vnet2 192.0.2.2
#                      198.51.100.1                  198.51.100.2           VNI 99
set -e
cd "$(dirname "$0")/../.."
TOP=$PWD
. bench/vxbench/datapaths.sh # lib.sh, and ovs_start
rig_init "vxt61-$$"
trap rig_cleanup EXIT
peers="vxswitchd gso|vxswitchd mtu|kernel gso|kernel mtu"
if command -v ovs-vswitchd >/dev/null; then peers="$peers|ovs gso"; else echo "  (no Open vSwitch: its peer is skipped)"; fi

# no_finding SIDE WHAT: diagnose of host SIDE exits 0 with "no problem found",
# and -j lists no problem.
no_finding() {
	local out rc=0
	out=$(vx "$1" diagnose) || rc=$?
	[ "$rc" = 0 ] || fail "$2: h$1's diagnose exits $rc: $out"
	grep -qx "no problem found" <<<"$out" || fail "$2: h$1's diagnose says: $out"
	rc=0
	out=$(vx "$1" -j diagnose) || rc=$?
	[ "$rc" = 0 ] && /usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["problems"] == 0 and all(not f["problem"] for f in d["findings"]) else 1)' "$out" ||
		fail "$2: h$1's -j diagnose: $out"
}

IFS='|' read -ra combos <<<"$peers"
for combo in "${combos[@]}"; do
	set -- $combo
	peer=$1 mode=$2
	rig_create 4
	rig_wire_mode "$mode"
	rig_vxswitchd 1
	case $peer in
	vxswitchd) rig_vxswitchd 2 ;;
	kernel) rig_kernel 2 ;;
	ovs) # OVS checks outer UDP checksums in userspace, where a veth's
	     # unfinished ones (tx checksum offload) look bad: finish them
	     # on our side, as OVS documents for veth peers.
	     nh1 ethtool -K u1 tx off >/dev/null
	     ovs_start 2 false afpacket > "$RIG_DIR/ovs-start.log" 2>&1
	     # Checksummed datagrams, as the kernel peer's (udpcsum): Open
	     # vSwitch's default, csum=false, is the zero_csum_peer cause
	     # (test_diagnose_zero_csum.sh).
	     ovs-vsctl --db=unix:"$RIG_DIR/ovs-h2/db.sock" --timeout=10 set interface vx0 options:csum=true
	     nh1 ping -c 1 -W 2 "$(u_addr 2)" >/dev/null 2>&1 || true ;; # OVS learns the next hop by ARP
	esac
	nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping ($peer peer, $mode-wire)"
	up=$(rig_iperf 3 1); down=$(rig_iperf 3 2)
	no_finding 1 "$peer peer, $mode-wire, after iperf3 both ways ($up / $down Gbit/s)"
	[ "$peer" != vxswitchd ] || no_finding 2 "$peer peer, $mode-wire"
	spf=$(vx_stat 1 'round(d["gro"]["segments_per_frame"], 1)')
	acks=$(vx_stat 1 'd["gro"]["passthrough"].get("pure_ack", 0)')
	pass "$peer peer, $mode-wire: iperf3 $up Gbit/s out, $down Gbit/s in (h1 GRO: $spf segments a frame, $acks pure ACKs passed), diagnose: no problem found, exit 0"
	rig_cleanup
	rig_init "vxt61-$$"
done

# A VNI with no local port: h1's floods (vm1's ARP) end at h2's vx99 as
# no_local_port drops, which diagnose tells as a note, not a problem.
rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
vx 2 port del vnet2 >/dev/null
nvm1 ping -c 2 -i 0.2 -W 1 "$(vm_addr4 2)" >/dev/null 2>&1 && fail "vm2 answered with no port on h2"
nolocal=$(vx_stat 2 'port("vx99")["drops"].get("no_local_port", 0)')
[ "$nolocal" -gt 0 ] || fail "h2 counted no no_local_port drop of vm1's ARP"
rc=0; out=$(vx 2 diagnose) || rc=$?
[ "$rc" = 0 ] && grep -Eq "vx99: VNI 99 has no local port: [0-9]+ frames flooded here by remote VTEPs were dropped" <<<"$out" ||
	fail "no local port: h2's diagnose exits $rc: $out"
pass "no local port on h2: $nolocal floods from h1 dropped as no_local_port, a note (diagnose exits 0)"
