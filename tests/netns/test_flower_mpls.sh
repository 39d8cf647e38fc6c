#!/bin/bash
# Flower's MPLS and ARP keys and `action continue` in the running daemon,
# each datapath in turn (VXT_DP=user|kernel runs one): MPLS and ARP frames sent with scapy from vm1 through
# vnet1's rules, each rule's counter checked exactly, and what reached vm2
# across the overlay counted with tcpdump (dropped frames never arrive,
# redirected and passed ones do).  continue crosses two rules, both counted.
# Then enc_tos/enc_ttl on the vxlan port against VXLAN datagrams crafted
# with their own outer TOS/TTL.  Also: tc's show text for an MPLS rule,
# show config re-typable, and tc's keys vxswitch does not build refused
# with the reason.
#
#   vxmpl-PID-vm1       vxmpl-PID-h1                          vxmpl-PID-h2       vxmpl-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_each_datapath "$0" "$@"
rig_init "vxmpl-$$"
rig_trap

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
VX=vx$VNI
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping before any rule"
MAC1=$(nvm1 cat /sys/class/net/vnet1/address)
MAC2=$(nvm2 cat /sys/class/net/vnet2/address)

# rule_packets PORT PREF HANDLE: the packets one rule counted (filter show -s -j)
rule_packets() {
	vx 1 -j -s filter show dev "$1" ingress | /usr/bin/python3 -c '
import json, sys
pref, handle = int(sys.argv[1]), int(sys.argv[2])
for r in json.load(sys.stdin):
	o = r.get("options")
	if o and r["pref"] == pref and o["handle"] == handle:
		print(o["actions"][0]["stats"]["packets"])
		sys.exit(0)
sys.exit("no rule pref %d handle %d" % (pref, handle))' "$2" "$3"
}
expect_count() { # PREF WANT WHAT
	local got
	got=$(rule_packets vnet1 "$1" 1) || fail "no rule at pref $1"
	[ "$got" = "$2" ] || fail "$3: pref $1 counted $got packets, want $2"
}

# --- rules in tc's words ------------------------------------------------------------
add() { vx 1 filter add dev vnet1 ingress "$@" || fail "filter add $*"; }
add pref 1 protocol mpls_uc flower mpls_label 100 action continue
add pref 2 protocol mpls_uc flower mpls lse depth 2 label 200 ttl 63 action drop
add pref 3 protocol mpls_uc flower mpls_bos 1 action mirred egress redirect dev "$VX"
add pref 10 protocol arp flower arp_op request arp_tip 192.0.2.77 action drop
add pref 11 protocol arp flower arp_sip 192.0.2.200 arp_sha 02:00:00:00:c8:01 action pass
add pref 12 protocol arp flower arp_op reply arp_tha 02:00:00:00:c8:00/40 action pass

vx 1 filter get dev vnet1 ingress protocol mpls_uc pref 2 handle 1 flower |
	sed 's/index [0-9]* ref/index N ref/' >"$RIG_DIR/get"
printf '%s\n' 'filter ingress protocol mpls_uc pref 2 flower chain 0 handle 0x1 ' '  eth_type 8847' '  mpls' \
	'    lse depth 2 label 200 ttl 63' '  not_in_hw' '	action order 1: gact action drop' \
	'	 random type none pass val 0' '	 index N ref 1 bind 1' '' >"$RIG_DIR/want"
diff "$RIG_DIR/want" "$RIG_DIR/get" || fail "filter get of the lse rule is not tc's text"
vx 1 show config | grep -qx "filter add dev vnet1 ingress pref 2 handle 1 protocol mpls_uc flower mpls lse depth 2 label 200 ttl 63 action drop" ||
	fail "show config does not hold the lse rule re-typably: $(vx 1 show config | grep mpls)"
vx 1 show config | grep -qx "filter add dev vnet1 ingress pref 1 handle 1 protocol mpls_uc flower mpls_label 100 action continue" ||
	fail "show config does not hold the continue rule"
pass "MPLS, ARP and continue rules added in tc's words; get prints tc's text, show config the lines"

# --- frames: what each rule counts, what reaches vm2 ------------------------------
cap_pid=""
nvm2 timeout 60 tcpdump -l -n -e -i vnet2 '(ether proto 0x8847 or ether proto 0x8848 or arp) and ether src '"$MAC1" \
	>"$RIG_DIR/cap" 2>"$RIG_DIR/cap.err" &
