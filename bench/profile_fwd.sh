#!/bin/bash
# Where a datapath's CPU goes (a benchmark, not a test: `make
# bench-profile`; figures in docs/BENCHMARKS.md, "Where the CPU goes").
# For each datapath in turn, on a rig built afresh: one iperf3 stream
# vm1 -> vm2 for 12 s, `perf record -a -g` over 6 s of its middle, then
# the machine's busy share and the share of "forwarding's own functions":
# the symbols only one datapath runs (the bridge's br_*, fdb_*, nf_* and
# the vxlan device's FDB lookup; vxswitch's programs, their map lookups,
# helpers, tunnel metadata and the per-packet route lookup a tunnel key
# forces).  What both run (copies, sockets, GRO, the vxlan device's
# encapsulation) is the rest of the busy time.  This guest has no PMU:
# samples are cpu-clock, and time with interrupts off lands on the
# function that turns them back on.
#
#   usage: bench/profile_fwd.sh [MODE] [DATAPATHS]
#          (root; MODE gso-wire|mtu-wire, default gso-wire; DATAPATHS a
#          comma list of vxbench's, default kernel,vxswitch_bpf)
#   env:   PROFILE_DIR keeps each run's perf.data and symbol list there
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$TOP/build}
VXSWITCHD=${VXSWITCHD:-$BUILD/vxswitchd}
FRAME_SIZES=${FRAME_SIZES:-$BUILD/tests/tools/frame_sizes}
MODE=${1:-gso-wire}
DATAPATHS=${2:-kernel,vxswitch_bpf}
. "$TOP/bench/vxbench/datapaths.sh"
command -v perf >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null
OUT=${PROFILE_DIR:-$(mktemp -d /tmp/vxprofile.XXXXXX)}
mkdir -p "$OUT"
[ -n "${PROFILE_DIR:-}" ] || trap 'rm -rf "$OUT"' EXIT

FWD_SYMS='^(br_|__br_|fdb_|nf_|vxlan_find_mac|bpf_|__htab|htab_|__metadata_dst|ip_route_output|skb_do_redirect|dst_release)'

# One datapath: "gbps busy% fwd%"; its rig is down when this returns.
profile_one() { # DP
	local dp=$1 iperf data
	iperf=$OUT/$dp-$MODE.json data=$OUT/$dp-$MODE.data
	(
		trap 'dp_'"$dp"'_down >/dev/null 2>&1 || true; rig_down' EXIT
		rig_up "vxp$$" "$MODE"
		"dp_${dp}_up"
		ip netns exec "$VM1" ping -c 3 -q "$(vm_addr4 2)" >/dev/null || true
		ip netns exec "$VM2" iperf3 -s -D -1 -p 5201
		sleep 0.5
		ip netns exec "$VM1" iperf3 -c "$(vm_addr4 2)" -p 5201 -t 12 -J >"$iperf" &
		local client=$!
		sleep 3
		perf record -q -a -g -o "$data" -- sleep 6 >/dev/null 2>&1
		wait "$client"
	) >&2
	perf report -i "$data" --no-children --sort sym -g none --stdio 2>/dev/null |
		grep '%' | grep -v '^#' >"$OUT/$dp-$MODE.syms"
	local gbps
	gbps=$(/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
print('%.2f' % (d['end']['sum_received']['bits_per_second'] / 1e9))" "$iperf")
	awk -v re="$FWD_SYMS" -v g="$gbps" '{ p = $1; sub("%", "", p); tot += p
		if ($3 ~ /safe_halt|default_idle/) idle += p; if ($3 ~ re) fwd += p }
		END { printf "%s %.1f %.2f\n", g, tot - idle, fwd }' "$OUT/$dp-$MODE.syms"
}

echo "$(lscpu | sed -n 's/^Model name: *//p'), $(nproc) vCPUs, kernel $(uname -r); $MODE, one stream"
printf '%-22s %8s %8s %10s %8s\n' datapath Gbit/s busy% forwarding "of busy"
for dp in ${DATAPATHS//,/ }; do
	set -- $(profile_one "$dp")
	printf '%-22s %8s %7s%% %9s%% %7.1f%%\n' "$dp" "$1" "$2" "$3" "$(echo "$3 $2" | awk '{ print 100 * $1 / $2 }')"
done
[ -z "${PROFILE_DIR:-}" ] || echo "perf.data and symbol lists: $OUT"
