#!/bin/bash
# Three vxswitch hosts and a route reflector (unmodified FRR 8.4, one
# zebra + bgpd per host, docs/EVPN.md's configuration), two EVPN VNIs on
# every host, no static remote anywhere, and the same MACs and IPv4
# addresses in both VNIs:
#   VNI 99:  VM k (MAC 02:aa:00:00:00:0k, 192.0.2.k) on host k;
#   VNI 100: the same three identities, rotated: host i has VM i%3+1.
# Checked: zebra sees both VNIs on every host; each port's flood list is
# the other two hosts (type-3 routes); after each VM's first frames (ARP
# broadcasts only) every host has every remote MAC from EVPN, in the right
# VNI behind the right host (the same MAC local in one VNI and remote in
# the other on one host); every pair of VMs of each VNI pings, and no
# host floods an unknown unicast while they do (the MACs were known from
# EVPN before); a VM of VNI 100 does not reach the VM of VNI 99 with the
# same address and MAC (VNI isolation through BGP's routes too).
#
#   a1,b1 - h1 -.                    .- h3 - a3,b3
#               fab0 (198.51.100.0/24) - h254 (route reflector)
#   a2,b2 - h2 -'
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
. tests/netns/evpn_lib.sh
rig_init "vxt92-$$"
trap evpn_cleanup EXIT

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
until_true() {
	local end=$(( $(now_ms) + $1 * 1000 )); shift
	while [ "$(now_ms)" -lt "$end" ]; do "$@" && return 0; sleep 0.05; done
	return 1
}
id100() { echo $(( $1 % 3 + 1 )); }     # the identity of host $1's VM in VNI 100
mac_of() { echo "02:aa:00:00:00:0$1"; }
vm_ns() { if [ "$1" = 99 ]; then echo "$P-a$2"; else echo "$P-b$2"; fi; } # VNI HOST

evpn_fabric 3
evpn_rr
for i in 1 2 3; do
	rig_ns_add "$P-a$i"
	rig_ns_add "$P-b$i"
	cfg=$RIG_DIR/h$i.conf sock=$RIG_DIR/h$i.sock
	{
		echo "port add vx99 type vxlan vni 99 local 198.51.100.$i evpn"
		echo "port add vx100 type vxlan vni 100 local 198.51.100.$i evpn"
		echo "port add ta$i type tap vni 99 netns $P-a$i mac $(mac_of "$i") mtu 1450"
		echo "port add tb$i type tap vni 100 netns $P-b$i mac $(mac_of "$(id100 "$i")") mtu 1450"
	} > "$cfg"
	n "$P-h$i" "$VXSWITCHD" --datapath user -c "$cfg" -s "$sock" -q > "$RIG_DIR/h$i.log" 2>&1 &
	RIG_PIDS="$RIG_PIDS $!"
	started() { [ -S "$RIG_DIR/h$1.sock" ] && n "$P-b$1" ip link show "tb$1" >/dev/null 2>&1; }
	until_true 20 started "$i" || fail "vxswitchd $i did not start: $(cat "$RIG_DIR/h$i.log")"
	for p in $(ip netns pids "$P-h$i"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = vxswitchd ] && RIG_PIDS="$RIG_PIDS $p"
	done
	n "$P-a$i" ip link set "ta$i" up
	n "$P-a$i" ip addr add "192.0.2.$i/24" dev "ta$i"
	n "$P-b$i" ip link set "tb$i" up
	n "$P-b$i" ip addr add "192.0.2.$(id100 "$i")/24" dev "tb$i"
done
for i in 1 2 3; do evpn_frr "$i" 3; done

est_all() {
	for i in 1 2 3; do [ "$(evpn_established "$i")" = 1 ] || return 1; done
	[ "$(evpn_established 254)" = 3 ]
}
until_true 30 est_all || fail "BGP sessions not established: $(evpn_vtysh 254 'show bgp l2vpn evpn summary')"
pass "3 hosts in iBGP l2vpn evpn sessions with the route reflector"

for i in 1 2 3; do
	out=$(evpn_vtysh "$i" "show evpn vni")
	for v in 99 100; do
		grep -Eq "^$v +L2" <<<"$out" || fail "zebra on h$i does not see VNI $v: $out"
	done
