#!/bin/bash
# Flower rules on the kernel datapath (vxswitchd --datapath kernel): rules
# decided by vxswitchd's classifier, cached per flow in the kernel program
# (dp/kernel/bpf/vxdp_rules_abi.h).
#
#   vm1 vnet1 192.0.2.1 ─┐
#   vm2 vnet2 192.0.2.2 ─┼─ h1: vxswitchd --datapath kernel, VNI 99 ── u1 ══ u2 (h2: tcpdump only)
#   vm3 vnet3 192.0.2.3 ─┘     vx99 remote 198.51.100.2
#
# Checks:
#  - refused at add, with the reason: tunnel_key nocsum, a tunnel_key
#    dst_port other than the device's (rules on the vxlan port's ingress:
#    test_kdp_rules_vx.sh);
#  - a drop rule by ip_proto/dst_port on a marked flow under traffic takes
#    effect from the first datagram sent after `filter add` returns, and
#    is undone from the first one after `filter del` returns; a second
#    flow beside it loses nothing across both changes (the missed frames
#    are re-injected, not lost);
#  - counters: `filter show -s` fast (Sent hardware) + slow (Sent
#    software) = the datagrams sent, exactly, with the cache invalidated
#    (a rule change on another port) twice in the middle; both parts > 0;
#  - redirect to vnet3 (vm3 sees them, vm2 none), mirror to vnet3 (both
#    see all), redirect to the vxlan port (VXLAN VNI 99 on the wire),
#    tunnel_key set id 77 + redirect (VNI 77 on the wire), vlan push id 42
#    + redirect (vm3 sees the tag), each counted on the wire by tcpdump;
#  - port show says which ports are on the rules path;
#  - megaflows: 300 source ports to one destination port, which no rule
#    tells apart, take a few upcalls, not 300;
#  - MPLS frames of two label stacks, one rule on each mpls_label: each
#    counts its own 50, with fast path hits (the stack is in the key);
#  - egress rules on vnet2 and vnet3 (the program on each veth's egress
#    hook): a tunnel_key set on the vxlan port's egress without a mirred
#    refused; an egress drop under traffic from the first datagram after add
#    to the first after del, the other flow losing nothing uncounted; fast
#    + slow = sent across two invalidations; a broadcast ARP's flood copy
#    dropped at vnet3's egress and not at vnet2's; an egress mirror from
#    vnet2 to vnet3 and a vlan push at vnet3's egress, on the wire; port
#    show says `deliver redirect egress-rules kernel-cache` while vnet2 has
#    them, `redirect_peer` again after; indev vnet1 on vnet3's egress
#    drops vm1's datagrams (a re-injected one too) and not vm2's; a port
#    (vnet9) named by an indev alone cannot be deleted until it goes.
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "krl1-$$"
trap rig_cleanup EXIT
PY=/usr/bin/python3
UDP="$PY $PWD/tests/netns/krl_udp.py"

VM3=$P-vm3
rig_create 4
rig_ns_add "$VM3"
cat > "$RIG_DIR/h1.conf" <<CONF
port add vx99 type vxlan vni 99 local 198.51.100.1 remote 198.51.100.2
port add vnet1 type veth vni 99 netns $VM1 mtu 1450
port add vnet2 type veth vni 99 netns $VM2 mtu 1450
port add vnet3 type veth vni 99 netns $VM3 mtu 1450
CONF
vxd_start "$H1" 1 "$VM3" vnet3 --datapath kernel || fail "vxswitchd did not start"
for v in 1 2 3; do
	n "$P-vm$v" ip link set vnet$v up
	n "$P-vm$v" ip addr add 192.0.2.$v/24 dev vnet$v
done
VX="$VXCTL --socket $RIG_DIR/h1.sock"
nvm1 ping -c 2 -W 2 192.0.2.2 >/dev/null || fail "vm1 cannot ping vm2 before any rule"
nvm1 ping -c 1 -W 2 192.0.2.3 >/dev/null || fail "vm1 cannot ping vm3 before any rule"
pass "the kernel datapath switches before any rule"

# ---- refused ------------------------------------------------------------------
refused() { # PATTERN filter-args...
	local pat=$1 out; shift
	if out=$($VX "$@" 2>&1); then fail "accepted: $*"; fi
	echo "$out" | grep -qE "$pat" || fail "refused without saying '$pat': $out"
	pass "refused: $* ($out)"
}
refused "nocsum" filter add dev vnet1 ingress protocol ip flower action tunnel_key set id 5 \
	src_ip 198.51.100.1 dst_ip 198.51.100.2 nocsum action mirred egress redirect dev vx99