cap_pid=$!
for i in $(seq 600); do grep -q "listening on" "$RIG_DIR/cap.err" 2>/dev/null && break; sleep 0.05; done
grep -q "listening on" "$RIG_DIR/cap.err" || fail "tcpdump on vnet2 did not start in 30 s"
# Frames from vm1's own MAC (so the rig's FDB knows them): scapy builds the
# label stacks; the ARP frames use a sender no VM owns, so vm1's kernel
# adds nothing to the counts.
nvm1 /usr/bin/python3 - "$MAC1" "$MAC2" <<'PY' || fail "scapy could not send"
import sys
from scapy.all import Ether, ARP, IP, UDP, Raw, sendp
from scapy.contrib.mpls import MPLS
src, dst = sys.argv[1], sys.argv[2]
body = IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=1, dport=9) / Raw(b"x" * 16)
def mpls(stack, etype=0x8847):
    p = Ether(src=src, dst=dst, type=etype)
    for i, (label, ttl) in enumerate(stack):
        p = p / MPLS(label=label, s=int(i == len(stack) - 1), ttl=ttl)
    return p / body
frames = []
frames += [mpls([(100, 64), (200, 63)])] * 3   # pref 1 continue, pref 2 drop
frames += [mpls([(100, 64), (200, 62)])] * 1   # pref 1 continue, nothing else: L2 switching
frames += [mpls([(100, 64)])] * 2              # pref 1 continue, pref 3 redirect
frames += [mpls([(7, 64)])] * 4                # pref 3 redirect
frames += [mpls([(100, 64)], 0x8848)] * 1      # mpls_mc: no rule, L2 switching
bc = "ff:ff:ff:ff:ff:ff"
frames += [Ether(src=src, dst=bc) / ARP(op=1, hwsrc="02:00:00:00:c8:09", psrc="192.0.2.201", pdst="192.0.2.77")] * 3
frames += [Ether(src=src, dst=bc) / ARP(op=1, hwsrc="02:00:00:00:c8:01", psrc="192.0.2.200", pdst="192.0.2.2")] * 2
frames += [Ether(src=src, dst=bc) / ARP(op=2, hwsrc="02:00:00:00:c8:09", psrc="192.0.2.201", hwdst="02:00:00:00:c8:07", pdst="192.0.2.2")] * 1
sendp(frames, iface="vnet1", verbose=False)
PY
# Bounded by progress: the 8 MPLS and 3 ARP frames that must cross, or 10 s.
for i in $(seq 200); do [ "$(wc -l <"$RIG_DIR/cap")" -ge 11 ] && break; sleep 0.05; done
sleep 0.5 # what must not arrive has had as long as what did
kill "$cap_pid" 2>/dev/null || true; wait "$cap_pid" 2>/dev/null || true

expect_count 1 6 "mpls_label 100 (continue): 3 + 1 + 2 frames of label 100 unicast"
expect_count 2 3 "lse depth 2 label 200 ttl 63 (drop), reached after pref 1's continue"
expect_count 3 6 "mpls_bos 1 (redirect): 2 after pref 1's continue + 4 of label 7"
expect_count 10 3 "arp_op request arp_tip 192.0.2.77 (drop)"
expect_count 11 2 "arp_sip 192.0.2.200 arp_sha 02:00:00:00:c8:01"
expect_count 12 1 "arp_op reply arp_tha 02:00:00:00:c8:00/40"
pass "rule counters exact: continue 6, lse drop 3, bos redirect 6, ARP 3/2/1"

mpls_seen=$(grep -c "MPLS" "$RIG_DIR/cap" || true)
l200=$(grep -c "label 200" "$RIG_DIR/cap" || true)
[ "$mpls_seen" = 8 ] || fail "vm2 saw $mpls_seen MPLS frames, want 8 (1 passed after continue, 2 + 4 redirected, 1 mpls_mc): $(cat "$RIG_DIR/cap")"
[ "$l200" = 1 ] || fail "vm2 saw $l200 frames with label 200, want 1 (the ttl 62 one; the ttl 63 ones are dropped)"
grep -q "who-has 192.0.2.77" "$RIG_DIR/cap" && fail "a dropped ARP request for 192.0.2.77 reached vm2"
[ "$(grep -c "who-has 192.0.2.2 tell 192.0.2.200" "$RIG_DIR/cap")" = 2 ] || fail "the 2 passed ARP requests did not reach vm2"
pass "vm2 got the 8 MPLS frames rules let through (none of the dropped label 200 ttl 63) and the passed ARP, not the dropped ones"

