#!/bin/bash
# diagnose on healthy bulk TCP: no finding, exit 0, with a vxswitchd peer
# and a kernel vxlan peer, one iperf3 stream each way (so each side sees
# both the data direction and the ACK-only direction), on the default
# underlay (gso-wire) and on mtu-wire (the kernel cuts frames to MTU size
# and the receiving veth runs GRO, as a NIC would).
#
#   vxt61-PID-vm1       vxt61-PID-h1                          vxt61-PID-h2          vxt61-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd | kernel vxlan --> vnet2 192.0.2.2
#                      198.51.100.1                  198.51.100.2           VNI 99
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt61-$$"
trap rig_cleanup EXIT

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

for combo in "vxswitchd gso" "vxswitchd mtu" "kernel gso" "kernel mtu"; do
	set -- $combo
	peer=$1 mode=$2
	rig_create 4
	rig_wire_mode "$mode"
	rig_vxswitchd 1
	if [ "$peer" = vxswitchd ]; then rig_vxswitchd 2; else rig_kernel 2; fi
	nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping ($peer peer, $mode-wire)"
	up=$(rig_iperf 3 1); down=$(rig_iperf 3 2)
	no_finding 1 "$peer peer, $mode-wire, after iperf3 both ways ($up / $down Gbit/s)"
	[ "$peer" = kernel ] || no_finding 2 "$peer peer, $mode-wire"
	pass "$peer peer, $mode-wire: iperf3 $up Gbit/s out, $down Gbit/s in, diagnose: no problem found, exit 0"
	rig_cleanup
	rig_init "vxt61-$$"
done
