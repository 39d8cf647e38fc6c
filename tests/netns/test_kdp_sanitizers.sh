#!/bin/bash
# The kernel datapath's daemon under the sanitizers: both hosts' vxswitchd
# built with ThreadSanitizer (make tsan-daemon), then with ASan+UBSan (make
# asan-daemon), started with --datapath kernel on veth ports.  While iperf3
# runs both ways: learning, a reload that adds a port and a knob, veth
# ports added and deleted, stats, fdb show, diagnose and a capture; then
# SIGTERM.  Each daemon must load and attach the programs (a sanitizer
# build that could not would silently run the userspace datapath: checked),
# stop within 10 s, and leave no sanitizer report (data race, leak,
# undefined behaviour, bad access) in its log.
#
#   vm1 vnet1 192.0.2.1 <= veth => h1 [vxdp0] -- u1 ==== u2 -- [vxdp0] h2 <= veth => vnet2 192.0.2.2 vm2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "ksan-$$"
rig_trap_bpf

make --no-print-directory -s tsan-daemon asan-daemon >/dev/null

# start SIDE ENV: the sanitizer build's daemon of host SIDE, kernel
# datapath, the rig's vxlan port and a veth port into vmSIDE.  A start
# under a sanitizer on a busy 2-vCPU machine takes seconds: 20 s at most.
start() {
	local side=$1 env_=$2 other=$(( 3 - $1 )) host vm
	if [ "$side" = 1 ]; then host=$H1; vm=$VM1; else host=$H2; vm=$VM2; fi
	{
		echo "datapath kernel"
		echo "port add vx99 type vxlan vni 99 local $(u_addr "$side") remote $(u_addr "$other")"
		echo "port add vnet$side type veth vni 99 netns $vm mtu 1450"
	} > "$RIG_DIR/h$side.conf"
	n "$host" env $env_ "$VXSWITCHD" -c "$RIG_DIR/h$side.conf" -s "$RIG_DIR/h$side.sock" -q \
		> "$RIG_DIR/h$side.log" 2>&1 &
	RIG_PIDS="$RIG_PIDS $!"
	vxd_await_until "$host" "$side" "no answer to vxctl version" vxd_answers "$side" || return 1
	rig_vm_addrs "$side" "vnet$side"
}

exercise() { # LABEL
	local label=$1 i side pid
	for side in 1 2; do
		vx "$side" port show | grep -E "^vnet$side .*datapath kernel" >/dev/null ||
			fail "$label: h$side is not on the kernel datapath: $(vx "$side" port show; cat "$RIG_DIR/h$side.log")"
	done
	for i in $(seq 10); do nvm1 ping -c 1 -W 1 "$(vm_addr4 2)" >/dev/null 2>&1 && break; done
	nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "$label: ping vm1 -> vm2"
	nvm2 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 1)" >/dev/null || fail "$label: ping vm2 -> vm1"
	nvm2 iperf3 -s -1 -D -B "$(vm_addr4 2)" -p 5203 >/dev/null 2>&1
	nvm1 iperf3 -s -1 -D -B "$(vm_addr4 1)" -p 5204 >/dev/null 2>&1
	for i in $(seq 600); do   # bounds a broken server only
		nvm2 ss -ltn | grep -q ":5203 " && nvm1 ss -ltn | grep -q ":5204 " && break
		sleep 0.05
	done
	nvm1 iperf3 -c "$(vm_addr4 2)" -p 5203 -t 5 -P 2 --connect-timeout 5000 -J > "$RIG_DIR/i12.json" 2>&1 &
	local i12=$!
	nvm2 iperf3 -c "$(vm_addr4 1)" -p 5204 -t 5 -P 2 --connect-timeout 5000 -J > "$RIG_DIR/i21.json" 2>&1 &
	local i21=$!
	timeout 10 "$VXCTL" --socket "$RIG_DIR/h2.sock" capture vnet2 -c 100 -w /dev/null >/dev/null 2>&1 &
	local cap=$!
	# A reload: a knob and a port more (its veth pair made).
	{ cat "$RIG_DIR/h1.conf"; echo "set fdb-ageing 120"; echo "port add rl1 type veth vni 99 netns $P-vmx"; } \
		> "$RIG_DIR/h1.conf.new"
	mv "$RIG_DIR/h1.conf.new" "$RIG_DIR/h1.conf"
	vx 1 reload >/dev/null || fail "$label: reload"
	n "$P-vmx" ip link show rl1 >/dev/null || fail "$label: the reload made no rl1"
	for i in 1 2 3; do
		vx 1 port add extra$i type veth vni 99 netns "$P-vmx" >/dev/null || fail "$label: port add extra$i"
		vx 1 stats >/dev/null; vx 2 -j stats >/dev/null
		vx 1 fdb show >/dev/null; vx 2 -j fdb show vni 99 >/dev/null
		vx 1 diagnose >/dev/null || true
		vx 1 port del extra$i >/dev/null || fail "$label: port del extra$i"
	done
	wait "$i12" || { cat "$RIG_DIR/i12.json" >&2; fail "$label: iperf3 vm1 -> vm2"; }
	wait "$i21" || { cat "$RIG_DIR/i21.json" >&2; fail "$label: iperf3 vm2 -> vm1"; }
	wait "$cap" || true
	local mac1 mac2
	mac1=$(nvm1 cat /sys/class/net/vnet1/address)
	mac2=$(nvm2 cat /sys/class/net/vnet2/address)
	vx 1 fdb show vni 99 | grep -qi "^$mac1 " && vx 1 fdb show vni 99 | grep -qi "^$mac2 " ||
		fail "$label: h1 did not learn both VMs: $(vx 1 fdb show vni 99)"
	for side in 1 2; do
		eval "pid=\$VXD_PID_$side"
		kill -TERM "$pid"
		for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -0 "$pid" 2>/dev/null && fail "$label: h$side did not stop within 10 s of SIGTERM"
		if grep -qE "ThreadSanitizer|AddressSanitizer|LeakSanitizer|runtime error" "$RIG_DIR/h$side.log"; then
			cat "$RIG_DIR/h$side.log" >&2
			fail "$label: h$side's sanitizer report above"
		fi
	done
	nh1 ip link show vxdp0 >/dev/null 2>&1 && fail "$label: vxdp0 left in h1 after SIGTERM"
	return 0
}

for build in tsan asan; do
	rig_create 4
	rig_ns_add "$P-vmx"
	if [ "$build" = tsan ]; then
		env_="TSAN_OPTIONS=halt_on_error=0:second_deadlock_stack=1"
	else
		env_="ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1"
	fi
	VXSWITCHD=$PWD/build-$build/vxswitchd start 1 "$env_" || fail "$build: h1"
	VXSWITCHD=$PWD/build-$build/vxswitchd start 2 "$env_" || fail "$build: h2"
	exercise "$build"
	pass "$build build, kernel datapath: iperf3 both ways, learning, reload, veth port add/del, stats, fdb show, diagnose, capture, SIGTERM; no report"
	rig_cleanup
	rig_init "ksan-$$"
done
