#!/bin/bash
# `vxctl diagnose` names EVPN causes that happen for real with unmodified
# FRR 8.4 (two vxswitch hosts, iBGP full mesh, one zebra + bgpd each):
#   - evpn_vni_unseen, with the reason read from the shadow devices:
#     h1's shadow vxlan taken down (reason vxlan_down), then taken out of
#     its bridge (vxlan_not_bridge_port); each time zebra stops
#     advertising VNI 99 (h2's flood list loses h1), which is what the
#     finding says; a port del + add makes them anew and h1 is back;
#   - evpn_mac_flapping: two VMs with one MAC, one on each host, both
#     sending: the MAC moves between the hosts; once it moved 5 times
#     within 180 s (FRR's duplicate-address detection defaults) diagnose
#     names it, and FRR's own detection lists it too (zebra sees each
#     flap as a move: a datagram does not move a local MAC on an EVPN
#     VNI, only zebra's remote route does; docs/EVPN.md).
#
# EVPN_DP=kernel (test_kdp_evpn_diag.sh): the same on the kernel datapath.
#
#   vm1 - h1 (vxswitchd) -u1-- fab0 --u2- h2 (vxswitchd) - vm2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
. tests/netns/evpn_lib.sh
rig_init "vxt93-$$"
evpn_trap
echo "datapath: ${EVPN_DP:-user}"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
until_true() {
	local end=$(( $(now_ms) + $1 * 1000 )); shift
	while [ "$(now_ms)" -lt "$end" ]; do "$@" && return 0; sleep 0.1; done
	return 1
}

evpn_fabric 2
evpn_vxswitchd 1
evpn_vxswitchd 2
for i in 1 2; do evpn_frr "$i" 2; done
vteps_are() { [ "$(evpn_vteps "$1")" = "$2" ]; }
until_true 30 vteps_are 1 198.51.100.2 || fail "h1's flood list: '$(evpn_vteps 1)'"
until_true 10 vteps_are 2 198.51.100.1 || fail "h2's flood list: '$(evpn_vteps 2)'"
vx 1 -j diagnose | grep -q '"cause":"evpn_' && fail "EVPN findings with the fabric up: $(vx 1 diagnose)"
pass "two hosts in the fabric, no EVPN finding"

# The shadow vxlan down: zebra withdraws the VNI (h2 loses h1's flood
# entry) and diagnose says why.
n "$P-h1" ip link set vxev99 down
diag_names 1 evpn_vni_unseen 'f["reason"] == "vxlan_down" and f["vni"] == 99' \
	"zebra does not see VNI 99.*vxlan_down"
until_true 15 vteps_are 2 "" || fail "h2 still floods to h1 with h1's shadow vxlan down: '$(evpn_vteps 2)'"
n "$P-h1" ip link set vxev99 up
until_true 15 vteps_are 2 198.51.100.1 || fail "h1 not back in h2's flood list: '$(evpn_vteps 2)'"
vx 1 -j diagnose | grep -q '"cause":"evpn_vni_unseen"' && fail "evpn_vni_unseen after the vxlan is up again"
pass "shadow vxlan down: evpn_vni_unseen (vxlan_down), zebra withdrew VNI 99; up again: back, no finding"

# Out of its bridge: zebra no longer takes it as a VNI.
n "$P-h1" ip link set vxev99 nomaster
diag_names 1 evpn_vni_unseen 'f["reason"] == "vxlan_not_bridge_port"' "zebra does not see VNI 99.*not_bridge_port"
until_true 15 vteps_are 2 "" || fail "h2 still floods to h1 with h1's shadow vxlan out of its bridge: '$(evpn_vteps 2)'"
# What the finding says to do: the port again, its shadow devices anew.
vx 1 port del vx99 >/dev/null
vx 1 port add vx99 type vxlan vni 99 local 198.51.100.1 evpn >/dev/null
until_true 15 vteps_are 2 198.51.100.1 || fail "h1 not back in h2's flood list after port del + add: '$(evpn_vteps 2)'"
until_true 15 vteps_are 1 198.51.100.2 || fail "h1's flood list after port del + add: '$(evpn_vteps 1)'"
vx 1 -j diagnose | grep -q '"cause":"evpn_vni_unseen"' && fail "evpn_vni_unseen after port del + add"
pass "shadow vxlan out of its bridge: evpn_vni_unseen (vxlan_not_bridge_port); port del + add: back"

