#!/bin/bash
# A mixed host: taps (whose fds vxswitchd holds, served by the userspace
# datapath's workers) beside the kernel datapath's ports in one VNI,
# joined by the VNI's slow-path link vxslN <-> vxslNu (control/kdp_slowpath.c).
#
#   vm1 vnet1 (tap) 192.0.2.1 -- workers -- vxsl99u ==veth== vxsl99 --+
#   vm2 vnet2 (veth) 192.0.2.2 ------------------- tcx program -------+-- vxdp0 -- u1 ==== u2 -- h2 (userspace
#   vm5 vnet5 (veth) 192.0.2.5, VNI 100; later vm4 vnet4 (tap) 192.0.2.4, VNI 100      datapath) -- vnet3 (tap) 192.0.2.3 vm3
#   h1: vxswitchd --datapath kernel
#
# Checks: port show says which datapath serves each port (the tap: user,
# slow path via vxsl99; the link's two ends); ping tap <-> veth and tap <->
# remote both ways, veth <-> remote with the link untouched (fast path);
# the tap's rx/tx and the link's counters in `vxctl -j stats` match the
# pings sent; iperf3 tap -> veth, tap -> remote and back (figures printed,
# not judged); a flower rule on the tap and one on a kernel port at once,
# each with exactly its packets in `filter show -s`; a static FDB entry
# naming the tap refused, one naming a kernel port taken; a capture on
# the tap; diagnose says
# nothing of the link; show config names no internal port and a reload
# keeps the link; port del of the link is refused; VNI 100 has no link
# until a tap comes, and that tap sees none of VNI 99's broadcasts; an
# indev naming a tap on a kernel port's egress is refused; port
# del of the last tap removes the link; no BPF program is left.  Runs
# under BUILD=build-asan too (make asan-daemon): the logs are checked.
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "kmx-$$"
trap rig_cleanup EXIT

VM3=$P-vm3; VM4=$P-vm4; VM5=$P-vm5
SECS=${KMX_IPERF_SECONDS:-3}
progs_before=$(vxdp_progs)

rig_create 4
for ns in "$VM3" "$VM4" "$VM5"; do rig_ns_add "$ns"; done
# No IPv6 in the VMs: their router solicitations and MLD reports would
# blur the frame counts below.
for ns in "$VM1" "$VM2" "$VM3" "$VM4" "$VM5"; do
	n "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done

vm_up() { # NS DEV ADDR
	n "$1" ip link set "$2" mtu 1450 up
	n "$1" ip addr replace "$3/24" dev "$2"
}
# wait_dev NS DEV: until the daemon made it (5 s bound: a daemon that
# fails to start says why in its log).
wait_dev() {
	local i
	for i in $(seq 100); do n "$1" ip link show "$2" >/dev/null 2>&1 && return 0; sleep 0.05; done
	return 1
}
daemon_pid() { # HOST SIDE
	local p
	for p in $(ip netns pids "$1"); do
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = vxswitchd ]; then
			eval "VXD_PID_$2=$p"
			RIG_PIDS="$RIG_PIDS $p"
		fi
	done
}

cat > "$RIG_DIR/h1.conf" <<CONF
port add vx99 type vxlan vni 99 local 198.51.100.1 remote 198.51.100.2
port add vx100 type vxlan vni 100 local 198.51.100.1 remote 198.51.100.2
port add vnet2 type veth vni 99 netns $VM2 mtu 1450
port add vnet5 type veth vni 100 netns $VM5 mtu 1450
port add vnet1 type tap vni 99 netns $VM1 mtu 1450
CONF
cat > "$RIG_DIR/h2.conf" <<CONF
port add vx99 type vxlan vni 99 local 198.51.100.2 remote 198.51.100.1
port add vnet3 type tap vni 99 netns $VM3 mtu 1450
CONF
nh1 "$VXSWITCHD" --datapath kernel -c "$RIG_DIR/h1.conf" -s "$RIG_DIR/h1.sock" > "$RIG_DIR/h1.log" 2>&1 &
RIG_PIDS="$RIG_PIDS $!"
nh2 "$VXSWITCHD" --datapath user -c "$RIG_DIR/h2.conf" -s "$RIG_DIR/h2.sock" > "$RIG_DIR/h2.log" 2>&1 &
RIG_PIDS="$RIG_PIDS $!"
wait_dev "$VM1" vnet1 && wait_dev "$VM5" vnet5 && wait_dev "$VM3" vnet3 || fail "daemons: $(cat "$RIG_DIR"/h*.log)"
for i in $(seq 100); do [ -S "$RIG_DIR/h1.sock" ] && [ -S "$RIG_DIR/h2.sock" ] && break; sleep 0.05; done
daemon_pid "$H1" 1
daemon_pid "$H2" 2
grep -q "datapath kernel unavailable" "$RIG_DIR/h1.log" && fail "no kernel datapath: $(cat "$RIG_DIR/h1.log")"
vm_up "$VM1" vnet1 192.0.2.1
vm_up "$VM2" vnet2 192.0.2.2
vm_up "$VM3" vnet3 192.0.2.3
vm_up "$VM5" vnet5 192.0.2.5

