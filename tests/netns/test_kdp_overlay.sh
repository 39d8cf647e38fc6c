#!/bin/bash
# The kernel datapath (vxswitchd --datapath kernel): eBPF programs on the
# VMs' veths and on a collect_md vxlan device, vxswitchd as control plane.
#
#   vm1 vnet1 192.0.2.1 <= veth => vnet1 -- h1 [vxdp0] -- u1 ==== u2 -- [vxdp0] h2 -- vnet2 <= veth => vnet2 192.0.2.2 vm2
#   vm3 vnet3 (vm1's MAC and IP) ... VNI 100 ...                                   ... vnet4 (vm2's MAC and IP) vm4
#
# Checks: both daemons run the kernel datapath and say so per port; ping
# both ways (the first ARP is flooded: head-end replication to the remote
# VTEP); learning (fdb show: the remote MAC behind its VTEP, the local one
# behind its port); iperf3 both ways with the figures, then the kernel's
# vxlan + bridge on the same rig for comparison; the program's counters
# and size histogram; VNI isolation with the same MACs and IPs in VNI 100
# (nothing crosses: vm2 sees no frame of vm3's ping); a tap is served
# beside it through a slow-path link that goes with it; after the daemons
# stop, no program, device, veth or filter of theirs is left.
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt81-$$"
trap rig_cleanup EXIT

VM3=$P-vm3; VM4=$P-vm4
# The streams' figures are printed, not judged (vxbench compares the
# datapaths): 2 s each shows they run; KDP_IPERF_SECONDS=5 for steadier ones.
SECS=${KDP_IPERF_SECONDS:-2}
progs_before=$(vxdp_progs)

rig_create 4
rig_ns_add "$VM3"
rig_ns_add "$VM4"
# A third host h3 (vm5 in VNI 99) on a second underlay link to h1 only:
# h1 floods to h2 and h3.
VM5=$P-vm5
rig_ns_add "$VM5"
rig_h3

# kdp_vxswitchd SIDE: vxswitchd --datapath kernel in host SIDE with VNI 99
# (vnetSIDE into vmSIDE) and VNI 100 (vnet{SIDE+2} into vm{SIDE+2}).
kdp_vxswitchd() {
	local side=$1 other=$(( 3 - $1 )) host vm vmb cfg
	if [ "$side" = 1 ]; then host=$H1; vm=$VM1; vmb=$VM3; else host=$H2; vm=$VM2; vmb=$VM4; fi
	cfg=$RIG_DIR/h$side.conf
	local r3=""
	[ "$side" = 1 ] && r3="remote 198.51.100.3"
	cat > "$cfg" <<CONF
port add vx99 type vxlan vni 99 local $(u_addr "$side") remote $(u_addr "$other") $r3
port add vx100 type vxlan vni 100 local $(u_addr "$side") remote $(u_addr "$other")
port add vnet$side type veth vni 99 netns $vm mtu 1450
port add vnet$(( side + 2 )) type veth vni 100 netns $vmb mtu 1450
CONF
	vxd_start "$host" "$side" "$vmb" "vnet$(( side + 2 ))" --datapath kernel || fail "vxswitchd $side did not start"
	rig_vm_addrs "$side" "vnet$side"
}
kdp_vxswitchd 1
kdp_vxswitchd 2
cat > "$RIG_DIR/h3.conf" <<CONF
port add vx99 type vxlan vni 99 local 198.51.100.3 remote 198.51.100.1
port add vnet5 type veth vni 99 netns $VM5 mtu 1450
CONF
vxd_start "$H3" 3 "$VM5" vnet5 --datapath kernel || fail "vxswitchd 3 did not start"
n "$VM5" ip link set vnet5 up
n "$VM5" ip addr add 192.0.2.5/24 dev vnet5
# VNI 100: the same MACs and addresses as VNI 99's VMs.
for pair in "$VM1 vnet1 $VM3 vnet3" "$VM2 vnet2 $VM4 vnet4"; do
	set -- $pair
	mac=$(n "$1" cat "/sys/class/net/$2/address")
	n "$3" ip link set "$4" address "$mac" up
	n "$3" ip addr replace "$(n "$1" ip -4 -o addr show dev "$2" | awk '{print $4}')" dev "$4"
