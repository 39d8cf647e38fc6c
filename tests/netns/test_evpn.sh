#!/bin/bash
# vxswitchd as a VTEP of a BGP EVPN fabric run by unmodified FRR 8.4
# (one zebra + bgpd per host, iBGP to a route reflector with
# docs/EVPN.md's configuration, advertise-all-vni), with no static remote
# anywhere:
#   h1, h2: vxswitchd (`port add vx99 ... evpn`), VMs on taps;
#   h3: the kernel's vxlan + bridge driven by FRR (the standard set-up).
# Checked: every host's flood list comes from type-3 routes; vm1's first
# frame reaches h2's FDB as an EVPN entry (the time is printed); the VMs
# ping each other across vxswitch-vxswitch and vxswitch-kernel; h3's
# kernel FDB has vm1's MAC behind 198.51.100.1; a local MAC that ages out
# is withdrawn; a host killed (FRR and vxswitchd) has its MACs and flood
# entry withdrawn from the others when its sessions time out; a restarted
# vxswitchd reaps the shadow devices of the one that died; vxswitchd's
# exit removes its shadow devices.
#
#
#   vm1 - h1 (vxswitchd) -u1-.                  .-u3- h3 (kernel br99+vx99) - vm3
#                           fab0 (198.51.100.0/24)
#   vm2 - h2 (vxswitchd) -u2-'                  '-u254- h254 (route reflector: bgpd only)
#
# EVPN_DP=kernel (test_kdp_evpn.sh): the same on vxswitchd's kernel
# datapath, the VMs on veth pairs: the FDB map and flood lists take what
# zebra installs, the programs' learned MACs are advertised.
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
. tests/netns/evpn_lib.sh
EVPN_DP=${EVPN_DP:-user}
rig_init "vxt90-$$"
evpn_trap
echo "datapath: $EVPN_DP"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# until TIMEOUT_S CMD...: polls CMD every 20 ms; 1 when it never held.
until_true() {
	local end=$(( $(now_ms) + $1 * 1000 )); shift
	while [ "$(now_ms)" -lt "$end" ]; do "$@" && return 0; sleep 0.02; done
	return 1
}

evpn_fabric 3
evpn_rr
# h1's neighbour socket gets the kernel's smallest buffer: bursts of
# routes overflow it for real (ENOBUFS, then a dump applied as a set).
EVPN_VXD_ENV="VX_FAILPOINTS=evpn_small_rcvbuf:0:1" evpn_vxswitchd 1
evpn_vxswitchd 2
evpn_kernel 3
# Before FRR: diagnose says nobody drives the shadow devices.
diag_names 1 evpn_no_zebra 'f["vni"] == 99' "no zebra runs in vxswitchd's network namespace" >/dev/null
evpn_frr 1 3
# zebra but no peer yet: nobody advertises VNI 99.
diag_names 1 evpn_no_remotes 'f["vni"] == 99' "installed no flood entry for VNI 99" >/dev/null
pass "diagnose: evpn_no_zebra before FRR, evpn_no_remotes while alone"
for i in 2 3; do evpn_frr "$i" 3; done
mac1=$(n "$P-vm1" cat /sys/class/net/vnet1/address)
mac2=$(n "$P-vm2" cat /sys/class/net/vnet2/address)
mac3=$(n "$P-vm3" cat /sys/class/net/vnet3/address)

est_all() {
	for i in 1 2 3; do [ "$(evpn_established "$i")" = 1 ] || return 1; done
	[ "$(evpn_established 254)" = 3 ]
}
t0=$(now_ms)
until_true 30 est_all || fail "BGP sessions not established: $(evpn_vtysh 1 'show bgp l2vpn evpn summary')"
pass "3 hosts, each in an iBGP l2vpn evpn session with the route reflector ($(( $(now_ms) - t0 )) ms after the daemons started)"

# zebra saw the shadow VNI on the vxswitch hosts, with our VTEP address.
evpn_vtysh 1 "show evpn vni 99" | grep -q "Local VTEP IP: 198.51.100.1" ||
	fail "zebra on h1 does not see VNI 99: $(evpn_vtysh 1 'show evpn vni')"