refused "sends to 4789 only" filter add dev vnet1 ingress protocol ip flower action tunnel_key set id 5 \
	src_ip 198.51.100.1 dst_ip 198.51.100.2 dst_port 4790 action mirred egress redirect dev vx99
[ -z "$($VX filter show dev vnet1 ingress)" ] || fail "a refused rule was installed"

# ---- marked flow: drop from the next datagram, and back -----------------------
nvm2 $UDP recv "$RIG_DIR/rx.txt" 5001 5002 5003 5004 5005 &
RECV=$!
RIG_PIDS="$RIG_PIDS $RECV"
# Under iperf3 (vm1 -> vm2, TCP): its big GSO frames miss after each rule
# change too, go up and come back (re-injected as GSO frames).
nvm2 iperf3 -s -D -1 -p 5201
sleep 0.3
nvm1 iperf3 -c 192.0.2.2 -p 5201 -t 5 -J > "$RIG_DIR/iperf.json" &
IPERF=$!
sleep 1
nvm1 $UDP marked 192.0.2.2 5001 5002 1500 500 1000 \
	"$VX filter add dev vnet1 ingress protocol ip pref 5 handle 1 flower ip_proto udp dst_port 5001 action drop" \
	"$VX filter del dev vnet1 ingress protocol ip pref 5 handle 1 flower" > "$RIG_DIR/marks.txt"
wait "$IPERF" || fail "iperf3 under rule changes failed"
$VX stats | grep "^rule cache"
$PY -c 'import json,sys; e=json.load(open(sys.argv[1]))["end"]; print("iperf3 under the rule changes: %.2f Gbit/s, %d retransmits" % (e["sum_received"]["bits_per_second"]/1e9, e["sum_sent"]["retransmits"]))' "$RIG_DIR/iperf.json"
sleep 0.5
$VX -j stats > "$RIG_DIR/stats1.json"
$UDP check-marked "$RIG_DIR/rx.txt" "$RIG_DIR/marks.txt" "$RIG_DIR/stats1.json" vnet1 \
	"drop by ip_proto + dst_port 5001 on vnet1" || fail "marked flow"
pass "drop rule: from the first datagram after add returns to the first after del returns; other flow loses only what upcall_drops counts"

# ---- counters: fast + slow = sent, across invalidations -----------------------
# fast_slow DEV DIR PORT RX OTHER LABEL: the pass rule DEV DIR has for UDP
# dst_port PORT sees 3 x 300 datagrams from vm1, with the cache invalidated
# twice between (a rule on OTHER's ingress added, then deleted); its Sent
# hardware + Sent software = 900 = what vm2's receiver wrote to RX, both
# parts > 0.
fast_slow() {
	local dev=$1 dir=$2 port=$3 rx=$4 other=$5 label=$6
	$VX filter add dev "$dev" "$dir" protocol ip pref 10 handle 1 flower ip_proto udp dst_port "$port" action pass
	nvm1 $UDP send 192.0.2.2 "$port" 300 500
	$VX filter add dev "$other" ingress protocol ip pref 20 handle 1 flower ip_proto udp dst_port 9 action drop
	nvm1 $UDP send 192.0.2.2 "$port" 300 500
	$VX filter del dev "$other" ingress protocol ip pref 20 handle 1 flower
	nvm1 $UDP send 192.0.2.2 "$port" 300 500
	sleep 0.3
	$VX -j filter show -s dev "$dev" "$dir" > "$RIG_DIR/show-$dir.json"
	$PY - "$RIG_DIR/show-$dir.json" "$rx" "$port" "$label" <<'EOF' || fail "$label counters"
import json, sys
rules = [r for r in json.load(open(sys.argv[1])) if "options" in r]
st = rules[0]["options"]["actions"][0]["stats"]
hw, sw = st.get("hw_packets", 0), st.get("sw_packets", 0)
rx = sum(1 for l in open(sys.argv[2]) if l.startswith(sys.argv[3] + " "))
assert hw + sw == 900 and st["packets"] == 900, "fast %d + slow %d != 900 sent (%s)" % (hw, sw, st)
assert hw > 0 and sw > 0, (hw, sw)
assert rx == 900, "vm2 received %d of 900" % rx
print("%s: fast %d + slow %d = 900 sent = 900 received" % (sys.argv[4], hw, sw))
EOF
}
fast_slow vnet1 ingress 5003 "$RIG_DIR/rx.txt" vnet2 "vnet1 ingress"
pass "counters: Sent hardware + Sent software = datagrams sent, exactly, across two invalidations"
$VX port show | grep -E "^vnet1 .*rules kernel-cache" >/dev/null || fail "port show: vnet1 not on the rules path"
$VX port show | grep -E "^vnet2 .*rules none" >/dev/null || fail "port show: vnet2 should have no rules"
pass "port show: vnet1 rules kernel-cache, vnet2 rules none"