done

grep -q "datapath kernel unavailable" "$RIG_DIR"/h*.log && fail "kernel datapath did not come up: $(cat "$RIG_DIR"/h*.log)"
for s in 1 2; do
	[ "$(vx_port "$s" "vnet$s" datapath)" = kernel ] || fail "port show $s: $(vx "$s" port show)"
	[ "$(vx_port "$s" vx99 datapath)" = kernel ] || fail "port show $s: vx99 not on the kernel datapath"
done
[ "$(vx_port 1 vnet1 deliver)" = redirect_peer ] || fail "vnet1 is not delivered with redirect_peer"
nh1 ip -d link show vxdp0 | grep -q "vxlan external" || fail "no collect_md vxlan device vxdp0 in h1"
pass "both hosts on the kernel datapath: $(vx 1 port show | grep '^vnet1 ')"

# A tap goes beside the kernel datapath, on the userspace one through the
# VNI's slow-path link (test_kdp_mixed.sh tests its traffic); its port del
# takes the link along.
vx 1 port add t9 type tap vni 99 netns "$VM1" || fail "a tap was refused beside the kernel datapath"
[ "$(vx_port 1 t9 slow_path)" = vxsl99 ] || fail "tap t9: $(vx 1 port show)"
vx 1 port del t9 || fail "port del t9"
nh1 ip link show vxsl99 >/dev/null 2>&1 && fail "vxsl99 outlived the tap"
pass "a tap is served beside the kernel datapath (slow path via vxsl99), and its link goes with it"

ping_ok() { # NS ADDR
	local i
	for i in $(seq 10); do n "$1" ping -c 1 -W 1 "$2" >/dev/null 2>&1 && return 0; done
	return 1
}
ping_ok "$VM1" 192.0.2.2 || fail "ping vm1 -> vm2"
ping_ok "$VM2" 192.0.2.1 || fail "ping vm2 -> vm1"
p50=$(nvm1 ping -c 20 -i 0.05 -q 192.0.2.2 | awk -F/ '/^rtt/ {print $5}')
pass "ping both ways (avg rtt $p50 ms)"

# Flooding to three VTEPs: vm1's ARP for vm5 goes to h2 (vm2 sees it)
# and h3 (vm5 answers); vm5's reply is unicast back to h1 only.
# tcpdump in vm2 until it has the flooded ARP request (it says
# "listening" once its socket is bound: no frame is missed after that).
n "$VM2" timeout 10 tcpdump -i vnet2 -nn -l -c 1 "arp and arp[24:4] = 0xc0000205" \
	> "$RIG_DIR/arp2.txt" 2> "$RIG_DIR/arp2.err" &
capture=$!
for i in $(seq 100); do grep -q listening "$RIG_DIR/arp2.err" && break; sleep 0.05; done
ping_ok "$VM1" 192.0.2.5 || fail "ping vm1 -> vm5 on the third host: $(cat "$RIG_DIR/h3.log")"
wait "$capture" || true
grep -q "who-has 192.0.2.5" "$RIG_DIR/arp2.txt" || fail "vm2 did not get vm1's flooded ARP for vm5: $(cat "$RIG_DIR/arp2.txt" "$RIG_DIR/arp2.err")"
n "$H3" "$VXCTL" --socket "$RIG_DIR/h3.sock" fdb show | grep -q "remote 198.51.100.1 " || fail "h3 learned nothing"
pass "flooding: vm1's ARP for vm5 reached vm2 on h2 and vm5 on h3 (it answered)"