vteps_are() { [ "$(evpn_vteps "$1")" = "$2" ]; }
until_true 10 vteps_are 1 "198.51.100.2 198.51.100.3" || fail "h1's flood list from EVPN: '$(evpn_vteps 1)'"
until_true 10 vteps_are 2 "198.51.100.1 198.51.100.3" || fail "h2's flood list from EVPN: '$(evpn_vteps 2)'"
n "$P-h1" ip link show vxev99 >/dev/null || fail "no shadow vxlan on h1"
vx 1 port show | grep -q "remote 198.51.100.3 (evpn)" || fail "port show does not name the EVPN remote: $(vx 1 port show)"
vx 1 -j diagnose | grep -q '"cause":"evpn_' && fail "EVPN findings once the fabric is up: $(vx 1 diagnose)"
pass "flood lists from type-3 routes: h1 -> $(evpn_vteps 1), h2 -> $(evpn_vteps 2); no EVPN finding"

# The first frame of vm1 (an ARP request to vm2) and the time until h2's
# FDB has vm1's MAC from EVPN.
t0=$(now_ms)
n "$P-vm1" ping -c 1 -W 1 192.0.2.2 >/dev/null 2>&1 &
ping_pid=$!
until_true 10 evpn_fdb_has 2 "$mac1" evpn || fail "h2 never got vm1's MAC from EVPN: $(vx 2 fdb show)"
t1=$(now_ms)
wait "$ping_pid" || true
echo "figure: vm1's first frame to h2's FDB (source evpn): $((t1 - t0)) ms"
until_true 10 evpn_fdb_has 1 "$mac2" evpn || fail "h1 never got vm2's MAC from EVPN: $(vx 1 fdb show)"
vx 2 fdb show | grep -q "^$mac1 vni 99 port vx99 remote 198.51.100.1 evpn" || fail "fdb show: $(vx 2 fdb show)"
pass "vm1's MAC on h2 and vm2's on h1 as EVPN entries: $(vx 2 fdb show | grep "$mac1")"

n "$P-vm1" ping -c 5 -i 0.1 -W 2 192.0.2.2 >/dev/null || fail "vm1 -> vm2 (vxswitch to vxswitch)"
n "$P-vm2" ping -c 5 -i 0.1 -W 2 192.0.2.1 >/dev/null || fail "vm2 -> vm1"
pass "vm1 <-> vm2 through two vxswitchd with no static remote"

if [ "$EVPN_DP" = kernel ]; then
	# The kernel datapath counts per remote VTEP, EVPN's as well, and a
	# capture on vx99 takes the datagrams of a VTEP that came from EVPN
	# after the capture's port was made.
	rx=$(vx_stat 1 '[r for r in port("vx99")["remotes"] if r["remote"] == "198.51.100.2" and r["evpn"]][0]["rx_frames"]') ||
		fail "h1's stats have no EVPN remote 198.51.100.2 on vx99: $(vx 1 stats)"
	[ "$rx" -ge 5 ] || fail "h1 counted $rx frames from EVPN VTEP 198.51.100.2 (>= 5 pings' worth expected)"
	. tests/netns/capture_lib.sh
	SOCK1=$RIG_DIR/h1.sock D=$RIG_DIR
	cap_start vin vx99 in -c 3 -w "$RIG_DIR/vin.pcap" icmp
	settle
	n "$P-vm2" ping -c 3 -i 0.1 -W 2 192.0.2.1 >/dev/null || fail "vm2 -> vm1 during the capture"
	cap_wait vin
	got=$(tshark -r "$RIG_DIR/vin.pcap" -T fields -e ip.src 2>/dev/null | grep -c '^192.0.2.2$' || true)
	[ "$got" = 3 ] || fail "the capture on vx99 has $got of vm2's 3 echo requests: $(tshark -r "$RIG_DIR/vin.pcap" 2>&1 | head -5)"
	pass "kernel datapath: $rx frames counted from EVPN VTEP 198.51.100.2; a capture on vx99 took vm2's 3 requests"
fi

# vxswitch <-> the kernel's own vxlan + bridge under the same FRR.
n "$P-vm3" ping -c 5 -i 0.1 -W 2 192.0.2.1 >/dev/null || fail "vm3 (kernel) -> vm1 (vxswitch)"
n "$P-vm1" ping -c 5 -i 0.1 -W 2 192.0.2.3 >/dev/null || fail "vm1 -> vm3"
n "$P-vm2" ping -c 5 -i 0.1 -W 2 192.0.2.3 >/dev/null || fail "vm2 -> vm3"
until_true 10 evpn_fdb_has 1 "$mac3" evpn || fail "h1 has no EVPN entry for vm3: $(vx 1 fdb show)"
n "$P-h3" bridge fdb show dev vx99 | grep -q "^$mac1 dst 198.51.100.1 .*extern_learn" ||
	fail "h3's kernel FDB lacks vm1's MAC from EVPN: $(n "$P-h3" bridge fdb show dev vx99)"
