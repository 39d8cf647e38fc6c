#!/bin/bash
# Flower rules in the running daemon: `vxctl filter add|del|show` (tc's
# grammar), refusals that name the word and leave the rules unchanged, a
# port named by rules that cannot be deleted, rules in `show config` and a
# reload round-trip.
#
#   vxt64-PID-vm1       vxt64-PID-h1                          vxt64-PID-h2       vxt64-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt64-$$"
trap rig_cleanup EXIT

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
VX=vx$VNI
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping before any rule"

# --- the seed 002 set-up, in tc's words: add and show ------------------------
vx 1 filter add dev vnet1 pref 2 ingress protocol ip flower skip_hw action mirred egress redirect dev "$VX" ||
	fail "filter add (seed line, pref 2 ip)"
vx 1 filter add dev "$VX" pref 2 ingress protocol ip flower skip_hw action mirred egress redirect dev vnet1 ||
	fail "filter add on the vxlan port"
vx 1 filter add dev vnet1 pref 1 ingress protocol arp flower skip_hw action mirred egress redirect dev "$VX" ||
	fail "filter add (pref 1 arp)"
vx 1 filter add dev "$VX" pref 1 ingress protocol arp flower skip_hw action mirred egress redirect dev vnet1 ||
	fail "filter add (pref 1 arp, vxlan port)"
vx 1 filter show dev vnet1 ingress >"$RIG_DIR/show"
cat >"$RIG_DIR/want" <<EOF
filter add dev vnet1 ingress pref 1 handle 1 protocol arp flower skip_hw action mirred egress redirect dev $VX
filter add dev vnet1 ingress pref 2 handle 1 protocol ip flower skip_hw action mirred egress redirect dev $VX
EOF
diff "$RIG_DIR/want" "$RIG_DIR/show" || fail "filter show prints what was added, in pref order"
vx 1 -j filter show dev "$VX" ingress | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [(r["pref"], r["handle"], r["dev"]) for r in d] == [(1, 1, sys.argv[1]), (2, 1, sys.argv[1])], d
assert d[0]["rule"].startswith("filter add dev %s ingress pref 1 handle 1 protocol arp" % sys.argv[1]), d' "$VX" ||
	fail "filter show -j"
pass "seed 002 rules added in tc's words; filter show prints them back in pref order (text and JSON)"

# --- refusals name the word; the rules stay as they were ------------------------
vx 1 show config >"$RIG_DIR/cfg-before"
refused() { # WHAT EXPECTED-IN-MESSAGE WORDS...
	local what=$1 want=$2 rc=0; shift 2
	vx 1 "$@" 2>"$RIG_DIR/err" >/dev/null || rc=$?
	[ "$rc" = 1 ] || fail "$what: exit $rc, not refused"
	grep -q -- "$want" "$RIG_DIR/err" || fail "$what: message does not say '$want': $(cat "$RIG_DIR/err")"
	vx 1 show config >"$RIG_DIR/cfg-now"
	diff "$RIG_DIR/cfg-before" "$RIG_DIR/cfg-now" >/dev/null || fail "$what changed the state"
}
refused "unknown field" '"dst_ipp"' filter add dev vnet1 ingress pref 5 protocol ip flower dst_ipp 192.0.2.0/24 action drop
refused "bad prefix" '"192.0.2.0/33"' filter add dev vnet1 ingress pref 5 protocol ip flower dst_ip 192.0.2.0/33 action drop
refused "missing action target port" 'mirred dev "nosuch": no such port' \
	filter add dev vnet1 ingress pref 5 protocol ip flower action mirred egress redirect dev nosuch
refused "missing rule port" 'dev "nosuch": no such port' filter add dev nosuch ingress pref 5 protocol ip flower action drop
refused "duplicate handle" 'duplicate handle' filter add dev vnet1 ingress pref 2 handle 1 protocol ip flower action drop
refused "ip_proto without protocol" '"ip_proto"' filter add dev vnet1 ingress pref 5 flower ip_proto tcp action drop
refused "skip_sw" '"skip_sw"' filter add dev vnet1 ingress pref 5 protocol ip flower skip_sw action drop
refused "del of no rule" 'no such filter' filter del dev vnet1 ingress pref 7 handle 1
refused "port del of a port rules name" 'named by 4 flower rules' port del "$VX"
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after the refusals"
pass "bad rule lines refused naming the word (unknown field, bad prefix, missing port, duplicate handle, ip_proto without protocol, skip_sw); port del of a port in use refused; nothing changed"

# --- show config and a reload round-trip --------------------------------------------
CONF=$RIG_DIR/h1.conf
grep -c '^filter add ' "$RIG_DIR/cfg-before" | grep -qx 4 || fail "show config lacks the rules: $(cat "$RIG_DIR/cfg-before")"
cp "$RIG_DIR/cfg-before" "$CONF"
vx 1 reload >/dev/null || fail "reload of show config's own output"
vx 1 show config >"$RIG_DIR/cfg-again"
diff "$RIG_DIR/cfg-before" "$RIG_DIR/cfg-again" || fail "show config does not round-trip with rules"
# A file whose rules differ: the rules become the file's, as one change.
grep -v "pref 1 " "$RIG_DIR/cfg-before" >"$CONF"
echo "filter add dev vnet1 ingress pref 3 protocol ipv6 flower ip_proto udp dst_port 5000-5010 action drop" >>"$CONF"
vx 1 reload >/dev/null || fail "reload with changed rules: $(cat "$CONF")"
vx 1 filter show dev vnet1 ingress >"$RIG_DIR/show"
cat >"$RIG_DIR/want" <<EOF
filter add dev vnet1 ingress pref 2 handle 1 protocol ip flower skip_hw action mirred egress redirect dev $VX
filter add dev vnet1 ingress pref 3 handle 1 protocol ipv6 flower ip_proto udp dst_port 5000-5010 action drop
EOF
diff "$RIG_DIR/want" "$RIG_DIR/show" || fail "reload did not make the rules the file's"
# A file with a bad rule is refused whole (FILE:LINE), the rules unchanged.
vx 1 show config >"$RIG_DIR/cfg-before"
echo "filter add dev vnet1 ingress pref 4 protocol ip flower action mirred egress redirect dev gone0" >>"$CONF"
rc=0; vx 1 reload 2>"$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'gone0' "$RIG_DIR/err" || fail "reload with a rule naming no port: exit $rc, $(cat "$RIG_DIR/err")"
vx 1 show config >"$RIG_DIR/cfg-now"
diff "$RIG_DIR/cfg-before" "$RIG_DIR/cfg-now" || fail "a refused reload changed the rules"
pass "rules are in show config; reload round-trips, replaces the rules by the file's, and a bad rule undoes the reload"

# --- del ---------------------------------------------------------------------------
vx 1 filter del dev vnet1 ingress pref 3 handle 1 || fail "filter del pref handle"
vx 1 filter show dev vnet1 ingress | grep -q "pref 3" && fail "deleted rule still shown"
vx 1 filter del dev vnet1 ingress || fail "filter del of every rule of a port"
[ -z "$(vx 1 filter show dev vnet1 ingress)" ] || fail "rules left on vnet1"
vx 1 filter del dev "$VX" ingress || fail "filter del on the vxlan port"
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after the rules are gone"
pass "filter del of one rule and of a port's rules"
