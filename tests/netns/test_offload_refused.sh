#!/bin/bash
# Every offload the kernel may refuse is refused, one at a time and then all
# together, and traffic still flows through the fallback; the daemon says so
# in its log, in `vxctl -j stats` and in `vxctl diagnose`.
#
# The refusals are injected (this kernel accepts every offload): vxswitchd
# runs with LD_PRELOAD=tests/tools/refuse_offloads.so and VXT_REFUSE=<list>,
# which make setsockopt/getsockopt/sendmsg/sendmmsg/ioctl answer the way an
# older or stricter kernel would (see that file).  Mtu-wire underlay.
#
# Usage: test_offload_refused.sh [CASE...], CASE one of udp_gro
# udp_segment_probe udp_segment_send udp_segment_send6 tap_uso tap_tso all
# (default: every one).
#
#   vxt-refPID-vm1      vxt-refPID-h1                          vxt-refPID-h2      vxt-refPID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
#                       (refusals)   198.51.100.1     198.51.100.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
PRELOAD=$BUILD/tests/tools/refuse_offloads.so
[ -f "$PRELOAD" ] || { echo "FAIL: $PRELOAD not built (make all)" >&2; exit 1; }
rig_init "vxt-ref$$"
trap rig_cleanup EXIT

# start REFUSALS SIDES [4|6]: a fresh rig (IPv4 underlay unless 6) in
# mtu-wire mode, the refusals injected into the vxswitchd of each of SIDES
# ("1" or "1 2").
start() {
	local refusals=$1 sides=$2 side
	rig_cleanup
	rig_init "vxt-ref$$"
	rig_create "${3:-4}"
	rig_wire_mode mtu
	for side in 1 2; do
		if [[ " $sides " == *" $side "* ]]; then
			RIG_VXD_ENV="LD_PRELOAD=$PRELOAD VXT_REFUSE=$refusals" rig_vxswitchd "$side"
		else
			RIG_VXD_ENV="" rig_vxswitchd "$side"
		fi
	done
	grep -q "refuse_offloads: injecting refusals: $refusals" "$RIG_DIR/h1.log" ||
		fail "$refusals: the refusals were not injected into h1's vxswitchd"
}

# traffic LABEL: ping and a 1 s iperf3 each way, both faster than 0.05 Gbit/s.
traffic() {
	nvm1 ping -c 3 -i 0.1 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping with $1"
	nvm1 ping -c 2 -i 0.1 -W 2 -s 3000 "$(vm_addr4 2)" >/dev/null || fail "3000-byte ping with $1"
	local up down
	up=$(rig_iperf 1 1) || fail "iperf3 vm1->vm2 with $1"
	down=$(rig_iperf 1 2) || fail "iperf3 vm2->vm1 with $1"
	echo "  $1: vm1->vm2 $up, vm2->vm1 $down Gbit/s"
	/usr/bin/python3 -c "import sys; sys.exit(0 if $up > 0.05 and $down > 0.05 else 1)" ||
		fail "too slow with $1: $up / $down Gbit/s"
}

