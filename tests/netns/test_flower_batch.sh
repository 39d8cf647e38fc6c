#!/bin/bash
# vxctl -batch (tc's -batch) and rule churn under traffic, on each datapath
# in turn (VXT_DP=user|kernel runs one; on the kernel one the version is
# rule_cache.generation and the misses the kernel cache's: lib.sh vx_rule_cache).
#
# -batch: a 1000-line file of `filter add` lines (with # comments and blank
# lines) is applied as ONE change: filter show lists all 1000 and the
# published rules' version (stats flow_cache.rules_version) grows by exactly
# 1, where 1000 single adds grow it by 1000.  `-batch -` reads stdin.  A file
# with a bad line N is refused naming FILE:N and the word, checked by vxctl
# (syntax) or by the daemon (a missing port, a duplicate handle, a del of no
# rule, a line that is not filter add|del), and the rules and their version
# stay as they were.
#
# Churn: while iperf3 runs vm1 -> vm2, 1000 rules are added and deleted with
# -batch and 300 of them one by one; the daemon survives, the stream has no gap,
# and the throughput afterwards is back near the one before.  A deleted rule
# never matches again: a rule mirrors a marked UDP flow to a third tap
# (mir1) and drops it; a sender keeps the flow in the worker's flow cache
# (the rule's fast-path count grows) up to the `filter del`; once del has
# returned, every marked datagram sent reaches vm2, none reaches mir1, and
# vnet1's rule_drop count does not move (the new rules version made the
# cached verdict a miss: flow_cache.misses grows).
#
#   vxt65-PID-vm1       vxt65-PID-h1                          vxt65-PID-h2       vxt65-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
#                        mir1 (tap or veth, its end in a namespace of its own: mirror target, tcpdump)
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_each_datapath "$0" "$@"
rig_init "vxt65-$$"
rig_trap

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
VX=vx$VNI
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping before any rule"
version() { vx_rule_cache 1 version; }
n_rules() { vx 1 filter show dev vnet1 ingress | grep -c " handle 0x"; }

# churn_file ADD|DEL FILE: 1000 rules that never match the test traffic
churn_file() {
	{
		echo "# 1000 rules, one batch"
		for i in $(seq 0 999); do
			[ $((i % 100)) = 0 ] && printf '\n# block %d\n' $((i / 100))
			if [ "$1" = add ]; then
				echo "filter add dev vnet1 ingress pref $((100 + i)) protocol ip flower ip_proto udp dst_ip 203.0.113.$((i % 250)) dst_port $((1000 + i)) action drop"
			else
				echo "  filter del dev vnet1 ingress pref $((100 + i))"
			fi
		done
	} >"$2"
}
ADD=$RIG_DIR/add.batch; DEL=$RIG_DIR/del.batch
churn_file add "$ADD"; churn_file del "$DEL"

# --- a 1000-line batch is one change -----------------------------------------------
v0=$(version)
t0=$(date +%s.%N)
vx 1 -batch "$ADD" || fail "-batch of 1000 adds"
t1=$(date +%s.%N)
v1=$(version)
[ "$(n_rules)" = 1000 ] || fail "$(n_rules) rules after the batch, not 1000"
[ $((v1 - v0)) = 1 ] || fail "a 1000-line batch moved the rules version by $((v1 - v0)), not 1"
# the re-typable lines are show config's (filter show prints tc's layout)
vx 1 show config | grep '^filter add dev vnet1 ' >"$RIG_DIR/show"
grep -v '^ *#' "$ADD" | grep . | sed 's/ ingress pref \([0-9]*\) / ingress pref \1 handle 1 /' >"$RIG_DIR/want"
diff "$RIG_DIR/want" "$RIG_DIR/show" >/dev/null || fail "show config's rules are not the batch's lines"
vx 1 -batch - <"$DEL" || fail "-batch - (stdin) of 1000 dels"
v2=$(version)
[ "$(n_rules)" = 0 ] && [ $((v2 - v1)) = 1 ] || fail "-batch - of dels: $(n_rules) rules left, version +$((v2 - v1))"
pass "-batch of 1000 adds in $(echo "$t1 - $t0" | bc) s: filter show prints the 1000 lines, rules version +1 (one change); -batch - of 1000 dels from stdin: +1, none left"