n "$P-h3" bridge fdb show dev vx99 | grep -q "^00:00:00:00:00:00 dst 198.51.100.1 " ||
	fail "h3 has no flood entry for h1: $(n "$P-h3" bridge fdb show dev vx99)"
pass "kernel host h3 and the vxswitch hosts: MACs through BGP both ways, pings both ways"

# A burst: 10,000 MACs appear at once behind the kernel host h3 (static
# entries on its bridge port, which zebra advertises), ten times the
# FDB's static cap (EVPN entries have their own).  h1's small socket
# overflows; after the resyncs h1 has every one of them, from EVPN,
# behind 198.51.100.3, and h2 (a large buffer) too.  The waits are
# generous (FRR takes seconds for 10,000 routes on a shared machine) and
# end as soon as the count is reached.
BURST=10000
for k in $(seq 0 $((BURST - 1))); do printf 'fdb add 02:00:5e:10:%02x:%02x dev kv3 master static\n' $((k / 256)) $((k % 256)); done > "$RIG_DIR/burst.batch"
t0=$(now_ms)
n "$P-h3" bridge -batch "$RIG_DIR/burst.batch"
n_burst() {
	"$VXCTL" --socket "$RIG_DIR/h$1.sock" -j fdb show vni 99 | /usr/bin/python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin) if e["mac"].startswith("02:00:5e:10:") and e.get("source") == "evpn"
          and e.get("remote") == "198.51.100.3"))'
}
burst_in() { [ "$(n_burst "$1")" = "$BURST" ]; }
until_true 180 burst_in 1 || fail "h1 has $(n_burst 1) of the $BURST MACs"
echo "figure: $BURST MACs added on h3 to all $BURST in h1's FDB (after overflow): $(( $(now_ms) - t0 )) ms"
until_true 60 burst_in 2 || fail "h2 has $(n_burst 2) of the $BURST MACs"
enobufs=$(vx_port 1 vx99 evpn | /usr/bin/python3 -c 'import ast, sys; print(ast.literal_eval(sys.stdin.read())["enobufs"])')
[ "$enobufs" -ge 1 ] || fail "h1's small socket never overflowed (enobufs $enobufs): the resync was not exercised"
sed 's/fdb add/fdb del/; s/ static$//' "$RIG_DIR/burst.batch" > "$RIG_DIR/burst-del.batch"
n "$P-h3" bridge -batch "$RIG_DIR/burst-del.batch"
burst_out() { [ "$(n_burst "$1")" = 0 ]; }
until_true 180 burst_out 1 || fail "h1 still has $(n_burst 1) of the $BURST withdrawn MACs"
until_true 60 burst_out 2 || fail "h2 still has $(n_burst 2) of the $BURST withdrawn MACs"
refused=$(vx_port 1 vx99 evpn | /usr/bin/python3 -c 'import ast, sys; print(ast.literal_eval(sys.stdin.read())["remote_refused"])')
[ "$refused" = 0 ] || fail "h1 refused $refused remote MACs"
pass "$BURST MACs at once: h1 overflowed $enobufs times, resynced, had all $BURST (none refused), then none after their withdrawal"

# A VM moves: vm2 (h2) goes quiet and "reappears" on h1 as vm4, same MAC
# and address.  Its first frames make h1 take the MAC over from its EVPN
# entry and advertise it; zebra raises the sequence number (RFC 7432
# mobility), so the kernel host h3 and h2 point it at h1.  Then it moves
# back: vm2 speaks again on h2.
in_h3_at() { n "$P-h3" bridge fdb show dev vx99 | grep -q "^$1 dst $2 "; }
rig_ns_add "$P-vm4"
n "$P-vm2" ip link set vnet2 down
if [ "$EVPN_DP" = kernel ]; then
	vx 1 port add vnet4 type veth vni 99 netns "$P-vm4" mtu 1450 >/dev/null
	n "$P-vm4" ip link set vnet4 address "$mac2"
else
	vx 1 port add vnet4 type tap vni 99 netns "$P-vm4" mac "$mac2" mtu 1450 >/dev/null