# expect SIDE EXPR VALUE WHAT: vx_stat SIDE EXPR prints VALUE.
expect() {
	local got
	got=$(vx_stat "$1" "$2")
	[ "$got" = "$3" ] || fail "$4: h$1 $2 is $got, expected $3"
}
log_says() { # SIDE PATTERN WHAT
	grep -q "$2" "$RIG_DIR/h$1.log" || { cat "$RIG_DIR/h$1.log" >&2; fail "$3: h$1's log does not say '$2'"; }
}
diagnose_says() { # SIDE PATTERN WHAT
	local out
	out=$(vx "$1" diagnose) && fail "$3: h$1's diagnose exits 0 though it has findings: $out"
	grep -q "$2" <<<"$out" || { echo "$out" >&2; fail "$3: h$1's diagnose does not say '$2'"; }
	vx "$1" -j diagnose | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if any(f["cause"] == "offload_refused" for f in d["findings"]) else 1)' ||
		fail "$3: h$1's -j diagnose has no offload_refused finding"
}
sock() { echo "port(\"vx99\")[\"vxlan\"][\"socket\"][\"$1\"]"; }
# all_sent SIDE WHAT: every datagram the port made (a segment of a TSO
# frame cut by our GSO, or a plain frame) was sent: a refused send that is
# not resent shows here (TCP would hide it by retransmitting).
all_sent() {
	expect "$1" 'port("vx99")["vxlan"]["gso_segments"] + port("vx99")["vxlan"]["plain_frames"] == port("vx99")["vxlan"]["socket"]["tx_datagrams"]' \
		True "$2 (datagrams made == datagrams sent)"
}
tap() { echo "port(\"vnet$1\")[\"tap\"][\"$2\"]"; }

# ---- UDP_GRO refused: every datagram is a receive of its own ---------------
case_udp_gro() {
	start udp_gro "1"
	traffic "UDP_GRO refused on h1"
	log_says 1 "UDP_GRO refused by the kernel" udp_gro
	expect 1 "$(sock udp_gro)" False udp_gro
	expect 1 "$(sock udp_gro_probed)" False udp_gro
	expect 1 "$(sock rx_gro_buffers)" 0 "udp_gro (nothing may arrive coalesced)"
	expect 2 "$(sock udp_gro)" True "udp_gro (h2 has no refusal)"
	[ "$(vx_stat 1 "$(sock rx_datagrams)")" -gt 1000 ] || fail "udp_gro: h1 received few datagrams"
	diagnose_says 1 "vx99: UDP_GRO refused by kernel" udp_gro
	# The knob: off is what it is already, on cannot be.
	vx 1 set udp-gro off >/dev/null || fail "udp_gro: 'set udp-gro off' refused on a socket without UDP_GRO"
	out=$(vx 1 set udp-gro on 2>&1) && fail "udp_gro: 'set udp-gro on' accepted though the kernel refused it"
	grep -q "refused by the kernel at start-up" <<<"$out" || fail "udp_gro: 'set udp-gro on' says: $out"
	vx 1 set udp-gro on >/dev/null 2>&1 || true
	traffic "UDP_GRO refused on h1, after the knob"
	pass "UDP_GRO refused: traffic flows, datagrams read one by one, log/stats/diagnose say so"
}

# ---- UDP_SEGMENT unknown to the kernel: one send per datagram from the start --
case_udp_segment_probe() {
	start udp_segment_probe "1"
	traffic "UDP_SEGMENT refused at the probe on h1"
	log_says 1 "UDP_SEGMENT refused by the kernel" udp_segment_probe
	expect 1 "$(sock udp_segment)" False udp_segment_probe
	expect 1 "$(sock udp_segment_probed)" False udp_segment_probe
	expect 2 "$(sock udp_segment_probed)" True "udp_segment_probe (h2 has no refusal)"
	expect 1 "$(sock tx_gso_sends)" 0 udp_segment_probe
	expect 1 "$(sock udp_segment_fallbacks)" 0 "udp_segment_probe (never asked, never refused)"
	expect 1 "$(sock tx_errors)" 0 udp_segment_probe
	all_sent 1 udp_segment_probe
	[ "$(vx_stat 1 'port("vx99")["vxlan"]["gso_frames"]')" -gt 100 ] || fail "udp_segment_probe: our GSO stopped cutting TSO frames"
	diagnose_says 1 "vx99: UDP_SEGMENT refused by kernel" udp_segment_probe
	pass "UDP_SEGMENT refused at the probe: traffic flows, our GSO sends datagram by datagram, log/stats/diagnose say so"
}

