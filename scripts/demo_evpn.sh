#!/bin/bash
# The EVPN demo (`make demo-evpn`): vxswitch as a VTEP of a BGP EVPN
# fabric run by unmodified FRR 8.4 (docs/EVPN.md), with the shipped
# configuration files scripts/frr/leaf.conf and scripts/frr/rr.conf as
# they are (hostname and router-id set per leaf):
#
#   vm1 - h1 (vxswitchd) -.                        .- h3 (kernel vxlan + bridge) - vm3
#                          fab0 (198.51.100.0/24) -
#   vm2 - h2 (vxswitchd) -'                        '- h254 (route reflector)
#
# No static remote anywhere: the flood lists come from type-3 routes, the
# remote MACs from type-2 routes.  It prints what an operator looks at:
# vxctl port show and fdb show, zebra's view of the VNI, the BGP sessions,
# pings across vxswitch-vxswitch and vxswitch-kernel, and diagnose.
#
#   usage: scripts/demo_evpn.sh [BUILD_DIR]      (root)
#
# Everything it creates (namespaces vxdemo-PID-*, daemons, FRR's files)
# is removed on exit, Ctrl-C or failure.
set -e
cd "$(dirname "$0")/.."
BUILD=${1:-build}
if [ "$(id -u)" != 0 ]; then
	echo "demo_evpn.sh: needs root (network namespaces, taps)" >&2
	exit 1
fi
scripts/install-deps.sh
make --no-print-directory -s BUILD="$BUILD" all

. tests/netns/lib.sh
. tests/netns/evpn_lib.sh
rig_init "vxdemo-$$"
trap evpn_cleanup EXIT
EVPN_CONF_DIR=$PWD/scripts/frr

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
until_true() {
	local end=$(( $(now_ms) + $1 * 1000 )); shift
	while [ "$(now_ms)" -lt "$end" ]; do "$@" && return 0; sleep 0.1; done
	return 1
}
section() { printf '\n== %s\n' "$*"; }

evpn_fabric 3
evpn_rr
evpn_vxswitchd 1
evpn_vxswitchd 2
evpn_kernel 3
for i in 1 2 3; do evpn_frr "$i" 3; done
est_all() {
	for i in 1 2 3; do [ "$(evpn_established "$i")" = 1 ] || return 1; done
}
until_true 30 est_all || fail "BGP sessions not established: $(evpn_vtysh 254 'show bgp l2vpn evpn summary')"
vteps_2() { [ "$(evpn_vteps 1 | wc -w)" = 2 ]; }
until_true 15 vteps_2 || fail "h1's flood list: '$(evpn_vteps 1)'"

section "h1's vxswitchd config (no remote given)"
cat "$RIG_DIR/h1.conf"
section "leaf h1's FRR config (scripts/frr/leaf.conf)"
grep -v '^!' "$RIG_DIR/frr-h1/bgpd.conf"
section "route reflector: BGP l2vpn evpn sessions"
evpn_vtysh 254 "show bgp l2vpn evpn summary" | sed -n '/^Neighbor/,$p'
section "zebra on h1 sees vxswitchd's VNI 99 (shadow devices)"
evpn_vtysh 1 "show evpn vni 99" | grep -E "VNI:|Type|Vxlan-Intf|Local VTEP|Remote VTEPs|198\.51|Number of"

section "pings (first ones: ARP broadcast to the EVPN flood list)"
t0=$(now_ms)
n "$P-vm1" ping -c 3 -i 0.2 -W 2 192.0.2.2 | tail -2
echo "vm1 -> vm2 (vxswitch -> vxswitch): $(( $(now_ms) - t0 )) ms for 3 pings"
n "$P-vm1" ping -c 3 -i 0.2 -W 2 192.0.2.3 | tail -1
n "$P-vm3" ping -c 3 -i 0.2 -W 2 192.0.2.2 | tail -1
mac1=$(n "$P-vm1" cat /sys/class/net/vnet1/address)
until_true 10 evpn_fdb_has 2 "$mac1" evpn || true

section "vxctl port show on h1 (remotes from EVPN)"
vx 1 port show
section "vxctl fdb show on h2 (remote MACs from EVPN)"
vx 2 fdb show
section "kernel host h3's FDB (vm1 and vm2 behind the vxswitch hosts, from BGP)"
n "$P-h3" bridge fdb show dev vx99 | grep -E "dst 198\.51"
section "vxctl diagnose on h1"
vx 1 diagnose || true
echo
echo "EVPN demo done: remotes and MACs from BGP EVPN through unmodified FRR, no static remote."
