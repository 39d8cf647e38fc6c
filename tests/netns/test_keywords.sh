#!/bin/bash
# The keywords of `vxctl --help` that no other netns test watches at work,
# each observed in the running daemon's state or on the wire:
#   gro off           frames to the VM are no bigger than the underlay's
#                     datagrams: GRO takes no segments, the tap gets no
#                     frame of 1.5 KB or more;
#   gro-max-size N    no frame to the VM over N (none in the 16K-64K
#                     buckets for 16000), frames of 8K-16K still made;
#   rx-csum off       the inner checksums of datagrams the kernel did not
#                     vouch for are no longer checked (counters frozen);
#   fdb-ageing S      a learned MAC leaves the table no sooner than S s and within S+4 s of its
#                     last frame; 0 keeps it;
#   dstport P         the datagrams go to UDP port P on the wire, and a
#                     peer on another port gets nothing;
#   mtu M (vxlan)     a VM MTU over M is warned of, inner frames over M are
#                     dropped as mtu_exceeded, TCP segments on the wire carry
#                     inner packets of at most M bytes.
# (udpcsum/srcport/df: test_vxlan_options.sh; offload knobs on/off:
# test_knobs.sh; max-macs: test_max_macs.sh; fdb-max: test_flood_learning.sh;
# gro-hold-us: tests/unit/control/test_control.c on a warped clock.)
#
#   vxt18-PID-vm1       vxt18-PID-h1                          vxt18-PID-h2       vxt18-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt18-$$"
trap rig_cleanup EXIT

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"

# port show says what each tap's line set: MAC, namespace, max-macs.
mac1=$(nvm1 cat /sys/class/net/vnet1/address)
vx 1 port show | grep -q "^vnet1 .* mac $mac1 netns $VM1" || fail "port show lacks vnet1's MAC and netns: $(vx 1 port show)"
vx 1 port del vnet1 && vx 1 port add vnet1 type tap vni 99 netns "$VM1" mtu "$(vm_mtu)" max-macs 7 >/dev/null
rig_vm_addrs 1 vnet1
vx 1 port show | grep -q "^vnet1 .* max-macs 7" || fail "port show lacks max-macs: $(vx 1 port show)"
[ "$(vx_port 1 vnet1 max_macs)" = 7 ] || fail "port show -j lacks max_macs"
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after re-adding vnet1"
pass "port show gives a tap's MAC, netns and max-macs"

# hist SIDE PORT BUCKET: frames sent to PORT in a tx_size_hist bucket.
hist() { vx_stat "$1" "[b['frames'] for b in port('$2')['tx_size_hist'] if b['bucket'] == '$3'][0]"; }
big_to_vm2() { echo $(( $(hist 2 vnet2 1.5K-8K) + $(hist 2 vnet2 8K-16K) + $(hist 2 vnet2 16K-32K) + $(hist 2 vnet2 32K-64K) + $(hist 2 vnet2 '>=64K') )); }

# ---- gro off ----------------------------------------------------------------
vx 2 set gro off >/dev/null
seg0=$(vx_stat 2 'd["gro"]["segments_in"]'); big0=$(big_to_vm2); small0=$(hist 2 vnet2 '<1.5K')
gbit=$(rig_iperf 1 1) || fail "iperf3 with gro off"
seg1=$(vx_stat 2 'd["gro"]["segments_in"]'); big1=$(big_to_vm2); small1=$(hist 2 vnet2 '<1.5K')
[ "$seg1" = "$seg0" ] || fail "gro off: GRO still took $((seg1 - seg0)) segments"
[ "$big1" = "$big0" ] || fail "gro off: $((big1 - big0)) frames of 1.5 KB or more to the VM"
[ $((small1 - small0)) -gt 10000 ] || fail "gro off: only $((small1 - small0)) frames to the VM"
vx 2 set gro on >/dev/null
pass "gro off: $((small1 - small0)) frames to the VM, all under 1.5 KB, GRO took none ($gbit Gbit/s)"

