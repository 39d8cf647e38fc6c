#!/bin/bash
# tunnel_key set on the wire: a redirect to a vxlan port carries the rule's
# own tunnel key, as OVS flow-based tunnels do, read back from the underlay
# with tshark:
#   - id VNI other than the port's: the VXLAN header says VNI;
#   - dst_port N: the outer UDP destination port is N (without it: the
#     port's dstport);
#   - nocsum on a port with udpcsum on: outer UDP checksum 0; csum on a port
#     with udpcsum off: non-zero; neither: the port's setting;
#   - a TCP stream (TSO frames cut by our GSO) under nocsum still reaches
#     the other VM, every datagram (the first 20,000) with checksum 0, and the socket keeps
#     UDP_SEGMENT (no fallback counted);
#   - src_ip other than the port's local address is still refused.
# On the kernel datapath (run second; VXT_DP=user|kernel runs one) one
# vxlan device sends every VNI on port 4789: the key's id on the wire with
# the vxlan port's checksum setting, whatever the id; dstport, dst_port,
# csum and nocsum refused with the reason; a stream on the fast path.
#
#   vxt66-PID-vm1       vxt66-PID-h1                          vxt66-PID-h2       vxt66-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
#                        vxoff: vni 77 dstport 4791 udpcsum off (same local address)
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_each_datapath "$0" "$@"
rig_init "vxt66-$$"
rig_trap

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
VX=vx$VNI
U1=$(u_addr 1); U2=$(u_addr 2)
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping before any rule"
if on_kernel_dp; then
	# One vxlan device carries every VNI, on one UDP port: another
	# dstport is refused at port add, so vxoff keeps 4789 there.
	rc=0; vx 1 port add vxoff type vxlan vni 77 local "$U1" remote "$U2" dstport 4791 udpcsum off 2>"$RIG_DIR/err" || rc=$?
	[ "$rc" = 1 ] && grep -q "dstport 4791: the kernel datapath's vxlan device listens on 4789" "$RIG_DIR/err" ||
		fail "kernel datapath: a vxlan port on dstport 4791: exit $rc, $(cat "$RIG_DIR/err")"
	vx 1 port add vxoff type vxlan vni 77 local "$U1" remote "$U2" udpcsum off || fail "port add vxoff"
else
	vx 1 port add vxoff type vxlan vni 77 local "$U1" remote "$U2" dstport 4791 udpcsum off || fail "port add vxoff"
fi

