#!/bin/bash
# vxctl capture on the kernel datapath (vxswitchd --datapath kernel): the
# programs copy a captured port's frames into a perf ring, vxswitchd
# filters them and streams them as it does the userspace datapath's.
# Frames delivered with bpf_redirect_peer never cross the host-side veth,
# so only the program's copy sees what goes to the VM.
#
# Checks: on the VM's veth, `both`/`in`/`out` read back in tshark as the
# pings sent (count, 1042 bytes, the ping's payload pattern, direction by
# ICMP type and address); a BPF filter lets through what it says and
# nothing else (small pings sent first), and it runs in the program
# before the copy (the frames it skips are counted there, not copied;
# a port with two captures copies every frame and vxswitchd filters);
# the vxlan port's inner frames
# (out = requests to the remote, in = replies decapsulated), and `outer`
# refused with its reason; a port removed ends its capture; a capture of a
# frame the ring has no room for is counted and reported (a stalled reader
# under iperf3); the port stays on the fast path while captured (the
# program's own rx/tx counters carry the stream, no upcall is made); after
# every capture ended the programs' flag is 0 (the one test they pay),
# also after one under iperf3.  What a capture costs is measured by
# bench/capture_cost.sh (`make bench-capture DP=kernel`).
#
#   kcp-PID-vm1        kcp-PID-h1                                kcp-PID-h2        kcp-PID-vm2
#   vnet1 192.0.2.1 <= veth => vnet1 [vxdp0] u1 ===== u2 [vxdp0] vnet2 <= veth => vnet2 192.0.2.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "kcp-$$"
trap rig_cleanup EXIT

rig_create 4
rig_vxswitchd_bpf 1
rig_vxswitchd_bpf 2
grep -q "datapath kernel unavailable" "$RIG_DIR"/h*.log && fail "no kernel datapath: $(cat "$RIG_DIR"/h*.log)"
for i in $(seq 10); do nvm1 ping -c 1 -W 1 "$(vm_addr4 2)" >/dev/null 2>&1 && break; done
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"
SOCK1=$RIG_DIR/h1.sock
D=$RIG_DIR
PAT=c0ffee5a