# ---- gro-max-size -----------------------------------------------------------
vx 2 set gro-max-size 16000 >/dev/null
over0=$(( $(hist 2 vnet2 16K-32K) + $(hist 2 vnet2 32K-64K) )); mid0=$(hist 2 vnet2 8K-16K)
gbit=$(rig_iperf 1 1) || fail "iperf3 with gro-max-size 16000"
over1=$(( $(hist 2 vnet2 16K-32K) + $(hist 2 vnet2 32K-64K) )); mid1=$(hist 2 vnet2 8K-16K)
[ "$over1" = "$over0" ] || fail "gro-max-size 16000: $((over1 - over0)) frames over 16K to the VM"
[ $((mid1 - mid0)) -gt 1000 ] || fail "gro-max-size 16000: only $((mid1 - mid0)) frames of 8K-16K"
vx 2 set gro-max-size 65535 >/dev/null
over0=$(( $(hist 2 vnet2 32K-64K) ))
rig_iperf 1 1 >/dev/null || fail "iperf3 with gro-max-size 65535"
[ $(( $(hist 2 vnet2 32K-64K) - over0 )) -gt 1000 ] || fail "gro-max-size back to 65535: no 32K+ frames"
pass "gro-max-size 16000: $((mid1 - mid0)) frames of 8K-16K, none bigger; 65535 again: 32K+ frames"

# ---- rx-csum off --------------------------------------------------------------
# Datagrams the kernel did not coalesce are the ones the switch checks:
# udp-gro off on host 2 makes every datagram one of them.
vx 2 set udp-gro off >/dev/null
rxc() { vx_stat 2 "d['rx_csum']['good'] + d['rx_csum']['finished'] + d['rx_csum']['bad']"; }
c0=$(rxc); rig_iperf 1 1 >/dev/null || fail "iperf3 with udp-gro off"; c1=$(rxc)
[ $((c1 - c0)) -gt 10000 ] || fail "rx-csum on: only $((c1 - c0)) inner checksums checked"
vx 2 set rx-csum off >/dev/null
[ "$(vx_stat 2 'd["rx_csum"]["on"]')" = False ] || fail "stats do not say rx-csum is off"
c2=$(rxc); gbit=$(rig_iperf 1 1) || fail "iperf3 with rx-csum off"; c3=$(rxc)
[ "$c3" = "$c2" ] || fail "rx-csum off: still $((c3 - c2)) checksums checked"
vx 2 set rx-csum on >/dev/null
vx 2 set udp-gro on >/dev/null
pass "rx-csum: on checked $((c1 - c0)) inner checksums; off checked none, TCP flowed ($gbit Gbit/s)"

# ---- fdb-ageing -----------------------------------------------------------------
mac1=$(nvm1 cat /sys/class/net/vnet1/address)
learned() { vx 2 fdb show | grep -q "^$mac1 "; }
vx 2 set fdb-ageing 0 >/dev/null
nvm1 ping -c 1 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"
sleep 4
learned || fail "fdb-ageing 0: vm1's MAC aged out"
vx 2 set fdb-ageing 2 >/dev/null
nvm1 ping -c 1 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"
t0=$(date +%s%N)
for i in $(seq 60); do learned || break; sleep 0.1; done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
! learned || fail "fdb-ageing 2: vm1's MAC still there after $ms ms"
[ "$ms" -ge 1500 ] || fail "fdb-ageing 2: vm1's MAC gone after only $ms ms"
aged=$(vx_stat 2 'd["switch"]["fdb_aged"]')
[ "$aged" -ge 1 ] || fail "fdb_aged not counted"
vx 2 set fdb-ageing 300 >/dev/null
nvm1 ping -c 1 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after ageing"
pass "fdb-ageing: 0 kept vm1's MAC 4 s; 2 aged it out after $ms ms (fdb_aged $aged)"

