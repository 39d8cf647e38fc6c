#!/bin/bash
# On each datapath in turn (VXT_DP=user|kernel runs one):
# flower.json's concurrency cases (tc-testing, filters/flower.json: "Add,
# replace and delete 1M flower filters with 10 parallel tc instances"), at
# FSC_RULES rules (100,000 here, 1,000,000 in `make bench-flower-scale`):
#
#   add      FSC_PROCS (10) `vxctl -b FILE` at once, each FILE FSC_RULES /
#            FSC_PROCS lines of tdc_batch.py's form (protocol ip pref 1, a
#            handle and a src_mac/dst_mac pair of its own, skip_hw, drop);
#   replace  the same, `filter replace` with action pass;
#   del      the same, `filter del ... protocol ip pref 1 handle H flower`.
#
# After each phase: every process exited 0, `filter show` (streamed, as
# vxctl reads it) lists each handle exactly once (none lost, none twice),
# with the phase's action, and the published rules version grew by exactly
# FSC_PROCS: each file was one atomic change.  While the phases run, a
# `filter show` from another client is answered (the streamed show of a
# large table does not hold the daemon), and vm1 pings vm2 through the
# switch all along: forwarding goes on, at most FSC_LOSS_PCT (5) % of the
# echoes lost (a loaded 2-core machine; they never stop).  After the adds, a
# show of the 100,000 rules (24 MB, over the 16 MB of a reply) to a reader
# that reads nothing for 3 s is streamed, and `stats` from another client
# is answered before it ends; `-j filter show`, streamed too, is one JSON
# array holding each rule once.  Figures printed: each phase's time and rate,
# the daemon's RSS per rule.
#
# Knobs (the benchmark, `make bench-flower-scale`): FSC_RULES, FSC_PROCS,
# FSC_PORTS (the rules spread over vnet1 and taps fsc1.., N / PORTS each),
# FSC_IPERF=SECONDS (iperf3 through the rules with the hit rule last, and
# through the hit rule alone), FSC_ROUNDS (more such pairs, alternating).
#
#   fsc-PID-vm1   fsc-PID-h1                            fsc-PID-h2   fsc-PID-vm2
#   vnet1 ------ vxswitchd (the rules, on vnet1) == u1 == u2 == vxswitchd ------ vnet2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_each_datapath "$0" "$@"
rig_init "fsc-$$"
rig_trap

N=${FSC_RULES:-100000}
P=${FSC_PROCS:-10}
PORTS=${FSC_PORTS:-1}
LOSS_PCT=${FSC_LOSS_PCT:-5}
M=$((N / P))
Q=$((N / PORTS))
[ $((M * P)) = "$N" ] && [ $((Q * PORTS)) = "$N" ] ||
	fail "FSC_RULES ($N) must be a multiple of FSC_PROCS ($P) and FSC_PORTS ($PORTS)"

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping before any rule"
# FSC_PORTS > 1: the rules spread over vnet1 and taps fsc1..fsc(PORTS-1),
# N / PORTS each (the issue's 100,000 on each of 20 ports)
DEVS=vnet1
for q in $(seq 1 $((PORTS - 1))); do
	vx 1 port add "fsc$q" type "$(vm_port_type)" vni "$VNI" || fail "port add fsc$q"
	DEVS="$DEVS fsc$q"