# ---- UDP_SEGMENT refused at send time (EIO) --------------------------------
case_udp_segment_send() {
	start udp_segment_send "1"
	traffic "UDP_SEGMENT sends refused with EIO on h1"
	log_says 1 "UDP_SEGMENT refused by the kernel (Input/output error)" udp_segment_send
	expect 1 "$(sock udp_segment)" False udp_segment_send
	expect 1 "$(sock udp_segment_probed)" True "udp_segment_send (the probe passed, the sends failed)"
	expect 1 "$(sock tx_gso_sends)" 0 "udp_segment_send (no UDP_SEGMENT send got through)"
	expect 1 "$(sock tx_errors)" 0 "udp_segment_send (the refused trains were resent)"
	all_sent 1 udp_segment_send
	fallbacks=$(vx_stat 1 "$(sock udp_segment_fallbacks)")
	[ "$fallbacks" -gt 0 ] || fail "udp_segment_send: no fallback counted"
	echo "  h1: $fallbacks UDP_SEGMENT sends refused and resent datagram by datagram"
	diagnose_says 1 "vx99: UDP_SEGMENT refused by kernel ($fallbacks fallbacks)" udp_segment_send
	# The wire.  On a gso-wire underlay a UDP_SEGMENT train crosses the veth
	# whole, so tcpdump on u1 sees it as one datagram far larger than the MTU:
	# h2 (no refusal) shows that, h1 must send one datagram per segment.
	rig_wire_mode gso
	tx_before=$(vx_stat 1 "$(sock tx_datagrams)")
	rig_capture "$H1" u1 "$RIG_DIR/wire.pcap" -s 128 udp port 4789
	up=$(rig_iperf 1 1) || fail "udp_segment_send: iperf3 vm1->vm2 on a gso-wire"
	down=$(rig_iperf 1 2) || fail "udp_segment_send: iperf3 vm2->vm1 on a gso-wire"
	rig_capture_stop
	tx_after=$(vx_stat 1 "$(sock tx_datagrams)")
	read -r h1_n h1_max h2_n h2_max < <(tcpdump -q -nn -r "$RIG_DIR/wire.pcap" 2>/dev/null | awk '
		/ 198\.51\.100\.1\.[0-9]+ > / { n1++; if ($NF + 0 > m1) m1 = $NF + 0 }
		/ 198\.51\.100\.2\.[0-9]+ > / { n2++; if ($NF + 0 > m2) m2 = $NF + 0 }
		END { printf "%d %d %d %d\n", n1, m1, n2, m2 }')
	echo "  wire (gso-wire): h1 sent $h1_n datagrams of at most $h1_max bytes of UDP payload," \
		"h2 $h2_n of at most $h2_max; h1 counted $((tx_after - tx_before)) datagrams sent"
	[ "$h2_max" -gt 1500 ] || fail "udp_segment_send: h2's UDP_SEGMENT trains did not cross whole (control: $h2_max)"
	[ "$h1_n" -gt 1000 ] || fail "udp_segment_send: h1 sent only $h1_n datagrams"
	[ "$h1_max" -le 1472 ] || fail "udp_segment_send: h1 sent a $h1_max-byte datagram: a train went out whole"
	expect 1 "$(sock tx_errors)" 0 "udp_segment_send (after the fallback)"
	expect 1 "$(sock tx_gso_sends)" 0 "udp_segment_send (after the fallback)"
	pass "UDP_SEGMENT refused at send: traffic flows, one datagram per segment on the wire, no send errors, log/stats/diagnose say so"
}

# ---- UDP_SEGMENT refused at send time, IPv6 underlay -----------------------
case_udp_segment_send6() {
	start udp_segment_send "1" 6
	traffic "UDP_SEGMENT sends refused with EIO on h1, IPv6 underlay"
	expect 1 "$(sock udp_segment)" False udp_segment_send6
	expect 1 'port("vx99")["vxlan"]["socket"]["udp_segment_fallbacks"] > 0' True udp_segment_send6
	expect 1 "$(sock tx_gso_sends)" 0 udp_segment_send6
	expect 1 "$(sock tx_errors)" 0 udp_segment_send6
	all_sent 1 udp_segment_send6
	pass "UDP_SEGMENT refused at send over an IPv6 underlay: traffic flows, every datagram resent"
}

# ---- TAP USO refused -------------------------------------------------------
case_tap_uso() {
	start tap_uso "1"
	traffic "TAP USO refused on h1"
	log_says 1 "vnet1: TUNSETOFFLOAD refused USO" tap_uso
	expect 1 "$(tap 1 uso_probed)" False tap_uso
	expect 1 "$(tap 1 tso_probed)" True "tap_uso (TSO is not refused)"
	expect 2 "$(tap 2 uso_probed)" True "tap_uso (h2 has no refusal)"
	nvm1 ethtool -k vnet1 | grep -q "^tx-udp-segmentation: off" || fail "tap_uso: the VM's USO is on"
	nvm1 ethtool -k vnet1 | grep -q "^tcp-segmentation-offload: on" || fail "tap_uso: the VM's TSO is off"
	diagnose_says 1 "vnet1: USO from the VM is off" tap_uso
	pass "TAP USO refused: traffic flows, USO not probed, the VM's USO off, log/stats/diagnose say so"
}

# ---- TAP TSO refused: the VM segments before we read -----------------------
case_tap_tso() {
	start tap_tso "1"
	traffic "TAP TSO refused on h1"
	log_says 1 "vnet1: TUNSETOFFLOAD refused TSO" tap_tso
	expect 1 "$(tap 1 tso_probed)" False tap_tso
	expect 1 "$(tap 1 tso_active)" False tap_tso
	expect 1 "$(tap 1 rx_gso_frames)" 0 "tap_tso (no TSO frame may come from the VM)"
	expect 1 'port("vnet1")["tap"]["rx_partial_csum"] > 1000' True "tap_tso (checksum offload stays on)"
	nvm1 ethtool -k vnet1 | grep -q "^tcp-segmentation-offload: off" || fail "tap_tso: the VM's TSO is on"
	diagnose_says 1 "vnet1: TSO from the VM is off (TUNSETOFFLOAD refused by kernel)" tap_tso
	pass "TAP TSO refused: traffic flows, the VM's TSO off, log/stats/diagnose say so"
}

# ---- everything refused on both hosts --------------------------------------
case_all() {
	start udp_gro,udp_segment_probe,udp_segment_send,tap_uso,tap_tso "1 2"
	traffic "everything refused on both hosts"
	for side in 1 2; do
		expect "$side" "$(sock udp_gro)" False all
		expect "$side" "$(sock udp_segment)" False all
		expect "$side" "$(sock rx_gro_buffers)" 0 all
		expect "$side" "$(sock tx_gso_sends)" 0 all
		expect "$side" "$(sock tx_errors)" 0 all
		all_sent "$side" all
		expect "$side" "$(tap "$side" tso_probed)" False all
		expect "$side" "$(tap "$side" uso_probed)" False all
		n "$( [ "$side" = 1 ] && echo "$VM1" || echo "$VM2")" ethtool -k "vnet$side" |
			grep -q "^tcp-segmentation-offload: off" || fail "all: vm$side's TSO is on"
		for finding in "vx99: UDP_GRO refused by kernel" "vx99: UDP_SEGMENT refused by kernel" \
			"vnet$side: TSO from the VM is off (TUNSETOFFLOAD refused by kernel)" "vnet$side: USO from the VM is off"; do
			diagnose_says "$side" "$finding" all
		done
	done
	pass "everything refused on both hosts: traffic flows, stats and diagnose name every refusal"
}

# Cases named on the command line, or all of them.
for c in "${@:-udp_gro udp_segment_probe udp_segment_send udp_segment_send6 tap_uso tap_tso all}"; do
	for one in $c; do "case_$one"; done
done