# ---- dstport -------------------------------------------------------------------
VX1="vx99 type vxlan vni 99 local 198.51.100.1 remote 198.51.100.2"
VX2="vx99 type vxlan vni 99 local 198.51.100.2 remote 198.51.100.1"
readd() { local side=$1; shift; vx "$side" port del vx99; vx "$side" port add "$@" >/dev/null; }
readd 1 $VX1 dstport 4790
readd 2 $VX2 dstport 4790
PCAP=$RIG_DIR/dstport.pcap
rig_capture "$H1" u1 "$PCAP" udp
nvm1 ping -c 5 -i 0.1 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping over dstport 4790"
sleep 1 # libpcap hands packets over per ring block, retired after up to 1 s
rig_capture_stop
ports=$(tshark -r "$PCAP" -Y 'ip.src == 198.51.100.1' -T fields -e udp.dstport 2>/dev/null | sed 's/,.*//' | sort -u | tr '\n' ' ')
[ "$ports" = "4790 " ] || fail "dstport 4790: datagrams went to UDP ports '$ports'"
vx 1 port show | grep -q "vx99 .*dstport 4790" || fail "port show does not show dstport 4790: $(vx 1 port show)"
readd 2 $VX2
! nvm1 ping -c 3 -i 0.2 -W 1 "$(vm_addr4 2)" >/dev/null 2>&1 || fail "ping crossed a 4790 -> 4789 mismatch"
readd 1 $VX1
nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after dstport back to 4789"
pass "dstport 4790: every datagram to UDP 4790 on the wire, traffic flows; a peer on 4789 gets nothing"

# ---- mtu on a vxlan port --------------------------------------------------------
rig_wire_mode mtu
vx 1 port del vx99
vx 1 port add $VX1 mtu 1400 > "$RIG_DIR/add.out"
grep -q "warning: vnet1 MTU 1450 is larger than the mtu 1400 of vx99" "$RIG_DIR/add.out" ||
	fail "no warning for a VM MTU over the port's mtu: $(cat "$RIG_DIR/add.out")"
exceeded() { vx_stat 1 "d['drops'].get('mtu_exceeded', 0) + sum(p['drops'].get('mtu_exceeded', 0) for p in d['ports'])"; }
e0=$(exceeded)
nvm1 ping -c 3 -i 0.2 -W 2 -M do -s 1372 "$(vm_addr4 2)" >/dev/null || fail "a 1400-byte ping under mtu 1400"
! nvm1 ping -c 3 -i 0.2 -W 1 -M do -s 1400 "$(vm_addr4 2)" >/dev/null 2>&1 || fail "a 1428-byte ping crossed mtu 1400"
e1=$(exceeded)
[ $((e1 - e0)) -ge 3 ] || fail "mtu 1400: $((e1 - e0)) mtu_exceeded drops for 3 big pings"
# TCP needs the VM to agree: a retransmitted full segment comes without TSO.
nvm1 ip link set vnet1 mtu 1400
PCAP=$RIG_DIR/mtu.pcap
rig_capture "$H1" u1 "$PCAP" -s 128 "udp dst port 4789 and src host 198.51.100.1"
gbit=$(rig_iperf 1 1) || fail "iperf3 under mtu 1400"
sleep 1
rig_capture_stop
# The inner IP length of each datagram (the second ip.len tshark lists).
# The veth keeps UDP_SEGMENT trains whole (tx-udp-segmentation), so a
# datagram here may be a train: its first inner packet is a segment's size.
read -r maxlen count < <(tshark -r "$PCAP" -T fields -e ip.len 2>/dev/null |
	awk -F, 'NF >= 2 { l = $2 + 0; if (l > m) m = l; n++ } END { print m + 0, n + 0 }')
[ "$count" -gt 1000 ] || fail "mtu 1400: only $count datagrams captured"
[ "$maxlen" -le 1400 ] || fail "mtu 1400: an inner packet of $maxlen bytes on the wire"
[ "$maxlen" -ge 1360 ] || fail "mtu 1400: the largest inner packet was only $maxlen bytes"
pass "vxlan mtu 1400: a VM MTU over it warned, 1428-byte pings dropped as mtu_exceeded ($((e1 - e0))), inner packets on the wire at most $maxlen bytes ($gbit Gbit/s)"
