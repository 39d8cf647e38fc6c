#!/bin/bash
# Egress rules and indev (dp_egress.c): `filter add dev P egress ...` sees
# the frames the switch sends out of P, after switching, before a vxlan
# port encapsulates them; `indev` matches the port they came in on.
#   - an egress drop on vm1's tap drops only what goes to vm1 (vm2's and
#     vm3's echo requests, the replies to vm1's own pings), counted exactly
#     by the rule and as rule_drop on the port; what vm1 sends and what goes
#     to vm3 pass;
#   - indev on that egress rule: only what came in on the vxlan port;
#     indev on an ingress rule: its own port matches, another never does;
#   - an ingress vlan push is in the key an egress rule matches (its pop
#     makes the pings work);
#   - an egress mirror on vm1's tap: tcpdump on a third tap sees each copy;
#   - the vxlan port's egress: drop (no ICMP datagram on the wire),
#     tunnel_key set (the datagrams go to another remote, VNI and UDP port
#     the rule's, seen by tcpdump on the underlay), redirect to a tap;
#   - show (tc's layout, -j -s counters), get, show config and reload,
#     del, the refusals; mirrors looping between two egresses end at the
#     nest limit; --datapath kernel refuses enc_* on a vxlan port's egress
#     (the egress rules it runs are test_kdp_rules.sh's and
#     test_kdp_rules_vx.sh's; this test is the userspace datapath's).
#
#   egr-PID-vm1 vnet1 192.0.2.1 -+                                  +- vnet2 192.0.2.2 egr-PID-vm2
#   egr-PID-vm3 vnet3 192.0.2.3 -+ vxswitchd (h1) -- u1 ==== u2 -- vxswitchd (h2)
#                 mir1 (in h1) --+
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "egr-$$"
trap rig_cleanup EXIT
VM3=$P-vm3

