#!/bin/bash
# Taps outlive the daemon, so a restart keeps the VM working.
#
# The rig (two vxswitchd, VNI 99): one iperf3 TCP stream from vm2 to vm1
# (-R: vm1's client receives, so its 0.1 s intervals are what arrived) for
# 12 s; at t=4 s vxswitchd 1 is killed (first SIGKILL, then SIGTERM) and
# started again at once with the same config.  Its tap is persistent: the
# new daemon attaches to it in vm1 without touching it.  Asserted: vm1's
# MAC and IPv4 address are the same after the restart, and the stream
# carries traffic again within 2 s of the kill (printed: the gap).
#
# Then, on the live daemon: a tap without vni is refused naming the word;
# `mac` sets a created tap's MAC and is refused on an existing tap with
# another; a tap made with `ip tuntap add` is attached as it is (MAC, MTU
# kept) and left in place by port del, while a tap the switch made is
# deleted by port del; a tap another process holds open is refused as such.
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt-tr$$"
trap rig_cleanup EXIT

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping before the restarts"

vm1_state() { # MAC and IPv4 address of vm1's interface
	echo "$(nvm1 cat /sys/class/net/vnet1/address) $(nvm1 ip -4 -o addr show dev vnet1 | awk '{print $4}')"
}

# Start vxswitchd 1 again with its config; wait until it answers.
restart_vxd1() {
	local sock=$RIG_DIR/h1.sock i p
	nh1 "$VXSWITCHD" --datapath user -c "$RIG_DIR/h1.conf" -s "$sock" -q >> "$RIG_DIR/h1.log" 2>&1 &
	RIG_PIDS="$RIG_PIDS $!"
	for i in $(seq 200); do
		vx 1 version >/dev/null 2>&1 && break
		sleep 0.01
	done
	vx 1 version >/dev/null 2>&1 || { cat "$RIG_DIR/h1.log" >&2; fail "vxswitchd 1 did not restart"; }
	for p in $(ip netns pids "$H1"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = vxswitchd ] && VXD_PID_1=$p
	done
	RIG_PIDS="$RIG_PIDS $VXD_PID_1"
}

before=$(vm1_state)
for sig in KILL TERM; do
	nvm2 iperf3 -s -1 -D -B "$(vm_addr4 2)" -p 5201 --logfile "$RIG_DIR/iperf-s.log" >/dev/null 2>&1
	for i in $(seq 50); do nvm2 ss -ltn | grep -q ":5201 " && break; sleep 0.05; done
	t0=$(date +%s.%N)
	nvm1 iperf3 -c "$(vm_addr4 2)" -p 5201 -R -t 12 --interval 0.1 -J > "$RIG_DIR/iperf-$sig.json" 2>&1 &
	client=$!
	sleep 4
	tkill=$(date +%s.%N)
	kill -"$sig" "$VXD_PID_1"
	while kill -0 "$VXD_PID_1" 2>/dev/null; do sleep 0.01; done
	nvm1 ip link show vnet1 >/dev/null 2>&1 || fail "vnet1 gone after SIG$sig"
	restart_vxd1
	tup=$(date +%s.%N)
	wait "$client" || fail "iperf3 across the SIG$sig restart failed: $(tail -5 "$RIG_DIR/iperf-$sig.json")"
	after=$(vm1_state)
	[ "$after" = "$before" ] || fail "vm1 changed across the SIG$sig restart: '$before' -> '$after'"
	# The gap: from the kill to the end of the first run of intervals after
	# it that carried less than a tenth of the median interval before it
	# (none: under one interval, 0.1 s).
	gap=$(/usr/bin/python3 - "$RIG_DIR/iperf-$sig.json" "$t0" "$tkill" <<'EOF'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
kill = float(sys.argv[3]) - float(sys.argv[2])
iv = [(i["sum"]["start"], i["sum"]["end"], i["sum"]["bytes"]) for i in d["intervals"]]
pre = [b for s, e, b in iv if e <= kill - 0.2]
floor = statistics.median(pre) / 10
dead_end = None
for s, e, b in iv:
	if e <= kill:
		continue
	if b < floor:
		dead_end = e
	elif dead_end is not None:
		break
gap = max(0.0, dead_end - kill) if dead_end is not None else 0.0
after = [b for s, e, b in iv if s >= (dead_end or kill)]
ok = sum(1 for b in after if b >= floor)
print("%.1f %d %d %.0f" % (gap, ok, len(after), statistics.median(pre) * 8 / (iv[0][1] - iv[0][0]) / 1e6))
print("    Mbit/s per 0.1 s around the kill at %.2f s: " % kill +
      " ".join("%.0f" % (b * 8 / (e - s) / 1e6) for s, e, b in iv if kill - 0.3 <= s <= kill + 1.5), file=sys.stderr)
EOF
)
	set -- $gap
	echo "  SIG$sig: daemon back in $(/usr/bin/python3 -c "print('%.0f' % ((${tup} - ${tkill}) * 1000))") ms; no traffic for <= $1 s after the kill (0.1 s intervals); $2/$3 intervals after it carry traffic; ${4} Mbit/s before"
	/usr/bin/python3 -c "import sys; sys.exit(0 if $1 <= 2.0 and $2 >= 1 else 1)" || fail "SIG$sig: stream not back within 2 s (gap $1 s)"
	pass "SIG$sig + restart: vm1 kept MAC and address ($after), traffic again within $1 s"