. tests/netns/capture_lib.sh
cap_on() { vx_stat 1 'd["capture"]["kernel_keys"]'; } # ports the programs copy now (their flag)
ping5() { nvm1 ping -c 5 -i 0.1 -s 1000 -p "$PAT" -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping during capture"; }
# pattern FILE: frames whose ICMP payload carries the ping's pattern
pattern() { tshark -r "$1" -Y "frame contains c0:ff:ee:5a:c0:ff:ee:5a" 2>/dev/null | grep -c . || true; }

# ---- a VM's veth: both, in, out ------------------------------------------
[ "$(cap_on)" = 0 ] || fail "the programs' capture flag is $(cap_on) with no capture"
cap_start both vnet1 -c 10 -w "$D/both.pcap" icmp
cap_start in vnet1 in -c 5 -w "$D/in.pcap" icmp
cap_start out vnet1 out -c 5 -w "$D/out.pcap" icmp
settle
[ "$(cap_on)" = 1 ] || fail "three captures of vnet1: the flag is $(cap_on), 1 key expected"
prefiltered() { vx_stat 1 'd["capture"]["kernel_prefiltered"]'; }
kfiltered() { vx_stat 1 'd["capture"]["kernel_filtered"]'; }
[ "$(prefiltered)" = 0 ] || fail "three captures share vnet1's copies, yet $(prefiltered) key is pre-filtered"
ping5
for c in both in out; do cap_wait "$c"; done
expect "$D/both.pcap" 10 1042
expect "$D/both.pcap" 5 1042 "icmp.type == 8"
expect "$D/in.pcap" 5 1042 "icmp.type == 8 && ip.src == 192.0.2.1 && ip.dst == 192.0.2.2"
expect "$D/out.pcap" 5 1042 "icmp.type == 0 && ip.dst == 192.0.2.1 && ip.src == 192.0.2.2"
[ "$(pattern "$D/both.pcap")" = 10 ] || fail "both: $(pattern "$D/both.pcap") of 10 frames carry the ping's pattern"
[ "$(pattern "$D/in.pcap")" = 5 ] && [ "$(pattern "$D/out.pcap")" = 5 ] || fail "in/out frames without the ping's pattern"
grep -q "capture vnet1: 10 frames captured" "$D/both.err" || fail "summary: $(cat "$D/both.err")"
[ "$(cap_on)" = 0 ] || fail "captures ended, the flag is $(cap_on)"
pass "vnet1 (kernel datapath, redirect_peer): 10 frames both ways, 5 in (requests), 5 out (replies), 1042 bytes each with the ping's pattern, as tshark reads them; the programs' flag back to 0"

# ---- a BPF filter -----------------------------------------------------------
cap_start filt vnet1 -c 6 -w "$D/filt.pcap" icmp and greater 1000
settle
[ "$(prefiltered)" = 1 ] || fail "one capture of vnet1 with a filter: $(prefiltered) keys pre-filtered, 1 expected"
nvm1 ping -c 3 -i 0.1 -s 100 -W 2 "$(vm_addr4 2)" >/dev/null
nvm1 bash -c 'for i in 1 2 3; do echo "datagram $i" > /dev/udp/192.0.2.2/9; done'
skipped=$(kfiltered)
[ "$skipped" -ge 9 ] || fail "the program skipped $skipped frames of the 6 small pings' and 3 datagrams', 9 at least expected"
nvm1 ping -c 3 -i 0.1 -s 1000 -p "$PAT" -W 2 "$(vm_addr4 2)" >/dev/null
cap_wait filt
expect "$D/filt.pcap" 6 1042
[ "$(pattern "$D/filt.pcap")" = 6 ] || fail "filter: frames other than the big pings"
grep -Eq "capture vnet1: 6 frames captured; the filter skipped [0-9]+ in the kernel" "$D/filt.err" ||
	fail "summary of a pre-filtered capture: $(cat "$D/filt.err")"
pass "filter 'icmp and greater 1000', run in the program: the 6 big pings' frames, none of the 6 small ones or the 3 UDP datagrams before them ($skipped frames skipped before the copy)"

# ---- the vxlan port: inner frames; outer refused -----------------------------
cap_start vin vx99 in -c 5 -w "$D/vin.pcap" icmp
cap_start vout vx99 out inner -c 5 -w "$D/vout.pcap" icmp
settle
ping5
cap_wait vin
cap_wait vout
expect "$D/vin.pcap" 5 1042 "icmp.type == 0 && ip.src == 192.0.2.2"
expect "$D/vout.pcap" 5 1042 "icmp.type == 8 && ip.dst == 192.0.2.2"
rc=0; out=$(vx 1 capture vx99 outer 2>&1) || rc=$?
[ "$rc" = 1 ] && echo "$out" | grep -q "outer headers are made by the kernel's vxlan device" ||
	fail "outer on the kernel datapath: rc $rc: $out"
rc=0; out=$(vx 1 capture nosuch 2>&1) || rc=$?
[ "$rc" = 1 ] && echo "$out" | grep -q "no such port" || fail "unknown port: rc $rc: $out"
pass "vx99: inner 5 replies in, 5 requests out (1042 B); outer refused: ${out:0:0}$(vx 1 capture vx99 outer 2>&1 | head -c 150)..."

# ---- a port removed ends its capture ------------------------------------------
n "$VM1" true
vx 1 port add vnet9 type veth vni 99 netns "$VM1" || fail "port add vnet9"
cap_start gone vnet9 -w "$D/gone.pcap"
settle
vx 1 port del vnet9
rc=0; wait "$CAP_gone" || rc=$?
[ "$rc" = 1 ] && grep -Eq "capture vnet9: [0-9]+ frames captured; port removed" "$D/gone.err" ||
	fail "port del: rc $rc: $(cat "$D/gone.err")"
[ "$(cap_on)" = 0 ] || fail "after port del the flag is $(cap_on)"
pass "port del ends its capture (exit 1, 'port removed'); the flag is 0"

# ---- fast path while captured; drops of a stalled reader are reported ---------
up0=$(vx_stat 1 'port("vnet1")["upcalls"]')
rx0=$(vx_stat 1 'port("vnet1")["rx_frames"]')
timeout -s INT 8 "$VXCTL" --socket "$SOCK1" capture vnet1 -w - 2>"$D/slow.err" | (sleep 5; cat >/dev/null) &
SLOW=$!
settle
g=$(rig_iperf 3 1) || fail "iperf3 under a stalled capture reader"
wait "$SLOW" || true
up1=$(vx_stat 1 'port("vnet1")["upcalls"]')
rx1=$(vx_stat 1 'port("vnet1")["rx_frames"]')
[ $(( rx1 - rx0 )) -gt 1000 ] || fail "the program saw $(( rx1 - rx0 )) frames of vnet1 during iperf3"
[ $(( up1 - up0 )) -le 2 ] || fail "$(( up1 - up0 )) upcalls from vnet1 during the capture"
grep -Eq "frames captured; [0-9]+ frames dropped: reader too slow" "$D/slow.err" || fail "slow reader summary: $(cat "$D/slow.err")"
[ "$(cap_on)" = 0 ] || fail "after the slow reader the flag is $(cap_on)"
pass "stalled reader under iperf3 ($g Gbit/s): the program forwarded $(( rx1 - rx0 )) frames of vnet1 with $(( up1 - up0 )) upcalls; $(sed 's/.*captured; //' "$D/slow.err")"

# ---- after an iperf3 under capture: the flag is 0 again ----------------------
# (what the capture costs is measured by bench/capture_cost.sh, `make
# bench-capture DP=kernel`, not here)
cap_start cost vnet1 -w /dev/null
settle
g=$(rig_iperf 1 1) || fail "iperf3 under a capture"
kill -INT "$CAP_cost"
cap_wait cost
took=$(sed -n 's/.*: \([0-9]*\) frames captured.*/\1/p' "$D/cost.err")
[ "${took:-0}" -gt 100 ] || fail "a capture under iperf3 took ${took:-no} frames: $(cat "$D/cost.err")"
[ "$(cap_on)" = 0 ] || fail "after the capture under iperf3 the flag is $(cap_on)"
pass "a capture under iperf3 ($g Gbit/s) took $took frames; the programs' flag is 0 once it ended"