# Which datapath serves which port.
[ "$(vx_port 1 vnet1 datapath)" = user ] || fail "vnet1: $(vx 1 port show)"
[ "$(vx_port 1 vnet1 slow_path)" = vxsl99 ] || fail "vnet1 slow path: $(vx 1 port show)"
[ "$(vx_port 1 vnet2 datapath)" = kernel ] || fail "vnet2: $(vx 1 port show)"
[ "$(vx_port 1 vxsl99 type)" = slowpath ] && [ "$(vx_port 1 vxsl99 datapath)" = kernel ] || fail "vxsl99: $(vx 1 port show)"
[ "$(vx_port 1 vxsl99u datapath)" = user ] && [ "$(vx_port 1 vxsl99u slow_path_link)" = 99 ] ||
	fail "vxsl99u: $(vx 1 port show)"
vx 1 port show | grep -q "^vnet1 .* datapath user (slow path via vxsl99)" || fail "port show text: $(vx 1 port show)"
nh1 ip link show vxsl100 >/dev/null 2>&1 && fail "VNI 100 has no tap but a link vxsl100"
vx 1 port show | grep -q vxsl100 && fail "port show lists vxsl100: $(vx 1 port show)"
pass "port show: $(vx 1 port show | grep -E '^(vnet1|vnet2|vxsl99|vxsl99u) ' | sed 's/ state.*//' | tr '\n' ';')"

ping_ok() { # NS ADDR: a few tries while the first ARP is flooded and learned
	local i
	for i in $(seq 10); do n "$1" ping -c 1 -W 1 "$2" >/dev/null 2>&1 && return 0; done
	return 1
}
ping_ok "$VM1" 192.0.2.2 || fail "ping tap vm1 -> veth vm2"
ping_ok "$VM2" 192.0.2.1 || fail "ping veth vm2 -> tap vm1"
ping_ok "$VM1" 192.0.2.3 || fail "ping tap vm1 -> remote vm3"
ping_ok "$VM3" 192.0.2.1 || fail "ping remote vm3 -> tap vm1"
ping_ok "$VM2" 192.0.2.3 || fail "ping veth vm2 -> remote vm3"
ping_ok "$VM3" 192.0.2.2 || fail "ping remote vm3 -> veth vm2"
mac1=$(nvm1 cat /sys/class/net/vnet1/address)
# fdb show is both datapaths' FDBs, each entry naming its datapath: the
# kernel one has the tap's MAC behind the link's kernel end, the
# userspace one behind the tap itself.
vx 1 fdb show vni 99 | grep -q "^$mac1 vni 99 port vxsl99 .* datapath kernel$" ||
	fail "the kernel did not learn the tap behind vxsl99: $(vx 1 fdb show)"
vx 1 fdb show vni 99 | grep -q "^$mac1 vni 99 port vnet1 .* datapath user$" ||
	fail "the userspace datapath's entry for the tap: $(vx 1 fdb show)"
pass "ping tap <-> veth, tap <-> remote, veth <-> remote, both ways; the tap's MAC learned behind vxsl99 (kernel) and vnet1 (user)"

