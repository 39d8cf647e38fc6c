#!/bin/bash
# The kernel datapath under a flood of new source MACs from one VM while
# another VM's stream goes on (issue 20's test list; test_floods.sh is the
# userspace datapath's).
#
#   kmf-PID-vm1 vnet1 192.0.2.1  <= veth =>  h1 [vxdp0] -- u1 ==== u2 -- [vxdp0] h2 <= veth => vnet2 192.0.2.2 kmf-PID-vm2
#   kmf-PID-vmf vmf0  (flooder)  <= veth hvf (afpacket port, max-macs) => h1
#
# vm1 -> vm2 (the remote VM) runs iperf3 in 0.5 s intervals; after 3 s, vmf
# (same host and VNI as vm1) sends UDP broadcasts, each from a new random
# source MAC, as fast as one AF_PACKET socket goes (tests/netns/blast.py).
# Checks (behaviour, not speed): no iperf3 interval is empty; vm1 <-> vm2
# ping during the flood; the flooder's upcalls hit its rate limit and the
# refused ones are counted under their reason (`upcall_drops_by_reason`);
# the VNI's MACs stay within `set fdb-max` and the flooder's within its
# `max-macs`, refusals counted; vm1's and vm2's MACs stay learned.  Then
# `set fdb-max 100` (under max-macs) and a shorter flood: the VNI's cap
# binds, vm1 stays learned and forwards.  The
# stream's rate before and during the flood is printed (figures, 2 shared
# vCPUs: noisy).
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "kmf-$$"
VMF=$P-vmf
MACS=${FLOOD_MACS:-200000}
FDB_MAX=1000
MAX_MACS=300
rig_trap_bpf

rig_create 4
rig_ns_add "$VMF"
nh1 ip link add hvf type veth peer name vmf0 netns "$VMF"
nh1 ip link set hvf up
n "$VMF" ip link set vmf0 up
RIG_EXTRA_CONF="port add hvf type afpacket dev hvf vni 99 max-macs $MAX_MACS
set fdb-max $FDB_MAX"
rig_vxswitchd_bpf 1 || fail "h1"
RIG_EXTRA_CONF=""
rig_vxswitchd_bpf 2 || fail "h2"
grep -q "datapath kernel unavailable" "$RIG_DIR"/h*.log && fail "no kernel datapath: $(cat "$RIG_DIR"/h*.log)"
vx 1 port show | grep -E "^hvf .*datapath kernel" >/dev/null || fail "hvf not on the kernel datapath: $(vx 1 port show)"
for i in $(seq 10); do nvm1 ping -c 1 -W 1 "$(vm_addr4 2)" >/dev/null 2>&1 && break; done
nvm1 ping -c 2 -i 0.2 -W 1 -q "$(vm_addr4 2)" >/dev/null || fail "ping vm1 -> vm2 before the flood"
mac1=$(nvm1 cat /sys/class/net/vnet1/address)
mac2=$(nvm2 cat /sys/class/net/vnet2/address)

# The stream: 10 s, 0.5 s intervals; the flood starts 3 s in.
nvm2 iperf3 -s -1 -D -B "$(vm_addr4 2)" -p 5201 --logfile "$RIG_DIR/iperf.server.log" >/dev/null 2>&1
for i in $(seq 600); do nvm2 ss -ltn | grep -q ":5201 " && break; sleep 0.05; done   # bounds a broken server only
nvm1 iperf3 -c "$(vm_addr4 2)" -p 5201 -t 10 -i 0.5 --connect-timeout 5000 -J > "$RIG_DIR/iperf.json" 2>&1 &
iperf=$!
t0=$(date +%s.%N)
sleep 3
f0=$(/usr/bin/python3 -c "import time; print(time.time() - $t0)")
n "$VMF" /usr/bin/python3 tests/netns/blast.py vmf0 "$MACS" macs > "$RIG_DIR/sent" &
blast=$!
sleep 0.5
nvm1 ping -c 10 -i 0.2 -W 2 "$(vm_addr4 2)" > "$RIG_DIR/ping12.txt" 2>&1 &
p12=$!
nvm2 ping -c 10 -i 0.2 -W 2 "$(vm_addr4 1)" > "$RIG_DIR/ping21.txt" 2>&1 &
wait "$p12" $! || true
blast_running=no
kill -0 "$blast" 2>/dev/null && blast_running=yes
wait "$blast" || fail "blast.py: $(cat "$RIG_DIR/sent")"
f1=$(/usr/bin/python3 -c "import time; print(time.time() - $t0)")
wait "$iperf" || fail "iperf3 during the flood: $(tail -5 "$RIG_DIR/iperf.json")"
sent=$(cat "$RIG_DIR/sent")
[ "$blast_running" = yes ] || echo "  note: the flood ended before both pings did (they ran after it)"

