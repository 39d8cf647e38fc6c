# vxbench rr: request/response and new-flow costs per datapath, in one run.
# Sourced by bench/vxbench/vxbench (uses datapaths.sh and workers.sh).
#
# For each datapath and wire mode, on the rig of `compare`:
#   - ping RTT p50/p99 through the overlay (1000 pings, 10 ms apart);
#   - netperf TCP_RR, 1 and 4 flows: transactions/s and CPU per transaction;
#   - netperf TCP_CRR, 1 flow: a new TCP connection per transaction, so a
#     datapath that sends new flows to a slow path pays it every time;
#   - the first packet to a new destination: vm2 takes a new MAC address and
#     vm1 forgets its neighbours, then one ping: its RTT carries the ARP
#     broadcast (flooded), the learning of the new MAC on both hosts (an
#     upcall on the kernel datapath) and the first echo.  Median of 10.

# crr: netperf TCP_CRR vm1 -> vm2 for SECONDS_PER_RUN: "transactions_per_s".
crr() {
	n "$VM2" netserver -L "$(vm_addr4 2)" -p 12865 >/dev/null 2>&1 || true
	sleep 0.3
	n "$VM1" netperf -H "$(vm_addr4 2)" -p 12865 -t TCP_CRR -l "$SECONDS_PER_RUN" -P 0 -- -o THROUGHPUT \
		2>/dev/null | awk -F, '/^[0-9]/ { printf "%.0f\n", $1; found = 1 } END { if (!found) print -1 }'
	n "$VM2" pkill -x netserver 2>/dev/null || true
}

# first_packet_ms: the median RTT of a first ping to a MAC nobody has seen.
first_packet_ms() {
	local i mac rtts=""
	for i in $(seq 10); do
		mac=$(printf '02:5e:%02x:%02x:%02x:%02x' $((RANDOM % 256)) $((RANDOM % 256)) $((RANDOM % 256)) "$i")
		n "$VM2" ip link set vnet2 address "$mac"
		n "$VM1" ip neigh flush dev vnet1
		n "$VM2" ip neigh flush dev vnet2
		rtts="$rtts $(n "$VM1" ping -n -c 1 -W 2 "$(vm_addr4 2)" 2>/dev/null |
			sed -n 's/.*time=\([0-9.]*\).*/\1/p' | head -1)"
		sleep 0.2
	done
	echo "$rtts" | tr ' ' '\n' | /usr/bin/python3 -c '
import statistics, sys
v = [float(x) for x in sys.stdin.read().split() if x]
print(f"{statistics.median(v):.3f} {len(v)}" if v else "-1 0")'
}

cmd_rr() {
	local reps=3 out="" datapaths=kernel,vxswitch,vxswitch_bpf modes=gso-wire,mtu-wire
	SECONDS_PER_RUN=10
	while [ $# -gt 0 ]; do
		case $1 in
		-n) reps=$2; shift ;;
		-t) SECONDS_PER_RUN=$2; shift ;;
		--datapaths) datapaths=$2; shift ;;
		--modes) modes=$2; shift ;;
		-o) out=$2; shift ;;
		-h|--help) usage; exit 0 ;;
		*) echo "vxbench rr: unknown option '$1' (see --help)" >&2; exit 2 ;;
		esac
		shift
	done
	[ "$(id -u)" = 0 ] || { echo "vxbench: needs root (network namespaces)" >&2; exit 2; }
	install_deps
	bench_deps_netperf
	[ -x "$VXSWITCHD" ] || make -C "$TOP" -s BUILD="$BUILD" all
	out=${out:-$TOP/bench-results/rr-$(date +%Y%m%d-%H%M%S)}
	mkdir -p "$out"
	NS_PREFIX="vxb$$"
	trap cleanup EXIT INT TERM
	local raw="$out/raw.txt" dp mode rep
	: >"$raw"
	echo "vxbench rr: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; datapaths $datapaths; modes $modes; ${SECONDS_PER_RUN}s x $reps"
	for rep in $(seq "$reps"); do
		for mode in ${modes//,/ }; do
			for dp in ${datapaths//,/ }; do
				CURRENT_DP=$dp
				rig_up "$NS_PREFIX" "$mode"
				if ! dp_${dp}_up >"$RIG_DIR/up.log" 2>&1 || ! wait_for_overlay; then
					echo "  $dp $mode: setup failed: $(tail -1 "$RIG_DIR/up.log")" >&2
				else
					local ping rr1 rr4 crr1 first
					ping=$(measure_ping 1000)
					rr1=$(rr 1); rr4=$(rr 4); crr1=$(crr)
					first=$(first_packet_ms)
					echo "$dp|$mode|$ping|$rr1|$rr4|$crr1|$first" >>"$raw"
					printf '  %-14s %-9s ping %s ms; TCP_RR 1: %s, 4: %s; TCP_CRR %s/s; first packet %s ms\n' \
						"$dp" "$mode" "$ping" "$rr1" "$rr4" "$crr1" "$first"
				fi
				dp_${dp}_down || true
				CURRENT_DP=
				rig_down
				RIG_DIR=
			done
		done
	done
	/usr/bin/python3 - "$raw" <<-'EOF' | tee "$out/results.txt"
	import collections, statistics, sys
	rows = collections.defaultdict(list)
	for line in open(sys.argv[1]):
	    dp, mode, ping, rr1, rr4, crr1, first = line.rstrip("\n").split("|")
	    rows[(mode, dp)].append([float(x) for x in (ping.split() + rr1.split()[:2] + rr4.split()[:2]
	                                                + [crr1] + first.split()[:1])])
	med = lambda v, i: statistics.median(r[i] for r in v)
	print("median of runs: ping p50 / p99 ms | TCP_RR 1 flow tps (us CPU/tr) | 4 flows tps (us/tr)"
	      " | TCP_CRR tps | first packet to a new MAC, ms")
	for (mode, dp) in sorted(rows):
	    v = rows[(mode, dp)]
	    print(f"  {mode:9s} {dp:14s} {med(v,0):.3f} / {med(v,1):.3f} | {med(v,2):7.0f} ({med(v,3):5.2f})"
	          f" | {med(v,4):7.0f} ({med(v,5):5.2f}) | {med(v,6):6.0f} | {med(v,7):.3f}")
	EOF
}
