#!/bin/bash
# Every offload can be switched off at run time and traffic still flows
# through the fallback path: gro, gso (with it the VMs' TSO), tap-tso,
# udp-gro, udp-segment, one at a time and then all at once, on both
# switches; `diagnose` names what is off, `show knobs` shows it.
#
#   vxt8-PID-vm1        vxt8-PID-h1                          vxt8-PID-h2        vxt8-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt8-$$"
trap rig_cleanup EXIT

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"

both() { vx 1 "$@" >/dev/null && vx 2 "$@" >/dev/null; }
traffic() { # LABEL
	nvm1 ping -c 3 -i 0.1 -W 2 -s 2000 "$(vm_addr4 2)" >/dev/null || fail "ping with $1"
	local up down
	up=$(rig_iperf 1 1) || fail "iperf3 vm1->vm2 with $1"
	down=$(rig_iperf 1 2) || fail "iperf3 vm2->vm1 with $1"
	/usr/bin/python3 -c "import sys; sys.exit(0 if $up > 0.02 and $down > 0.02 else 1)" || fail "no throughput with $1"
	echo "  $1: $up / $down Gbit/s"
}

for knob in gro gso tap-tso udp-gro udp-segment rx-csum; do
	both set "$knob" off
	[ "$(vx 1 show knobs | grep "^$knob ")" = "$knob off" ] || fail "show knobs does not show $knob off"
	traffic "$knob off"
	both set "$knob" on
done
pass "each offload switched off alone: traffic flows"

segs=$(vx_stat 1 'port("vx99")["vxlan"]["socket"]["tx_datagrams"]')
for knob in gro gso tap-tso udp-gro udp-segment rx-csum; do both set "$knob" off; done
traffic "all off"
[ "$(vx_stat 1 'port("vnet1")["tap"]["tso_active"]')" = False ] || fail "tap TSO still active with gso off"
[ "$(vx_stat 1 'port("vx99")["vxlan"]["socket"]["udp_segment"]')" = False ] || fail "udp-segment still on"
[ "$(vx_stat 1 'port("vx99")["vxlan"]["socket"]["udp_gro"]')" = False ] || fail "udp-gro still on"
vx 1 diagnose | grep -q "gso is off" || fail "diagnose does not say gso is off"
vx 1 diagnose | grep -q "udp-segment is off" || fail "diagnose does not say udp-segment is off"
pass "all offloads off: traffic flows, stats and diagnose say so"

for knob in gro gso tap-tso udp-gro udp-segment rx-csum; do both set "$knob" on; done
traffic "all back on"
[ "$(vx_stat 1 'port("vnet1")["tap"]["tso_active"]')" = True ] || fail "tap TSO not back"
pass "offloads back on"

# The kernel datapath's upcall knobs: the userspace datapath has no upcalls,
# so it refuses them (a knob taken and not honoured would be a lie), and
# says so; the knob keeps its value.
for knob in upcall-rate upcall-burst; do
	rc=0; vx 1 set "$knob" 50 2>"$RIG_DIR/err" || rc=$?
	[ "$rc" != 0 ] && grep -q "$knob 50: the userspace datapath has no upcalls" "$RIG_DIR/err" ||
		fail "set $knob on the userspace datapath: exit $rc, $(cat "$RIG_DIR/err")"
	[ "$(vx 1 show knobs | grep "^$knob ")" != "$knob 50" ] || fail "show knobs took the refused $knob"
done
traffic "the upcall knobs refused"
pass "upcall-rate and upcall-burst refused on the userspace datapath, named; forwarding goes on"