# Counters: N pings tap -> veth; the tap's rx/tx and the link's ends count
# them (a few more frames allowed: ARP).
N=20
st() { vx_stat 1 "$1"; }
read -r t_rx0 t_tx0 u_tx0 k_rx0 < <(st "port('vnet1')['rx_frames'], port('vnet1')['tx_frames'], port('vxsl99u')['tx_frames'], port('vxsl99')['rx_frames']" | tr -d '(),')
nvm1 ping -c "$N" -i 0.02 -q 192.0.2.2 >/dev/null || fail "ping -c $N vm1 -> vm2"
read -r t_rx1 t_tx1 u_tx1 k_rx1 < <(st "port('vnet1')['rx_frames'], port('vnet1')['tx_frames'], port('vxsl99u')['tx_frames'], port('vxsl99')['rx_frames']" | tr -d '(),')
within() { [ "$1" -ge "$2" ] && [ "$1" -le $(( $2 + 3 )) ]; }
within $(( t_rx1 - t_rx0 )) "$N" || fail "tap vnet1 rx +$(( t_rx1 - t_rx0 )) for $N requests"
within $(( t_tx1 - t_tx0 )) "$N" || fail "tap vnet1 tx +$(( t_tx1 - t_tx0 )) for $N replies"
within $(( u_tx1 - u_tx0 )) "$N" || fail "vxsl99u tx +$(( u_tx1 - u_tx0 )) for $N requests"
within $(( k_rx1 - k_rx0 )) "$N" || fail "vxsl99 (kernel) rx +$(( k_rx1 - k_rx0 )) for $N requests"
pass "counters for $N pings tap -> veth: vnet1 rx +$(( t_rx1 - t_rx0 )) tx +$(( t_tx1 - t_tx0 )), vxsl99u tx +$(( u_tx1 - u_tx0 )), vxsl99 rx +$(( k_rx1 - k_rx0 ))"

vx 1 stats port vnet1 | grep -q "^port vnet1 (tap vni 99 datapath user (slow path via vxsl99))" || fail "stats vnet1: $(vx 1 stats port vnet1)"
vx 1 stats port vxsl99 | grep -q "^port vxsl99 (slowpath vni 99 datapath kernel)" || fail "stats vxsl99: $(vx 1 stats port vxsl99)"

# veth <-> remote stays on the fast path: the link carries none of it.
read -r k_tx0 < <(st "port('vxsl99')['tx_frames']")
nvm2 ping -c "$N" -i 0.02 -q 192.0.2.3 >/dev/null || fail "ping -c $N vm2 -> vm3"
read -r k_tx1 < <(st "port('vxsl99')['tx_frames']")
[ $(( k_tx1 - k_tx0 )) -le 4 ] || fail "vm2 <-> vm3 crossed the slow-path link: vxsl99 tx +$(( k_tx1 - k_tx0 )) for $N pings"
pass "veth <-> remote on the fast path: vxsl99 tx +$(( k_tx1 - k_tx0 )) during $N pings vm2 -> vm3"

# iperf3 (figures printed, not judged: 2 shared vCPUs).
g12=$(iperf_run "$VM2" "$VM1" 192.0.2.2 5201 "$SECS" "$RIG_DIR/i12.json") || fail "iperf3 tap vm1 -> veth vm2"
g13=$(iperf_run "$VM3" "$VM1" 192.0.2.3 5202 "$SECS" "$RIG_DIR/i13.json") || fail "iperf3 tap vm1 -> remote vm3"
g21=$(iperf_run "$VM1" "$VM2" 192.0.2.1 5204 "$SECS" "$RIG_DIR/i21.json") || fail "iperf3 veth vm2 -> tap vm1"
g31=$(iperf_run "$VM1" "$VM3" 192.0.2.1 5205 "$SECS" "$RIG_DIR/i31.json") || fail "iperf3 remote vm3 -> tap vm1"
g23=$(iperf_run "$VM3" "$VM2" 192.0.2.3 5203 "$SECS" "$RIG_DIR/i23.json") || fail "iperf3 veth vm2 -> remote vm3"
pass "iperf3 ${SECS}s: tap -> veth $g12 Gbit/s, tap -> remote $g13, veth -> tap $g21, remote -> tap $g31 (veth -> remote, fast path: $g23)"