# ---- actions on the wire -------------------------------------------------------
cap() { # NS DEV FILTER OUT
	# ip netns exec execs tcpdump: $! is tcpdump, and -U writes each packet
	ip netns exec "$1" tcpdump -nn -U --immediate-mode -i "$2" -w "$4" "$3" >/dev/null 2>&1 &
	RIG_PIDS="$RIG_PIDS $!"
	CAP_PID=$!
	sleep 0.5
}
capstop() { sleep 0.5; kill "$CAP_PID"; wait "$CAP_PID" 2>/dev/null || true; }
count() { tcpdump -nn -r "$1" 2>/dev/null | wc -l; }
# vxcount VNI PORT: VXLAN datagrams of that VNI whose inner frame is UDP to
# 192.0.2.2:PORT (tcpdump prints the inner frame on the next line).
vxcount() {
	tcpdump -nn -r "$RIG_DIR/vx.pcap" 2>/dev/null |
		awk -v vni="vni $1" -v dst="192.0.2.2.$2:" '
			$0 ~ vni"$" { v = 1; next }
			v && index($0, dst) { c++ }
			{ v = 0 }
			END { print c + 0 }'
}
rx_of() { grep -c "^$1 " "$RIG_DIR/rx.txt" || true; }

$VX filter add dev vnet1 ingress protocol ip pref 11 flower ip_proto udp dst_port 5004 \
	action mirred egress redirect dev vnet3
cap "$VM3" vnet3 "udp dst port 5004" "$RIG_DIR/redir.pcap"
nvm1 $UDP send 192.0.2.2 5004 20
capstop
[ "$(rx_of 5004)" = 0 ] || fail "redirect: vm2 still received $(rx_of 5004)"
[ "$(count "$RIG_DIR/redir.pcap")" = 20 ] || fail "redirect: vm3 saw $(count "$RIG_DIR/redir.pcap") of 20"
pass "redirect to vnet3: vm3 saw 20 of 20"

before=$(rx_of 5005)
$VX filter add dev vnet1 ingress protocol ip pref 12 flower ip_proto udp dst_port 5005 \
	action mirred egress mirror dev vnet3
cap "$VM3" vnet3 "udp dst port 5005" "$RIG_DIR/mirror.pcap"
nvm1 $UDP send 192.0.2.2 5005 20
capstop
got=$(( $(rx_of 5005) - before ))
[ "$(count "$RIG_DIR/mirror.pcap")" = 20 ] || fail "mirror: vm3 saw $(count "$RIG_DIR/mirror.pcap") of 20"
[ "$got" = 20 ] || fail "mirror: vm2 received $got of 20"
pass "mirror to vnet3: vm3 saw 20, vm2 received 20"

$VX filter add dev vnet1 ingress protocol ip pref 13 flower ip_proto udp dst_port 5006 \
	action mirred egress redirect dev vx99
cap "$H2" u2 "udp dst port 4789" "$RIG_DIR/vx.pcap"
nvm1 $UDP send 192.0.2.2 5006 20
capstop
n=$(tcpdump -nn -r "$RIG_DIR/vx.pcap" 2>/dev/null | vxcount 99 5006)
[ "$n" = 20 ] || fail "redirect to vx99: $n of 20 VXLAN VNI 99 datagrams on u2"
pass "redirect to the vxlan port: 20 of 20 on the wire, VNI 99"

$VX filter add dev vnet1 ingress protocol ip pref 14 flower ip_proto udp dst_port 5007 \
	action tunnel_key set id 77 src_ip 198.51.100.1 dst_ip 198.51.100.2 action mirred egress redirect dev vx99