# --- a bad line N: refused naming FILE:N, nothing applied --------------------------------
vx 1 filter add dev vnet1 ingress pref 5 protocol ip flower ip_proto udp dst_port 9 action drop || fail "a rule to keep"
vx 1 filter show dev vnet1 ingress >"$RIG_DIR/before"
vb=$(version)
bad_batch() { # WHAT LINE-NUMBER REPLACEMENT EXPECTED-IN-MESSAGE
	local what=$1 n=$2 line=$3 want=$4 rc=0 f=$RIG_DIR/bad.batch
	awk -v n="$n" -v l="$line" 'NR == n { print l; next } { print }' "$ADD" >"$f"
	vx 1 -batch "$f" 2>"$RIG_DIR/err" >/dev/null || rc=$?
	[ "$rc" = 1 ] || fail "$what: exit $rc, not refused"
	grep -qF -- "$f:$n: " "$RIG_DIR/err" || fail "$what: message does not name $f:$n: $(cat "$RIG_DIR/err")"
	grep -qF -- "$want" "$RIG_DIR/err" || fail "$what: message does not say '$want': $(cat "$RIG_DIR/err")"
	vx 1 filter show dev vnet1 ingress >"$RIG_DIR/now"
	diff "$RIG_DIR/before" "$RIG_DIR/now" >/dev/null || fail "$what: the rules changed"
	[ "$(version)" = "$vb" ] || fail "$what: the rules version moved"
	echo "  $what: $(cat "$RIG_DIR/err")"
}
bad_batch "unknown field (vxctl's parse)" 537 \
	"filter add dev vnet1 ingress pref 9999 protocol ip flower dst_ipp 203.0.113.1 action drop" 'word 11 "dst_ipp"'
bad_batch "missing mirred port (the daemon)" 800 \
	"filter add dev vnet1 ingress pref 9999 protocol ip flower action mirred egress redirect dev nosuch" 'nosuch'
bad_batch "duplicate handle (the daemon)" 1000 \
	"filter add dev vnet1 ingress pref 5 handle 1 protocol ip flower ip_proto udp dst_port 9 action drop" 'duplicate handle'
bad_batch "del of no rule (the daemon)" 2 "filter del dev vnet1 ingress pref 7777 handle 1" 'no such filter'
bad_batch "not a filter line" 3 "port del $VX" 'word 1 "port": -batch takes filter add and filter del lines only'
bad_batch "filter show in a batch" 4 "filter show dev vnet1 ingress" 'word 2 "show"'
rc=0; vx 1 -batch "$RIG_DIR/no-such-file" 2>"$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] && grep -q "No such file" "$RIG_DIR/err" || fail "-batch of a missing file: exit $rc $(cat "$RIG_DIR/err")"
rc=0; vx 1 -batch "$ADD" filter show 2>"$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] || fail "-batch with a command too: exit $rc"
vx 1 filter del dev vnet1 ingress
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after the refused batches"
pass "a batch with a bad line N is refused as FILE:N (syntax and non-filter lines by vxctl, before sending; missing port, duplicate handle, del of nothing by the daemon): rules and version unchanged"

# --- churn under iperf3; a deleted rule never matches again ---------------------------------
rig_mirror_port mir1 || fail "port add mir1"
r_before=$(rig_iperf 4 1) || fail "iperf3 before the churn"
# marked: UDP to vm2 port 7777, a payload tag per phase; vm2 counts what it gets
MARK=7777
# The receiver has no idle timeout: the churn between two phases takes as
# long as the machine makes it (over 60 s one by one with the other core
# busy, when a 60-s idle limit ended it and "0 of 500" followed).  It ends
# at the "end" datagram, or when the test stops it (SIGTERM) after the end
# was sent, and writes its counts either way.
nvm2 /usr/bin/python3 - "$(vm_addr4 2)" $MARK "$RIG_DIR/got" <<'PY' &
import socket, sys, collections, signal, os
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
open(sys.argv[3] + ".pid", "w").write("%d\n" % os.getpid())
got = collections.Counter()
def stop(*_):
	raise KeyboardInterrupt
signal.signal(signal.SIGTERM, stop)
try:
	while True:
		tag = s.recv(100).decode().split(":")[0]
		got[tag] += 1
		if tag == "end":
			break
except KeyboardInterrupt:
	pass