done
nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after the restarts"

# A tap without vni: refused, one line naming the word.
rc=0; vx 1 port add vnet6 type tap netns "$VM1" 2> "$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'missing "vni VNI", required for type tap' "$RIG_DIR/err" || fail "no vni: rc $rc, $(cat "$RIG_DIR/err")"
nvm1 ip link show vnet6 >/dev/null 2>&1 && fail "a refused port add left vnet6"
pass "tap without vni refused: $(cat "$RIG_DIR/err")"

# mac on a created tap; refused on an existing one with another MAC.
vx 1 port add vnet7 type tap vni 99 netns "$VM1" mac 02:00:5e:00:53:07 >/dev/null || fail "port add vnet7 mac"
[ "$(nvm1 cat /sys/class/net/vnet7/address)" = 02:00:5e:00:53:07 ] || fail "vnet7 MAC is $(nvm1 cat /sys/class/net/vnet7/address)"
vx 1 port del vnet7
nvm1 ip link show vnet7 >/dev/null 2>&1 && fail "port del left the tap the switch made"
m1=$(nvm1 cat /sys/class/net/vnet1/address)
vx 1 port del vnet1
nvm1 ip link show vnet1 >/dev/null 2>&1 && fail "port del left vnet1 (made by the daemon before its restarts)"
pass "mac sets a created tap's MAC; port del deletes taps the switch made, also after a restart"

nvm1 ip tuntap add dev vnet8 mode tap vnet_hdr
nvm1 ip link set vnet8 address 02:00:5e:00:53:08 mtu 1400
rc=0; vx 1 port add vnet8 type tap vni 99 netns "$VM1" mac 02:00:5e:00:53:99 2> "$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] && grep -q "would change the MAC of the existing tap (it has 02:00:5e:00:53:08" "$RIG_DIR/err" || fail "mac change: rc $rc, $(cat "$RIG_DIR/err")"
vx 1 port add vnet8 type tap vni 99 netns "$VM1" >/dev/null || fail "attach vnet8"
[ "$(nvm1 cat /sys/class/net/vnet8/address) $(nvm1 cat /sys/class/net/vnet8/mtu)" = "02:00:5e:00:53:08 1400" ] || fail "vnet8 changed"
nvm1 ip addr add "$(vm_addr4 1)/24" dev vnet8
nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping through an attached ip-tuntap tap"
vx 1 port del vnet8
nvm1 ip link show vnet8 >/dev/null 2>&1 || fail "port del deleted a tap it did not make"
pass "ip tuntap tap attached as it is (MAC, MTU kept), pings, stays after port del; a mac change refused: $(cut -c1-90 "$RIG_DIR/err")"

# Held open by another process (as QEMU holds a VM's tap).
nvm1 /usr/bin/python3 -c '
import fcntl, os, struct, sys, time
fd = os.open("/dev/net/tun", os.O_RDWR)
fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH", b"vnet8", 0x0002 | 0x1000 | 0x4000))
open(sys.argv[1], "w").close()
time.sleep(30)' "$RIG_DIR/held" &
RIG_PIDS="$RIG_PIDS $!"
for i in $(seq 100); do [ -e "$RIG_DIR/held" ] && break; sleep 0.05; done
rc=0; vx 1 port add vnet8 type tap vni 99 netns "$VM1" 2> "$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] && grep -q "held open by another process, e.g. QEMU" "$RIG_DIR/err" || fail "held tap: rc $rc, $(cat "$RIG_DIR/err")"
pass "a tap held open elsewhere refused: $(cat "$RIG_DIR/err")"