cap "$H2" u2 "udp dst port 4789" "$RIG_DIR/vx.pcap"
nvm1 $UDP send 192.0.2.2 5007 20
capstop
n=$(tcpdump -nn -r "$RIG_DIR/vx.pcap" 2>/dev/null | vxcount 77 5007)
[ "$n" = 20 ] || fail "tunnel_key set id 77: $n of 20 on u2 with VNI 77"
pass "tunnel_key set id 77 + redirect: 20 of 20 on the wire, VNI 77"

$VX filter add dev vnet1 ingress protocol ip pref 15 flower ip_proto udp dst_port 5008 \
	action vlan push id 42 action mirred egress redirect dev vnet3
cap "$VM3" vnet3 "vlan 42 and udp dst port 5008" "$RIG_DIR/vlan.pcap"
nvm1 $UDP send 192.0.2.2 5008 20
capstop
[ "$(count "$RIG_DIR/vlan.pcap")" = 20 ] || fail "vlan push: vm3 saw $(count "$RIG_DIR/vlan.pcap") of 20 tagged 42"
pass "vlan push id 42 + redirect: vm3 saw 20 of 20 tagged"

# ---- MPLS: the label stack in the kernel's key --------------------------------
# Frames of two label stacks (100 and 200) from vm1 to vm2's MAC; rules on
# mpls_label: each counts its own, mostly on the fast path (the stack is in
# the cache key, so the two flows are two entries, not one).
$VX filter add dev vnet1 ingress protocol mpls_uc pref 30 flower mpls_label 100 action drop
$VX filter add dev vnet1 ingress protocol mpls_uc pref 31 flower mpls_label 200 action drop
mac2=$(nvm2 cat /sys/class/net/vnet2/address)
nvm1 $PY - "$mac2" <<'EOF'
import socket, struct, sys
dst = bytes.fromhex(sys.argv[1].replace(":", ""))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("vnet1", 0))
src = open("/sys/class/net/vnet1/address").read().strip()
src = bytes.fromhex(src.replace(":", ""))
import time
# One frame of each stack first, and the rest once vxswitchd has had time
# to install their entries: a burst sent at once would all miss.
for burst in (1, 49):
    for label in (100, 200):
        for i in range(burst):
            lse = struct.pack("!I", label << 12 | 1 << 8 | 64)
            s.send(dst + src + b"\x88\x47" + lse + bytes(46))
    time.sleep(0.5)
EOF
sleep 0.3
$VX -j -s filter show dev vnet1 ingress | $PY -c '
import json, sys
rules = {r["pref"]: r["options"]["actions"][0]["stats"] for r in json.load(sys.stdin) if "options" in r}
for pref, label in ((30, 100), (31, 200)):
    st = rules[pref]
    assert st["packets"] == 50, "mpls_label %d: %s, want 50" % (label, st)
    assert st.get("hw_packets", 0) > 0, "mpls_label %d: none on the fast path: %s" % (label, st)
    print("mpls_label %d: %d (fast %d, slow %d)" % (label, st["packets"], st.get("hw_packets", 0), st.get("sw_packets", 0)))
' || fail "MPLS rules on the kernel datapath"
$VX filter del dev vnet1 ingress protocol mpls_uc pref 30 flower
$VX filter del dev vnet1 ingress protocol mpls_uc pref 31 flower
pass "MPLS: mpls_label 100 and 200 each counted 50, on the kernel's fast path"

# ---- megaflows: one decision for every source port ----------------------------
# vnet1's rules read ip_proto and dst_port, never a source port: 300
# datagrams from 300 source ports to 5005 are one megaflow (the entry's key
# is the frame's under vnet1's mask), a few upcalls, not 300.
rc_stat() { $VX -j stats | $PY -c 'import json, sys; print(json.load(sys.stdin)["rule_cache"][sys.argv[1]])' "$1"; }
$VX filter add dev vnet1 ingress protocol ip pref 40 flower ip_proto udp dst_port 5005 action pass ||
	fail "filter add (pref 40, pass)"
rx0=$(rx_of 5005)
nvm1 $UDP send 192.0.2.2 5005 2 # the decision installed
up0=$(rc_stat upcalls); ent0=$(rc_stat entries)
nvm1 $UDP sports 192.0.2.2 5005 300
sleep 0.3
up=$(( $(rc_stat upcalls) - up0 )); ent=$(( $(rc_stat entries) - ent0 ))
[ $(( $(rx_of 5005) - rx0 )) = 302 ] || fail "megaflow: vm2 received $(( $(rx_of 5005) - rx0 )) of 302 to port 5005"
[ "$up" -le 3 ] && [ "$ent" -le 2 ] || fail "300 source ports to 5005 took $up upcalls and $ent new entries (one megaflow)"
[ "$(rc_stat masks)" -ge 1 ] || fail "rule cache: no mask"
pass "megaflows: 300 datagrams from 300 source ports, $up upcalls, $ent new entries, all 302 received"

