#!/bin/bash
# mtu-wire: the underlay veth carries MTU-size datagrams (TSO/GSO off on
# both ends, GRO on), as a real NIC would; still, the frames vxswitchd
# writes to the receiving VM's tap are big.  During one iperf3 stream,
# >= 90% of the TCP payload bytes must arrive in frames >= 32 KB, measured
# twice: by the switch's own size histogram, and independently by an
# AF_PACKET socket in the VM namespace (tests/tools/frame_sizes).  Then
# with `set gro off` the frames are small and `diagnose` says why.
#
#   vxt6-PID-vm1        vxt6-PID-h1                          vxt6-PID-h2        vxt6-PID-vm2 (frame_sizes here)
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ==mtu-wire=== u2 -- vxswitchd --> vnet2 192.0.2.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt6-$$"
trap rig_cleanup EXIT
FRAME_SIZES=$BUILD/tests/tools/frame_sizes
[ -x "$FRAME_SIZES" ] || fail "missing $FRAME_SIZES (make all)"

rig_create 4
rig_wire_mode mtu
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"

# big_run LABEL: frame_sizes in vm2 around a 3-second iperf3 vm1 -> vm2;
# sets SWITCH_SHARE and CAPTURE_SHARE.
big_run() {
	rm -f "$RIG_DIR/ready"
	nvm2 "$FRAME_SIZES" vnet2 5 "$RIG_DIR/ready" > "$RIG_DIR/sizes.json" &
	local fs=$! i
	for i in $(seq 100); do [ -e "$RIG_DIR/ready" ] && break; sleep 0.05; done
	local before after
	before=$(vx_stat 2 'port("vnet2")["tx_size_hist"]' | tr "'" '"')
	gbps=$(rig_iperf 3 1)
	after=$(vx_stat 2 'port("vnet2")["tx_size_hist"]' | tr "'" '"')
	wait "$fs"
	SWITCH_SHARE=$(/usr/bin/python3 -c '
import json, sys
b, a = json.loads(sys.argv[1]), json.loads(sys.argv[2])
d = {x["bucket"]: y["bytes"] - x["bytes"] for x, y in zip(b, a)}
tot = sum(d.values())
print(round(sum(v for k, v in d.items() if k in ("32K-64K", ">=64K")) / tot, 3) if tot else 0)' "$before" "$after")
	CAPTURE_SHARE=$(/usr/bin/python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["big_frame_payload_share"], 3))' "$RIG_DIR/sizes.json")
	echo "  $1: $gbps Gbit/s; bytes to vnet2 in frames >= 32 KB: switch histogram $SWITCH_SHARE, AF_PACKET capture in vm2 $CAPTURE_SHARE"
}

big_run "gro on"
/usr/bin/python3 -c "import sys; sys.exit(0 if $SWITCH_SHARE >= 0.9 and $CAPTURE_SHARE >= 0.9 else 1)" \
	|| fail "frames to the VM are not big enough (switch $SWITCH_SHARE, capture $CAPTURE_SHARE)"
pass "mtu-wire: >= 90% of the payload reaches vm2 in frames >= 32 KB"

vx 2 set gro off
big_run "gro off"
/usr/bin/python3 -c "import sys; sys.exit(0 if $SWITCH_SHARE < 0.5 and $CAPTURE_SHARE < 0.5 else 1)" \
	|| fail "with gro off frames should be small (switch $SWITCH_SHARE, capture $CAPTURE_SHARE)"
vx 2 diagnose | grep -q "frames to vnet2 average .* GRO is off" || fail "diagnose does not say GRO is off: $(vx 2 diagnose)"
vx 2 set gro on
pass "gro off: frames small, and diagnose says why"
