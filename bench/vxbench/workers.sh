# vxbench workers / latency: many cores and request/response latency,
# vxswitch side by side with the kernel's vxlan + bridge in the same run
# (sourced by vxbench; uses its rig, measure_tcp and measure_ping).
#
#   vxbench workers [-n REPS] [-t SECONDS] [--modes LIST] [--streams LIST] [-o DIR]
#     aggregate iperf3 Gbit/s vm1 -> vm2 with each stream count (default
#     1,2,4,8), for the kernel and vxswitch with 1 and 2 workers per host,
#     each wire mode, with CPU us per KB of the whole machine.
#   vxbench latency [-n REPS] [--poll-us LIST] [-o DIR]
#     ping p50/p99 (1000 pings, 10 ms apart), netperf TCP_RR transactions/s
#     with 1 and 4 flows and CPU us per transaction, for the kernel and
#     vxswitch (1 and 2 workers) with each poll-us (default 0,50), and what
#     polling costs: the daemons' CPU share idle (5 s with no traffic) and
#     under TCP_RR.
# Results: a table on the terminal and results.txt in the output folder.

bench_deps_netperf() {
	command -v netperf >/dev/null && return 0
	# netperf is in Debian's non-free component.
	local src=/etc/apt/sources.list.d/vxswitch-nonfree.sources
	[ -f "$src" ] || printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >"$src"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq netperf >/dev/null
	pkill -x netserver 2>/dev/null || true # its package starts one; each VM gets its own
}

# wk_up DP MODE: kernel | vxswitch:WORKERS:POLL_US
wk_up() {
	local dp=$1 mode=$2
	rig_up "$NS_PREFIX" "$mode"
	case $dp in
	kernel) dp_kernel_up ;;
	vxswitch:*)
		local w p
		w=$(echo "$dp" | cut -d: -f2); p=$(echo "$dp" | cut -d: -f3)
		RIG_VXD_ARGS="--workers $w" RIG_EXTRA_CONF="set poll-us ${p:-0}" rig_vxswitchd 1 &&
			RIG_VXD_ARGS="--workers $w" RIG_EXTRA_CONF="set poll-us ${p:-0}" rig_vxswitchd 2 ;;
	esac
	wait_for_overlay
}

wk_down() {
	case $1 in vxswitch:*) rig_vxswitchd_stop 1; rig_vxswitchd_stop 2 ;; esac
	rig_down
	RIG_DIR=
}

wk_label() {
	case $1 in
	kernel) echo kernel ;;
	vxswitch:*) echo "vxswitch w$(echo "$1" | cut -d: -f2) poll $(echo "$1" | cut -d: -f3)" ;;
	esac
}