# ---- egress rules --------------------------------------------------------------
refused "needs a later mirred to a vxlan port" filter add dev vx99 egress protocol ip flower \
	action tunnel_key set id 5 src_ip 198.51.100.1 dst_ip 198.51.100.2
pkill -f "recv $RIG_DIR/rx.txt" || true # the receiver, not the shell that started it
wait "$RECV" 2>/dev/null || true
nvm2 $UDP recv "$RIG_DIR/rx2.txt" 5001 5002 5010 5011 &
RIG_PIDS="$RIG_PIDS $!"
sleep 0.3
nvm1 $UDP marked 192.0.2.2 5001 5002 1500 500 1000 \
	"$VX filter add dev vnet2 egress protocol ip pref 5 handle 1 flower ip_proto udp dst_port 5001 action drop" \
	"$VX filter del dev vnet2 egress protocol ip pref 5 handle 1 flower" > "$RIG_DIR/marks2.txt"
sleep 0.5
$VX -j stats > "$RIG_DIR/stats2.json"
$UDP check-marked "$RIG_DIR/rx2.txt" "$RIG_DIR/marks2.txt" "$RIG_DIR/stats2.json" vnet2 \
	"egress drop by ip_proto + dst_port 5001 on vnet2" || fail "egress: marked flow"
pass "egress drop on vnet2: from the first datagram after add returns to the first after del returns"

fast_slow vnet2 egress 5010 "$RIG_DIR/rx2.txt" vnet1 "vnet2 egress"
$VX port show | grep -E "^vnet2 .*deliver redirect .*egress-rules kernel-cache" >/dev/null ||
	fail "port show with egress rules: $($VX port show | grep ^vnet2)"
pass "egress counters: Sent hardware + Sent software = datagrams sent, exactly, across two invalidations"

# A flood's copies: vm1 asks for 192.0.2.99 (no one), the ARP broadcast is
# flooded to vnet2 and vnet3; vnet3's egress drops ARP.
$VX filter add dev vnet3 egress protocol arp pref 1 handle 1 flower action drop
cap "$VM3" vnet3 "arp" "$RIG_DIR/arp3.pcap"
cap3_pid=$CAP_PID
cap "$VM2" vnet2 "arp and host 192.0.2.99" "$RIG_DIR/arp2.pcap"
nvm1 ping -c 3 -i 0.3 -W 1 192.0.2.99 >/dev/null 2>&1 || true
capstop
CAP_PID=$cap3_pid capstop
a2=$(count "$RIG_DIR/arp2.pcap") a3=$(count "$RIG_DIR/arp3.pcap")
[ "$a2" -ge 1 ] && [ "$a3" = 0 ] || fail "flood at vnet3's egress: vm2 saw $a2 ARP, vm3 $a3 (want >= 1, 0)"
$VX -j -s filter show dev vnet3 egress |
	$PY -c 'import json,sys; r=[x for x in json.load(sys.stdin) if "options" in x][0]; sys.exit(r["options"]["actions"][0]["stats"]["packets"] < 1)' ||
	fail "the ARP drop at vnet3's egress counted nothing"
$VX filter del dev vnet3 egress protocol arp pref 1 handle 1 flower
pass "a flooded ARP: dropped at vnet3's egress ($a3 seen there), delivered by vnet2 ($a2)"

$VX filter add dev vnet2 egress protocol ip pref 11 flower ip_proto udp dst_port 5011 \
	action mirred egress mirror dev vnet3
cap "$VM3" vnet3 "udp dst port 5011" "$RIG_DIR/emirror.pcap"
nvm1 $UDP send 192.0.2.2 5011 20
capstop
got=$(grep -c "^5011 " "$RIG_DIR/rx2.txt" || true)
[ "$(count "$RIG_DIR/emirror.pcap")" = 20 ] && [ "$got" = 20 ] ||
	fail "egress mirror: vm3 saw $(count "$RIG_DIR/emirror.pcap"), vm2 received $got, of 20"
pass "egress mirror from vnet2 to vnet3: vm3 saw 20, vm2 received 20"

