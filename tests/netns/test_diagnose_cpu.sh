#!/bin/bash
# diagnose names a saturated worker (cpu_saturated) from measured CPU: h1's
# daemon in a CPU cgroup with a quota of 5 % of a core (cpu.cfs_quota_us)
# under bulk TCP vm1 -> vm2 for 8 s: the worker runs ~5 % of a core and
# waits for a CPU the rest of the time (its schedstat run delay), so it is
# busy ~100 % of the window: cpu_saturated with busy_permille >= 950 and
# wait_permille >= 100, exit 1.  The same daemon out of the cgroup: no
# cpu_saturated, exit 0.  (A worker really at 100 % of a core is not built
# here: on this shared 2-vCPU machine the path saturates elsewhere first --
# measured 30-42 % of a core for h1's worker under a UDP flood and under 4
# TCP streams with gso off, while its tap already dropped frames.)
#
#   vxt67-PID-vm1       vxt67-PID-h1                          vxt67-PID-h2       vxt67-PID-vm2
#   vnet1 192.0.2.1 --> vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
#                       (cgroup cpu: 5 % quota)
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt67-$$"
CG=/sys/fs/cgroup/cpu/vxt67-$$
cleanup() {
	if [ -d "$CG" ]; then
		while read -r p; do echo "$p" > /sys/fs/cgroup/cpu/cgroup.procs 2>/dev/null || true; done < "$CG/cgroup.procs"
		rmdir "$CG" 2>/dev/null || true
	fi
	rig_cleanup
}
trap cleanup EXIT
if ! [ -w /sys/fs/cgroup/cpu ] || ! [ -e /sys/fs/cgroup/cpu/cgroup.procs ]; then
	if [ -e /sys/fs/cgroup/cgroup.controllers ]; then echo "  (cgroup v2 only: not handled here)"; else echo "  (no cgroup cpu controller)"; fi
	echo "SKIP: no writable cgroup v1 cpu controller"; exit 0
fi

rig_create 4
# One worker: the whole (UDP) load on one thread, judged alone (each worker is).
RIG_VXD_ARGS="--workers 1" rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"
# diagnose's window starts at the `set` before each run and so holds only
# its 8 s of traffic.
# udp_load: 8 s of UDP at 300 Mbit/s vm1 -> vm2 (not self-clocked as TCP
# is: the tap always has frames for the worker); prints the Mbit/s received.
udp_load() {
	n "$VM2" iperf3 -s -1 -D -B "$(vm_addr4 2)" -p 5201 >/dev/null 2>&1
	local i
	for i in $(seq 50); do n "$VM2" ss -ltn | grep -q ":5201 " && break; sleep 0.05; done
	sleep 0.2
	nvm1 iperf3 -c "$(vm_addr4 2)" -p 5201 -u -b 300M -l 1350 -t 8 -J > "$RIG_DIR/udp.json" 2>"$RIG_DIR/udp.err" || { cat "$RIG_DIR/udp.json" >&2; return 1; }
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.0f" % (d["end"]["sum_received"]["bits_per_second"] / 1e6))' "$RIG_DIR/udp.json" || { head -c 600 "$RIG_DIR/udp.json" >&2; return 1; }
}
cpu_line() { vx_stat 1 '"ran %d ms, waited %d ms" % (d["cpu"]["worker_run_ns"] // 1000000, d["cpu"]["worker_wait_ns"] // 1000000)'; }

# ---- held to 20 % of a core: saturated ----------------------------------------------
mkdir "$CG"
echo 100000 > "$CG/cpu.cfs_period_us"
echo 5000 > "$CG/cpu.cfs_quota_us"
echo "$VXD_PID_1" > "$CG/cgroup.procs"
vx 1 set gro on # restarts the diagnose window: it holds the traffic alone
mbit=$(udp_load)
line=$(diag_names 1 cpu_saturated 'f["wait_permille"] >= 750 and f["cpu_permille"] < 500' \
	"worker [0-9]+ waited for a CPU [0-9.]+% of the last [0-9.]+ s and ran only [0-9.]+% of a core")
pass "h1 in a 5 % CPU cgroup, UDP $mbit Mbit/s ($(cpu_line) in all): $line"

# ---- out of the cgroup: not saturated -------------------------------------------------
# The same UDP load: whatever else it shows (tap drops, if the worker falls
# behind), not cpu_saturated.  Then bulk TCP: no finding at all, exit 0.
echo "$VXD_PID_1" > /sys/fs/cgroup/cpu/cgroup.procs
vx 1 set gro on
mbit=$(udp_load)
out=$(vx 1 -j diagnose) || true
! grep -q '"cpu_saturated"' <<<"$out" || fail "out of the cgroup, UDP: cpu_saturated: $(vx 1 diagnose)"
pass "out of the cgroup, UDP $mbit Mbit/s ($(cpu_line) in all): no cpu_saturated"
rig_cleanup; rig_init "vxt67-$$"
rig_create 4
RIG_VXD_ARGS="--workers 1" rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"
vx 1 set gro on
gbit=$(rig_iperf 8 1)
rc=0; text=$(vx 1 diagnose) || rc=$?
[ "$rc" = 0 ] && grep -qx "no problem found" <<<"$text" || fail "out of the cgroup, TCP: diagnose exits $rc: $text"
pass "out of the cgroup, bulk TCP $gbit Gbit/s ($(cpu_line) in all): no problem found, exit 0"