done
version() { vx_rule_cache 1 version; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$VXD_PID_1/status"; }

# tdc_batch.py's lines: process k has handles k*M+1 .. (k+1)*M
python3 - "$RIG_DIR" "$P" "$M" "$Q" $DEVS <<'PY'
import sys
d, p, m, q, devs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
for k in range(p):
    for verb in ("add", "replace", "del"):
        with open(f"{d}/{verb}.{k}", "w") as f:
            for n in range(k * m, (k + 1) * m):
                dev, i = devs[n // q], n % q
                h = i + 1
                sel = f"filter {verb} dev {dev} ingress protocol ip pref 1 handle {h} flower"
                if verb == "del":
                    f.write(sel + "\n")
                    continue
                mac = "02:00:%02x:%02x:%02x:01" % ((i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff)
                act = "drop" if verb == "add" else "pass"
                f.write(f"{sel} skip_hw src_mac {mac} dst_mac 02:00:00:00:00:02 action {act}\n")
PY

# forwarding all along: 10 echoes a second until the end
nvm1 ping -i 0.1 -W 1 "$(vm_addr4 2)" >"$RIG_DIR/ping" 2>&1 &
PING_PID=$!
RIG_PIDS="$RIG_PIDS $PING_PID"
# ping itself (a background job's shell ignores SIGINT; ping takes it and
# prints its summary)
for i in $(seq 100); do
	PING_REAL=$(for p in $(ip netns pids "$VM1"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = ping ] && echo "$p"; done)
	[ -n "$PING_REAL" ] && break
	sleep 0.05
done
[ -n "$PING_REAL" ] || fail "ping did not start"

rss0=$(rss_kb)
# phase VERB WANT_RULES WANT_ACTION: P parallel -b, then the checks
phase() {
	local verb=$1 want=$2 act=$3 v0 v1 t0 t1 k pids="" rc bad=0
	v0=$(version)
	t0=$(date +%s.%N)
	for k in $(seq 0 $((P - 1))); do
		vx 1 -b "$RIG_DIR/$verb.$k" >"$RIG_DIR/$verb.$k.out" 2>&1 &
		pids="$pids $!"
	done
	# another client meanwhile: a show of the (growing) table is answered
	sleep 0.5
	vx 1 filter show dev vnet1 ingress >"$RIG_DIR/show.during" || fail "$verb: filter show during the batches"
	for k in $pids; do
		rc=0; wait "$k" || rc=$?
		[ "$rc" = 0 ] || bad=1
	done
	t1=$(date +%s.%N)
	[ "$bad" = 0 ] || { cat "$RIG_DIR/$verb".*.out >&2; fail "$verb: a vxctl -b failed"; }
	v1=$(version)
	[ $((v1 - v0)) = "$P" ] || fail "$verb: rules version +$((v1 - v0)), not $P (one change per file)"
	local dev
	for dev in $DEVS; do
	vx 1 filter show dev "$dev" ingress >"$RIG_DIR/show" || fail "$verb: filter show dev $dev"
	# each handle 1..want exactly once, each with the phase's action
	python3 - "$RIG_DIR/show" "$((want / PORTS))" "$act" <<'PY' || fail "$verb: filter show dev $dev is not each rule once"
import re, sys, collections
text, want, act = open(sys.argv[1]).read(), int(sys.argv[2]), sys.argv[3]
# one block per rule: its "filter protocol ... handle 0xH" line and what follows
handles, acts, others = collections.Counter(), 0, 0
for block in re.split(r"\n(?=filter protocol )", text):
    m = re.match(r"filter protocol ip pref (\d+) flower chain 0 handle 0x([0-9a-f]+)", block)
    if not m:
        continue
    if m.group(1) != "1":  # the benchmark's hit rule (pref 2)
        others += 1
        continue
    handles[int(m.group(2), 16)] += 1
    acts += ("gact action " + act) in block
twice = [h for h, c in handles.items() if c > 1]
missing = [h for h in range(1, want + 1) if h not in handles]
extra = [h for h in handles if not 1 <= h <= want]
print(f"  show: {sum(handles.values())} rules at pref 1 ({others} other), {len(twice)} twice, "
      f"{len(missing)} missing, {len(extra)} unknown, {acts} with action {act or '-'}")
sys.exit(bool(twice or missing or extra or acts != want))
PY
	done
	local secs
	secs=$(echo "$t1 - $t0" | bc)
	echo "  $verb: $N lines ($PORTS ports) from $P processes in $secs s ($(echo "$N / $secs" | bc) lines/s); show during: $(grep -c ' handle 0x' "$RIG_DIR/show.during" || true) rules"
	[ "$verb" != add ] || echo "  RSS: $(( ($(rss_kb) - rss0) * 1024 / N )) bytes per rule ($(rss_kb) KiB in all, $rss0 before)"
}

# FSC_IPERF=SECONDS (the benchmark): iperf3 vm1 -> vm2 through the N rules
# with the hit rule last (pref 2, below all of pref 1: the frames miss every
# one of them first), then through that one rule alone.
IPERF=${FSC_IPERF:-0}
HIT="filter add dev vnet1 ingress protocol ip pref 2 handle 1 flower ip_proto tcp action pass"
hit_packets() {
	vx 1 -s filter get dev vnet1 ingress protocol ip pref 2 handle 1 flower |
		awk '/Sent .* pkt/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^pkt/) print $i }' | head -1
}

phase add "$N" drop
pass "add: $N rules from $P parallel vxctl -b, each shown once, $P changes"

# A show of vnet1's rules to a reader that reads nothing for 3 s: the
# daemon streams it (over the 16 MB a reply holds at 100,000 rules) and
# holds back, and another client is answered meanwhile.
( vx 1 filter show dev vnet1 ingress | { sleep 3; cat; } >"$RIG_DIR/show.slow" ) &
SLOW=$!
sleep 0.5
timeout 20 "$VXCTL" --socket "$RIG_DIR/h1.sock" stats >/dev/null || fail "stats while a slow reader's show was pending"
kill -0 "$SLOW" 2>/dev/null || fail "the slow reader's show was over before stats was asked: nothing tested"
wait "$SLOW" || fail "the slow reader's show failed"
slow_n=$(grep -c ' handle 0x' "$RIG_DIR/show.slow" || true)
[ "$slow_n" = "$Q" ] || fail "the slow reader's show: $slow_n rules, want $Q"
pass "a show of $Q rules to a slow reader ($(stat -c %s "$RIG_DIR/show.slow") bytes) did not hold the daemon: stats answered meanwhile"
# streamed -j: one JSON document, tc's schema, each rule once
vx 1 -j filter show dev vnet1 ingress | python3 -c '
import json, sys
d = json.load(sys.stdin)
rules = [e for e in d if "options" in e]
handles = {e["options"]["handle"] for e in rules}
sys.exit(not (len(rules) == len(handles) == int(sys.argv[1])))' "$Q" || fail "-j filter show of $Q rules is not one JSON array of each rule once"
pass "-j filter show of $Q rules, streamed: one JSON array, each rule once"
if [ "$IPERF" != 0 ]; then
	vx 1 $HIT || fail "the hit rule"
	r_many=$(rig_iperf "$IPERF" 1) || fail "iperf3 through $N + 1 rules"
	echo "  iperf3 through $N rules + the hit rule last: $r_many Gbit/s (hit rule: $(hit_packets) packets)"
fi
phase replace "$N" pass
pass "replace: $N rules replaced from $P parallel vxctl -b, each shown once with the new action"
phase del 0 ""
pass "del: $N rules deleted from $P parallel vxctl -b, none left"
# Then FSC_ROUNDS more pairs, alternating (the machine is shared: a pair
# taken a minute apart says more than one figure): the N rules back (10
# parallel -b), iperf3; deleted again, iperf3 through the hit rule alone.
parallel_b() { # VERB: the P files at once, all must succeed
	local k pids="" rc bad=0
	for k in $(seq 0 $((P - 1))); do vx 1 -b "$RIG_DIR/$1.$k" >/dev/null & pids="$pids $!"; done
	for k in $pids; do rc=0; wait "$k" || rc=$?; [ "$rc" = 0 ] || bad=1; done
	[ "$bad" = 0 ] || fail "$1: a vxctl -b failed"
}
if [ "$IPERF" != 0 ]; then
	r_one=$(rig_iperf "$IPERF" 1) || fail "iperf3 through the one rule"
	echo "  iperf3 through the hit rule alone: $r_one Gbit/s; $N + 1 rules: $(echo "scale=3; $r_many / $r_one" | bc)x"
	for round in $(seq "${FSC_ROUNDS:-0}"); do
		parallel_b add
		r_many=$(rig_iperf "$IPERF" 1) || fail "iperf3 through $N + 1 rules"
		parallel_b del
		r_one=$(rig_iperf "$IPERF" 1) || fail "iperf3 through the one rule"
		echo "  round $round: $N + 1 rules $r_many Gbit/s, the hit rule alone $r_one Gbit/s: $(echo "scale=3; $r_many / $r_one" | bc)x"
	done
fi

kill -INT "$PING_REAL" 2>/dev/null || true
wait "$PING_PID" 2>/dev/null || true
sent=$(grep -o '[0-9]* packets transmitted' "$RIG_DIR/ping" | cut -d' ' -f1)
got=$(grep -o '[0-9]* received' "$RIG_DIR/ping" | cut -d' ' -f1)
[ -n "$sent" ] && [ "$sent" -gt 0 ] || fail "no ping summary: $(tail -2 "$RIG_DIR/ping")"
[ $(( (sent - got) * 100 )) -le $(( LOSS_PCT * sent )) ] || fail "forwarding: $got of $sent echoes answered during the phases"
pass "forwarding went on: $got of $sent echoes answered while the rules were added, replaced and deleted"