$VX filter add dev vnet3 egress protocol ip pref 12 flower ip_proto udp dst_port 5012 action vlan push id 43
cap "$VM3" vnet3 "vlan 43 and udp dst port 5012" "$RIG_DIR/evlan.pcap"
nvm1 $UDP send 192.0.2.3 5012 20
capstop
[ "$(count "$RIG_DIR/evlan.pcap")" = 20 ] || fail "egress vlan push: vm3 saw $(count "$RIG_DIR/evlan.pcap") of 20 tagged 43"
pass "vlan push id 43 at vnet3's egress: vm3 saw 20 of 20 tagged"

# indev on an egress rule: the port the frame came in on.  vnet3's egress
# drops UDP that came in on vnet1; vm1's and vm2's 20 each to vm3: vm1's
# dropped, vm2's delivered.  vnet1 has an ingress rule for them too, so
# vm1's first datagram goes up and comes back by the re-injection veth:
# it still came in on vnet1 (its slot's origin), and is dropped too.
$VX filter add dev vnet1 ingress protocol ip pref 30 flower ip_proto udp dst_port 5013 action pass
$VX filter add dev vnet3 egress protocol ip pref 13 flower indev vnet1 ip_proto udp action drop
n "$VM3" $UDP recv "$RIG_DIR/rx3.txt" 5013 5014 &
RIG_PIDS="$RIG_PIDS $!"
sleep 0.3
nvm1 $UDP send 192.0.2.3 5013 20
nvm2 $UDP send 192.0.2.3 5014 20
sleep 0.3
from1=$(grep -c "^5013 " "$RIG_DIR/rx3.txt" || true) from2=$(grep -c "^5014 " "$RIG_DIR/rx3.txt" || true)
[ "$from1" = 0 ] && [ "$from2" = 20 ] || fail "indev vnet1 at vnet3's egress: vm3 got $from1 of vm1's 20, $from2 of vm2's 20"
$VX -j -s filter show dev vnet3 egress > "$RIG_DIR/indev.json"
$PY - "$RIG_DIR/indev.json" <<'EOF' || fail "indev counters"
import json, sys
st = [r for r in json.load(open(sys.argv[1])) if "options" in r and r["pref"] == 13][0]["options"]["actions"][0]["stats"]
hw, sw = st.get("hw_packets", 0), st.get("sw_packets", 0)
assert st["packets"] == 20 and hw > 0, "indev vnet1 drop counted %s, want 20 with fast > 0" % st
print("indev vnet1 at vnet3's egress: %d dropped, fast %d + slow %d" % (st["packets"], hw, sw))
EOF
$VX filter del dev vnet3 egress protocol ip pref 13 flower
$VX filter del dev vnet1 ingress protocol ip pref 30 flower
# A port only an indev names cannot go (the rule would name nothing): the
# check taps have (control/devports.c).  vnet9, a veth into vm3, is named
# by that one rule.
$VX port add vnet9 type veth vni 99 netns "$VM3" || fail "port add vnet9"
$VX filter add dev vnet3 egress protocol ip pref 14 flower indev vnet9 action pass || fail "indev vnet9"
refused "named by 1 flower rule \(first: .*indev vnet9" port del vnet9
$VX filter del dev vnet3 egress protocol ip pref 14 flower
$VX port del vnet9 || fail "port del vnet9 once no rule names it"
n "$VM3" ip link show vnet9 >/dev/null 2>&1 && fail "vnet9's peer outlived port del"
pass "indev vnet1 on vnet3's egress: vm1's 20 dropped (its re-injected first one too), vm2's 20 delivered"

$VX filter del dev vnet2 egress protocol ip pref 10 handle 1 flower
$VX filter del dev vnet2 egress protocol ip pref 11 flower
$VX port show | grep -E "^vnet2 .*deliver redirect_peer .*egress-rules none" >/dev/null ||
	fail "port show after the egress rules: $($VX port show | grep ^vnet2)"
nvm1 ping -c 2 -W 2 192.0.2.2 >/dev/null || fail "vm1 -> vm2 after the egress rules went"
pass "egress rules gone from vnet2: redirect_peer again, vm2 reachable"

$VX stats > "$RIG_DIR/stats.txt"
grep -q "rule cache:" "$RIG_DIR/stats.txt" || fail "stats: no rule cache line"
grep -E "^rule cache:" "$RIG_DIR/stats.txt"
echo "test_kdp_rules: all ok"
