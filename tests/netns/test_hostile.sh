#!/bin/bash
# Malformed frames at the real ports of a running vxswitchd built with
# ASan+UBSan, interleaved with a valid iperf3 stream:
#   - through vm1's tap: frames 1-29 of tests/data/golden_malformed.pcap
#     (truncated at every layer, lying length fields, too many VLAN tags,
#     too long IPv6 extension chains, bad TCP options...) and a jumbo,
#     50 rounds (a runt under 14 bytes cannot leave an Ethernet device, so
#     no tap hands one over: it comes as a cut inner frame from the underlay);
#   - through the underlay socket, from host 2's namespace: the VXLAN
#     payloads of frames 30-36 (bad flags, reserved bits, cut VXLAN
#     header, broken inner frames in VNI 99) and a VNI with no port;
#   - well-formed VXLAN in VNI 99 from an underlay address that is not a
#     remote of the port (a spoofing host): refused, nothing learnt.
# The stream completes; every bad frame is counted under the reason
# golden_malformed.expect gives it (the counts add up to the frames sent);
# the daemon stays up, forwards afterwards, and exits with no ASan or UBSan
# report and no leak.
#
#   vxt19-PID-vm1       vxt19-PID-h1                          vxt19-PID-h2       vxt19-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
#   (scapy: bad frames)  (ASan)                 (UDP: bad VXLAN)
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt19-$$"
trap rig_cleanup EXIT

make --no-print-directory -s asan-daemon >/dev/null
ASAN_VXD=$PWD/build-asan/vxswitchd
ROUNDS=50
rig_create 4
VXSWITCHD=$ASAN_VXD RIG_VXD_ENV="ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1" rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"

# drops SIDE: "reason count" of every drop counter, ports and switch summed.
drops() {
	vx "$1" -j stats | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
t = {}
for src in [d["drops"]] + [p["drops"] for p in d["ports"]]:
	for k, v in src.items():
		t[k] = t.get(k, 0) + v
for k in sorted(t):
	print(k, t[k])'
}
drops 1 >"$RIG_DIR/drops0"
sent_jumbo_before=$(vx_stat 1 'port("vnet1")["rx_frames"]')

rig_iperf 8 1 >"$RIG_DIR/rate" &
ipid=$!
sleep 1
nvm1 ip link set vnet1 mtu 9000
nvm1 /usr/bin/python3 tests/netns/inject_malformed.py tap vnet1 $ROUNDS >"$RIG_DIR/sent_tap"
nvm1 ip link set vnet1 mtu "$(vm_mtu)"
nh2 /usr/bin/python3 tests/netns/inject_malformed.py underlay "$(u_addr 1)" $ROUNDS 99 >"$RIG_DIR/sent_udp"
# A host on the underlay that is no remote of vx99: well-formed VXLAN in
# VNI 99, spoofing a VM, refused whole (and learnt nowhere).
nh2 ip addr add 198.51.100.3/24 dev u2
nh2 /usr/bin/python3 tests/netns/inject_malformed.py spoof "$(u_addr 1)" $ROUNDS 198.51.100.3 99 >>"$RIG_DIR/sent_udp"
wait "$ipid" || fail "iperf3 did not complete under the bad frames"
gbit=$(cat "$RIG_DIR/rate")
drops 1 >"$RIG_DIR/drops1"

# Expected: what was sent, by reason.  The jumbo is a valid frame the
# switch cannot send over the underlay without TSO: mtu_exceeded.
sed 's/^jumbo /mtu_exceeded /' "$RIG_DIR/sent_tap" | cat - "$RIG_DIR/sent_udp" |
	awk '{ n[$1] += $2 } END { for (k in n) print k, n[k] }' | sort >"$RIG_DIR/expected"
join -a1 -a2 -e 0 -o 0,1.2,2.2 "$RIG_DIR/drops0" "$RIG_DIR/drops1" |
	awk '$3 != $2 { print $1, $3 - $2 }' | sort >"$RIG_DIR/counted"
total=$(awk '{ s += $2 } END { print s }' "$RIG_DIR/expected")
echo "  sent $total bad frames ($(wc -l <"$RIG_DIR/expected") reasons), iperf3 $gbit Gbit/s meanwhile"
if ! diff "$RIG_DIR/expected" "$RIG_DIR/counted" >"$RIG_DIR/diff"; then
	echo "  expected (<) and counted (>) drops differ:" >&2
	cat "$RIG_DIR/diff" >&2
	fail "bad frames not counted under their reasons"
fi
! vx 1 fdb show vni 99 | grep -q "02:00:00:00:66:66" || fail "a MAC spoofed from a host that is no remote was learnt"
pass "$total bad frames at the tap and the underlay socket (spoofed VXLAN from a non-remote included), each counted under its reason, nothing learnt from them; iperf3 completed ($gbit Gbit/s)"

kill -0 "$VXD_PID_1" || fail "vxswitchd (ASan) died"
nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "no forwarding after the bad frames"
pid=$VXD_PID_1
rig_vxswitchd_stop 1
for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done # LeakSanitizer runs at exit
! kill -0 "$pid" 2>/dev/null || fail "vxswitchd (ASan) did not exit on SIGTERM"
if grep -E "ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:" "$RIG_DIR/h1.log" >&2; then
	fail "ASan/UBSan reported on the daemon (log: $RIG_DIR/h1.log)"
fi
pass "the ASan+UBSan daemon forwarded afterwards and exited with no sanitizer report or leak"
