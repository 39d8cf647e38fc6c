#!/bin/bash
# Differential test: our GRO against the Linux kernel's GRO on the same TCP
# segment sequences (IPv4 and IPv6: in order, short last, PSH, reordered,
# interleaved flows, IP ID jumps and fixed IDs, option/TTL/TOS/window/ACK
# changes, ECE/CWR, pure ACKs, the 64 KB cap...), and the main ones again
# inside VXLAN (the kernel's vxlan GRO path; ours decapsulates).
#
#   vxt-grodiff-PID:  gro_diff --write--> gdiff0 (tap, IFF_NAPI,
#                     gro_flush_timeout) --napi_gro_receive--> AF_PACKET
#                     with PACKET_VNET_HDR --> gro_diff compares with
#                     gro_receive_batch() on the same frames
#
# The tool (tests/tools/gro_diff.c) explains how one case becomes one
# kernel GRO batch and prints, per case, the kernel's frames and ours.
# Cases where the kernel is version-specific are printed but not failures.
#
# Needs root.  Exit 0 pass (or skip: no root / no IFF_NAPI), 1 fail.
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
GRO_DIFF=${GRO_DIFF:-$BUILD/tests/tools/gro_diff}
NS="vxt-grodiff-$$"
made_ns=""

cleanup() {
	if [ -n "$made_ns" ]; then ip netns del "$NS" 2>/dev/null || true; fi
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: test_gro_vs_kernel needs root"
	exit 0
fi
[ -x "$GRO_DIFF" ] || fail "$GRO_DIFF not built"

ip netns add "$NS"
made_ns=1
ip netns exec "$NS" ip link set lo up

# VXLAN cases: a vxlan device owns UDP port 4789, so the kernel's GRO takes
# the udp_gro_receive -> vxlan_gro_receive path for frames to the tap's
# address.  Without vxlan support the plain cases still run.
vx_opt=""
if ip netns exec "$NS" ip link add gdiffvx0 type vxlan id 42 dstport 4789 nolearning 2>/dev/null &&
   ip netns exec "$NS" ip link set gdiffvx0 up; then
	vx_opt=-x
else
	echo "note: no vxlan device: VXLAN cases not run"
fi

rc=0
ip netns exec "$NS" "$GRO_DIFF" -r "${GRO_DIFF_REPEATS:-2}" $vx_opt || rc=$?
case $rc in
0) echo "PASS: our GRO gives the kernel's frame boundaries and gso_size on every compared case" ;;
77) echo "SKIP: this kernel cannot run the GRO differential test (see the message above)" ;;
1) fail "our GRO and the kernel's disagree (cases marked MISMATCH/UNSTABLE above)" ;;
*) fail "gro_diff could not run (exit $rc)" ;;
esac
