#!/bin/bash
# Interop of the kernel datapath (vxswitchd --datapath kernel on host 1)
# with the two peers an operator would have on host 2:
#   1. the kernel's own vxlan + bridge: ping (IPv4, IPv6) and one iperf3
#      stream both ways, in gso-wire and mtu-wire over an IPv4 underlay
#      and gso-wire over IPv6; learning from the peer's frames;
#   2. Open vSwitch 3.1 (userspace datapath, started by hand as vxbench
#      does): ping and iperf3 both ways; the outer UDP checksums our
#      collect_md device sends are verified by tshark, and OVS counts no
#      tunnel error.  (With the veth's tx offload on, the checksums leave
#      unfinished and OVS drops them, as for the userspace datapath:
#      docs/INTEROP.md; this test turns it off, as section 3 of
#      test_ovs_peer.sh does.)
#
#   vnet1 <= veth => h1 [vxdp0] -- u1 ===== u2 -- kvx + kbr | br-phy/br-int (ovs-vswitchd) -- vnet2
set -e
cd "$(dirname "$0")/../.."
TOP=$PWD
. bench/vxbench/datapaths.sh
command -v ovs-vswitchd >/dev/null || { apt-get install -y -qq openvswitch-switch >/dev/null; }
rig_init "vxt85-$$"
trap rig_cleanup EXIT

ping_ok() { # NS ADDR [ping args]
	local ns=$1 addr=$2 i; shift 2
	for i in $(seq 10); do n "$ns" ping "$@" -c 1 -W 1 "$addr" >/dev/null 2>&1 && return 0; done
	return 1
}

for combo in "4 gso" "4 mtu" "6 gso"; do
	set -- $combo
	underlay=$1 mode=$2
	rig_create "$underlay"
	rig_wire_mode "$mode"
	rig_vxswitchd_bpf 1 || fail "vxswitchd --datapath kernel"
	grep -q "datapath kernel unavailable" "$RIG_DIR/h1.log" && fail "no kernel datapath: $(cat "$RIG_DIR/h1.log")"
	KERNEL_UDPCSUM=$([ "$mode" = gso ] && echo 1 || echo 0) rig_kernel 2
	sleep 1 # IPv6 underlay: neighbour discovery on u1/u2
	ping_ok "$VM1" "$(vm_addr4 2)" || fail "ping kernel dp -> kernel vxlan ($mode-wire, IPv$underlay)"
	ping_ok "$VM2" "$(vm_addr4 1)" || fail "ping kernel vxlan -> kernel dp ($mode-wire, IPv$underlay)"
	ping_ok "$VM2" "$(vm_addr6 1)" -6 || fail "IPv6 ping kernel vxlan -> kernel dp ($mode-wire, IPv$underlay)"
	mac2=$(nvm2 cat /sys/class/net/vnet2/address)
	vx 1 fdb show vni 99 | grep -q "^$mac2 vni 99 port vx99 remote $(u_addr 2) " || fail "fdb: $(vx 1 fdb show)"
	up=$(rig_iperf 2 1) || fail "iperf3 kernel dp -> kernel vxlan ($mode-wire, IPv$underlay)"
	down=$(rig_iperf 2 2) || fail "iperf3 kernel vxlan -> kernel dp ($mode-wire, IPv$underlay)"
	/usr/bin/python3 -c "import sys; sys.exit(0 if $up > 0.05 and $down > 0.05 else 1)" || fail "iperf3: $up / $down"
	pass "kernel datapath <-> kernel vxlan + bridge, $mode-wire, IPv$underlay underlay: ping v4/v6, learned vm2 behind $(u_addr 2), iperf3 $up / $down Gbit/s"
	rig_cleanup
	rig_init "vxt85-$$"
done

# ---- Open vSwitch -----------------------------------------------------------------------
rig_create 4
# tx checksum offload off before any frame leaves: a VM's first frames
# (IPv6 autoconfiguration, flooded) would otherwise leave unfinished.
nh1 ethtool -K u1 tx off >/dev/null
rig_vxswitchd_bpf 1 || fail "vxswitchd --datapath kernel"
ovs_start 2 false afpacket
n "$H2" ping -c 1 -W 2 "$(u_addr 1)" >/dev/null 2>&1 || true
OVSCTL="ovs-appctl -t $RIG_DIR/ovs-h2/vswitchd.ctl"
tunnel_errors() { $OVSCTL coverage/show | awk '$1 == "datapath_drop_tunnel_pop_error" { print $NF; f = 1 } END { if (!f) print 0 }'; }
# Open vSwitch counts a little late (its non-PMD thread reads its
# sockets in turns): settle until the count has held for 2 s.
a=$(tunnel_errors) still=0
for i in $(seq 60); do
	sleep 0.5; b=$(tunnel_errors)
	if [ "$b" = "$a" ]; then still=$((still + 1)); [ $still -ge 4 ] && break; else still=0 a=$b; fi
done
e0=$(tunnel_errors)
PCAP=$RIG_DIR/ovs.pcap
rig_capture "$H1" u1 "$PCAP" -s 1600 udp port 4789
ping_ok "$VM1" "$(vm_addr4 2)" || fail "ping kernel dp -> OVS"
ping_ok "$VM2" "$(vm_addr4 1)" || fail "ping OVS -> kernel dp"
nvm1 ping -c 5 -i 0.2 -W 2 -q "$(vm_addr4 2)" >/dev/null || fail "ping kernel dp -> OVS (5)"
sleep 1
rig_capture_stop
up=$(rig_iperf 3 1) || fail "iperf3 kernel dp -> OVS"
down=$(rig_iperf 3 2) || fail "iperf3 OVS -> kernel dp"
e1=$(tunnel_errors)
read -r ours good theirs < <(tshark -r "$PCAP" -o udp.check_checksum:TRUE -d udp.port==4789,vxlan -T fields -E occurrence=f \
	-e ip.src -e vxlan.vni -e udp.checksum.status 2>/dev/null | awk '
	{ split($3, c, ",") }
	$1 == "198.51.100.1" && $2 == 99 { o++; if (c[1] == 1) g++ }
	$1 == "198.51.100.2" && $2 == 99 { t++ }
	END { print o + 0, g + 0, t + 0 }')
[ "$ours" -ge 5 ] && [ "$theirs" -ge 5 ] || fail "capture holds $ours of ours, $theirs of OVS's: $(tshark -r "$PCAP" -d udp.port==4789,vxlan 2>&1 | head -30)"
[ "$good" = "$ours" ] || fail "tshark verified $good of our $ours outer UDP checksums"
[ "$e1" = "$e0" ] || fail "Open vSwitch counted $((e1 - e0)) tunnel errors"
/usr/bin/python3 -c "import sys; sys.exit(0 if $up > 0.05 and $down > 0.05 else 1)" || fail "iperf3 with OVS: $up / $down"
pass "kernel datapath <-> Open vSwitch: ping both ways, $good/$ours of our checksums verified by tshark ($theirs of OVS's datagrams), no tunnel error in OVS, iperf3 $up / $down Gbit/s"