# A flower rule on the tap (the userspace datapath's rules path) and a
# capture of it work beside the kernel datapath.  Rules on both
# datapaths at once: `filter show -s` sums each datapath's counts
# (dpif rule_counters) and each rule has exactly its own.
# rule_packets PORT: the packets of PORT's pref 1 ingress rule.
rule_packets() {
	vx 1 -j filter show -s dev "$1" ingress | /usr/bin/python3 -c '
import json, sys
for r in json.load(sys.stdin):
	if r.get("options") and r["pref"] == 1:
		print(r["options"]["actions"][0]["stats"]["packets"])
		sys.exit(0)
sys.exit("no pref 1 rule")'
}
vx 1 filter add dev vnet1 pref 1 ingress protocol ip flower ip_proto icmp action drop || fail "filter add on vnet1"
vx 1 filter add dev vnet2 pref 1 ingress protocol ip flower ip_proto icmp action pass || fail "filter add on vnet2"
nvm1 ping -c 3 -i 0.1 -W 1 -q 192.0.2.2 >/dev/null 2>&1 && fail "the drop rule on vnet1 let the pings through"
nvm2 ping -c 4 -i 0.1 -q 192.0.2.3 >/dev/null || fail "ping vm2 -> vm3 through vnet2's pass rule"
[ "$(rule_packets vnet1)" = 3 ] || fail "vnet1's rule (userspace datapath): $(vx 1 filter show -s dev vnet1 ingress)"
[ "$(rule_packets vnet2)" = 4 ] || fail "vnet2's rule (kernel datapath): $(vx 1 filter show -s dev vnet2 ingress)"
pass "filter show -s beside each other: vnet1's drop 3 packets (userspace datapath), vnet2's pass 4 (kernel)"
vx 1 filter del dev vnet1 pref 1 ingress || fail "filter del"
vx 1 filter del dev vnet2 pref 1 ingress || fail "filter del vnet2"
# The FDB is the kernel datapath's: a static entry names a kernel port;
# the tap's MACs are behind the slow-path link, so naming the tap is
# refused, saying so.
rc=0; vx 1 fdb add 02:00:00:00:99:01 vni 99 port vnet1 2>"$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] && grep -q "port vnet1: a tap beside the kernel datapath" "$RIG_DIR/err" ||
	fail "fdb add naming the tap: exit $rc, $(cat "$RIG_DIR/err")"
vx 1 fdb add 02:00:00:00:99:02 vni 99 port vnet2 || fail "fdb add naming vnet2"
vx 1 fdb show vni 99 | grep -q "^02:00:00:00:99:02 vni 99 port vnet2 static " || fail "static entry: $(vx 1 fdb show)"
vx 1 fdb del 02:00:00:00:99:02 vni 99 || fail "fdb del"
vx 1 fdb show vni 99 | grep -q "^02:00:00:00:99:02 " && fail "fdb del left it: $(vx 1 fdb show)"
nvm1 ping -c 2 -i 0.1 -q 192.0.2.2 >/dev/null || fail "ping after the rule went"
# A mirred between the tap (userspace datapath) and a kernel port would
# reach the other side as a frame to switch: refused both ways, naming both.
for rule in "vnet1 redirect dev vx99" "vx99 mirror dev vnet1" "vnet2 redirect dev vnet1"; do
	set -- $rule
	rc=0; vx 1 filter add dev "$1" pref 1 ingress protocol ip flower action mirred egress "$2" dev "$4" \
		2>"$RIG_DIR/err" || rc=$?
	[ "$rc" = 1 ] && grep -q "mirred cannot cross between them" "$RIG_DIR/err" ||
		fail "a mirred $1 -> $4 across the datapaths: exit $rc, $(cat "$RIG_DIR/err")"
	[ -z "$(vx 1 filter show dev "$1" ingress)" ] || fail "the refused rule is on $1"