open(sys.argv[3], "w").write("".join("%s %d\n" % kv for kv in got.items()))
PY
rxpid=$!
# Ready waits end when the thing is ready; 30 s only bounds a broken one.
wait_for() { # SECONDS COMMAND...
	local end=$(( $(date +%s) + $1 )); shift
	until "$@"; do [ "$(date +%s)" -lt "$end" ] || return 1; sleep 0.05; done
}
marked_bound() { [ -s "$RIG_DIR/got.pid" ] && nvm2 ss -uln 2>/dev/null | grep -q ":$MARK "; }
wait_for 30 marked_bound || fail "the marked receiver did not bind in 30 s"
send_marked() { # TAG COUNT [RATE_PPS]
	nvm1 /usr/bin/python3 - "$(vm_addr4 2)" $MARK "$1" "$2" "${3:-1000}" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
dst, port, tag, n, rate = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
for i in range(n):
	s.sendto(("%s:%d" % (tag, i)).encode(), (dst, port))
	time.sleep(1 / rate)
PY
}
got() { awk -v t="$1" '$1 == t { print $2 }' "$RIG_DIR/got"; }
# Stopped below once the last phase is sent; the 900-s timeout only ends it
# if the test dies first (not a bound on the churn: 120 s once was).
nmir timeout 900 tcpdump -U -n -i mir1 -w "$RIG_DIR/mir1.pcap" "udp port $MARK" 2>"$RIG_DIR/tcpdump.err" &
tpid=$!
tcpdump_ready() { grep -q "listening on" "$RIG_DIR/tcpdump.err"; }
wait_for 30 tcpdump_ready || fail "tcpdump on mir1 did not start in 30 s"
nvm1 ip neigh replace "$(vm_addr4 2)" lladdr "$(nvm2 cat /sys/class/net/vnet2/address)" dev vnet1
send_marked warm 20 # before the rule: ARP settled, the path works

# The stream runs from here to the end of the churn below (the batches,
# 300 single adds and dels at ~25 ms each, the marked flow, 40 replaces:
# ~10 s here, ~25 s on a loaded machine).
rig_iperf_start 1
sleep 2
# A rule that stays (it matches nothing sent here), so that after the del
# the marked flow is still classified: a miss, the version having moved.
vx 1 filter add dev vnet1 ingress pref 60 protocol ip flower ip_proto udp dst_port 9 action drop || fail "the keeper rule"
vx 1 filter add dev vnet1 ingress pref 50 protocol ip flower ip_proto udp dst_port $MARK \
	action mirred egress mirror dev mir1 action drop || fail "the marked rule"
tc0=$(date +%s.%N)
vx 1 -batch "$ADD" || fail "-batch add under iperf3"
vx 1 -batch "$DEL" || fail "-batch del under iperf3"
tc1=$(date +%s.%N)
SINGLE=300 # the batch's first rules, one vxctl each
grep '^ *filter' "$ADD" | head -n $SINGLE >"$RIG_DIR/add.single"
grep '^ *filter' "$DEL" | head -n $SINGLE >"$RIG_DIR/del.single"
while read -r line; do vx 1 $line >/dev/null || fail "add: $line"; done <"$RIG_DIR/add.single"
[ "$(n_rules)" = $((SINGLE + 2)) ] || fail "$(n_rules) rules after $SINGLE single adds, not $((SINGLE + 2))"
while read -r line; do vx 1 $line >/dev/null || fail "del: $line"; done <"$RIG_DIR/del.single"
tc2=$(date +%s.%N)
# the marked flow while the rule is there: dropped and mirrored, from the flow cache
send_marked during 200 2000
fast0=$(vx 1 -j filter show -s dev vnet1 ingress | /usr/bin/python3 -c 'import json,sys
r = [r for r in json.load(sys.stdin) if "options" in r][0]
print(r["options"]["actions"][0]["stats"].get("hw_packets", 0))')
# tc's own spelling: the global -s (tc -s filter show) prints the same counters
vx 1 -s filter show dev vnet1 ingress >"$RIG_DIR/show_s.txt" || fail "vxctl -s filter show"
grep -Eq '^	Sent hardware [0-9]+ bytes [1-9][0-9]* pkt$' "$RIG_DIR/show_s.txt" ||
	fail "vxctl -s filter show printed no fast-path (Sent hardware) count: $(cat "$RIG_DIR/show_s.txt")"
send_marked during2 2000 20000 &
spid=$!
sleep 0.05
miss0=$(vx_rule_cache 1 misses)
vx 1 filter del dev vnet1 ingress pref 50 || fail "del of the marked rule"
# del returned: from here no datagram may meet the rule
drop0=$(vx_rule_drops 1 vnet1)
wait $spid
send_marked after 500 2000
drop1=$(vx_rule_drops 1 vnet1)
miss1=$(vx_rule_cache 1 misses)
# replace is one table change (tc's replace, in place): a drop rule replaced
# 40 times under a marked stream lets no datagram through, where a del then
# an add would open a gap between two tables
vx 1 filter add dev vnet1 ingress pref 50 handle 1 protocol ip flower ip_proto udp dst_port $MARK \
	action drop || fail "the rule to replace"
rdrop0=$(vx_rule_drops 1 vnet1)
send_marked replace 6000 3000 &
spid=$!
sleep 0.1
for i in $(seq 40); do
	vx 1 filter replace dev vnet1 ingress pref 50 handle 1 protocol ipv4 flower ip_proto udp \
		dst_port $MARK action drop || fail "replace $i"
done
wait $spid
rdrop1=$(vx_rule_drops 1 vnet1)
vx 1 filter get dev vnet1 ingress protocol ip pref 50 handle 1 flower >"$RIG_DIR/get"
grep -qx "  dst_port $MARK" "$RIG_DIR/get" && grep -q "action order 1: gact action drop" "$RIG_DIR/get" ||
	fail "filter get of the replaced rule"
vx 1 filter del dev vnet1 ingress protocol ip pref 50 handle 1 flower || fail "del by tc's selectors"
send_marked end 3 10
# Everything was sent: the receiver ends at the first "end"; if all three
# were lost, 10 s after the last one it is stopped and counts what it got.
rx_done() { ! kill -0 "$rxpid" 2>/dev/null; }
wait_for 10 rx_done || kill -TERM "$(cat "$RIG_DIR/got.pid")" 2>/dev/null || true
wait $rxpid || true
rig_iperf_stop "iperf3 during the churn" || case $? in
	2) fail "the stream had a gap during the churn" ;;
	*) fail "iperf3 across the churn" ;;
	esac