cmd_workers() {
	local reps=3 out="" streams=1,2,4,8 modes=gso-wire,mtu-wire
	SECONDS_PER_RUN=10
	while [ $# -gt 0 ]; do
		case $1 in
		-n) reps=$2; shift ;;
		-t) SECONDS_PER_RUN=$2; shift ;;
		--modes) modes=$2; shift ;;
		--streams) streams=$2; shift ;;
		-o) out=$2; shift ;;
		*) echo "vxbench workers: unknown option '$1'" >&2; exit 2 ;;
		esac
		shift
	done
	[ "$(id -u)" = 0 ] || { echo "vxbench: needs root" >&2; exit 2; }
	"$TOP/scripts/install-deps.sh"
	[ -x "$VXSWITCHD" ] || make -C "$TOP" -s BUILD="$BUILD" all
	out=${out:-$TOP/bench-results/workers-$(date +%Y%m%d-%H%M%S)}
	mkdir -p "$out"
	NS_PREFIX="vxb$$"
	trap cleanup EXIT INT TERM
	local raw="$out/raw.txt" dp mode rep s
	: >"$raw"
	echo "vxbench workers: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; ${SECONDS_PER_RUN}s x $reps"
	for rep in $(seq "$reps"); do
		for mode in ${modes//,/ }; do
			for dp in kernel vxswitch:1:0 vxswitch:2:0; do
				wk_up "$dp" "$mode" || { echo "  $dp $mode: setup failed" >&2; wk_down "$dp"; continue; }
				for s in ${streams//,/ }; do
					local r
					r=$(measure_tcp 1 2 "$s")
					echo "$mode|$(wk_label "$dp")|$s|$r" >>"$raw"
					printf '  %-9s %-18s %d streams: %s Gbit/s, %s us/KB\n' "$mode" "$(wk_label "$dp")" "$s" \
						"$(echo "$r" | cut -d' ' -f1)" "$(echo "$r" | cut -d' ' -f3)"
				done
				wk_down "$dp"
			done
		done
	done
	/usr/bin/python3 - "$raw" <<-'EOF' | tee "$out/results.txt"
	import collections, statistics, sys
	cells = collections.defaultdict(list)
	for line in open(sys.argv[1]):
	    mode, dp, streams, r = line.rstrip("\n").split("|")
	    gbps, _, uskb, _, _ = r.split()
	    cells[(mode, dp, int(streams))].append((float(gbps), float(uskb)))
	print("median of runs: Gbit/s (us/KB of the machine), vm1 -> vm2")
	for mode in sorted({k[0] for k in cells}):
	    print(mode)
	    for dp in sorted({k[1] for k in cells if k[0] == mode}):
	        row = []
	        for s in sorted({k[2] for k in cells if k[0] == mode and k[1] == dp}):
	            v = cells[(mode, dp, s)]
	            row.append(f"{s}x {statistics.median(x[0] for x in v):6.2f} ({statistics.median(x[1] for x in v):.3f})")
	        print(f"  {dp:18s} " + "  ".join(row))
	EOF
}

# rr FLOWS: netperf TCP_RR vm1 -> vm2 for SECONDS_PER_RUN; prints
# "transactions_per_s cpu_us_per_transaction daemon_cpu_share".
rr() {
	local flows=$1 i hz j0 j1 d0 d1 st0
	hz=$(getconf CLK_TCK)
	n "$VM2" netserver -L "$(vm_addr4 2)" -p 12865 >/dev/null 2>&1 || true
	sleep 0.3
	j0=$(cpu_busy_jiffies); d0=$(daemons_cpu_us); st0=$(cpu_steal_jiffies)
	for i in $(seq "$flows"); do
		n "$VM1" netperf -H "$(vm_addr4 2)" -p 12865 -t TCP_RR -l "$SECONDS_PER_RUN" -P 0 -- -o THROUGHPUT \
			>"$RIG_DIR/rr.$i" 2>/dev/null &
	done
	wait
	j1=$(cpu_busy_jiffies); d1=$(daemons_cpu_us)
	steal_note "$st0" "$(cpu_steal_jiffies)" "$SECONDS_PER_RUN"
	n "$VM2" pkill -x netserver 2>/dev/null || true
	cat "$RIG_DIR"/rr.* | /usr/bin/python3 -c '
import sys
tps = sum(float(l.split(",")[0]) for l in sys.stdin if l.strip() and l[0].isdigit())
busy_us = (int(sys.argv[2]) - int(sys.argv[1])) / int(sys.argv[3]) * 1e6
secs = float(sys.argv[4])
dcpu = (int(sys.argv[6]) - int(sys.argv[5])) / 1e6 / secs
print(f"{tps:.0f} {busy_us / (tps * secs) if tps else -1:.2f} {dcpu:.3f}")' "$j0" "$j1" "$hz" "$SECONDS_PER_RUN" "$d0" "$d1"
	rm -f "$RIG_DIR"/rr.*
}

# CPU microseconds of both vxswitchd (0 for the kernel datapath).
daemons_cpu_us() {
	local t=0 p
	for p in ${VXD_PID_1:-} ${VXD_PID_2:-}; do
		[ -n "$p" ] && t=$((t + $(pid_cpu_us "$p")))
	done
	echo $t
}

cmd_latency() {
	local reps=3 out="" polls=0,50
	SECONDS_PER_RUN=10
	while [ $# -gt 0 ]; do
		case $1 in
		-n) reps=$2; shift ;;
		-t) SECONDS_PER_RUN=$2; shift ;;
		--poll-us) polls=$2; shift ;;
		-o) out=$2; shift ;;
		*) echo "vxbench latency: unknown option '$1'" >&2; exit 2 ;;
		esac
		shift
	done
	[ "$(id -u)" = 0 ] || { echo "vxbench: needs root" >&2; exit 2; }
	"$TOP/scripts/install-deps.sh"
	bench_deps_netperf
	[ -x "$VXSWITCHD" ] || make -C "$TOP" -s BUILD="$BUILD" all
	out=${out:-$TOP/bench-results/latency-$(date +%Y%m%d-%H%M%S)}
	mkdir -p "$out"
	NS_PREFIX="vxb$$"
	trap cleanup EXIT INT TERM
	local raw="$out/raw.txt" dp rep p dps="kernel"
	for p in ${polls//,/ }; do dps="$dps vxswitch:1:$p vxswitch:2:$p"; done
	: >"$raw"
	echo "vxbench latency: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; gso-wire; ${SECONDS_PER_RUN}s x $reps"
	for rep in $(seq "$reps"); do
		for dp in $dps; do
			wk_up "$dp" gso-wire || { echo "  $dp: setup failed" >&2; wk_down "$dp"; continue; }
			local ping rr1 rr4 d0 d1 idle
			ping=$(measure_ping 1000)
			rr1=$(rr 1); rr4=$(rr 4)
			d0=$(daemons_cpu_us); sleep 5; d1=$(daemons_cpu_us)
			idle=$(/usr/bin/python3 -c "print(f'{($d1 - $d0) / 5e6:.4f}')")
			echo "$(wk_label "$dp")|$ping|$rr1|$rr4|$idle" >>"$raw"
			printf '  %-18s ping p50/p99 %s ms; TCP_RR 1 flow %s, 4 flows %s (tps us/tr cpu); idle %s\n' \
				"$(wk_label "$dp")" "$ping" "$rr1" "$rr4" "$idle"
			wk_down "$dp"
		done
	done
	/usr/bin/python3 - "$raw" <<-'EOF' | tee "$out/results.txt"
	import collections, statistics, sys
	rows = collections.defaultdict(list)
	for line in open(sys.argv[1]):
	    dp, ping, rr1, rr4, idle = line.rstrip("\n").split("|")
	    rows[dp].append([float(x) for x in (ping.split() + rr1.split() + rr4.split() + [idle])])
	med = lambda v, i: statistics.median(r[i] for r in v)
	print("median of runs (gso-wire): ping p50 / p99 ms | TCP_RR 1 flow tps, us/transaction, daemons' CPU (cores)"
	      " | 4 flows tps, us/tr, CPU | daemons' CPU idle (cores)")
	for dp in rows:
	    v = rows[dp]
	    print(f"  {dp:18s} {med(v,0):.3f} / {med(v,1):.3f} | {med(v,2):7.0f} {med(v,3):6.2f} {med(v,4):.3f} |"
	          f" {med(v,5):7.0f} {med(v,6):6.2f} {med(v,7):.3f} | {med(v,8):.4f}")
	EOF
}