done
# An egress rule of a kernel port with indev naming the tap: the tap's
# frames reach vnet2 by the link, which does not say which tap: refused.
rc=0; vx 1 filter add dev vnet2 egress protocol ip flower indev vnet1 action drop 2>"$RIG_DIR/err" || rc=$?
[ "$rc" = 1 ] && grep -q "indev vnet1 is a tap beside the kernel datapath" "$RIG_DIR/err" ||
	fail "indev naming the tap on vnet2's egress: exit $rc, $(cat "$RIG_DIR/err")"
nvm1 ping -c 2 -i 0.1 -q 192.0.2.2 >/dev/null || fail "ping after the refusals"
timeout 10 "$VXCTL" --socket "$RIG_DIR/h1.sock" capture vnet1 -c 2 -w "$RIG_DIR/c.pcap" icmp >/dev/null 2>&1 &
capp=$!
for i in $(seq 20); do nvm1 ping -c 1 -W 1 -q 192.0.2.2 >/dev/null 2>&1; kill -0 "$capp" 2>/dev/null || break; done
wait "$capp" || fail "capture vnet1 did not get 2 frames"
[ "$(tcpdump -nn -r "$RIG_DIR/c.pcap" 2>/dev/null | grep -c ICMP)" = 2 ] || fail "capture: $(tcpdump -nn -r "$RIG_DIR/c.pcap" 2>&1)"
pass "on the tap: a flower drop rule held 3 pings, its removal let them through; a mirred across the datapaths and an indev naming the tap on a kernel port's egress refused; capture vnet1 took 2 ICMP frames"

# The link's kernel end is a port no config line names, yet fdb show
# prints it: capture, diagnose and fdb add take its name.
timeout 10 "$VXCTL" --socket "$RIG_DIR/h1.sock" capture vxsl99 -c 2 -w "$RIG_DIR/k.pcap" icmp >/dev/null 2>"$RIG_DIR/k.err" &
capp=$!
for i in $(seq 20); do nvm1 ping -c 1 -W 1 -q 192.0.2.2 >/dev/null 2>&1; kill -0 "$capp" 2>/dev/null || break; done
wait "$capp" || fail "capture vxsl99 did not get 2 frames: $(cat "$RIG_DIR/k.err")"
[ "$(tcpdump -nn -r "$RIG_DIR/k.pcap" 2>/dev/null | grep -c ICMP)" = 2 ] || fail "capture vxsl99: $(tcpdump -nn -r "$RIG_DIR/k.pcap" 2>&1)"
rc=0; vx 1 diagnose port vxsl99 > "$RIG_DIR/d.out" 2>&1 || rc=$?
[ "$rc" != 2 ] && ! grep -q "no such port" "$RIG_DIR/d.out" || fail "diagnose port vxsl99: exit $rc, $(cat "$RIG_DIR/d.out")"
vx 1 fdb add 02:00:00:00:99:03 vni 99 port vxsl99 || fail "fdb add naming vxsl99"
vx 1 fdb show vni 99 | grep -q "^02:00:00:00:99:03 vni 99 port vxsl99 static .* datapath kernel$" ||
	fail "static entry behind vxsl99: $(vx 1 fdb show)"
vx 1 fdb del 02:00:00:00:99:03 vni 99 || fail "fdb del behind vxsl99"
pass "the link's kernel end vxsl99: capture took 2 ICMP frames, diagnose and fdb add/del take its name"

# diagnose judges no VM behind the link's ends (no tap offload or VM MTU
# finding of vxsl99u / vxsl99), and VNI 99's way out is the link.
dg=$(vx 1 diagnose 2>&1) || true
echo "$dg" | grep -E "^vxsl99u?: (TSO|USO|VM MTU)|VNI 99 has .* no vxlan port" && fail "diagnose judges the slow-path link as a VM: $dg"
pass "diagnose: no finding about the slow-path link ($(echo "$dg" | grep -c .) lines)"