done
# port_vteps I PORT: the EVPN flood VTEPs of port PORT of hI, sorted.
port_vteps() {
	vx "$1" -j port show | /usr/bin/python3 -c '
import json, sys
p = [p for p in json.load(sys.stdin) if p["name"] == sys.argv[1]][0]
print(" ".join(sorted(p.get("evpn", {}).get("vteps", []))))' "$2"
}
others() { local k o=""; for k in 1 2 3; do [ "$k" = "$1" ] || o="$o 198.51.100.$k"; done; echo ${o# }; }
flood_ok() { [ "$(port_vteps "$1" vx99)" = "$(others "$1")" ] && [ "$(port_vteps "$1" vx100)" = "$(others "$1")" ]; }
for i in 1 2 3; do
	until_true 15 flood_ok "$i" || fail "h$i's flood lists: vx99 '$(port_vteps "$i" vx99)', vx100 '$(port_vteps "$i" vx100)'"
done
pass "zebra sees VNIs 99 and 100 on every host; each flood list is the other two hosts"

# First frames: every VM asks for an address nobody has (ARP broadcasts,
# no unicast), so its MAC is learned locally and advertised.
pings=""
for i in 1 2 3; do
	n "$P-a$i" ping -c 1 -W 1 192.0.2.9 >/dev/null 2>&1 &
	pings="$pings $!"
	n "$P-b$i" ping -c 1 -W 1 192.0.2.9 >/dev/null 2>&1 &
	pings="$pings $!"
done
# fdb_expect I: hI's FDB has, in each VNI, every other host's VM's MAC from
# EVPN behind that host, and its own VM's MAC local.
fdb_expect() {
	vx "$1" -j fdb show | /usr/bin/python3 -c '
import json, sys
me = int(sys.argv[1])
fdb = {(e["vni"], e["mac"]): e for e in json.load(sys.stdin)}
def mac(k): return "02:aa:00:00:00:0%d" % k
def ident(vni, host): return host if vni == 99 else host % 3 + 1
for vni in (99, 100):
    for host in (1, 2, 3):
        e = fdb.get((vni, mac(ident(vni, host))))
        if e is None:
            sys.exit(1)
        if host == me:
            if e.get("remote") or e.get("source") == "evpn": sys.exit(1)
        elif e.get("source") != "evpn" or e.get("remote") != "198.51.100.%d" % host:
            sys.exit(1)
' "$1"
}
t0=$(now_ms)
for i in 1 2 3; do
	until_true 15 fdb_expect "$i" || fail "h$i's FDB lacks EVPN entries: $(vx "$i" fdb show)"
done
echo "figure: the six VMs' first frames to every host holding every remote MAC from EVPN: $(( $(now_ms) - t0 )) ms"
for j in $pings; do wait "$j" || true; done
vx 1 fdb show | grep -q "^$(mac_of 2) vni 99 port vx99 remote 198.51.100.2 evpn" || fail "fdb show on h1: $(vx 1 fdb show)"
vx 1 fdb show | grep -q "^$(mac_of 2) vni 100 port tb1 " || fail "fdb show on h1: $(vx 1 fdb show)"
pass "every host has every remote MAC from EVPN in the right VNI behind the right host (h1: $(mac_of 2) remote in VNI 99, local in VNI 100)"

unknown() { vx_stat "$1" 'd["switch"]["unknown_unicast"]'; }
declare -A uu0
for i in 1 2 3; do
	uu0[$i]=$(unknown "$i")
	[[ "${uu0[$i]}" =~ ^[0-9]+$ ]] || fail "h$i: no unknown_unicast counter in stats: '${uu0[$i]}'"
done
for v in 99 100; do
	for i in 1 2 3; do
		for k in 1 2 3; do
			[ "$i" = "$k" ] && continue
			src=$(vm_ns "$v" "$i")
			if [ "$v" = 99 ]; then dst=$k; else dst=$(id100 "$k"); fi
			n "$src" ping -c 2 -i 0.2 -W 2 "192.0.2.$dst" >/dev/null ||
				fail "VNI $v: VM on h$i -> 192.0.2.$dst on h$k"
		done
	done
done
for i in 1 2 3; do
	[ "$(unknown "$i")" = "${uu0[$i]}" ] || fail "h$i flooded $(( $(unknown "$i") - ${uu0[$i]} )) unknown unicast frames"
done
pass "every pair of VMs pings in both VNIs (12 pairs), no unknown unicast flooded"

# Isolation: VNI 100's 192.0.2.2 (on h1) goes down; VNI 100's 192.0.2.3
# (on h2) asks for 192.0.2.2, which VNI 99 has on h2 itself and on the
# fabric: nobody in VNI 100 answers, so no reply.
n "$P-b1" ip link set tb1 down
n "$P-b2" ip neigh flush dev tb2
if n "$P-b2" ping -c 3 -i 0.2 -W 1 192.0.2.2 >/dev/null 2>&1; then
	fail "VNI 100's VM reached 192.0.2.2 with VNI 100's 192.0.2.2 down (VNI 99 leaked)"
fi
n "$P-a1" ping -c 2 -i 0.2 -W 2 192.0.2.2 >/dev/null || fail "VNI 99's 192.0.2.2 unreachable in its own VNI"
n "$P-b1" ip link set tb1 up
pass "VNI isolation: with VNI 100's 192.0.2.2 down, VNI 100 gets no answer although VNI 99 has that address and MAC"