# Two VMs with one MAC: vm2 takes vm1's MAC; both send unicast frames
# (to a neighbour that does not exist, so nothing answers) at once.
mac1=$(n "$P-vm1" cat /sys/class/net/vnet1/address)
n "$P-vm2" ip link set vnet2 address "$mac1"
for i in 1 2; do
	n "$P-vm$i" ip neigh replace 192.0.2.77 lladdr 02:bb:00:00:00:77 dev "vnet$i" nud permanent
	n "$P-vm$i" ping -q -i 0.3 -w 180 192.0.2.77 >/dev/null 2>&1 &
	RIG_PIDS="$RIG_PIDS $!"
done
flapping() {
	local i
	for i in 1 2; do
		vx "$i" -j diagnose | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if any(f["cause"] == "evpn_mac_flapping" and f["mac"] == sys.argv[1] and f["moves"] >= 5
                  for f in d["findings"]) else 1)' "$mac1" && { FLAP_HOST=$i; return 0; }
	done
	return 1
}
t0=$(now_ms)
until_true 60 flapping || fail "no evpn_mac_flapping for $mac1 on either host: $(vx 1 diagnose) / $(vx 2 diagnose)"
echo "figure: two VMs with one MAC sending every 0.3 s to evpn_mac_flapping on h$FLAP_HOST: $(( $(now_ms) - t0 )) ms"
diag_names "$FLAP_HOST" evpn_mac_flapping "f[\"mac\"] == \"$mac1\"" \
	"flap between hosts.*show evpn mac vni 99 duplicate"
# FRR's own duplicate-address detection (DAD) sees the same flaps: it is
# on, with the thresholds the finding uses (bgpd's defaults; docs/EVPN.md,
# "MAC flaps and FRR's duplicate-address detection")...
for i in 1 2; do
	cfg=$(evpn_dad_cfg "$i")
	[ "$cfg" = "on 5 180" ] || fail "h$i: zebra's duplicate-address detection is '$cfg', not on with 5 moves in 180 s"
done
# ...and zebra counts a move only when its entry of the MAC changes sides
# (a local learn over a remote route, a remote route of a higher sequence
# over its local entry).  That happens here because a datagram from the
# other host does not move a MAC vxswitchd learned on a local port (EVPN
# VNIs: only zebra's remote route takes it away, and the next local frame
# takes it back, advertised with a higher sequence).  So zebra marks the
# MAC duplicate on a host, with 5 moves or more, and no vxswitchd ever has
# it learned behind the other host's VTEP.
frr_dup() {
	local i z
	for i in 1 2; do
		z=$(evpn_zebra_mac "$i" "$mac1")
		read -r _ zcount zdup <<<"$z"
		if evpn_frr_dup "$i" "$mac1" && [ "$zdup" = dup ] && [ "${zcount:-0}" -ge 5 ]; then
			DUP_HOST=$i DUP_ENTRY=$z
			return 0
		fi
	done
	return 1
}
learned="" samples=0
t1=$(now_ms)
until_true 60 frr_dup || fail "FRR lists no duplicate for $mac1: h1 '$(evpn_zebra_mac 1 "$mac1")', h2 '$(evpn_zebra_mac 2 "$mac1")'"
echo "figure: to FRR's duplicate-address detection marking $mac1 on h$DUP_HOST ($DUP_ENTRY): $(( $(now_ms) - t0 )) ms"
while [ "$(now_ms)" -lt $(( t1 + 3000 )) ] || [ "$samples" -lt 10 ]; do
	for i in 1 2; do
		src=$(evpn_fdb_source "$i" "$mac1")
		[ "$src" = "learned 198.51.100.$(( 3 - i ))" ] && learned="$learned h$i"
	done
	samples=$((samples + 1))
	sleep 0.2
done
[ -z "$learned" ] || fail "$mac1 learned behind the other host's VTEP on:$learned (a datagram moved a local MAC)"
for i in 1 2; do
	kept=$(evpn_local_kept "$i")
	[ "$kept" -gt 0 ] || fail "h$i: no datagram of the other VM counted as kept off the local MAC ($kept)"
done
pass "two VMs with one MAC: evpn_mac_flapping names it on h$FLAP_HOST; FRR's DAD (on, 5 moves in 180 s) lists it as duplicate on h$DUP_HOST; never learned behind the other VTEP in $samples samples"
