#!/bin/bash
# Underlay link down for 2 s, then up: traffic between the VMs resumes
# within 1 s of the link coming up, by itself, and the daemon counts the
# sends the kernel refused meanwhile instead of dying or spinning.
#
#   vxt17-PID-vm1       vxt17-PID-h1                          vxt17-PID-h2       vxt17-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ====(down 2 s)==== u2 -- vxswitchd --> vnet2 192.0.2.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt17-$$"
trap rig_cleanup EXIT

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"

# Timestamped pings every 20 ms across the flap.
nvm1 ping -D -i 0.02 -W 1 -w 7 "$(vm_addr4 2)" >"$RIG_DIR/ping.txt" 2>&1 &
ppid=$!
sleep 1.5
nh1 ip link set u1 down
sleep 1
vx 1 port show | grep -q "^vx99 .*state down (underlay u1 down" || fail "port show does not say the underlay is down: $(vx 1 port show)"
vx 1 diagnose | grep -q "vx99: its underlay link u1 is down" || fail "diagnose does not name the underlay down: $(vx 1 diagnose)"
sleep 1
up_at=$(date +%s.%N)
nh1 ip link set u1 up
wait "$ppid" || true
gap=$(/usr/bin/python3 - "$RIG_DIR/ping.txt" "$up_at" <<'PY'
import re, sys
up = float(sys.argv[2])
replies = [float(m.group(1)) for l in open(sys.argv[1]) for m in [re.match(r"\[([\d.]+)\].*time=", l)] if m]
after = [t for t in replies if t > up]
print("%.3f" % (after[0] - up) if after else "none")
PY
)
[ "$gap" != none ] || fail "no ping reply after the underlay came back: $(tail -3 "$RIG_DIR/ping.txt")"
/usr/bin/python3 -c "import sys; sys.exit(0 if $gap < 1.0 else 1)" || fail "traffic resumed only $gap s after the link came up"
kill -0 "$VXD_PID_1" || fail "vxswitchd died during the flap"
vx 1 port show | grep -q "^vx99 .*state up" || fail "port show does not say up again: $(vx 1 port show)"
[ "$(vx_port 1 vx99 link_down_events)" = 1 ] || fail "the underlay going down not counted once"
errs=$(vx_stat 1 'port("vx99")["vxlan"]["socket"]["tx_errors"]')
up=$(rig_iperf 2 1) || fail "iperf3 after the flap"
pass "underlay down 2 s: port down (underlay u1 down) in port show and diagnose, up again after; traffic back $gap s after link up, $errs sends refused meanwhile counted, iperf3 $up Gbit/s after"
