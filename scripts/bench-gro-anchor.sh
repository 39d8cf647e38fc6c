#!/bin/bash
# bench-gro-anchor.sh: our GRO (bench/bench_gro) and DPDK 22.11's librte_gro
# (shared/anchors/dpdk-gro) on the same pcap traces, one right after the
# other, several interleaved runs, printed side by side.
#
#   scripts/bench-gro-anchor.sh            # 3 runs, 1 s per mode
#   RUNS=1 SECONDS_PER_MODE=0.3 scripts/bench-gro-anchor.sh
#
# Environment: SHARED (path of shared/, default ../shared next to the repo),
# TRACES (folder with vxlan_tcp4.pcap and tcp4.pcap, default bench/data),
# RUNS, SECONDS_PER_MODE, LIB_DIRS (layers to build, default only what the
# bench needs so a half-written file elsewhere cannot break it).
#
# Needs libdpdk-dev and pkg-config (scripts/install-deps.sh).  Both programs
# time only the GRO loop, one core, and reset the frames' headers between
# passes outside the timing.  Compare like with like:
#   dpdk light  <->  ours burst32 (flush at the end of every 32-frame burst)
#   dpdk heavy  <->  ours held    (runs held across bursts, flushed every 4)
# DPDK never verifies TCP checksums: "trusted" is ours with the same
# (non-)work, "verify" is ours with the Linux rule (every input checksummed).
# The machine is shared: the median pass is the figure to quote, and only
# figures from the same run compare.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${SHARED:-$(cd "$ROOT/../shared" 2>/dev/null && pwd || true)}
TRACES=${TRACES:-$ROOT/bench/data}
RUNS=${RUNS:-3}
SECONDS_PER_MODE=${SECONDS_PER_MODE:-1}
LIB_DIRS=${LIB_DIRS:-src/packet src/parse src/offload/gro.c}

if [ -z "$SHARED" ] || [ ! -d "$SHARED/anchors/dpdk-gro" ]; then
	echo "bench-gro-anchor: set SHARED to the shared/ folder (anchors/dpdk-gro)" >&2
	exit 1
fi

WORK=$(mktemp -d /tmp/bench-gro-anchor.XXXXXX)
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT

cp -r "$SHARED/anchors/dpdk-gro" "$WORK/dpdk-gro"
make -s -C "$WORK/dpdk-gro" bench_gro >/dev/null
make -s -C "$ROOT" BUILD="$WORK/build" LIB_DIRS="$LIB_DIRS" BENCH_SRCS=bench/bench_gro.c \
	"$WORK/build/bench/bench_gro" >/dev/null
OURS="$WORK/build/bench/bench_gro"
DPDK="$WORK/dpdk-gro/bench_gro"
EAL="--no-huge --no-pci --no-shconf -m 512 -l 1 --log-level=lib.eal:warning --log-level=lib.telemetry:error"

# One line per implementation/mode:  impl mode Mpps_median Mpps_best avg_out_bytes segs_per_frame
ours_rows() {
	(cd "$ROOT" && "$OURS" -t "$SECONDS_PER_MODE" -m "$2" "$1") |
		awk -v m="$2" '$1 == m { printf "ours_%-7s %-8s %8.2f %8.2f %9.0f %6.2f %s %s\n", $2, $1, $4, $5, $7, $9, $11, $12 }'
}
dpdk_rows() {
	# shellcheck disable=SC2086
	"$DPDK" $EAL -- --pcap "$1" --mode "$2" --seconds "$SECONDS_PER_MODE" 2>/dev/null |
		awk '/^mode=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			printf "dpdk %s %.2f %.2f %.0f %.2f\n", v["mode"], v["gro_Mpps_median"],
			       v["gro_Mpps_best"], v["avg_out_bytes"], v["merge_ratio"] }'
}

printf "%-3s %-16s %-12s %-8s %8s %8s %9s %6s\n" run trace impl mode Mpps_med Mpps_best out_bytes segs
for run in $(seq 1 "$RUNS"); do
	for trace in vxlan_tcp4.pcap tcp4.pcap; do
		file="$TRACES/$trace"
		{
			ours_rows "$file" burst32
			dpdk_rows "$file" light
			ours_rows "$file" held
			dpdk_rows "$file" heavy
		} | while read -r impl mode med best bytes segs rest; do
			printf "%-3s %-16s %-12s %-8s %8s %8s %9s %6s %s\n" "$run" "$trace" "$impl" "$mode" \
				"$med" "$best" "$bytes" "$segs" "$rest"
		done
	done
done