# Learning: h1 knows vm2's MAC behind 198.51.100.2 and vm1's behind vnet1.
mac1=$(nvm1 cat /sys/class/net/vnet1/address); mac2=$(nvm2 cat /sys/class/net/vnet2/address)
vx 1 fdb show vni 99 | grep -q "^$mac2 vni 99 port vx99 remote 198.51.100.2 " || fail "fdb show 1: $(vx 1 fdb show)"
vx 1 fdb show vni 99 | grep -q "^$mac1 vni 99 port vnet1 " || fail "fdb show 1 lacks vm1: $(vx 1 fdb show)"
vx 2 fdb show vni 99 | grep -q "^$mac1 vni 99 port vx99 remote 198.51.100.1 " || fail "fdb show 2: $(vx 2 fdb show)"
pass "learned: $(vx 1 fdb show vni 99 | tr '\n' ';')"

# VNI isolation: vm3 pings "192.0.2.2" in VNI 100 (vm4, which has vm2's
# MAC and address); vm2 in VNI 99 answers none of it (its echo requests
# received), vm4 answers all.
echos() { n "$1" awk '/^Icmp:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "InEchos") c = i; h = 1 } else print $c }' /proc/net/snmp; }
e2=$(echos "$VM2"); e4=$(echos "$VM4")
ping_ok "$VM3" 192.0.2.2 || fail "ping vm3 -> vm4 in VNI 100"
n "$VM3" ping -c 10 -i 0.05 -q 192.0.2.2 >/dev/null || fail "ping vm3 -> vm4"
[ "$(echos "$VM2")" = "$e2" ] || fail "vm2 (VNI 99) received $(( $(echos "$VM2") - e2 )) echo requests of VNI 100's ping"
[ $(( $(echos "$VM4") - e4 )) -ge 10 ] || fail "vm4 received $(( $(echos "$VM4") - e4 )) of vm3's echo requests"
vx 1 fdb show vni 100 | grep -q "^$mac2 vni 100 port vx100 remote 198.51.100.2 " || fail "fdb 100: $(vx 1 fdb show vni 100)"
pass "VNI isolation: same MACs and IPs in VNI 99 and 100: vm4 got $(( $(echos "$VM4") - e4 )) echo requests, vm2 0"