# --- enc_tos / enc_ttl on the vxlan port: the outer header of what arrives ------------
# VXLAN datagrams crafted in h2 with their own outer TOS and TTL (the peer
# daemon's own traffic has TOS 0, TTL 64 and matches neither rule).
vx 1 filter add dev "$VX" ingress pref 1 protocol ip flower enc_tos 0x28 enc_ttl 17 action continue ||
	fail "enc_tos enc_ttl rule"
vx 1 filter add dev "$VX" ingress pref 2 protocol ip flower ip_proto icmp enc_ttl 16/0xf0 action drop ||
	fail "enc_ttl masked rule"
nvm1 timeout 60 tcpdump -l -n -i vnet1 'icmp and src host 192.0.2.99' >"$RIG_DIR/enc" 2>"$RIG_DIR/enc.err" &
cap_pid=$!
for i in $(seq 600); do grep -q "listening on" "$RIG_DIR/enc.err" 2>/dev/null && break; sleep 0.05; done
nh2 /usr/bin/python3 - "$MAC1" "$(nh1 cat /sys/class/net/u1/address)" <<'PY' || fail "scapy could not send VXLAN"
import sys
from scapy.all import Ether, IP, UDP, ICMP, sendp, get_if_hwaddr
from scapy.layers.vxlan import VXLAN
def dgram(tos, ttl, seq):
    inner = Ether(src="02:00:00:00:ee:01", dst=sys.argv[1]) / IP(src="192.0.2.99", dst="192.0.2.1") / ICMP(id=99, seq=seq)
    return (Ether(src=get_if_hwaddr("u2"), dst=sys.argv[2]) / IP(src="198.51.100.2", dst="198.51.100.1", tos=tos, ttl=ttl) /
            UDP(sport=50000, dport=4789) / VXLAN(flags=0x08, vni=99) / inner)
sendp([dgram(0x28, 17, i) for i in range(3)] +    # pref 1 (continue) then pref 2 (drop)
     [dgram(0x00, 18, 10 + i) for i in range(2)] + # pref 2 only (drop)
     [dgram(0x28, 64, 20 + i) for i in range(2)],  # neither: on to vm1
     iface="u2", verbose=False)
PY
for i in $(seq 200); do [ "$(grep -c "ICMP echo request" "$RIG_DIR/enc")" -ge 2 ] && break; sleep 0.05; done
sleep 0.5
kill "$cap_pid" 2>/dev/null || true; wait "$cap_pid" 2>/dev/null || true
got=$(rule_packets "$VX" 1 1); [ "$got" = 3 ] || fail "enc_tos 0x28 enc_ttl 17 counted $got, want 3"
got=$(rule_packets "$VX" 2 1); [ "$got" = 5 ] || fail "enc_ttl 16/0xf0 counted $got, want 5 (3 after continue, 2 of TTL 18)"
got=$(grep -c "ICMP echo request" "$RIG_DIR/enc" || true)
[ "$got" = 2 ] || fail "vm1 got $got of the crafted echo requests, want the 2 of outer TTL 64: $(cat "$RIG_DIR/enc")"
pass "enc_tos/enc_ttl match the outer header the vxlan port received: 3 and 5 counted, the 2 unmatched reach vm1"

# --- refused: tc's keys that vxswitch does not build ---------------------------------
refused() { # WANT WORDS...
	local want=$1 rc=0; shift
	vx 1 filter add dev vnet1 ingress "$@" 2>"$RIG_DIR/err" >/dev/null || rc=$?
	[ "$rc" = 1 ] && grep -q -- "$want" "$RIG_DIR/err" || fail "$*: exit $rc, $(cat "$RIG_DIR/err")"
}
refused "no connection tracking" pref 20 protocol ip flower ct_state +trk action drop
refused "VXLAN-GBP" pref 20 protocol ip flower vxlan_opts 10 action drop
refused "ethertype isn't MPLS" pref 20 protocol ip flower mpls_label 1 action drop
refused "one form per line" pref 20 protocol mpls_uc flower mpls_label 1 mpls lse depth 2 action drop
refused '"jump" is not supported' pref 20 protocol ip flower action jump 1 action drop
pass "ct_state, vxlan_opts, MPLS without an MPLS protocol, two MPLS forms and jump refused with the reason"
