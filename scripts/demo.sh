#!/bin/bash
# The two-host overlay demo (`make demo`): builds the rig of DESIGN.md
# (vm1, vm2, h1, h2, a veth underlay, VNI 99, VM MTU 1450, one vxswitchd
# per host namespace), runs one iperf3 TCP stream VM1->VM2 and back and a
# ping, and prints a short report: throughput each way, the size histogram
# of frames delivered to each VM's tap, GRO segments per frame, drops by
# reason.  Then the same rig with vxswitch's kernel datapath (vxswitchd
# --datapath kernel: eBPF programs on the VMs' veths and a collect_md vxlan
# device, the daemon as control plane) and with the kernel's own vxlan +
# bridge, side by side, in both wire modes (gso-wire, mtu-wire).
#
#   usage: scripts/demo.sh [BUILD_DIR]      (root; DEMO_SECONDS=5 per run)
#
# Everything it creates (namespaces vxdemo-PID-*, daemons, temp files) is
# removed on exit, Ctrl-C or failure.
set -e
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SECS=${DEMO_SECONDS:-5}

if [ "$(id -u)" != 0 ]; then
	echo "demo.sh: needs root (network namespaces, taps)" >&2
	exit 1
fi
scripts/install-deps.sh
make --no-print-directory -s BUILD="$BUILD" all

. tests/netns/lib.sh
RESULTS=$(mktemp /tmp/vxdemo-results.XXXX)
rig_init "vxdemo-$$"
demo_cleanup() {
	rig_cleanup
	rm -f "$RESULTS"
}
trap demo_cleanup EXIT
trap 'exit 130' INT TERM

