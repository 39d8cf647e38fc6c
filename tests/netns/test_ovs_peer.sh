#!/bin/bash
# Open vSwitch as the peer: host 1 runs vxswitchd, host 2 Open vSwitch 3.1
# with its userspace (netdev) datapath and userspace tunnelling, started by
# hand as vxbench does (this kernel has no openvswitch module).
#   1. defaults: our datagrams cross the underlay veth with unfinished UDP
#      checksums (tx checksum offload on the veth), Open vSwitch checks them
#      in software and drops them all (datapath_drop_tunnel_pop_error);
#      vxswitchd says so when the port is added, and port show -j has it;
#   2. `udpcsum off` on our port: ping and iperf3 both ways; tshark finds
#      our wire correct (VXLAN flags 0x08, VNI 99, zero UDP checksum) and
#      Open vSwitch's decap counters show no error;
#   3. `udpcsum on` with tx checksum offload off on the veth: the kernel
#      finishes our checksums, tshark verifies them, traffic flows, and no
#      note is given.
# docs/INTEROP.md says which settings each side needs and why.
#
#   vxt23-PID-vm1       vxt23-PID-h1                          vxt23-PID-h2                        vxt23-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- br-phy | br-int (ovs-vswitchd) --> vnet2 192.0.2.2
set -e
cd "$(dirname "$0")/../.."
TOP=$PWD
. bench/vxbench/datapaths.sh
command -v ovs-vswitchd >/dev/null || { apt-get install -y -qq openvswitch-switch >/dev/null; }
rig_init "vxt23-$$"
trap rig_cleanup EXIT

rig_create 4
rig_vxswitchd 1
ovs_start 2 false afpacket
n "$H2" ping -c 1 -W 2 "$(u_addr 1)" >/dev/null 2>&1 || true
OVSCTL="ovs-appctl -t $RIG_DIR/ovs-h2/vswitchd.ctl"
tunnel_errors() { $OVSCTL coverage/show | awk '$1 == "datapath_drop_tunnel_pop_error" { print $NF; f = 1 } END { if (!f) print 0 }'; }
VX1="vx99 type vxlan vni 99 local 198.51.100.1 remote 198.51.100.2"
readd() { vx 1 port del vx99; vx 1 port add $VX1 "$@" >"$RIG_DIR/add.out"; }

# ---- 1. defaults ------------------------------------------------------------------
readd
grep -q "note: vx99: its underlay u1 is a veth with tx checksum offload" "$RIG_DIR/add.out" ||
	fail "no note on the unfinished checksums: $(cat "$RIG_DIR/add.out")"
[ "$(vx_port 1 vx99 underlay_csum_unfinished)" = True ] || fail "port show -j does not say the checksums leave unfinished"
e0=$(tunnel_errors)
! nvm1 ping -c 3 -i 0.2 -W 1 "$(vm_addr4 2)" >/dev/null 2>&1 || fail "ping crossed with unfinished checksums: the note is wrong"
e1=$(tunnel_errors)
[ $((e1 - e0)) -gt 0 ] || fail "Open vSwitch counted no tunnel error: not the cause the note names"
pass "defaults: Open vSwitch dropped our datagrams ($((e1 - e0)) tunnel pop errors), as the note at port add says"

# ---- 2. udpcsum off ------------------------------------------------------------------
# vm1's kernel keeps resolving vm2 after the failed pings: its ARP
# retransmits would leave with unfinished checksums across the re-add.
nvm1 ip neigh flush all
readd udpcsum off
# Open vSwitch counts what section 1 sent a little later (its non-PMD
# thread reads its sockets in turns): settle until the count has held
# for 2 s.
a=$(tunnel_errors) still=0
for i in $(seq 60); do
	sleep 0.5; b=$(tunnel_errors)
	if [ "$b" = "$a" ]; then still=$((still + 1)); [ $still -ge 4 ] && break; else still=0 a=$b; fi