fi
n "$P-vm4" ip link set vnet4 up
n "$P-vm4" ip addr add 192.0.2.2/24 dev vnet4
t0=$(now_ms)
until_true 5 n "$P-vm4" ping -c 1 -W 1 192.0.2.3 >/dev/null 2>&1 || fail "vm2 moved to h1 cannot reach vm3"
until_true 5 in_h3_at "$mac2" 198.51.100.1 || fail "h3 does not see vm2's MAC at h1: $(n "$P-h3" bridge fdb show dev vx99 | grep "$mac2")"
until_true 5 bash -c "'$VXCTL' --socket $RIG_DIR/h2.sock fdb show | grep -q '^$mac2 vni 99 port vx99 remote 198.51.100.1 evpn'" ||
	fail "h2 does not point vm2's MAC at h1: $(vx 2 fdb show | grep "$mac2")"
echo "figure: vm2 moved to h1, first ping to h3 and h2 pointing its MAC at h1: $(( $(now_ms) - t0 )) ms"
n "$P-vm3" ping -c 2 -i 0.1 -W 2 192.0.2.2 >/dev/null || fail "vm3 -> moved vm2"
# Back: vm4 goes quiet (its port stays, h1's entry of the MAC local) and
# vm2 speaks on h2.  Zebra on h1 takes the MAC off h1's shadow port for
# h2's higher sequence; h1 reads where to from that one MAC's entry on the
# shadow vxlan (a netlink get), not from a dump of the whole FDB.
ev1() { vx_port 1 vx99 evpn | /usr/bin/python3 -c 'import ast, sys; print(ast.literal_eval(sys.stdin.read())[sys.argv[1]])' "$1"; }
# (a dump after a netlink overflow, the tail of the 10,000 MACs' withdrawal,
# may fall in this window: those are counted as enobufs too, and allowed;
# so is the dump a local MAC's leaving the FDB makes by design, when the
# datapath learns the moved MAC from h2's frames before zebra's event
# comes: counted as resyncs_local_gone)
resyncs0=$(ev1 resyncs); gets0=$(ev1 taken_gets); enobufs0=$(ev1 enobufs); gone0=$(ev1 resyncs_local_gone)
n "$P-vm4" ip link set vnet4 down
n "$P-vm2" ip link set vnet2 up
t0=$(now_ms)
until_true 5 n "$P-vm2" ping -c 1 -W 1 192.0.2.3 >/dev/null 2>&1 || fail "vm2 back on h2 cannot reach vm3"
until_true 5 in_h3_at "$mac2" 198.51.100.2 || fail "h3 does not see vm2's MAC back at h2: $(n "$P-h3" bridge fdb show dev vx99 | grep "$mac2")"
until_true 5 evpn_fdb_has 1 "$mac2" evpn || fail "h1 has no EVPN entry for vm2 after it moved back: $(vx 1 fdb show | grep "$mac2")"
echo "figure: vm2 moved back to h2, to h3 and h1 pointing at h2: $(( $(now_ms) - t0 )) ms"
vx 1 fdb show | grep -q "^$mac2 vni 99 port vx99 remote 198.51.100.2 evpn" ||
	fail "h1 does not point vm2's MAC at h2: $(vx 1 fdb show | grep "$mac2")"
resyncs1=$(ev1 resyncs); gets1=$(ev1 taken_gets); enobufs1=$(ev1 enobufs); gone1=$(ev1 resyncs_local_gone)
dumps=$(( (resyncs1 - resyncs0) - (enobufs1 - enobufs0) - (gone1 - gone0) ))
[ "$dumps" = 0 ] && [ "$gets1" -gt "$gets0" ] ||
	fail "h1 learnt the taken MAC's VTEP with $dumps dumps (besides $((enobufs1 - enobufs0)) after overflows, $((gone1 - gone0)) after a local MAC left) and $((gets1 - gets0)) gets (0 dumps, 1+ gets); h1's log: $(grep -E 'evpn' "$RIG_DIR/h1.log" | tail -5)"
vx 1 port del vnet4 >/dev/null
pass "a VM moved to another host and back: reachable again, the fabric follows both moves; h1 read the taken MAC's VTEP with $((gets1 - gets0)) netlink get(s), no dump"