# show config names no internal port; a reload of it keeps the link.
vx 1 show config | grep -q vxsl && fail "show config lists an internal port: $(vx 1 show config)"
vx 1 show config | grep -q "^port add vnet1 type tap vni 99" || fail "show config lost the tap: $(vx 1 show config)"
idx0=$(nh1 cat /sys/class/net/vxsl99/ifindex)
vx 1 save "$RIG_DIR/h1.conf" >/dev/null || fail "save"
vx 1 reload >/dev/null || fail "reload: $(vx 1 reload 2>&1)"
[ "$(nh1 cat /sys/class/net/vxsl99/ifindex)" = "$idx0" ] || fail "the reload remade vxsl99"
nvm1 ping -c 2 -i 0.1 -q 192.0.2.3 >/dev/null || fail "ping vm1 -> vm3 after the reload"
out=$(vx 1 port del vxsl99 2>&1) && fail "port del vxsl99 accepted"
echo "$out" | grep -q "slow-path link of vni 99" || fail "port del vxsl99 said: $out"
out=$(vx 1 port del vxsl99u 2>&1) && fail "port del vxsl99u accepted"
pass "show config has no internal port, reload kept vxsl99 (ifindex $idx0); port del refused: $out"

# VNI 100: a tap comes, its link with it; VNI 99's broadcasts do not reach it.
vx 1 port add vnet4 type tap vni 100 netns "$VM4" mtu 1450 || fail "port add vnet4"
vm_up "$VM4" vnet4 192.0.2.4
[ "$(vx_port 1 vnet4 slow_path)" = vxsl100 ] || fail "vnet4: $(vx 1 port show)"
ping_ok "$VM4" 192.0.2.5 || fail "ping tap vm4 -> veth vm5 in VNI 100"
caps=""
for v in 1 4; do
	n "$([ $v = 1 ] && echo "$VM1" || echo "$VM4")" timeout 5 tcpdump -i "vnet$v" -nn -l "arp and host 192.0.2.99" \
		> "$RIG_DIR/arp$v.txt" 2> "$RIG_DIR/arp$v.err" &
	caps="$caps $!"
done
for i in $(seq 100); do grep -q listening "$RIG_DIR/arp1.err" && grep -q listening "$RIG_DIR/arp4.err" && break; sleep 0.05; done
nvm2 ping -c 3 -i 0.3 -W 1 192.0.2.99 >/dev/null 2>&1 || true
for c in $caps; do wait "$c" || true; done # timeout ends each (5 s)
grep -q "ARP" "$RIG_DIR/arp1.txt" || fail "vm1 (tap, VNI 99) did not see vm2's ARP broadcast: $(cat "$RIG_DIR/arp1.err")"
grep -q "ARP" "$RIG_DIR/arp4.txt" && fail "vm4 (tap, VNI 100) saw VNI 99's broadcast: $(cat "$RIG_DIR/arp4.txt")"
pass "VNI 100's tap vnet4 (via vxsl100) saw none of VNI 99's ARP broadcasts ($(grep -c ARP "$RIG_DIR/arp1.txt") seen by vm1)"

# The last tap of a VNI goes: so does its link.
vx 1 port del vnet1 || fail "port del vnet1"
nh1 ip link show vxsl99 >/dev/null 2>&1 && fail "vxsl99 outlived the last tap of VNI 99"
vx 1 port show | grep -q "^vxsl99" && fail "port show still lists vxsl99: $(vx 1 port show)"
nh1 ip link show vxsl100 >/dev/null 2>&1 || fail "vxsl100 went with VNI 99's tap"
nvm2 ping -c 2 -i 0.1 -q 192.0.2.3 >/dev/null || fail "ping vm2 -> vm3 after the link went"
pass "port del of VNI 99's last tap removed vxsl99 (vxsl100 stays, vm2 <-> vm3 still forwards)"

# The daemon stops: its links and programs go.
rig_vxswitchd_stop 1
nh1 ip link show vxsl100 >/dev/null 2>&1 && fail "vxsl100 left after the daemon stopped; its log: $(tail -n 20 "$RIG_DIR/h1.log")"
progs_left=$(vxdp_progs_new "$progs_before")
# Not more than before (other helpers' unit tests load vxdp programs too:
# the count can fall while this test runs, never rise by ours).
[ -z "$progs_left" ] || fail "BPF programs left: ids $progs_left"
if grep -l "Sanitizer\|runtime error" "$RIG_DIR"/h*.log >/dev/null 2>&1; then
	cat "$RIG_DIR"/h*.log >&2
	fail "sanitizer report in a daemon's log"
fi
pass "stop: no slow-path link, no program left"