# ping_rtt FROMSIDE: "p50/p99 ms" over 200 pings, 10 ms apart.
ping_rtt() {
	local ns to
	if [ "$1" = 1 ]; then ns=$VM1; to=$(vm_addr4 2); else ns=$VM2; to=$(vm_addr4 1); fi
	n "$ns" ping -c 200 -i 0.01 -W 1 "$to" 2>/dev/null | /usr/bin/python3 -c '
import re, sys
t = sorted(float(m.group(1)) for m in re.finditer(r"time=([0-9.]+)", sys.stdin.read()))
if not t: print("-"); sys.exit()
print("%.3f/%.3f" % (t[len(t) // 2], t[min(len(t) - 1, int(len(t) * 0.99))]))'
}

# measure NAME MODE DIR: one iperf3 run; records Gbit/s and CPU µs/KB
# (whole machine from /proc/stat, and the two vxswitchd alone).
measure() {
	local name=$1 mode=$2 dir=$3 busy0 busy1 d0=0 d1=0 gbps bytes
	busy0=$(sys_busy_us)
	if [ -n "${VXD_PID_1:-}" ]; then d0=$(( $(pid_cpu_us "$VXD_PID_1") + $(pid_cpu_us "$VXD_PID_2") )); fi
	gbps=$(rig_iperf "$SECS" "$dir")
	busy1=$(sys_busy_us)
	if [ -n "${VXD_PID_1:-}" ]; then d1=$(( $(pid_cpu_us "$VXD_PID_1") + $(pid_cpu_us "$VXD_PID_2") )); fi
	bytes=$(rig_iperf_bytes)
	/usr/bin/python3 - "$name" "$mode" "$dir" "$gbps" "$bytes" "$((busy1 - busy0))" "$((d1 - d0))" >> "$RESULTS" <<'PY'
import sys
name, mode, d, gbps, nbytes, busy, dmn = sys.argv[1:]
kb = max(int(nbytes), 1) / 1024
print("%s %s %s %s %.3f %s" % (name, mode, "VM1->VM2" if d == "1" else "VM2->VM1", gbps,
      int(busy) / kb, ("%.3f" % (int(dmn) / kb)) if name.startswith("vxswitch") else "-"))
PY
	echo "    $name $mode $( [ "$dir" = 1 ] && echo VM1-\>VM2 || echo VM2-\>VM1 ): $gbps Gbit/s"
}

report_ours() { # MODE
	echo
	echo "== vxswitch, $1-wire: what the switches saw"
	local side tap
	for side in 1 2; do
		tap=vnet$side
		vx_stat "$side" '"h%s: frames delivered to %s: %s" % ('"$side"', "'"$tap"'", ", ".join("%s %d frames/%.0f%% of bytes" % (b["bucket"], b["frames"], 100.0 * b["bytes"] / max(1, sum(x["bytes"] for x in port("'"$tap"'")["tx_size_hist"]))) for b in port("'"$tap"'")["tx_size_hist"] if b["frames"]))'
		vx_stat "$side" '"h%s: GRO %.1f segments per frame (%d merged frames), flushes: %s" % ('"$side"', d["gro"]["segments_per_frame"], d["gro"]["merged_frames"], ", ".join("%s %d" % kv for kv in d["gro"]["flushes"].items() if kv[1]))'
		vx_stat "$side" '"h%s: GSO %d TSO frames -> %d segments, udp-segment fallbacks %d" % ('"$side"', d["gso"]["frames"], d["gso"]["segments"], d["gso"]["udp_segment_fallbacks"])'
		vx_stat "$side" '"h%s: drops: %s" % ('"$side"', ", ".join("%s %s %d" % (p["name"], r, n) for p in d["ports"] for r, n in p["drops"].items() if n) + "".join(", switch %s %d" % kv for kv in d["drops"].items() if kv[1]) or "none")'
	done
	vx 2 diagnose | sed 's/^/h2 diagnose: /'
}

for mode in gso mtu; do
	echo "== vxswitch userspace datapath (taps), $mode-wire"
	rig_create 4
	rig_wire_mode "$mode"
	rig_vxswitchd 1
	rig_vxswitchd 2
	nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || { echo "demo: no ping through vxswitchd" >&2; exit 1; }
	echo "    ping RTT p50/p99 ms: $(ping_rtt 1)"
	echo "vxswitch-user $mode rtt $(ping_rtt 1)" >> "$RESULTS.rtt"
	measure vxswitch-user "$mode" 1
	measure vxswitch-user "$mode" 2
	report_ours "$mode"
	rig_vxswitchd_stop 1
	rig_vxswitchd_stop 2
	VXD_PID_1=""; VXD_PID_2=""
	rig_cleanup
	rig_init "vxdemo-$$"

	echo "== vxswitch kernel datapath (eBPF), $mode-wire"
	rig_create 4
	rig_wire_mode "$mode"
	rig_vxswitchd_bpf 1
	rig_vxswitchd_bpf 2
	nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || { echo "demo: no ping through the kernel datapath" >&2; exit 1; }
	echo "    ping RTT p50/p99 ms: $(ping_rtt 1)"
	echo "vxswitch-ebpf $mode rtt $(ping_rtt 1)" >> "$RESULTS.rtt"
	measure vxswitch-ebpf "$mode" 1
	measure vxswitch-ebpf "$mode" 2
	vx 2 port show | sed 's/^/h2 port show: /'
	rig_vxswitchd_stop 1
	rig_vxswitchd_stop 2
	VXD_PID_1=""; VXD_PID_2=""
	rig_cleanup
	rig_init "vxdemo-$$"

	echo "== kernel vxlan + bridge, $mode-wire"
	rig_create 4
	rig_wire_mode "$mode"
	rig_kernel 1
	rig_kernel 2
	nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || { echo "demo: no ping through the kernel vxlan" >&2; exit 1; }
	echo "    ping RTT p50/p99 ms: $(ping_rtt 1)"
	echo "linux-bridge $mode rtt $(ping_rtt 1)" >> "$RESULTS.rtt"
	measure linux-bridge "$mode" 1
	measure linux-bridge "$mode" 2
	rig_cleanup
	rig_init "vxdemo-$$"
done

echo
echo "== single TCP stream, VM MTU 1450, VNI 99, veth underlay ($SECS s per run; shared machine: CPU figures include everything running on it)"
/usr/bin/python3 - "$RESULTS" "$RESULTS.rtt" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
rtt = {tuple(l.split()[:2]): l.split()[3] for l in open(sys.argv[2])}
print("datapaths: vxswitch-user = vxswitchd's userspace datapath (VMs on taps it holds);")
print("           vxswitch-ebpf = vxswitchd --datapath kernel (eBPF on the VMs' veths, collect_md vxlan);")
print("           linux-bridge  = the kernel's own vxlan + bridge, no vxswitch (the reference)")
print("%-9s %-8s %-13s %9s %13s %15s %14s" % ("wire", "dir", "datapath", "Gbit/s", "CPU us/KB", "switch us/KB", "RTT p50/p99"))
for mode in ("gso", "mtu"):
    for d in ("VM1->VM2", "VM2->VM1"):
        for name in ("vxswitch-user", "vxswitch-ebpf", "linux-bridge"):
            for r in rows:
                if r[0] == name and r[1] == mode and r[2] == d:
                    print("%-9s %-8s %-13s %9s %13s %15s %14s" % (mode + "-wire", d, name, r[3], r[4], r[5], rtt.get((name, mode), "-")))
PY
rm -f "$RESULTS.rtt"