read -r n_iv empty before during < <(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); f0, f1 = float(sys.argv[2]), float(sys.argv[3])
iv = [i["sum"] for i in d["intervals"]]
empty = sum(1 for i in iv if i["bytes"] == 0)
def rate(sel):
	sel = list(sel)
	return sum(i["bytes"] for i in sel) * 8 / sum(i["seconds"] for i in sel) / 1e9 if sel else 0
# before: from 1 s (past the slow start) until the flood; during: the
# intervals wholly inside it
print(len(iv), empty, "%.2f" % rate(i for i in iv if i["start"] >= 1.0 and i["end"] <= f0),
      "%.2f" % rate(i for i in iv if i["start"] >= f0 and i["end"] <= f1))' "$RIG_DIR/iperf.json" "$f0" "$f1")
stats=$(vx 1 -j stats)
read -r upcalls udrops rate_drops ring_drops port_macs vni_macs vni_cap refused < <(echo "$stats" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
p = [p for p in d["ports"] if p["name"] == "hvf"][0]
v = [v for v in d["vnis"] if v["vni"] == 99][0]
r = p["kernel"]["upcall_drops_by_reason"]
print(p["kernel"]["upcalls"], p["kernel"]["upcall_drops"], r["rate_limit"], r["ring_full"], p["fdb"]["macs"],
      v["macs"], v["max_macs"], d["learn_refused"])')
echo "  vmf sent $sent frames from distinct MACs in $(printf '%.1f' "$(echo "$f1 - $f0" | bc)") s; hvf: $upcalls upcalls, $udrops dropped (rate limit $rate_drops, ring full $ring_drops); MACs: hvf $port_macs (max-macs $MAX_MACS), VNI 99 $vni_macs (fdb-max $vni_cap); learning refused $refused"
echo "  vm1 -> vm2 stream: $before Gbit/s before the flood, $during Gbit/s during it ($n_iv intervals of 0.5 s, $empty empty); lscpu: $(lscpu | sed -n 's/^Model name: *//p'), 2 shared vCPUs (noisy)"

[ "$empty" = 0 ] || fail "$empty of $n_iv iperf3 intervals moved nothing during the flood"
[ "$n_iv" -ge 18 ] || fail "only $n_iv iperf3 intervals"
for f in ping12 ping21; do
	got=$(awk '/packets transmitted/ {print $4}' "$RIG_DIR/$f.txt")
	[ "${got:-0}" -ge 8 ] || fail "$f during the flood: $(tail -2 "$RIG_DIR/$f.txt")"
done
[ "$rate_drops" -gt 0 ] || fail "the flooder's upcalls never hit the rate limit ($upcalls sent, $udrops dropped)"
[ $((rate_drops + ring_drops)) = "$udrops" ] || fail "upcall drops by reason ($rate_drops + $ring_drops) do not sum to $udrops"
[ "$upcalls" -lt "$sent" ] || fail "every one of $sent new MACs went up ($upcalls upcalls): no rate limit"
[ "$port_macs" -le "$MAX_MACS" ] || fail "hvf holds $port_macs MACs over its max-macs $MAX_MACS"
[ "$port_macs" -ge $((MAX_MACS / 2)) ] || fail "hvf holds only $port_macs MACs: the flood did not reach its cap"
[ "$vni_cap" = "$FDB_MAX" ] && [ "$vni_macs" -le "$FDB_MAX" ] || fail "VNI 99 holds $vni_macs MACs, cap $vni_cap (fdb-max $FDB_MAX)"
[ "$refused" -gt 0 ] || fail "no learning refusal counted"
fdb=$(vx 1 fdb show vni 99)
echo "$fdb" | grep -qi "^$mac1 " || fail "vm1's MAC $mac1 is no longer learned"
echo "$fdb" | grep -qi "^$mac2 " || fail "vm2's MAC $mac2 is no longer learned"
nvm1 ping -c 3 -i 0.2 -W 1 -q "$(vm_addr4 2)" >/dev/null || fail "vm1 -> vm2 after the flood"

pass "MAC flood of $sent frames from vmf: the stream never stopped ($before -> $during Gbit/s), pings both ways during it, upcalls rate-limited ($rate_drops dropped: rate_limit), hvf at $port_macs <= $MAX_MACS, VNI at $vni_macs <= $FDB_MAX, vm1 and vm2 stay learned"

# The VNI's cap binding rather than the port's: fdb-max under max-macs,
# learned MACs flushed, vm1 and vm2 learned again, a shorter flood.
vx 1 set fdb-max 100 >/dev/null
vx 1 fdb flush vni 99 >/dev/null
nvm1 ping -c 2 -i 0.2 -W 1 -q "$(vm_addr4 2)" >/dev/null || fail "vm1 -> vm2 after the flush"
sent2=$(n "$VMF" /usr/bin/python3 tests/netns/blast.py vmf0 30000 macs)
sleep 0.5
read -r vni_macs2 vni_cap2 port_macs2 < <(vx_stat 1 '"%d %d %d" % ([v["macs"] for v in d["vnis"] if v["vni"] == 99][0], [v["max_macs"] for v in d["vnis"] if v["vni"] == 99][0], port("hvf")["fdb"]["macs"])')
echo "  with fdb-max 100: $sent2 more new MACs; VNI 99 holds $vni_macs2 (cap $vni_cap2), hvf $port_macs2"
[ "$vni_cap2" = 100 ] && [ "$vni_macs2" -le 100 ] && [ "$vni_macs2" -ge 50 ] || fail "VNI 99 at $vni_macs2 MACs, cap $vni_cap2 (fdb-max 100)"
fdb=$(vx 1 fdb show vni 99)
echo "$fdb" | grep -qi "^$mac1 " || fail "vm1's MAC $mac1 is not learned under fdb-max 100"
nvm1 ping -c 3 -i 0.2 -W 1 -q "$(vm_addr4 2)" >/dev/null || fail "vm1 -> vm2 with the VNI full"
pass "fdb-max 100 holds the VNI at $vni_macs2 under $sent2 more new MACs; vm1 stays learned and pings vm2"

# The upcall knobs: every port's token bucket follows them at once.  A
# burst of 250 new MACs (under hvf's max-macs) goes up whole under a large
# bucket, and mostly not under a small one; the drops are counted.
[ "$(vx 1 show knobs | grep '^upcall-rate ')" = "upcall-rate 1000" ] &&
	[ "$(vx 1 show knobs | grep '^upcall-burst ')" = "upcall-burst 100" ] || fail "upcall knobs' defaults: $(vx 1 show knobs)"
vx 1 set fdb-max $FDB_MAX >/dev/null
hvf_learnt() { # "MACs learnt behind hvf" "its upcall drops"
	vx_stat 1 '"%d %d" % (port("hvf")["fdb"]["macs"], port("hvf")["kernel"]["upcall_drops"])'
}
burst_of_macs() { # RATE BURST: hvf's MACs flushed, 250 new ones at once; "sent learnt drops seconds"
	vx 1 set upcall-rate "$1" >/dev/null && vx 1 set upcall-burst "$2" >/dev/null || fail "set upcall-rate $1 / upcall-burst $2"
	vx 1 fdb flush vni 99 >/dev/null
	nvm1 ping -c 2 -i 0.2 -W 1 -q "$(vm_addr4 2)" >/dev/null || fail "vm1 -> vm2 under upcall-rate $1"
	sleep 0.5 # the bucket refills (at most to the burst)
	local m0 d0 m1 d1 t0 t1 sent
	read -r m0 d0 < <(hvf_learnt)
	t0=$(date +%s.%N)
	sent=$(n "$VMF" /usr/bin/python3 tests/netns/blast.py vmf0 250 macs)
	t1=$(date +%s.%N)
	sleep 0.5
	read -r m1 d1 < <(hvf_learnt)
	echo "$sent $((m1 - m0)) $((d1 - d0)) $(echo "$t1 - $t0" | bc)"
}
read -r sent big_learnt big_drops _ < <(burst_of_macs 100000 100000)
echo "  upcall-rate 100000, upcall-burst 100000: $sent new MACs at once, $big_learnt learnt behind hvf, $big_drops upcalls dropped"
[ "$big_learnt" = "$sent" ] && [ "$big_drops" = 0 ] || fail "a large bucket learnt $big_learnt of $sent, dropped $big_drops"
read -r sent small_learnt small_drops secs < <(burst_of_macs 20 10)
most=$(echo "10 + 20 * $secs + 2" | bc | cut -d. -f1)
echo "  upcall-rate 20, upcall-burst 10: $sent new MACs in $secs s, $small_learnt learnt, $small_drops upcalls dropped (at most $most could pass)"
[ "$small_learnt" -ge 5 ] && [ "$small_learnt" -le "$most" ] || fail "a bucket of 10 at 20/s learnt $small_learnt of $sent in $secs s"
[ "$small_drops" -ge $((sent - most)) ] || fail "only $small_drops upcall drops counted for $sent MACs past a bucket of 10"
diag_names 1 upcalls_dropped 'f["upcall_rate"] == 20' "upcall-rate 20/s, upcall-burst 10" >/dev/null
vx 1 set upcall-rate 1000 >/dev/null && vx 1 set upcall-burst 100 >/dev/null || fail "upcall knobs back"
nvm1 ping -c 2 -i 0.2 -W 1 -q "$(vm_addr4 2)" >/dev/null || fail "vm1 -> vm2 after the upcall knobs"
pass "upcall-rate/upcall-burst: 100000/100000 learnt $big_learnt of 250 at once, none dropped; 20/10 learnt $small_learnt, $small_drops dropped and counted, diagnose names the limit; vm1 forwards"