# A local MAC that ages out of vxswitchd's FDB is withdrawn: its
# extern_learn entry leaves the shadow port, zebra withdraws the route,
# the kernel host h3 forgets it.  vm1 speaks again: advertised again.
vx 1 set fdb-ageing 2
in_h3() { n "$P-h3" bridge fdb show dev vx99 | grep -q "^$1 dst 198.51.100.1 "; }
t0=$(now_ms)
until_true 10 bash -c "! ip netns exec $P-h3 bridge fdb show dev vx99 | grep -q '^$mac1 '" ||
	fail "vm1's MAC never withdrawn from h3 after ageing out of h1: $(n "$P-h3" bridge fdb show dev vx99)"
echo "figure: fdb-ageing 2 s on h1 to vm1's MAC gone from h3's kernel FDB: $(( $(now_ms) - t0 )) ms"
vx 1 set fdb-ageing 300
n "$P-vm1" ping -c 2 -i 0.1 -W 2 192.0.2.3 >/dev/null || fail "vm1 -> vm3 after ageing"
until_true 5 in_h3 "$mac1" || fail "vm1's MAC not advertised again"
pass "a local MAC aged out is withdrawn from the fabric, and advertised again when it speaks"

# A host dies: its link to the fabric goes dark first (nothing says
# goodbye: no TCP FIN or RST), then its FRR and vxswitchd are killed.  Its
# sessions time out (hold 3 s) and the others withdraw its MACs and its
# flood entry.
t0=$(now_ms)
n "$P-fab" ip link set f2 down
evpn_frr_stop 2
kill -9 "$VXD_PID_2"
gone2() { ! evpn_fdb_has 1 "$mac2" && vteps_are 1 "198.51.100.3"; }
until_true 15 gone2 || fail "h1 still has h2's MAC or flood entry: $(vx 1 fdb show) / $(evpn_vteps 1)"
echo "figure: h2 killed to its MAC and flood entry gone from h1: $(( $(now_ms) - t0 )) ms"
n "$P-vm1" ping -c 3 -i 0.1 -W 2 192.0.2.3 >/dev/null || fail "vm1 -> vm3 after h2 died"
pass "h2 killed: its MAC and flood entry withdrawn from h1, h1 <-> h3 still fine"

# A vxswitchd that dies leaves its shadow devices; the next one deletes
# them at start (their alias says whose they are) and makes its own.
kill -9 "$VXD_PID_1"
until_true 5 bash -c "! kill -0 $VXD_PID_1 2>/dev/null" || fail "vxswitchd of h1 outlived kill -9"
# Its tap is persistent (and a veth pair it made outlives it): out of
# the way, so the wait below sees the new one.
n "$P-vm1" ip link del vnet1
rm -f "$RIG_DIR/h1.sock"
n "$P-h1" ip link show vxev99 >/dev/null 2>&1 || fail "expected leftover shadow devices after kill -9"
old_idx=$(n "$P-h1" cat /sys/class/net/vxev99/ifindex)
# A leftover of a VNI the new config does not have, and a bridge that is
# not ours (no alias): the first goes, the second stays.
n "$P-h1" ip link add vxeb7 type bridge
n "$P-h1" ip link set vxeb7 alias "vxswitchd evpn shadow"
n "$P-h1" ip link add vxeb8 type bridge
evpn_vxswitchd 1
[ "$(n "$P-h1" cat /sys/class/net/vxev99/ifindex)" != "$old_idx" ] || fail "the leftover vxev99 was kept"
n "$P-h1" ip link show vxeb7 >/dev/null 2>&1 && fail "leftover vxeb7 (our alias) not reaped"
n "$P-h1" ip link show vxeb8 >/dev/null 2>&1 || fail "vxeb8 (not ours) was deleted"
n "$P-h1" ip link del vxeb8
until_true 10 vteps_are 1 "198.51.100.3" || fail "h1 after restart: flood list '$(evpn_vteps 1)'"
n "$P-vm1" ping -c 3 -i 0.1 -W 2 192.0.2.3 >/dev/null || fail "vm1 -> vm3 after vxswitchd restart"
pass "a restarted vxswitchd reaps the dead one's shadow devices and is back in the fabric"

# vxswitchd's exit removes the shadow devices (zebra withdraws the VNI).
kill "$VXD_PID_1"
# (It deletes them one by one: wait for the last, not the first.)
until_true 5 bash -c "! ip netns exec $P-h1 ip -o link show | grep -q vxe" ||
	fail "h1's shadow devices outlived vxswitchd: $(n "$P-h1" ip -o link show | grep vxe)"
pass "vxswitchd's exit removed its shadow devices"
