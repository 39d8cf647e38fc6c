#!/bin/bash
# diagnose names why frames to a VM are small, from a kernel vxlan peer
# over mtu-wire (segments on the wire, GRO on the receiving veth, as a
# NIC), iperf3 vm2 -> vm1 for 8 s (the diagnose window is the last 5-10 s):
#   1. the peer VM does not send TSO (ethtool -K tso off gso off) and its
#      segments leave spread out (tbf 30 Mbit/s, one MTU-sized packet at a
#      time: ~390 us apart, farther than any sane hold): small_frames_no_tso,
#      exit 1.  The same peer with TSO on and no tbf: no finding, exit 0.
#   2. the same peer at 150 Mbit/s (~78 us apart) with our gro-hold-us 0
#      (the default: runs complete at the end of each socket poll): the
#      hold is too short, gro_hold_short, exit 1, advising a hold of two
#      gaps (at most 500 us); with that hold set, frames merge: no finding,
#      exit 0.
#
#   vxt66-PID-vm1       vxt66-PID-h1                      vxt66-PID-h2    vxt66-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ========== u2 -- kernel vxlan <-- vnet2 (iperf3 -c; tso off, tbf)
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt66-$$"
trap rig_cleanup EXIT

# rig PACING: a fresh rig; PACING "" (TSO on, no qdisc) or a tbf rate.
rig() {
	rig_create 4
	rig_wire_mode mtu
	# The kernel segments tunnel packets with outer checksums on the wire
	# too (rig_wire_mode leaves the csum variant of the feature on).
	nh2 ethtool -K u2 tx-udp_tnl-csum-segmentation off >/dev/null 2>&1 || true
	rig_vxswitchd 1
	rig_kernel 2
	if [ -n "$1" ]; then
		nvm2 ethtool -K vnet2 tso off gso off >/dev/null
		nvm2 tc qdisc add dev vnet2 root tbf rate "$1" burst 1600 latency 100ms
	fi
	nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping (${1:-no pacing})"
}
spf() { vx_stat 1 'round(d["gro"]["segments_per_frame"], 2)'; }
avg() { vx_stat 1 'port("vnet1")["tx_bytes"] // max(1, port("vnet1")["tx_frames"])'; }
no_finding() {
	local out rc=0
	out=$(vx 1 diagnose) || rc=$?
	[ "$rc" = 0 ] && grep -qx "no problem found" <<<"$out" || fail "$1: diagnose exits $rc: $out"
}

# ---- 1. a peer without TSO ---------------------------------------------------------------
rig 30mbit
gbit=$(rig_iperf 8 2)
line=$(diag_names 1 small_frames_no_tso 'f["port"] == "vnet1" and f["coalesced"] * 100 < f["datagrams"] and f["datagram_avg"] <= 2048 and f["avg_bytes"] < 3072' \
	"frames to vnet1 average [0-9.]+ KB: the peer is not sending TSO")
! vx 1 -j diagnose | grep -q '"gro_hold_short"' || fail "no TSO, paced: also called gro_hold_short: $(vx 1 diagnose)"
pass "peer without TSO, 30 Mbit/s ($gbit Gbit/s, $(spf) segments a frame, $(avg) bytes a frame): $line"
rig_cleanup; rig_init "vxt66-$$"

rig ""
gbit=$(rig_iperf 8 2)
no_finding "peer with TSO"
pass "the same peer with TSO ($gbit Gbit/s, $(spf) segments a frame, $(avg) bytes a frame): no problem found, exit 0"
rig_cleanup; rig_init "vxt66-$$"

# ---- 2. the hold timer too short ---------------------------------------------------------
rig 300mbit
gbit=$(rig_iperf 8 2)
line=$(diag_names 1 gro_hold_short 'f["port"] == "vnet1" and f["gro_hold_us"] == 0 and f["timer_flushes"] * 2 > f["frames"]' \
	"the GRO hold timer is too short \(gro-hold-us 0\).*set gro-hold-us [0-9]+")
hold=$(vx 1 -j diagnose | /usr/bin/python3 -c 'import json, sys; print([f for f in json.load(sys.stdin)["findings"] if f["cause"] == "gro_hold_short"][0]["advised_hold_us"])')
grep -q "set gro-hold-us $hold" <<<"$(vx 1 diagnose)" || fail "the sentence does not advise gro-hold-us $hold: $(vx 1 diagnose)"
[ "$hold" -ge 50 ] && [ "$hold" -le 500 ] || fail "advised hold $hold"
before=$(spf)
pass "paced at 300 Mbit/s with gro-hold-us 0 ($gbit Gbit/s, $before segments a frame, $(avg) bytes a frame): $line"
vx 1 set gro-hold-us "$hold"
vx 1 -j stats >/dev/null
s0=$(vx_stat 1 'd["gro"]["segments_in"]'); f0=$(vx_stat 1 'd["gro"]["frames_out"]')
gbit=$(rig_iperf 8 2)
no_finding "gro-hold-us $hold"
s1=$(vx_stat 1 'd["gro"]["segments_in"]'); f1=$(vx_stat 1 'd["gro"]["frames_out"]')
after=$(/usr/bin/python3 -c "print(round(($s1 - $s0) / max(1, $f1 - $f0), 2))")
/usr/bin/python3 -c "import sys; sys.exit(0 if $after > $before else 1)" || fail "gro-hold-us $hold: $after segments a frame, $before before"
pass "with the advised gro-hold-us $hold ($gbit Gbit/s): $after segments a frame (was $before); no problem found, exit 0"
