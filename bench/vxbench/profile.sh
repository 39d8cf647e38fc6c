# vxbench profile: where each datapath spends the CPU, in one run.
# Sourced by bench/vxbench/vxbench (needs datapaths.sh).
#
# For each datapath and wire mode, one iperf3 transfer vm1 -> vm2 on the rig
# of `vxbench compare`, and `perf record -a -g` over its middle (the first
# seconds, slow start, are left out).  cpu_profile.py then charges the samples
# to functions and kinds of work, in CPU microseconds per KB moved, and
# sets each datapath beside the first.  The answer to "the kernel datapath
# costs 1.2x the bridge's CPU per KB: for what?", measured rather than
# guessed: docs/BENCHMARKS.md keeps what it said.

PROFILE_LEAD=2   # seconds of the transfer before the recording starts

# profile_case DP MODE SECONDS STREAMS OUT: one datapath's recording, as
# OUT/DP-MODE.script (perf script text) and OUT/DP-MODE.info (figures).
profile_case() {
	local dp=$1 mode=$2 secs=$3 streams=$4 out=$5 name=$1-$2
	CURRENT_DP=$dp
	rig_up "$NS_PREFIX" "$mode"
	if ! dp_${dp}_up >"$RIG_DIR/up.log" 2>&1 || ! wait_for_overlay; then
		echo "vxbench profile: $dp ($mode) did not come up: $(tail -1 "$RIG_DIR/up.log")" >&2
		dp_${dp}_down || true; CURRENT_DP=; rig_down; RIG_DIR=
		return 1
	fi
	n "$VM2" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
	local server=$!
	sleep 0.3
	n "$VM1" timeout $((secs + PROFILE_LEAD + 20)) iperf3 -c "$(vm_addr4 2)" -p 5201 \
		-t $((secs + PROFILE_LEAD + 1)) -P "$streams" -J >"$out/$name.iperf.json" 2>/dev/null &
	local client=$!
	sleep "$PROFILE_LEAD"
	perf record -a -g -F 4000 -o "$out/$name.perf" -- sleep "$secs" >/dev/null 2>&1
	wait $client || true
	kill $server 2>/dev/null || true
	wait $server 2>/dev/null || true
	dp_${dp}_down || true
	CURRENT_DP=
	rig_down
	RIG_DIR=
	perf script -i "$out/$name.perf" -F comm,ip,sym >"$out/$name.script" 2>/dev/null
	# Gbit/s over the recorded window: iperf3's one-second intervals
	# after the lead, as many as were recorded.
	/usr/bin/python3 - "$out/$name.iperf.json" "$PROFILE_LEAD" "$secs" >"$out/$name.info" <<-'EOF'
	import json, sys
	lead, secs = int(sys.argv[2]), int(sys.argv[3])
	iv = json.load(open(sys.argv[1]))["intervals"][lead:lead + secs]
	gbps = sum(i["sum"]["bits_per_second"] for i in iv) / len(iv) / 1e9 if iv else 0.0
	print(f"gbps={gbps:.3f} seconds={secs} freq=4000")
	EOF
	rm -f "$out/$name.perf"
	printf '  %-22s %-9s %s Gbit/s while recorded\n' "$dp" "$mode" "$(sed 's/.*gbps=\([^ ]*\).*/\1/' "$out/$name.info")"
}

cmd_profile() {
	local secs=6 streams=1 datapaths=kernel,vxswitch_bpf_nocsum modes=gso-wire out="" keep=0
	while [ $# -gt 0 ]; do
		case $1 in
		-t) secs=$2; shift ;;
		-P) streams=$2; shift ;;
		--datapaths) datapaths=$2; shift ;;
		--modes) modes=$2; shift ;;
		-o) out=$2; shift ;;
		--keep) keep=1 ;;
		-h|--help) usage; exit 0 ;;
		*) echo "vxbench profile: unknown option '$1' (see --help)" >&2; exit 2 ;;
		esac
		shift
	done
	[ "$(id -u)" = 0 ] || { echo "vxbench: needs root (network namespaces)" >&2; exit 2; }
	install_deps
	command -v perf >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null
	[ -x "$VXSWITCHD" ] || make -C "$TOP" -s BUILD="$BUILD" all
	out=${out:-$TOP/bench-results/profile-$(date +%Y%m%d-%H%M%S)}
	mkdir -p "$out"
	NS_PREFIX="vxp$$"
	trap cleanup EXIT INT TERM
	echo "vxbench profile: datapaths $datapaths; modes $modes; ${secs}s recorded, $streams stream(s); $(lscpu | sed -n 's/^Model name: *//p')"
	local mode dp names
	for mode in ${modes//,/ }; do
		names=""
		for dp in ${datapaths//,/ }; do
			profile_case "$dp" "$mode" "$secs" "$streams" "$out" && names="$names $dp-$mode"
		done
		echo "== $mode"
		[ -n "$names" ] || { echo "vxbench profile: no datapath came up in $mode" >&2; return 1; }
		# shellcheck disable=SC2086
		/usr/bin/python3 "$HERE/cpu_profile.py" "$out" $names
		mv "$out/profile.txt" "$out/profile-$mode.txt"
		mv "$out/profile.json" "$out/profile-$mode.json"
		# The sample text is ~50 MB a datapath: kept only when asked.
		[ $keep = 1 ] || for dp in ${datapaths//,/ }; do rm -f "$out/$dp-$mode.script"; done
	done
	echo "vxbench profile: the tables and JSON are in $out"
}