sleep 0.5; kill "$tpid" 2>/dev/null; wait "$tpid" 2>/dev/null || true
kill -0 "$VXD_PID_1" || fail "the daemon died"
echo "  vm2 got: $(tr '\n' ' ' <"$RIG_DIR/got")"
mirrored() { tcpdump -n -A -r "$RIG_DIR/mir1.pcap" 2>/dev/null | grep -c "$1:" || true; }
[ "$(got warm)" = 20 ] || fail "the marked flow did not work before the rule: $(got warm) of 20"
[ -z "$(got during)" ] || fail "$(got during) marked datagrams went past the drop rule"
[ "$(mirrored during)" -ge 150 ] || fail "mir1 saw $(mirrored during) of 200 while the rule was there"
[ "$fast0" -gt 150 ] || fail "the marked rule's fast path counted $fast0 of 200: the flow was not cached"
[ "$(got after)" = 500 ] || fail "after filter del returned, vm2 got $(got after) of 500 marked datagrams"
[ "$(mirrored after)" = 0 ] || fail "after filter del returned, $(mirrored after) marked datagrams were mirrored"
[ "$drop1" = "$drop0" ] || fail "rule_drop moved by $((drop1 - drop0)) after filter del returned"
[ -z "$(got replace)" ] || fail "$(got replace) marked datagrams went past the drop rule during 40 replaces"
[ $((rdrop1 - rdrop0)) -ge 1000 ] || fail "only $((rdrop1 - rdrop0)) datagrams met the rule during the replaces: the test saw no overlap"
[ "$miss1" -gt "$miss0" ] || fail "no flow-cache miss after the del (misses $miss0 -> $miss1): the cached verdict was used"
# What the churn could leave behind is a datapath off its fast path (every
# frame up to vxswitchd, or a flow cache that never hits): that costs a
# large factor, not a fifth.  A clean-clone CI run on 2026-12-06 saw 0.79x
# here on the kernel datapath with nothing wrong (its stream during the
# churn swung 7.1-13.2 Gbit/s, and two runs right after gave 1.10x and
# 0.93x), so the bound is half, which a slow path falls far below.
best=0
for try in 1 2 3; do
	r=$(rig_iperf 4 1) || fail "iperf3 after the churn"
	[ "$(echo "$r > $best" | bc)" = 1 ] && best=$r
	[ "$(echo "$best >= 0.8 * $r_before" | bc)" = 1 ] && break
done
[ "$(echo "$best >= 0.5 * $r_before" | bc)" = 1 ] || fail "throughput after the churn $best Gbit/s (best of 3), before $r_before"
pass "1000 rules added+deleted by -batch ($(echo "$tc1 - $tc0" | bc) s) and $SINGLE one by one ($(echo "$tc2 - $tc1" | bc) s) under iperf3: no gap, after $best Gbit/s (before $r_before)"
pass "filter replace is atomic: 40 replaces of a drop rule under a marked stream, $((rdrop1 - rdrop0)) dropped by it, 0 delivered; filter get and del by tc's selectors (protocol, pref, handle, flower)"
pass "a deleted rule never matches: while there, $(mirrored during)/200 marked datagrams mirrored, 0 delivered, fast path $fast0; after del returned 500/500 delivered, 0 mirrored, rule_drop +0, flow-cache misses +$((miss1 - miss0)) (the version change)"
