#!/bin/bash
# Worker placement (control/placement.h) on a fake sysfs tree
# ($VXSWITCH_SYSFS) that makes this machine two NUMA nodes, CPU 0 on node
# 0 and CPU 1 on node 1, with the underlay u1 on node 1:
#   - by default h1 runs one worker, pinned to CPU 1 (the thread's real
#     affinity says so), found from the config's vxlan port (no
#     --underlay); stats show the placement; diagnose has nothing to say;
#   - with --cpus 0 the worker sits on node 0: diagnose names
#     worker_off_node and exits 1;
#   - with u1's numa_node -1 (a veth, one node) the fallback: one worker
#     per allowed CPU, not pinned;
#   - --workers 3 runs three.
# Traffic crosses in every case.
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt73-$$"
FAKE=$(mktemp -d /tmp/vxt73-sys.XXXX)
trap 'rig_cleanup; rm -rf "$FAKE"' EXIT

[ "$(nproc)" -ge 2 ] || { echo "skip: needs 2 CPUs"; exit 0; }
mkdir -p "$FAKE/devices/system/node/node0" "$FAKE/devices/system/node/node1" "$FAKE/class/net/u1/device"
echo 0 > "$FAKE/devices/system/node/node0/cpulist"
echo 1 > "$FAKE/devices/system/node/node1/cpulist"

# worker_affinity SIDE INDEX: Cpus_allowed_list of thread vxd-workerINDEX.
worker_affinity() {
	local pid t
	eval "pid=\$VXD_PID_$1"
	for t in /proc/"$pid"/task/*; do
		if [ "$(cat "$t/comm")" = "vxd-worker$2" ]; then
			awk '/^Cpus_allowed_list/ { print $2 }' "$t/status"
			return
		fi
	done
	echo none
}

start() { # NUMA_NODE_OF_U1 EXTRA_ARGS
	echo "$1" > "$FAKE/class/net/u1/device/numa_node"
	rig_create 4
	RIG_VXD_ENV="VXSWITCH_SYSFS=$FAKE" RIG_VXD_ARGS="$2" rig_vxswitchd 1
	rig_vxswitchd 2
	nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping (u1 on node $1, args '$2')"
	rig_iperf 2 1 -P 2 >/dev/null || fail "iperf3 (u1 on node $1, args '$2')"
}

restart() {
	rig_cleanup
	rig_init "vxt73-$$"
}

start 1 ""
[ "$(vx_stat 1 "d['workers']['n']")" = 1 ] || fail "node 1 has one CPU: $(vx_stat 1 "d['workers']")"
[ "$(vx_stat 1 "d['workers']['list'][0]['cpu_pinned']")" = 1 ] || fail "worker not pinned to cpu 1: $(vx_stat 1 "d['workers']")"
[ "$(vx_stat 1 "d['workers']['list'][0]['node']")" = 1 ] || fail "worker's node: $(vx_stat 1 "d['workers']")"
[ "$(vx_stat 1 "d['workers']['underlay']")" = u1 ] || fail "underlay not found from the config: $(vx_stat 1 "d['workers']")"
vx 1 stats | grep -q "workers: 1 (node 1 of underlay u1: cpus 1)" || fail "stats text: $(vx 1 stats | grep workers)"
[ "$(worker_affinity 1 0)" = 1 ] || fail "worker 0's thread affinity is $(worker_affinity 1 0), not 1"
vx 1 diagnose >/dev/null || fail "diagnose has findings on a well-placed worker: $(vx 1 diagnose)"
pass "underlay u1 on node 1: one worker pinned to cpu 1 (thread affinity 1), underlay found from the config, no finding"

restart
start 1 "--cpus 0"
[ "$(worker_affinity 1 0)" = 0 ] || fail "--cpus 0: affinity $(worker_affinity 1 0)"
line=$(diag_names 1 worker_off_node 'f["node"] == 0 and f["underlay_node"] == 1' "worker 0 runs on cpu 0 of NUMA node 0, but the underlay u1 is on node 1")
pass "--cpus 0 (node 0): diagnose names it: $line"

restart
start -1 ""
[ "$(vx_stat 1 "d['workers']['n']")" = "$(nproc)" ] || fail "fallback: $(vx_stat 1 "d['workers']")"
[ "$(vx_stat 1 "d['workers']['list'][0]['cpu_pinned']")" = -1 ] || fail "fallback pinned: $(vx_stat 1 "d['workers']")"
vx 1 stats | grep -q "no NUMA node for underlay u1: not pinned" || fail "fallback text: $(vx 1 stats | grep workers)"
[ "$(worker_affinity 1 1)" = "0-$(( $(nproc) - 1 ))" ] || fail "fallback affinity $(worker_affinity 1 1)"
pass "no NUMA node for u1: $(nproc) workers, not pinned"

restart
start -1 "--workers 3"
[ "$(vx_stat 1 "d['workers']['n']")" = 3 ] || fail "--workers 3: $(vx_stat 1 "d['workers']")"
pass "--workers 3 on $(nproc) CPUs: 3 workers, traffic crosses"

# A bad --cpus is refused at start with the word.
out=$("$VXSWITCHD" --cpus 77 -s "$RIG_DIR/bad.sock" 2>&1) && fail "--cpus 77 accepted"
grep -q -- "--cpus 77: CPU 77 not allowed" <<<"$out" || fail "--cpus 77: $out"
pass "--cpus 77 refused: $(head -1 <<<"$out")"

# The config's `workers` line: applied at start, printed by show config,
# checked at run time and on reload (a different count is refused with
# FILE:LINE, and the switch goes on as it was).
restart
echo -1 > "$FAKE/class/net/u1/device/numa_node"
rig_create 4
RIG_EXTRA_CONF="workers 3 cpus 0-1" RIG_VXD_ENV="VXSWITCH_SYSFS=$FAKE" rig_vxswitchd 1
rig_vxswitchd 2
[ "$(vx_stat 1 "d['workers']['n']")" = 3 ] || fail "config workers 3: $(vx_stat 1 "d['workers']")"
[ "$(vx_stat 1 "[w['cpu_pinned'] for w in d['workers']['list']]")" = "[0, 1, 0]" ] || fail "cpus 0-1: $(vx_stat 1 "d['workers']")"
vx 1 show config | grep -qx "workers 3 cpus 0-1" || fail "show config: $(vx 1 show config)"
vx 1 workers 3 cpus 0-1 >/dev/null || fail "vxctl workers 3 cpus 0-1 refused though it is what runs"
out=$(vx 1 workers 2 2>&1) && fail "vxctl workers 2 accepted with 3 running"
grep -q "restart vxswitchd" <<<"$out" || fail "workers 2: $out"
sed -i 's/^workers 3 cpus 0-1$/workers 2/' "$RIG_DIR/h1.conf"
out=$(vx 1 reload 2>&1) && fail "reload with workers 2 accepted"
grep -q "h1.conf:[0-9]*: workers 2" <<<"$out" || fail "reload refusal: $out"
nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after the refused reload"
pass "config line 'workers 3 cpus 0-1': 3 workers on cpus 0,1,0; show config has it; 'workers 2' refused at run time and on reload: $(head -1 <<<"$out")"
