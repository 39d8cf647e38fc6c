#!/bin/bash
# diagnose names what is wrong on a host, one rig per cause; each time
# `vxctl diagnose` exits 1 and `-j` has the cause:
#   - UDP_GRO refused by the kernel (injected with refuse_offloads.so):
#     offload_refused, offload udp_gro;
#   - a VM flooding 3000 random source MACs with fdb-max 1000: fdb_full,
#     and fdb_port_hog for its port.
# Elsewhere: tap_queue_drops in test_tap_drops.sh, max_macs in
# test_max_macs.sh, small_frames_gro_off in test_mtu_wire_big.sh.  A peer
# whose VM sends no TSO (tap-tso off there, mtu-wire) gives no rig for the
# small-frame causes: our GRO still merges ~13 segments a frame from its
# MTU-sized datagrams, so the frames are not small and nothing is said
# (tests/unit/report/test_diag.c feeds those causes crafted counters).
#
#   vxt63-PID-vm1       vxt63-PID-h1                          vxt63-PID-h2       vxt63-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
#                      198.51.100.1                  198.51.100.2   VNI 99
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
PRELOAD=$BUILD/tests/tools/refuse_offloads.so
[ -f "$PRELOAD" ] || fail "$PRELOAD not built (make all)"
rig_init "vxt63-$$"
trap rig_cleanup EXIT

# ---- UDP_GRO refused ------------------------------------------------------------
rig_create 4
RIG_VXD_ENV="LD_PRELOAD=$PRELOAD VXT_REFUSE=udp_gro" rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping with UDP_GRO refused"
line=$(diag_names 1 offload_refused 'f["port"] == "vx99" and f["offload"] == "udp_gro"' "vx99: UDP_GRO refused by kernel")
pass "UDP_GRO refused: $line"
rig_cleanup; rig_init "vxt63-$$"

# ---- FDB flood ----------------------------------------------------------------------
rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
vx 1 set fdb-max 1000 >/dev/null
nvm1 /usr/bin/python3 -c '
from scapy.all import Ether, IP, UDP, sendp
import random
rnd = random.Random(63)
frames = [Ether(src="02:%02x:%02x:%02x:%02x:%02x" % tuple(rnd.randrange(256) for _ in range(5)), dst="ff:ff:ff:ff:ff:ff") /
          IP(src="192.0.2.1", dst="192.0.2.255") / UDP(sport=9, dport=9) for i in range(3000)]
sendp(frames, iface="vnet1", verbose=False)'
sleep 0.5
line=$(diag_names 1 fdb_full 'f["refused"] >= 1900 and f["fdb_max"] == 1000' "new source MACs were not learned: a VNI's table reached fdb-max 1000")
hog=$(diag_names 1 fdb_port_hog 'f["port"] == "vnet1" and f["macs"] >= 999 and f["vni"] == 99' "vnet1 holds [0-9]+ of the [0-9]+ MACs learned in VNI 99")
pass "MAC flood: $line; $hog"