# wire SECONDS CMD...: runs CMD while tshark reads u1 for SECONDS (it stops
# itself: -a duration), or for WIRE_MAX datagrams if that comes first (a
# stream's 300 k datagrams took tshark 68 s, once 600 s, to dissect after
# the capture ended); prints "vni dstport checksum [arp-opcode]" of each
# VXLAN datagram from U1 to U2
wire() {
	local secs=$1; shift
	nh1 tshark -l -n -i u1 -a duration:"$secs" -c "${WIRE_MAX:-1000000}" -f "udp and src host $U1 and dst host $U2" \
		-d udp.port==4790,vxlan -d udp.port==4791,vxlan \
		-T fields -e vxlan.vni -e udp.dstport -e udp.checksum -e arp.opcode -e ipv6.src >"$RIG_DIR/wire" 2>"$RIG_DIR/tshark.err" &
	local t=$! i
	RIG_PIDS="$RIG_PIDS $t" # a tshark outliving its interface spins: cleanup stops it
	for i in $(seq 200); do grep -q "Capturing on" "$RIG_DIR/tshark.err" && break; sleep 0.05; done
	sleep 0.3
	"$@" >/dev/null 2>&1 || true
	wait "$t" || true
}
ping5() { nvm1 ping -c 5 -i 0.1 -W 1 "$(vm_addr4 2)"; }
# rule ARGS: vnet1's icmp goes with the given tunnel_key to PORT (last word)
rule() {
	local port=${*: -1} args=("${@:1:$#-1}")
	vx 1 filter del dev vnet1 ingress 2>/dev/null || true
	vx 1 filter add dev vnet1 ingress pref 2 protocol ip flower ip_proto icmp \
		action tunnel_key set "${args[@]}" action mirred egress redirect dev "$port" || fail "rule: $*"
}
expect() { # WHAT VNI DPORT CSUM(zero|nonzero)
	local n all
	n=$(awk -v v="$2" -v p="$3" -v c="$4" '$1 == v && $2 == p && ((c == "zero") == ($3 == "0x0000")) { k++ }
		END { print k + 0 }' "$RIG_DIR/wire")
	all=$(awk -v v="$2" '$1 == v' "$RIG_DIR/wire" | wc -l) # (ARP goes by L2 switching, the port's VNI)
	[ "$n" = 5 ] && [ "$all" = 5 ] ||
		fail "$1: want 5 datagrams vni $2 dport $3 checksum $4, tshark saw: $(tr '\n' ';' <"$RIG_DIR/wire")"
}

if on_kernel_dp; then
	# The kernel datapath: the key's id on the wire; the UDP port and
	# checksum are the shared device's and its VNI's, so dst_port other
	# than 4789, csum and nocsum are refused, naming the word.
	rule id 4242 src_ip "$U1" dst_ip "$U2" dst_port 4789 "$VX"
	wire 4 ping5; expect "id 4242 dst_port 4789 via $VX" 4242 4789 nonzero
	rule id 4343 src_ip "$U1" dst_ip "$U2" vxoff
	wire 4 ping5; expect "id 4343 via vxoff (udpcsum off: its outer headers, whatever the key's VNI)" 4343 4789 zero
	vx 1 show config >"$RIG_DIR/cfg-before"
	for words in "dst_port 4790:dst_port 4790\": refused" "csum:tunnel_key set csum\": refused" \
		"nocsum:tunnel_key set nocsum\": refused"; do
		rc=0
		vx 1 filter add dev vnet1 ingress pref 3 protocol ip flower action tunnel_key set id 5 src_ip "$U1" \
			dst_ip "$U2" ${words%%:*} action mirred egress redirect dev "$VX" 2>"$RIG_DIR/err" || rc=$?
		[ "$rc" = 1 ] && grep -q "${words#*:}" "$RIG_DIR/err" ||
			fail "kernel datapath: tunnel_key set ${words%%:*}: exit $rc, $(cat "$RIG_DIR/err")"
	done
	vx 1 show config | diff "$RIG_DIR/cfg-before" - >/dev/null || fail "a refused rule changed the state"
	pass "kernel datapath: tunnel_key set id on the wire (tshark: vni 4242 via $VX with a checksum, 4343 via vxoff without, its udpcsum off; port 4789); dstport 4791 at port add, dst_port 4790, csum and nocsum refused with the reason"
	vx 1 filter del dev vnet1 ingress
	vx 1 filter add dev vnet1 ingress pref 1 protocol arp flower action mirred egress redirect dev "$VX"
	vx 1 filter add dev vnet1 ingress pref 2 protocol ip flower action tunnel_key set id "$VNI" src_ip "$U1" \
		dst_ip "$U2" action mirred egress redirect dev "$VX" || fail "tunnel_key rule for iperf3"
	rate=$(rig_iperf 3 1) || fail "iperf3 through tunnel_key set on the kernel datapath"
	[ "$(echo "$rate > 0.1" | bc)" = 1 ] || fail "iperf3 through tunnel_key set: $rate Gbit/s"
	vx 1 filter show -s dev vnet1 ingress | grep -q "Sent hardware" || fail "the stream did not go on the fast path"
	pass "iperf3 through tunnel_key set id $VNI on the kernel datapath: $rate Gbit/s, on the fast path"
	exit 0
fi
rule id 4242 src_ip "$U1" dst_ip "$U2" dst_port 4790 nocsum "$VX"
wire 4 ping5; expect "id 4242 dst_port 4790 nocsum via $VX" 4242 4790 zero
rule id 4242 src_ip "$U1" dst_ip "$U2" "$VX"
wire 4 ping5; expect "id 4242, no dst_port, no csum word via $VX (the port's: 4789, udpcsum on)" 4242 4789 nonzero
rule id 4343 src_ip "$U1" dst_ip "$U2" dst_port 4789 csum vxoff
wire 4 ping5; expect "id 4343 dst_port 4789 csum via vxoff (udpcsum off)" 4343 4789 nonzero
rule id 4343 src_ip "$U1" dst_ip "$U2" vxoff
wire 4 ping5; expect "id 4343, no dst_port, no csum word via vxoff (the port's: 4791, udpcsum off)" 4343 4791 zero
pass "tunnel_key set on the wire (tshark): id 4242 dst_port 4790 nocsum -> vni 4242 port 4790 csum 0; no dst_port/csum -> the port's 4789 and non-zero; csum on a udpcsum-off port -> non-zero, vni 4343; nothing given there -> 4791 and 0"

# a TCP stream under nocsum, with the port's VNI: delivered, GSO trains with checksum 0
vx 1 filter del dev vnet1 ingress
vx 1 filter add dev vnet1 ingress pref 1 protocol arp flower action mirred egress redirect dev "$VX"
vx 1 filter add dev vnet1 ingress pref 2 protocol ip flower action tunnel_key set id "$VNI" src_ip "$U1" dst_ip "$U2" \
	nocsum action mirred egress redirect dev "$VX" || fail "nocsum rule for iperf3"
fb0=$(vx_stat 1 "port('$VX')['vxlan']['socket']['udp_segment_fallbacks']")
WIRE_MAX=20000 wire 6 rig_iperf 3 1
grep -q '"sum_received"' "$RIG_DIR/iperf.json" || fail "iperf3 under nocsum: $(tail -c 300 "$RIG_DIR/iperf.json")"
rate=$(/usr/bin/python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]/1e9))' "$RIG_DIR/iperf.json")
fb1=$(vx_stat 1 "port('$VX')['vxlan']['socket']['udp_segment_fallbacks']")
# Not ARP (pref 1: no tunnel_key) and not the VM's IPv6 chatter (MLD, ND:
# no rule, so the port's own checksum): the IPv4 the rule takes.
ipv4() { awk -F'\t' '$4 == "" && $5 == ""' "$RIG_DIR/wire"; }
n=$(ipv4 | wc -l)
nz=$(ipv4 | awk -F'\t' '$3 != "0x0000"' | wc -l)
[ "$n" -ge 1000 ] || fail "tshark saw $n datagrams of the TCP stream"
[ "$nz" = 0 ] || fail "$nz of $n datagrams had a checksum under nocsum: $(ipv4 | awk -F'\t' '$3 != "0x0000"' | head -3 | tr "\n" ";")"
[ "$(echo "$rate > 0.1" | bc)" = 1 ] || fail "iperf3 under nocsum: $rate Gbit/s"
[ "$fb1" = "$fb0" ] || fail "udp_segment_fallbacks moved $fb0 -> $fb1: a zero-checksum train went with UDP_SEGMENT"
seg=$(vx_stat 1 "port('$VX')['vxlan']['socket']['udp_segment']")
[ "$seg" = True ] || fail "UDP_SEGMENT is off on the socket after the nocsum stream"
pass "iperf3 through tunnel_key nocsum: $rate Gbit/s, $n datagrams seen all with checksum 0; UDP_SEGMENT still on, no fallback"

# src_ip other than the port's: refused with the word, nothing changed
vx 1 show config >"$RIG_DIR/cfg-before"
rc=0
vx 1 filter add dev vnet1 ingress pref 3 protocol ip flower action tunnel_key set id 5 src_ip 198.51.100.9 \
	dst_ip "$U2" action mirred egress redirect dev "$VX" 2>"$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] && grep -q '"src_ip": refused, port' "$RIG_DIR/err" || fail "src_ip not the port's: exit $rc $(cat "$RIG_DIR/err")"
vx 1 show config | diff "$RIG_DIR/cfg-before" - >/dev/null || fail "the refused rule changed the state"
pass "tunnel_key src_ip other than the port's local address refused: $(cat "$RIG_DIR/err")"
