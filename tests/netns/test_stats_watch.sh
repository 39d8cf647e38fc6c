#!/bin/bash
# vxctl stats --watch: an iperf3 UDP stream of 100 Mbit/s (1400-byte
# datagrams: 1442-byte frames, 8929 frames/s) is reported at that rate in
# the intervals it fills, and the per-interval counts add up exactly to the
# counters' change across the watch (quiet before and after).  Text: one
# block per interval on a pipe, a cleared screen on a terminal.
#
#   vxt43-PID-vm1       vxt43-PID-h1                          vxt43-PID-h2       vxt43-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
#   iperf3 -u -b 100M ------------------------------------------------------>  iperf3 -s
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt43-$$"
trap rig_cleanup EXIT
PY=/usr/bin/python3

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 sysctl -qw net.ipv6.conf.vnet1.disable_ipv6=1
nvm2 sysctl -qw net.ipv6.conf.vnet2.disable_ipv6=1
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"
nvm2 iperf3 -s -1 -D -B "$(vm_addr4 2)" -p 5201 --logfile "$RIG_DIR/iperf-s.log" >/dev/null 2>&1
sleep 0.5

vx 1 -j stats > "$RIG_DIR/before.json"
vx 1 -j stats --watch 1 -c 7 > "$RIG_DIR/watch.jsonl" &
watch=$!
sleep 0.7
nvm1 iperf3 -c "$(vm_addr4 2)" -p 5201 -u -b 100M -l 1400 -t 4 > "$RIG_DIR/iperf-c.log" 2>&1 || fail "iperf3 -u"
wait "$watch" || fail "vxctl stats --watch exited $?"
vx 1 -j stats > "$RIG_DIR/after.json"

$PY - "$RIG_DIR/before.json" "$RIG_DIR/after.json" "$RIG_DIR/watch.jsonl" <<'PYEOF'
import json, sys
before, after = (json.load(open(f)) for f in sys.argv[1:3])
lines = open(sys.argv[3]).read().splitlines()
rates = [json.loads(l) for l in lines]
def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)
if len(rates) != 7:
    fail("%d intervals, not 7" % len(rates))
port = lambda d, n: [p for p in d["ports"] if p["name"] == n][0]
for r in rates:
    if abs(r["interval_s"] - 1.0) > 0.2:
        fail("interval %.3f s" % r["interval_s"])
# Sums over the intervals = the change of the counters (quiet outside).
for name in ("vnet1", "vx99"):
    for key in ("rx_frames", "rx_bytes", "tx_frames", "tx_bytes"):
        s = sum(port(r, name)[key] for r in rates)
        d = port(after, name)[key] - port(before, name)[key]
        if s != d:
            fail("%s %s: intervals add up to %d, counters moved %d" % (name, key, s, d))
tx = port(after, "vx99")["tx_frames"] - port(before, "vx99")["tx_frames"]
if tx < 4 * 8000:
    fail("only %d frames crossed" % tx)
# The intervals the stream filled (iperf3 starts 0.7 s in, runs 4 s): 2, 3, 4.
for r in rates[1:4]:
    p = port(r, "vnet1")
    if not (8000 <= p["rx_pps"] <= 9900) or not (0.092 <= p["rx_gbps"] <= 0.114):
        fail("vnet1 rx %.0f pps %.4f Gbit/s, expected about 8929 pps 0.103 Gbit/s" % (p["rx_pps"], p["rx_gbps"]))
    x = port(r, "vx99")
    if not (8000 <= x["tx_pps"] <= 9900):
        fail("vx99 tx %.0f pps" % x["tx_pps"])
    if p["rx_drops_ps"] != 0 or x["tx_drops_ps"] != 0:
        fail("drops reported: %s" % r)
    if r["cpu_us_per_kb"] <= 0:
        fail("no CPU time per KB in a busy interval")
mid = port(rates[2], "vnet1")
print("ok: %d frames in 7 intervals, per-interval counts add up to the counters; mid-stream vnet1 rx %.0f pps %.4f Gbit/s, %.3f us/KB"
      % (tx, mid["rx_pps"], mid["rx_gbps"], rates[2]["cpu_us_per_kb"]))
PYEOF

# Text on a pipe: blocks one after the other, no escape codes.
vx 1 stats --watch 0.2 -c 3 > "$RIG_DIR/watch.txt" || fail "stats --watch (text)"
[ "$(grep -c '^interval ' "$RIG_DIR/watch.txt")" = 3 ] && [ "$(grep -c '^vnet1 ' "$RIG_DIR/watch.txt")" = 3 ] ||
	fail "text watch: $(cat "$RIG_DIR/watch.txt")"
! grep -q $'\033' "$RIG_DIR/watch.txt" || fail "escape codes on a pipe"
pass "text: 3 blocks on a pipe, no escape codes"
if command -v script >/dev/null; then
	script -qc "$VXCTL --socket $RIG_DIR/h1.sock stats --watch 0.2 -c 2" /dev/null > "$RIG_DIR/tty.txt"
	[ "$(grep -c $'\033\\[H\033\\[2J' "$RIG_DIR/tty.txt")" = 2 ] || fail "no clear screen on a terminal"
	pass "text on a terminal: the screen cleared before each of 2 intervals"
fi
vx 1 stats port vnet1 --watch 0.2 -c 1 | grep -q '^vnet1 ' || fail "stats port vnet1 --watch"
! vx 1 stats port vnet1 --watch 0.2 -c 1 | grep -q '^vx99 ' || fail "stats port vnet1 --watch shows vx99"
pass "stats port vnet1 --watch shows vnet1 alone"
