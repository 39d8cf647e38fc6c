#!/bin/bash
# vxctl capture: copies of a port's frames taken in vxswitchd, read back by
# tshark/tcpdump.  Known streams (ping -s 1000: 1042-byte frames, 1092 bytes
# with outer headers; UDP datagrams to port 9) are captured on the tap and
# on the vxlan port (inner and outer) and must come back exactly: count,
# bytes, direction, VNI.  The FILTER selects what it says; a bad one is
# refused (exit 1) and forwarding goes on; `-w - | tcpdump -r -` streams;
# the excess over 4 captures is refused; Ctrl-C ends a capture cleanly; a
# capture left running during iperf3 leaves nothing behind once stopped
# (the datapath holds no capture after any ending: Ctrl-C, -c, a killed
# client, a killed stalled reader, port del; its cost is measured by
# bench/capture_cost.sh); a slow reader does not stall forwarding and its
# drops are reported.
#
#   vxt42-PID-vm1       vxt42-PID-h1                          vxt42-PID-h2       vxt42-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
#                       (captures on vnet1 and vx99)
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt42-$$"
trap rig_cleanup EXIT

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"
SOCK1=$RIG_DIR/h1.sock
D=$RIG_DIR

. tests/netns/capture_lib.sh
# cap_state WHAT PYCOND: h1's `-j stats` capture block (c) meets PYCOND;
# cap_state_idle WHAT: no capture left anywhere (sessions, datapath counts,
# GRO's emit back to the plain one).
cap_state() {
	local i
	for i in $(seq 20); do # a killed client is seen at the server's next turn
		vx_stat 1 "1 if (lambda c: $2)(d['capture']) else 0" | grep -qx 1 && return 0
		sleep 0.1
	done
	fail "capture state $1: want $2, have $(vx_stat 1 "d['capture']")"
}
cap_state_idle() {
	cap_state "$1" 'c["sessions"] == 0 and c["port_captures"] == 0 and c["ports_tapped"] == 0 and c["socket_captures"] == 0 and c["gro_captures"] == 0'
}
ping5() { nvm1 ping -c 5 -i 0.1 -s 1000 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping during capture"; }

# ---- a tap: both directions, then each alone ----------------------------
cap_start both vnet1 -c 10 -w "$D/both.pcap" icmp
cap_start in vnet1 in -c 5 -w "$D/in.pcap" icmp
cap_start out vnet1 out -c 5 -w "$D/out.pcap" icmp
settle
ping5
for c in both in out; do cap_wait "$c"; done
expect "$D/both.pcap" 10 1042
expect "$D/both.pcap" 5 1042 "icmp.type == 8"
expect "$D/in.pcap" 5 1042 "icmp.type == 8 && ip.src == 192.0.2.1"
expect "$D/out.pcap" 5 1042 "icmp.type == 0 && ip.dst == 192.0.2.1"
grep -q "capture vnet1: 10 frames captured" "$D/both.err" || fail "summary: $(cat "$D/both.err")"
pass "tap vnet1: 10 frames both ways, 5 in (requests), 5 out (replies), 1042 bytes each, as tshark reads them"

# ---- the vxlan port: inner and outer -------------------------------------
cap_start vin vx99 in inner -c 5 -w "$D/vin.pcap" icmp
cap_start vout vx99 out -c 5 -w "$D/vout.pcap" icmp
cap_start oin vx99 in outer -c 5 -w "$D/oin.pcap" udp port 4789 and greater 1000
cap_start oout vx99 out outer -c 5 -w "$D/oout.pcap" greater 1000
settle
ping5
for c in vin vout oin oout; do cap_wait "$c"; done
expect "$D/vin.pcap" 5 1042 "icmp.type == 0"
expect "$D/vout.pcap" 5 1042 "icmp.type == 8"
expect "$D/oin.pcap" 5 1092 "vxlan.vni == $VNI && udp.dstport == 4789 && ip.src == 198.51.100.2 && ip.dst == 198.51.100.1 && icmp.type == 0"
expect "$D/oout.pcap" 5 1092 "vxlan.vni == $VNI && udp.dstport == 4789 && ip.src == 198.51.100.1 && ip.dst == 198.51.100.2 && icmp.type == 8"
pass "vx99: inner 5 replies in / 5 requests out (1042 B); outer 5 + 5 datagrams (1092 B) decoded by tshark as VXLAN vni $VNI between the underlay addresses"

# ---- FILTER selects what it says -----------------------------------------
cap_start ficmp vnet1 in -w "$D/ficmp.pcap" icmp
cap_start fudp vnet1 in -w "$D/fudp.pcap" udp port 9
settle
nvm1 ping -c 3 -i 0.1 -W 2 "$(vm_addr4 2)" >/dev/null
nvm1 bash -c 'for i in 1 2 3 4 5 6 7; do echo "datagram $i" > /dev/udp/192.0.2.2/9; sleep 0.05; done'
sleep 0.5
kill -INT "$CAP_ficmp" "$CAP_fudp"
cap_wait ficmp
cap_wait fudp
[ "$(lens "$D/ficmp.pcap" | wc -l)" = 3 ] || fail "icmp filter: $(tshark -r "$D/ficmp.pcap" 2>/dev/null)"
[ "$(lens "$D/ficmp.pcap" "icmp.type == 8" | wc -l)" = 3 ] || fail "icmp filter let other frames in"
[ "$(lens "$D/fudp.pcap" | wc -l)" = 7 ] || fail "udp port 9 filter: $(tshark -r "$D/fudp.pcap" 2>/dev/null)"
[ "$(lens "$D/fudp.pcap" "udp.dstport == 9" | wc -l)" = 7 ] || fail "udp filter let other frames in"
grep -q "capture vnet1: 3 frames captured" "$D/ficmp.err" || fail "Ctrl-C summary: $(cat "$D/ficmp.err")"
pass "filters at once on one port: icmp 3 of 3, udp port 9 7 of 7, nothing else; SIGINT ended both with their summary"

# ---- -w - | tcpdump -r -, and the summary lines ----------------------------
( "$VXCTL" --socket "$SOCK1" capture vnet1 in -c 3 -w - icmp 2>/dev/null | tcpdump -nn -r - 2>/dev/null > "$D/td.txt" ) &
TD=$!
"$VXCTL" --socket "$SOCK1" capture vnet1 out -c 2 icmp > "$D/lines.txt" 2>/dev/null &
LN=$!
settle
nvm1 ping -c 3 -i 0.1 -W 2 "$(vm_addr4 2)" >/dev/null
wait "$TD"
wait "$LN" || fail "summary-line capture failed"
[ "$(grep -c 'ICMP echo request' "$D/td.txt")" = 3 ] || fail "tcpdump -r - read: $(cat "$D/td.txt")"
[ "$(grep -c 'out .* IPv4 192.0.2.2 > 192.0.2.1: ICMP echo reply, length 98' "$D/lines.txt")" = 2 ] ||
	fail "summary lines: $(cat "$D/lines.txt")"
pass "-w - | tcpdump -r - read 3 echo requests; without -w, 2 summary lines"

# ---- refusals; forwarding goes on ------------------------------------------
rc=0; out=$(vx 1 capture vnet1 udp port 2>&1) || rc=$?
[ "$rc" = 1 ] && echo "$out" | grep -q 'bad FILTER "udp port": .*syntax error' || fail "bad filter: rc $rc: $out"
rc=0; out=$(vx 1 capture vnet1 outer 2>&1) || rc=$?
[ "$rc" = 1 ] && echo "$out" | grep -q "tap port has no outer headers" || fail "outer on a tap: rc $rc: $out"
rc=0; out=$(vx 1 capture nosuch 2>&1) || rc=$?
[ "$rc" = 1 ] && echo "$out" | grep -q "no such port" || fail "no such port: rc $rc: $out"
for i in 1 2 3 4; do cap_start "x$i" vnet1 -w /dev/null; done
settle
rc=0; out=$(vx 1 capture vnet1 2>&1) || rc=$?
[ "$rc" = 1 ] && echo "$out" | grep -q "4 captures run already" || fail "5th capture: rc $rc: $out"
# A client killed outright (no Ctrl-C) ends its capture: its slot is free.
kill -KILL "$CAP_x1"
wait "$CAP_x1" 2>/dev/null || true
cap_state "after a killed client, 3 left" 'c["sessions"] == 3 and c["port_captures"] == 3 and c["ports_tapped"] == 1 and c["socket_captures"] == 0'
cap_start x5 vnet1 in -c 1 -w "$D/x5.pcap" icmp
settle
nvm1 ping -c 3 -i 0.1 -W 2 "$(vm_addr4 2)" >/dev/null || fail "no forwarding after the refusals"
cap_wait x5
kill -INT $CAP_x2 $CAP_x3 $CAP_x4
for i in 2 3 4; do cap_wait "x$i"; done
grep -q "1 frames captured" "$D/x5.err" || fail "capture after a killed client: $(cat "$D/x5.err")"
cap_state_idle "after the refusals and the killed client"
pass "bad filter refused with pcap's message (exit 1), outer on a tap and unknown ports refused, a 5th capture refused; a killed client's capture ends (its slot taken again, the datapath holds 3 then 0); forwarding goes on"

# ---- a port removed ends its capture --------------------------------------
vx 1 port add vnet9 type tap vni 99 >/dev/null
cap_start gone vnet9 -w "$D/gone.pcap"
settle
vx 1 port del vnet9
rc=0; wait "$CAP_gone" || rc=$?
[ "$rc" = 1 ] && grep -Eq "capture vnet9: [0-9]+ frames captured; port removed" "$D/gone.err" || fail "port del: rc $rc: $(cat "$D/gone.err")"
cap_state_idle "after port del"
pass "port del ends the port's capture (exit 1, 'port removed'), the datapath holds none"

# ---- big frames: a GRO-merged frame is captured whole ------------------------
cap_start big vx99 in inner -c 300 -w "$D/big.pcap" tcp
settle
cap_state "during an inner capture of vx99" 'c["sessions"] == 1 and c["socket_captures"] == 1 and c["gro_captures"] == 1'
rig_iperf 2 2 >/dev/null
sleep 0.3
kill -INT "$CAP_big" 2>/dev/null || true
cap_wait big
biggest=$(lens "$D/big.pcap" | sort -n | tail -1)
tshark -r "$D/big.pcap" >/dev/null 2>"$D/big.tshark" || fail "tshark cannot read the big frames: $(cat "$D/big.tshark")"
[ "${biggest:-0}" -gt 6000 ] || fail "largest captured frame from vx99 is ${biggest:-none} bytes: GRO-merged frames not captured whole"
cap_state_idle "after the inner capture of vx99"
pass "decapsulated GRO-merged frames captured whole: up to $biggest bytes, tshark reads them; GRO's emit switched while it ran, and back"

# ---- iperf3: no lasting cost ------------------------------------------------
# What is judged is the state: with the capture stopped the datapath holds
# none (capture.* all 0, GRO's emit switched back), so it runs the code it
# ran before the capture, and the capture's session counted the frames it
# took while it ran and none after.  One round of iperf3 before, during and
# after a capture to /dev/null is printed for the record; the cost itself
# is measured over interleaved rounds by bench/capture_cost.sh (`make
# bench-capture`), not judged here: a fixed bound on CPU per KB failed CI
# on a noisy host (median 1.24 with a spread of 0.48 across rounds).
b=$(rig_iperf 2 1) || fail "iperf3 before the capture"
cap_start perf vnet1 -w /dev/null
settle
cap_state "during the iperf3 capture" 'c["sessions"] == 1 and c["port_captures"] == 1 and c["ports_tapped"] == 1'
d=$(rig_iperf 2 1) || fail "iperf3 during the capture"
kill -INT "$CAP_perf"
cap_wait perf
took=$(sed -n 's/.*: \([0-9]*\) frames captured.*/\1/p' "$D/perf.err")
[ "${took:-0}" -gt 1000 ] || fail "the capture during iperf3 took ${took:-no} frames: $(cat "$D/perf.err")"
cap_state_idle "after the iperf3 capture"
a=$(rig_iperf 2 1) || fail "iperf3 after the capture"
cap_state_idle "after iperf3 ran past the ended capture"
pass "no lasting cost: the capture took $took frames during iperf3 and the datapath holds none once it stopped; Gbit/s before/during/after $b/$d/$a (one round, not judged: bench/capture_cost.sh measures the cost)"

# ---- a slow reader ------------------------------------------------------------
timeout -s INT 9 "$VXCTL" --socket "$SOCK1" capture vnet1 -w - 2>"$D/slow.err" | (sleep 5; cat >/dev/null) &
SLOW=$!
settle
n "$VM2" iperf3 -s -1 -D -B "$(vm_addr4 2)" -p 5202 >/dev/null 2>&1
sleep 0.3
nvm1 iperf3 -c "$(vm_addr4 2)" -p 5202 -t 4 >/dev/null 2>&1 &
IP=$!
loss=$(nvm1 ping -c 30 -i 0.1 -W 1 "$(vm_addr4 2)" | grep -o '[0-9.]*% packet loss')
wait "$IP" || true
wait "$SLOW" || true
[ "$loss" = "0% packet loss" ] || fail "ping during a stalled capture reader: $loss"
grep -Eq "frames captured; [0-9]+ frames dropped: reader too slow" "$D/slow.err" || fail "slow reader summary: $(cat "$D/slow.err")"
pass "slow reader (5 s stall under iperf3): ping $loss, $(sed 's/.*captured; //' "$D/slow.err")"
cap_state_idle "after the slow reader"

# A stalled reader killed outright (its pipe full, the daemon's stream
# full, the ring dropping): the capture ends and the datapath lets go.
mkfifo "$D/stall"
sleep 60 < "$D/stall" &
STALL=$!
"$VXCTL" --socket "$SOCK1" capture vnet1 -w - > "$D/stall" 2>"$D/stall.err" &
KCAP=$!
settle
n "$VM2" iperf3 -s -1 -D -B "$(vm_addr4 2)" -p 5203 >/dev/null 2>&1
sleep 0.3
nvm1 iperf3 -c "$(vm_addr4 2)" -p 5203 -t 2 >/dev/null 2>&1 || fail "iperf3 under a stalled capture reader"
cap_state "a stalled reader, before it is killed" 'c["sessions"] == 1 and c["port_captures"] == 1'
kill -KILL "$KCAP"
wait "$KCAP" 2>/dev/null || true
cap_state_idle "after the stalled reader was killed"
kill "$STALL" 2>/dev/null || true
wait "$STALL" 2>/dev/null || true
nvm1 ping -c 3 -i 0.1 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after the stalled reader was killed"
pass "a stalled reader killed with SIGKILL: its capture ends, the datapath holds none, forwarding goes on"
