#!/bin/bash
# A multi-worker run under the sanitizers: both hosts' vxswitchd built with
# ThreadSanitizer (make tsan-daemon), then with ASan+UBSan (make
# asan-daemon), each with 2 and 3 workers (3: more than the cores here):
# iperf3 both ways with 4 streams, ports and flower rules added and deleted
# under traffic, a capture, stats, diagnose and a static FDB change while
# it runs; at the end each daemon stops cleanly and its log holds no
# sanitizer report (data race, leak, undefined behaviour).
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt72-$$"
trap rig_cleanup EXIT

make --no-print-directory -s tsan-daemon asan-daemon >/dev/null

exercise() { # LABEL
	local label=$1
	nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "$label: ping"
	nvm2 iperf3 -s -1 -D -B "$(vm_addr4 2)" -p 5203 >/dev/null 2>&1
	sleep 0.3
	nvm1 iperf3 -c "$(vm_addr4 2)" -p 5203 -t 5 -P 4 -J > "$RIG_DIR/san.json" 2>&1 &
	local ip=$!
	timeout 10 "$VXCTL" --socket "$RIG_DIR/h2.sock" capture vnet2 -c 200 -w /dev/null >/dev/null 2>&1 &
	local cap=$!
	for i in $(seq 5); do
		vx 1 port add extra$i type tap vni 99 >/dev/null || fail "$label: port add"
		vx 2 filter add dev vx99 ingress pref $((20 + i)) protocol ip flower ip_proto udp dst_port $((5000 + i)) action drop >/dev/null ||
			fail "$label: filter add"
		vx 1 fdb add 02:00:00:00:99:0$i vni 99 port extra$i >/dev/null || fail "$label: fdb add"
		vx 1 stats >/dev/null; vx 2 -j stats >/dev/null
		vx 1 diagnose >/dev/null || true
		vx 2 filter del dev vx99 ingress pref $((20 + i)) >/dev/null || fail "$label: filter del"
		vx 1 port del extra$i >/dev/null || fail "$label: port del"
	done
	wait "$ip" || { cat "$RIG_DIR/san.json" >&2; fail "$label: iperf3"; }
	wait "$cap" || true
	rig_iperf 3 2 -P 4 >/dev/null || fail "$label: iperf3 vm2->vm1"
	local side pid
	for side in 1 2; do
		eval "pid=\$VXD_PID_$side"
		kill "$pid"
		for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -0 "$pid" 2>/dev/null && fail "$label: h$side did not stop"
		if grep -qE "ThreadSanitizer|AddressSanitizer|LeakSanitizer|runtime error" "$RIG_DIR/h$side.log"; then
			cat "$RIG_DIR/h$side.log" >&2
			fail "$label: h$side's sanitizer report above"
		fi
	done
}

for build in tsan asan; do
	for W in 2 3; do
		rig_create 4
		if [ "$build" = tsan ]; then
			env_="TSAN_OPTIONS=halt_on_error=0:second_deadlock_stack=1"
		else
			env_="ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1"
		fi
		VXSWITCHD=$PWD/build-$build/vxswitchd RIG_VXD_ENV="$env_" RIG_VXD_ARGS="--workers $W" rig_vxswitchd 1
		VXSWITCHD=$PWD/build-$build/vxswitchd RIG_VXD_ENV="$env_" RIG_VXD_ARGS="--workers $W" rig_vxswitchd 2
		exercise "$build, $W workers"
		pass "$build build, $W workers: traffic, port/rule/FDB churn, capture, stats, diagnose, clean stop, no report"
		rig_cleanup
		rig_init "vxt72-$$"
	done
done
