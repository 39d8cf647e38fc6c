#!/bin/bash
# Drops outside the daemon are counted: frames the VM sends into its tap
# that vxswitchd does not read in time overflow the tap's queue and the
# kernel drops them (tx_dropped of the tap netdev).  vm1 floods small
# frames (parallel AF_PACKET senders, qdisc bypassed, to an unknown MAC so
# the switch floods each one to the far VTEP: more work per frame than a
# send).  Asserted: `vxctl -j stats` shows tap.kernel_tx_dropped > 0 and
# equal to the kernel's /sys/class/net/vnet1/statistics/tx_dropped read in
# vm1, and `vxctl diagnose` names the drops.
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt-td$$"
trap rig_cleanup EXIT

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"

kernel_drops() { nvm1 cat /sys/class/net/vnet1/statistics/tx_dropped; }
[ "$(vx_stat 1 'port("vnet1")["tap"]["kernel_tx_dropped"]')" = "$(kernel_drops)" ] || fail "counters disagree at rest"

# A shorter queue than the default 1000 makes the overflow certain on a
# fast machine; the kernel resizes the tap's ring with it.
nvm1 ip link set vnet1 txqueuelen 64
for i in 1 2 3 4; do
	nvm1 /usr/bin/python3 -c '
import socket, struct
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.setsockopt(263, 20, 1)  # SOL_PACKET, PACKET_QDISC_BYPASS
s.bind(("vnet1", 0))
frame = bytes.fromhex("02005e0053ff") + bytes.fromhex("02005e005301") + b"\x88\xb5" + bytes(46)
for _ in range(100000):
	try:
		s.send(frame)
	except (BlockingIOError, OSError):
		pass' &
	RIG_PIDS="$RIG_PIDS $!"
	flooders="${flooders:-} $!"
done
for p in $flooders; do wait "$p" || true; done
sleep 0.5

stat=$(vx_stat 1 'port("vnet1")["tap"]["kernel_tx_dropped"]')
kern=$(kernel_drops)
echo "  vnet1: kernel tx_dropped $kern, vxctl stats kernel_tx_dropped $stat; daemon read $(vx_stat 1 'port("vnet1")["rx_frames"]') frames"
[ "$kern" -gt 0 ] || fail "the flood did not overflow the tap queue (tx_dropped 0)"
[ "$stat" = "$kern" ] || fail "stats say $stat, the kernel $kern"
pass "tap queue drops counted: $stat, as the kernel counts them"

rc=0
vx 1 diagnose > "$RIG_DIR/diag" || rc=$?
[ "$rc" = 1 ] || fail "diagnose exits $rc with a finding: $(cat "$RIG_DIR/diag")"
vx 1 -j diagnose | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if any(f["cause"] == "tap_queue_drops" and f["port"] == "vnet1" and f["dropped"] > 0 for f in d["findings"]) else 1)' ||
	fail "-j diagnose has no tap_queue_drops finding for vnet1"
grep -q "vnet1: the kernel dropped $kern frames the VM sent, its tap queue full" "$RIG_DIR/diag" || fail "diagnose: $(cat "$RIG_DIR/diag")"
vx 1 stats port vnet1 | grep -q "tap queue drops $kern" || fail "text stats: $(vx 1 stats port vnet1)"
pass "diagnose names them: $(grep 'kernel dropped' "$RIG_DIR/diag" | cut -c1-110)"