done
! grep -q "note:" "$RIG_DIR/add.out" || fail "a note with udpcsum off: $(cat "$RIG_DIR/add.out")"
e0=$(tunnel_errors)
PCAP=$RIG_DIR/ovs.pcap
rig_capture "$H1" u1 "$PCAP" -s 128 udp port 4789
nvm1 ping -c 5 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping vm1 -> vm2 (OVS) with udpcsum off"
nvm2 ping -c 5 -i 0.2 -W 2 "$(vm_addr4 1)" >/dev/null || fail "ping vm2 (OVS) -> vm1 with udpcsum off"
sleep 1
up=$(rig_iperf 3 1) || fail "iperf3 vm1 -> vm2 (OVS)"
down=$(rig_iperf 3 2) || fail "iperf3 vm2 (OVS) -> vm1"
sleep 1
rig_capture_stop
e1=$(tunnel_errors)
[ "$e1" = "$e0" ] || fail "Open vSwitch counted $((e1 - e0)) tunnel errors with udpcsum off"
# Our datagrams: flags 0x08 (I), VNI 99, UDP checksum 0; theirs: VNI 99.
read -r ours bad_ours theirs bad_theirs < <(tshark -r "$PCAP" -d udp.port==4789,vxlan -T fields \
	-e ip.src -e vxlan.flags -e vxlan.vni -e udp.checksum 2>/dev/null | awk '
	{ split($1, s, ","); split($4, c, ","); src = s[1] }
	src == "198.51.100.1" { o++; if ($2 != "0x0800" || $3 != 99 || (c[1] != "0x0000" && c[1] != "0")) bo++ }
	src == "198.51.100.2" { t++; if ($3 != 99) bt++ }
	END { print o + 0, bo + 0, t + 0, bt + 0 }')
echo "  udpcsum off: iperf3 $up Gbit/s to OVS, $down Gbit/s from it; captured $ours of our datagrams, $theirs of OVS's"
[ "$ours" -ge 5 ] && [ "$theirs" -ge 5 ] || fail "capture holds $ours / $theirs datagrams"
[ "$bad_ours" = 0 ] || fail "$bad_ours of our datagrams had wrong flags, VNI or a non-zero checksum"
[ "$bad_theirs" = 0 ] || fail "$bad_theirs of OVS's datagrams had another VNI"
pass "udpcsum off: ping and iperf3 both ways with OVS ($up / $down Gbit/s), our wire checked by tshark, no tunnel error in OVS"

# ---- 3. udpcsum on, tx checksum offload off on the veth ---------------------------------
nh1 ethtool -K u1 tx off >/dev/null
readd
! grep -q "note:" "$RIG_DIR/add.out" || fail "a note with tx checksum offload off: $(cat "$RIG_DIR/add.out")"
e0=$(tunnel_errors)
PCAP=$RIG_DIR/ovs-csum.pcap
rig_capture "$H1" u1 "$PCAP" -s 1600 udp dst port 4789 and src host 198.51.100.1
nvm1 ping -c 5 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping with udpcsum on and tx off"
sleep 1
rig_capture_stop
rig_iperf 2 1 >/dev/null || fail "iperf3 with udpcsum on and tx off"
e1=$(tunnel_errors)
read -r good total < <(tshark -r "$PCAP" -o udp.check_checksum:TRUE -d udp.port==4789,vxlan -T fields \
	-e udp.checksum.status 2>/dev/null | awk '{ split($1, c, ","); n++; if (c[1] == 1) g++ } END { print g + 0, n + 0 }')
[ "$total" -ge 5 ] && [ "$good" = "$total" ] || fail "tshark verified $good of $total outer UDP checksums"
[ "$e1" = "$e0" ] || fail "Open vSwitch counted $((e1 - e0)) tunnel errors with finished checksums"
pass "udpcsum on with the veth's tx offload off: $good/$total checksums verified by tshark, OVS decapsulates everything"