# cap_start NS OUT TCPDUMP-ARGS...: tcpdump in namespace NS in the background,
# once it listens.  CAP_PID is timeout's own pid (`ip netns exec` execs it:
# no shell function in between, whose subshell a kill would leave the
# tcpdump behind, still writing), so cap_stop's kill ends the tcpdump.
cap_start() {
	local ns=$1 out=$2 i; shift 2
	ip netns exec "$ns" timeout 60 tcpdump -l "$@" >"$out" 2>"$out.err" &
	CAP_PID=$!
	RIG_PIDS="$RIG_PIDS $CAP_PID"
	for i in $(seq 600); do grep -q "listening on" "$out.err" 2>/dev/null && return 0; sleep 0.05; done
	fail "tcpdump $* did not start in 30 s: $(cat "$out.err")"
}
# cap_stop PID: stop a capture that has no count to end it, after its last
# lines are out (a tcpdump killed so ends its output with an empty line:
# the checks count non-empty lines)
cap_stop() {
	sleep 0.5
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
nvm3() { n "$VM3" "$@"; }
ping5() { # NSFUNC ADDR: 5 pings; their exit status
	"$1" ping -c 5 -i 0.1 -W 1 "$2" >/dev/null 2>&1
}
# rule_pkts DEV HOOK PREF [FIELD]: the packets (or bytes, fast, slow) of the
# rule's first action, from tc's JSON (-j -s), the split checked
rule_pkts() {
	vx 1 -j -s filter show dev "$1" "$2" | /usr/bin/python3 -c '
import json, sys
pref, field = int(sys.argv[1]), sys.argv[2]
for r in json.load(sys.stdin):
	o = r.get("options")
	if o and r["pref"] == pref:
		s = o["actions"][0]["stats"]
		fast, slow = s.get("hw_packets", 0), s.get("sw_packets", s["packets"])
		assert s["packets"] == fast + slow, s
		print({"packets": s["packets"], "bytes": s["bytes"], "fast": fast, "slow": slow}[field])
		sys.exit(0)
sys.exit("no rule at pref %d" % pref)' "$3" "${4:-packets}"
}
rule_drops() { vx_stat 1 "port('$1')['drops'].get('rule_drop', 0)"; }
refused() { # WHAT EXPECTED-IN-MESSAGE WORDS...
	local what=$1 want=$2 rc=0; shift 2
	vx 1 show config >"$RIG_DIR/cfg-before"
	vx 1 "$@" 2>"$RIG_DIR/err" >/dev/null || rc=$?
	[ "$rc" = 1 ] || fail "$what: exit $rc, not refused"
	grep -q -- "$want" "$RIG_DIR/err" || fail "$what: message does not say '$want': $(cat "$RIG_DIR/err")"
	vx 1 show config | diff "$RIG_DIR/cfg-before" - >/dev/null || fail "$what changed the state"
}

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
VX=vx$VNI
U1=$(u_addr 1); U2=$(u_addr 2); FAR=198.51.100.77
A1=$(vm_addr4 1); A2=$(vm_addr4 2); A3=$(vm_addr4 3)
rig_ns_add "$VM3"
vx 1 port add vnet3 type tap vni "$VNI" netns "$VM3" mtu "$(vm_mtu)" || fail "port add vnet3"
nvm3 ip link set vnet3 up
nvm3 ip addr add "$A3/24" dev vnet3
vx 1 port add mir1 type tap vni "$VNI" || fail "port add mir1"
nh1 sysctl -qw net.ipv6.conf.mir1.disable_ipv6=1
nh1 ip link set mir1 up
# every pair has talked once: MACs learned, neighbours resolved (no flood, no ARP in the counts)
for pair in "nvm1 $A2" "nvm1 $A3" "nvm2 $A3" "nvm2 $A1" "nvm3 $A1"; do
	set -- $pair
	$1 ping -c 2 -i 0.2 -W 2 "$2" >/dev/null || fail "ping before any rule: $pair"
done

# --- an egress drop on vnet1: only what goes to vm1 ---------------------------------------
vx 1 filter add dev vnet1 egress pref 10 protocol ip flower ip_proto icmp action drop || fail "egress drop rule"
d0=$(rule_drops vnet1)
ping5 nvm2 "$A1" && fail "vm2 -> vm1 passed vnet1's egress drop"
ping5 nvm3 "$A1" && fail "vm3 -> vm1 passed vnet1's egress drop"
ping5 nvm2 "$A3" || fail "vm2 -> vm3 dropped by a rule on vnet1's egress"
# vm1's own requests leave by its ingress: the rule drops only the replies
nvm1 ping -c 3 -i 0.1 -W 1 "$A2" >/dev/null 2>&1 && fail "vm1's ping got replies through its egress drop"
n=$(rule_pkts vnet1 egress 10); d=$(( $(rule_drops vnet1) - d0 ))
[ "$n" = 13 ] || fail "egress drop counted $n, want 13 (5 from vm2, 5 from vm3, 3 replies to vm1)"
[ "$d" = 13 ] || fail "vnet1 rule_drop moved by $d, want 13"
[ "$(rule_pkts vnet1 egress 10 fast)" -ge 1 ] || fail "no fast-path (flow cache) count on the egress rule"
pass "egress drop on vnet1: exactly the 13 ICMP frames going to vm1 dropped (rule and rule_drop), vm2 -> vm3 untouched"

# --- indev: on the egress, where the frame came in; on the ingress, its own port -----------
vx 1 filter del dev vnet1 egress pref 10 || fail "filter del ... egress pref 10"
vx 1 filter add dev vnet1 egress pref 10 protocol ip flower ip_proto icmp indev "$VX" action drop ||
	fail "egress drop with indev"
ping5 nvm2 "$A1" && fail "vm2 -> vm1 (in on $VX) passed the indev $VX drop"
ping5 nvm3 "$A1" || fail "vm3 -> vm1 (in on vnet3) dropped by the indev $VX rule"
[ "$(rule_pkts vnet1 egress 10)" = 5 ] || fail "indev rule counted $(rule_pkts vnet1 egress 10), want 5"
vx 1 filter add dev vnet3 ingress pref 1 protocol ip flower indev vnet1 action drop || fail "ingress indev other port"
vx 1 filter add dev vnet3 ingress pref 2 protocol ip flower ip_proto icmp indev vnet3 action drop ||
	fail "ingress indev own port"
nvm3 ping -c 3 -i 0.1 -W 1 "$A2" >/dev/null 2>&1 && fail "vnet3's ingress indev vnet3 drop let pings out"
[ "$(rule_pkts vnet3 ingress 1)" = 0 ] || fail "ingress indev of another port matched"
[ "$(rule_pkts vnet3 ingress 2)" = 3 ] || fail "ingress indev of its own port counted $(rule_pkts vnet3 ingress 2), want 3"
vx 1 filter del dev vnet3 ingress
refused "indev naming no port" 'indev "nosuch": no such port' \
	filter add dev vnet1 egress pref 20 protocol ip flower indev nosuch action drop
vx 1 filter add dev vnet1 egress pref 20 protocol ip flower indev mir1 action pass || fail "indev mir1"
refused "port del of a port only indev names" 'named by 1 flower rule' port del mir1
vx 1 filter del dev vnet1 egress pref 20
pass "indev: vnet1's egress drop with indev $VX took vm2's 5 and not vm3's; on vnet3's ingress indev vnet3 matched 3, indev vnet1 nothing; no-port refused, a port indev names not deletable"

# --- vlan: an ingress push is seen by the egress match, whose pop the VM needs ------------------
vx 1 filter del dev vnet1 egress
vx 1 filter add dev vnet3 ingress pref 1 protocol ip flower ip_proto icmp action vlan push id 5 ||
	fail "ingress vlan push"
ping5 nvm3 "$A1" && fail "vm1 answered a tagged echo request"
vx 1 filter add dev vnet1 egress pref 1 protocol 802.1Q flower vlan_id 5 vlan_ethtype ip action vlan pop ||
	fail "egress vlan pop"
ping5 nvm3 "$A1" || fail "vm3 -> vm1 with vnet3's push and vnet1's egress pop"
[ "$(rule_pkts vnet1 egress 1)" = 5 ] || fail "egress pop counted $(rule_pkts vnet1 egress 1), want 5"
vx 1 filter del dev vnet3 ingress; vx 1 filter del dev vnet1 egress
pass "vnet3's ingress vlan push id 5 is what vnet1's egress matches (protocol 802.1Q vlan_id 5): its pop let the 5 pings through"

# --- an egress mirror on vnet1, seen on mir1 -----------------------------------------------
vx 1 filter add dev vnet1 egress protocol ip flower ip_proto icmp action mirred egress mirror dev mir1 ||
	fail "egress mirror rule"
cap_start "$H1" "$RIG_DIR/mirror" -n -i mir1 icmp
t=$CAP_PID
ping5 nvm2 "$A1" || fail "vm2 -> vm1 with the egress mirror"
cap_stop "$t"
g=$(grep -c "$A2 > $A1: ICMP echo request" "$RIG_DIR/mirror" || true); w=$(grep -c . "$RIG_DIR/mirror" || true)
[ "$g" = 5 ] && [ "$w" = 5 ] || fail "mir1 saw $g echo requests in $w lines, want 5 in 5: $(cat -A "$RIG_DIR/mirror")"
pass "egress mirror on vnet1: tcpdump on mir1 saw the 5 echo requests sent to vm1 (not its replies), which still reached vm1"
vx 1 filter del dev vnet1 egress

# --- the vxlan port's egress, on the wire ----------------------------------------------------
nh1 ip neigh replace "$FAR" lladdr 02:00:00:00:00:77 dev u1
ICMP_IN="udp[28:2] = 0x0800 and udp[39] = 1" # an inner IPv4 ICMP packet in a VXLAN datagram
vx 1 filter add dev "$VX" egress pref 1 protocol ip flower ip_proto icmp action drop || fail "vxlan egress drop"
cap_start "$H1" "$RIG_DIR/wire-drop" -n -i u1 "udp and src host $U1 and $ICMP_IN"
t=$CAP_PID
ping5 nvm1 "$A2" && fail "vm1 -> vm2 passed $VX's egress drop"
ping5 nvm1 "$A3" || fail "vm1 -> vm3 dropped by $VX's egress rule"
cap_stop "$t"
[ "$(grep -c . "$RIG_DIR/wire-drop")" = 0 ] || fail "ICMP datagrams on the wire through $VX's egress drop: $(cat "$RIG_DIR/wire-drop")"
[ "$(rule_pkts "$VX" egress 1)" = 5 ] || fail "$VX egress drop counted $(rule_pkts "$VX" egress 1), want 5"
vx 1 filter del dev "$VX" egress pref 1
vx 1 filter add dev "$VX" egress pref 1 protocol ip flower ip_proto icmp action tunnel_key set id 4242 \
	src_ip "$U1" dst_ip "$FAR" dst_port 4790 || fail "vxlan egress tunnel_key set"
# every ICMP-carrying datagram from u1, one line each (-q: no inner decode)
cap_start "$H1" "$RIG_DIR/wire-tun" -n -q -i u1 "udp and src host $U1 and $ICMP_IN and (udp[12:4] = 0x00109200 or udp[12:4] = 0x00006300)"
t=$CAP_PID
ping5 nvm1 "$A2" && fail "vm1 -> vm2 answered though $VX's egress sends it to $FAR"
cap_stop "$t"
/usr/bin/python3 - "$RIG_DIR/wire-tun" "$FAR" "$U2" <<'PY' || fail "tunnel_key on $VX's egress, tcpdump saw: $(cat "$RIG_DIR/wire-tun")"
import re, sys
lines = [l for l in open(sys.argv[1]).read().splitlines() if l.strip()]
dst = [(m.groups() if m else (l, "?")) for l in lines for m in [re.search(r" > ([0-9.]+)\.([0-9]+):", l)]]
far = [d for d in dst if d == (sys.argv[2], "4790")]
assert len(far) == 5 and len(dst) == 5, dst
PY
# (the filter takes VNI 4242 or the port's 99: the 5 are VNI 4242 to FAR port 4790, none went to $U2)
ping5 nvm1 "$A3" || fail "vm1 -> vm3 under $VX's tunnel_key rule"
pass "$VX egress tunnel_key set: the 5 echo requests left for $FAR port 4790 vni 4242 (tcpdump on u1), none to $U2"
vx 1 filter del dev "$VX" egress pref 1
vx 1 filter add dev "$VX" egress pref 1 protocol ip flower ip_proto icmp action mirred egress redirect dev mir1 ||
	fail "vxlan egress redirect"
cap_start "$H1" "$RIG_DIR/mirror-redir" -n -i mir1 icmp
tm=$CAP_PID
cap_start "$H1" "$RIG_DIR/wire-redir" -n -i u1 "udp and src host $U1 and $ICMP_IN"
t=$CAP_PID
ping5 nvm1 "$A2" && fail "vm1 -> vm2 answered though $VX's egress redirects it"
cap_stop "$t"; cap_stop "$tm"
g=$(grep -c "$A1 > $A2: ICMP echo request" "$RIG_DIR/mirror-redir" || true); w=$(grep -c . "$RIG_DIR/mirror-redir" || true)
[ "$g" = 5 ] && [ "$w" = 5 ] || fail "mir1 saw $g echo requests in $w lines, want 5 in 5: $(cat -A "$RIG_DIR/mirror-redir")"
[ "$(grep -c . "$RIG_DIR/wire-redir")" = 0 ] || fail "ICMP on the wire through the redirect: $(cat "$RIG_DIR/wire-redir")"
pass "$VX egress redirect to mir1: the 5 echo requests on mir1 (tcpdump), none on the wire"

# --- show, get, show config, reload, del; refusals --------------------------------------------
vx 1 filter show dev "$VX" egress | sed 's/index [0-9]* ref/index N ref/' >"$RIG_DIR/show"
printf '%s\n' "filter protocol ip pref 1 flower chain 0 " "filter protocol ip pref 1 flower chain 0 handle 0x1 " \
	"  eth_type ipv4" "  ip_proto icmp" "  not_in_hw" \
	"	action order 1: mirred (Egress Redirect to device mir1) stolen" "	index N ref 1 bind 1" "" >"$RIG_DIR/want"
diff "$RIG_DIR/want" "$RIG_DIR/show" || fail "filter show dev $VX egress is not tc's layout"
[ -z "$(vx 1 filter show dev "$VX" ingress)" ] || fail "the egress rule shows on $VX's ingress"
vx 1 filter get dev "$VX" egress protocol ip pref 1 handle 1 flower | head -1 >"$RIG_DIR/get"
[ "$(cat "$RIG_DIR/get")" = "filter egress protocol ip pref 1 flower chain 0 handle 0x1 " ] ||
	fail "filter get: $(cat "$RIG_DIR/get")"
vx 1 filter add dev vnet1 egress pref 3 protocol ip flower indev "$VX" ip_proto udp action pass || fail "pass rule"
vx 1 show config >"$RIG_DIR/cfg"
grep -qx "filter add dev $VX egress pref 1 handle 1 protocol ip flower ip_proto icmp action mirred egress redirect dev mir1" \
	"$RIG_DIR/cfg" && grep -qx "filter add dev vnet1 egress pref 3 handle 1 protocol ip flower indev $VX ip_proto udp action pass" \
	"$RIG_DIR/cfg" || fail "show config: $(grep filter "$RIG_DIR/cfg")"
cp "$RIG_DIR/cfg" "$RIG_DIR/h1.conf"
vx 1 reload >/dev/null || fail "reload of show config with egress rules"
vx 1 show config | diff "$RIG_DIR/cfg" - || fail "show config does not round-trip with egress rules"
refused "mirred from an egress to itself" 'would loop' \
	filter add dev vnet1 egress pref 4 protocol ip flower action mirred egress redirect dev vnet1
refused "tunnel_key set on a tap's egress" 'or the egress of a vxlan port' \
	filter add dev vnet1 egress pref 4 protocol ip flower action tunnel_key set id 5 src_ip "$U1" dst_ip "$U2"
refused "tunnel_key src_ip not the port's" '"src_ip": refused' \
	filter add dev "$VX" egress pref 4 protocol ip flower action tunnel_key set id 5 src_ip 198.51.100.9 dst_ip "$U2"
vx 1 filter del dev "$VX" egress pref 1 || fail "filter del ... egress"
vx 1 filter del dev vnet1 egress || fail "filter del dev vnet1 egress"
[ -z "$(vx 1 filter show dev "$VX" egress)$(vx 1 filter show dev vnet1 egress)" ] || fail "rules left after del"
ping5 nvm1 "$A2" || fail "vm1 -> vm2 after the egress rules went"
pass "egress rules: show in tc's layout (not on the ingress), get says egress, show config and reload round-trip, del; self-mirred, tunnel_key on a tap's egress, foreign src_ip refused"

# --- egress mirrors in a loop end at the nest limit ---------------------------------------------
vx 1 filter add dev vnet3 egress protocol ip flower ip_proto icmp action mirred egress mirror dev mir1 || fail "loop 1"
vx 1 filter add dev mir1 egress protocol ip flower ip_proto icmp action mirred egress mirror dev vnet3 || fail "loop 2"
d0=$(rule_drops vnet3)
nvm2 ping -c 3 -i 0.2 -W 1 "$A3" >/dev/null || fail "vm2 -> vm3 under looping egress mirrors"
# per request: vnet3 (depth 0) -> mir1 (1) -> vnet3 (2) -> mir1 (3) -> vnet3 (4: dropped)
a=$(rule_pkts vnet3 egress 49152); b=$(rule_pkts mir1 egress 49152); d=$(( $(rule_drops vnet3) - d0 ))
[ "$a" = 6 ] && [ "$b" = 6 ] && [ "$d" = 3 ] || fail "loop: vnet3 rule $a, mir1 rule $b, vnet3 rule_drop $d; want 6 6 3"
vx 1 filter del dev vnet3 egress; vx 1 filter del dev mir1 egress
pass "mirrors looping vnet3 <-> mir1 egress: each request went round to depth 4 (the kernel's MIRRED_NEST_LIMIT) and was dropped there: 6, 6, 3"

# --- what the kernel datapath refuses on egress ------------------------------------------------------
# A daemon of its own in a namespace of its own, one vxlan port on a veth: an enc_* key on the vxlan port's egress is refused (the device's egress cannot know the tunnel a frame came in by).
H3=$P-h3
rig_ns_add "$H3"
n "$H3" ip link add egrv0 type veth peer name egrv1 # (no dummy module in every kernel)
n "$H3" ip addr add 203.0.113.1/24 dev egrv0
n "$H3" ip link set egrv1 up
n "$H3" ip link set egrv0 up
echo "port add $VX type vxlan vni $VNI local 203.0.113.1 remote 203.0.113.2" >"$RIG_DIR/h3.conf"
ip netns exec "$H3" "$VXSWITCHD" --datapath kernel -c "$RIG_DIR/h3.conf" -s "$RIG_DIR/h3.sock" -q \
	>"$RIG_DIR/h3.log" 2>&1 &
RIG_PIDS="$RIG_PIDS $!"
for i in $(seq 200); do [ -S "$RIG_DIR/h3.sock" ] && break; sleep 0.05; done
[ -S "$RIG_DIR/h3.sock" ] || fail "vxswitchd --datapath kernel did not start: $(cat "$RIG_DIR/h3.log")"
grep -q "datapath kernel unavailable" "$RIG_DIR/h3.log" && fail "no kernel datapath here: $(cat "$RIG_DIR/h3.log")"
rc=0
vx 3 filter add dev "$VX" egress protocol ip flower enc_key_id "$VNI" action drop 2>"$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] && grep -q "enc_\* keys are refused on a vxlan port's egress on the kernel datapath" "$RIG_DIR/err" ||
	fail "--datapath kernel: exit $rc, $(cat "$RIG_DIR/err")"
pass "--datapath kernel refuses enc_* on a vxlan port's egress rules (which it runs: test_kdp_rules.sh, test_kdp_rules_vx.sh): $(cat "$RIG_DIR/err")"