# iperf3 both ways.
g12=$(rig_iperf "$SECS" 1) || fail "iperf3 vm1 -> vm2"
g21=$(rig_iperf "$SECS" 2) || fail "iperf3 vm2 -> vm1"
big=$(vx 2 -j stats port vnet2 | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["ports"][0]
h = p["tx_size_hist_bytes"]
t = sum(h.values())
print("%.3f" % ((h["32K-64K"] + h[">=64K"]) / t if t else 0))')
tx2=$(vx 2 -j stats port vnet2 | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["ports"][0]["tx_frames"])')
[ "$tx2" -gt 1000 ] || fail "vnet2's counters: tx $tx2"
pass "iperf3 kernel datapath (gso-wire): vm1->vm2 $g12 Gbit/s, vm2->vm1 $g21 Gbit/s; vnet2 got $tx2 frames, $big of bytes in frames >= 32 KB"
rig_wire_mode mtu
m12=$(rig_iperf "$SECS" 1) || fail "iperf3 mtu-wire vm1 -> vm2"
m21=$(rig_iperf "$SECS" 2) || fail "iperf3 mtu-wire vm2 -> vm1"
rig_wire_mode gso
pass "iperf3 kernel datapath (mtu-wire): vm1->vm2 $m12 Gbit/s, vm2->vm1 $m21 Gbit/s"

# An afpacket port: an existing veth of a "container" in VNI 99, the
# program attached to its host end.
CT=$P-ct1
rig_ns_add "$CT"
nh1 ip link add ct1h type veth peer name eth0 netns "$CT"
nh1 ip link set ct1h mtu 1450 up
n "$CT" ip link set eth0 mtu 1450 up
n "$CT" ip addr add 192.0.2.11/24 dev eth0
vx 1 port add ct1 type afpacket dev ct1h vni 99 || fail "afpacket port on the kernel datapath"
[ "$(vx_port 1 ct1 datapath)" = kernel ] && [ "$(vx_port 1 ct1 deliver)" = redirect_peer ] \
	|| fail "port show: $(vx 1 port show | grep '^ct1 ')"
ping_ok "$CT" 192.0.2.2 || fail "ping ct1 -> vm2 through the afpacket port"
ping_ok "$CT" 192.0.2.1 || fail "ping ct1 -> vm1 (local switching)"
vx 1 port del ct1 || fail "port del ct1"
nh1 tc filter show dev ct1h ingress | grep -q vxdp && fail "a filter left on ct1h"
n "$CT" ping -c 2 -W 1 192.0.2.2 >/dev/null 2>&1 && fail "ct1 still forwarded after port del"
nh1 ip link show ct1h >/dev/null 2>&1 || fail "port del deleted the afpacket link (not ours)"
pass "afpacket port: ping to the remote and the local VM, port del detaches and leaves the link"

# Ageing: with fdb-ageing 2, idle entries go (the VMs' MACs come back
# with the next frame).
vx 1 set fdb-ageing 2
for i in $(seq 50); do
	vx 1 fdb show vni 99 | grep -q "^$mac2 " || break
	sleep 0.2
done
vx 1 fdb show vni 99 | grep -q "^$mac2 " && fail "vm2's MAC did not age out: $(vx 1 fdb show vni 99)"
ping_ok "$VM1" 192.0.2.2 || fail "ping after ageing"
vx 1 fdb show vni 99 | grep -q "^$mac2 " || fail "vm2's MAC not learned again"
vx 1 set fdb-ageing 300
pass "ageing: vm2's MAC gone within $(( i / 5 )) s at fdb-ageing 2, learned again by the next ping"

# The daemons stop: nothing of theirs is left.
rig_vxswitchd_stop 1
rig_vxswitchd_stop 2
for p in $(ip netns pids "$H3"); do kill "$p"; done
for i in $(seq 50); do [ -z "$(ip netns pids "$H3")" ] && break; sleep 0.1; done
for h in "$H1" "$H2" "$H3"; do
	n "$h" ip link show vxdp0 >/dev/null 2>&1 && fail "vxdp0 left in $h"
	n "$h" ip link show type veth | grep -q vnet && fail "a veth left in $h: $(n "$h" ip link show type veth)"
done
progs_left=$(vxdp_progs_new "$progs_before")
[ -z "$progs_left" ] || fail "BPF programs left: ids $progs_left"
pass "cleanup: no vxdp0, no veth, no program left"
# A sanitizer build (BUILD=build-asan) reports into the daemons' logs.
if grep -l "Sanitizer\|runtime error" "$RIG_DIR"/h*.log >/dev/null 2>&1; then
	cat "$RIG_DIR"/h*.log >&2
	fail "sanitizer report in a daemon's log"
fi

# The kernel's vxlan + bridge on the same rig, same minute.
rig_kernel 1
rig_kernel 2
ping_ok "$VM1" 192.0.2.2 || fail "kernel bridge: ping"
k12=$(rig_iperf "$SECS" 1) || fail "iperf3 kernel vm1 -> vm2"
k21=$(rig_iperf "$SECS" 2) || fail "iperf3 kernel vm2 -> vm1"
rig_wire_mode mtu
km12=$(rig_iperf "$SECS" 1) || fail "iperf3 kernel mtu-wire vm1 -> vm2"
km21=$(rig_iperf "$SECS" 2) || fail "iperf3 kernel mtu-wire vm2 -> vm1"
pass "iperf3 kernel vxlan+bridge: gso-wire $k12 / $k21 Gbit/s, mtu-wire $km12 / $km21 (kernel datapath: gso-wire $g12 / $g21, mtu-wire $m12 / $m21; vm1->vm2 / vm2->vm1)"
