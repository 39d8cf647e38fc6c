#!/bin/bash
# The control plane while traffic flows: a bad command line is refused
# with one line and forwarding goes on; a port is added, used and removed
# while an iperf3 stream and a ping run between two other ports, which lose
# nothing.
#
#   vxt7-PID-vm1 vnet1 192.0.2.1 --+                                 +-- vnet2 192.0.2.2 vxt7-PID-vm2
#                                  vxswitchd -- u1 ======== u2 -- vxswitchd
#   vxt7-PID-vm3 vnet3 192.0.2.3 --+ (h1, added and removed live)    VNI 99
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt7-$$"
trap rig_cleanup EXIT
VM3=$P-vm3

rig_create 4
rig_ns_add "$VM3"
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"

# Background traffic between vm1 and vm2 for the whole test.
nvm2 iperf3 -s -1 -D -B "$(vm_addr4 2)" -p 5204 >/dev/null 2>&1
sleep 0.3
nvm1 iperf3 -c "$(vm_addr4 2)" -p 5204 -t 6 -J > "$RIG_DIR/bg-iperf.json" 2>&1 &
IPERF=$!
nvm1 ping -c 200 -i 0.02 -W 1 "$(vm_addr4 2)" > "$RIG_DIR/bg-ping.txt" 2>&1 &
PING=$!
sleep 0.5

# One line, exit status 1, daemon unharmed.
rc=0; vx 1 port add vnet9 type tapp vni 99 > "$RIG_DIR/out" 2> "$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] || fail "bad command exited $rc, want 1"
[ "$(wc -l < "$RIG_DIR/err")" = 1 ] || fail "error is not one line: $(cat "$RIG_DIR/err")"
rc=0; vx 1 port del nosuchport 2> "$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] && [ "$(wc -l < "$RIG_DIR/err")" = 1 ] || fail "refused command: rc $rc, $(cat "$RIG_DIR/err")"
rc=0; vx 1 port add vnet1 type tap vni 99 2> "$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] || fail "a duplicate port was accepted"
pass "bad lines refused with one line each: $(head -c 100 "$RIG_DIR/err")"

# A VM-facing MTU that does not fit the underlay is accepted with a warning
# naming the MTU that fits.
vx 1 port add vnet5 type tap vni 99 mtu 1500 > "$RIG_DIR/out" || fail "port add vnet5"
grep -q "vnet5 MTU 1500 is larger than the 1450 that fits" "$RIG_DIR/out" || fail "no MTU warning: $(cat "$RIG_DIR/out")"
vx 1 port del vnet5 || fail "port del vnet5"
pass "MTU 1500 over a 1500 underlay: warned, 1450 fits"

vx 1 port add vnet3 type tap vni 99 netns "$VM3" mtu 1450 >/dev/null || fail "live port add"
n "$VM3" ip link set vnet3 up
n "$VM3" ip addr add 192.0.2.3/24 dev vnet3
n "$VM3" ping -c 3 -i 0.1 -W 2 "$(vm_addr4 1)" >/dev/null || fail "new port -> local port"
n "$VM3" ping -c 3 -i 0.1 -W 2 "$(vm_addr4 2)" >/dev/null || fail "new port -> remote VM"
vx 1 port del vnet3 || fail "live port del"
n "$VM3" ip link show vnet3 >/dev/null 2>&1 && fail "vnet3 still exists after port del"
vx 1 fdb show | grep -q "port vnet3" && fail "fdb entries of vnet3 left behind"
pass "port added, used (local and remote), removed while traffic flowed"

wait "$IPERF" || fail "background iperf3 failed: $(tail -5 "$RIG_DIR/bg-iperf.json")"
wait "$PING" || true
loss=$(grep -o '[0-9.]*% packet loss' "$RIG_DIR/bg-ping.txt" | cut -d% -f1)
gbps=$(/usr/bin/python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]/1e9))' "$RIG_DIR/bg-iperf.json")
echo "  background: iperf3 $gbps Gbit/s, ping loss $loss%"
[ "$loss" = 0 ] || fail "ping between vm1 and vm2 lost packets while ports changed: $loss%"
pass "traffic between the other ports lost nothing"
vx 1 version >/dev/null || fail "daemon gone"
