#!/bin/bash
# An afpacket port: a "container" namespace behind a veth, switched over
# VXLAN to a tap VM on the other host.
#
#   vxt24-PID-ct1                vxt24-PID-h1                           vxt24-PID-h2        vxt24-PID-vm2
#   eth0 192.0.2.11  <== veth ==> ct1h -- vxswitchd -- u1 ====== u2 -- vxswitchd --> vnet2 192.0.2.2
#                                (port ct1 type afpacket dev ct1h)                   (tap)
#
# Checks: ping and iperf3 both ways; TSO frames cross the afpacket port
# whole in both directions (its GSO counters, its tx size histogram); the
# link's tso off is still fine (the kernel cuts what we write); link down ->
# port down, up -> traffic (the socket is kept); link deleted -> port down,
# recreated -> back by itself, traffic resumes; show config gives back the
# line.  (The rig's tap VM vm1 on h1 stays, idle.)
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt24-$$"
trap rig_cleanup EXIT

CT=$P-ct1
CT_ADDR=192.0.2.11

ct() { n "$CT" "$@"; }

# The container's veth: eth0 inside, ct1h in h1 (no address: the switch's).
ct_link() {
	nh1 ip link add ct1h type veth peer name eth0 netns "$CT"
	nh1 ip link set ct1h mtu "$(vm_mtu)" up
	ct ip link set eth0 mtu "$(vm_mtu)" up
	ct ip addr replace "$CT_ADDR/24" dev eth0
}

ct_ping() { # ping vm2 from the container, a few tries
	local i
	for i in $(seq 20); do ct ping -c 1 -W 1 "$(vm_addr4 2)" >/dev/null 2>&1 && return 0; done
	return 1
}

port_state() { vx 1 port show | grep "^ct1 " || true; }

wait_state() { # PATTERN
	local i
	for i in $(seq 40); do port_state | grep -q "$1" && return 0; sleep 0.1; done
	return 1
}

afp() { vx_stat 1 "port(\"ct1\")[\"afpacket\"][\"$1\"]"; }

rig_create 4
rig_ns_add "$CT"
ct_link
LINE="port add ct1 type afpacket dev ct1h vni $VNI"
RIG_EXTRA_CONF="$LINE" rig_vxswitchd 1
rig_vxswitchd 2

port_state | grep -q "type afpacket" || fail "port show: $(vx 1 port show)"
port_state | grep -q "dev ct1h" || fail "port show lacks the dev: $(port_state)"
port_state | grep -q "state up" || fail "the afpacket port is not up: $(port_state)"
[ "$(vx_port 1 ct1 dev)" = ct1h ] || fail "-j port show: dev"
[ "$(vx_port 1 ct1 vnet_hdr_size)" = 12 ] || fail "vnet_hdr_size $(vx_port 1 ct1 vnet_hdr_size), expected 12 (PACKET_VNET_HDR_SZ)"
ct_ping || fail "ping container -> vm2"
nvm2 ping -c 3 -i 0.2 -W 2 "$CT_ADDR" >/dev/null || fail "ping vm2 -> container"
pass "afpacket port on a veth: up, ping both ways"

# --- iperf3 both ways, TSO frames whole -------------------------------------
tso=$(nh1 ethtool -k ct1h | awk '/^tcp-segmentation-offload:/ { print $2 }')
ct iperf3 -s -1 -D -B "$CT_ADDR" -p 5201 >/dev/null 2>&1
for i in $(seq 50); do ct ss -ltn 2>/dev/null | grep -q ":5201 " && break; sleep 0.05; done
nvm2 iperf3 -c "$CT_ADDR" -p 5201 -t 3 --connect-timeout 5000 -J > "$RIG_DIR/to-ct.json" || fail "iperf3 vm2 -> container"
to_ct=$(/usr/bin/python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]/1e9))' "$RIG_DIR/to-ct.json")
nvm2 iperf3 -s -1 -D -B "$(vm_addr4 2)" -p 5202 >/dev/null 2>&1
for i in $(seq 50); do nvm2 ss -ltn 2>/dev/null | grep -q ":5202 " && break; sleep 0.05; done
ct iperf3 -c "$(vm_addr4 2)" -p 5202 -t 3 --connect-timeout 5000 -J > "$RIG_DIR/from-ct.json" || fail "iperf3 container -> vm2"
from_ct=$(/usr/bin/python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]/1e9))' "$RIG_DIR/from-ct.json")

rx_avg=$(vx_stat 1 'port("ct1")["rx_bytes"] // port("ct1")["rx_frames"]')
[ "$rx_avg" -gt 8000 ] || fail "frames read from the container average $rx_avg bytes: not TSO-sized"
rx_gso=$(afp rx_gso_frames); tx_gso=$(afp tx_gso_frames); share=$(vx_stat 1 'big_share("ct1")')
[ "$rx_gso" -gt 100 ] || fail "afpacket rx_gso_frames $rx_gso: the container's TSO frames were not read whole"
[ "$tx_gso" -gt 100 ] || fail "afpacket tx_gso_frames $tx_gso: frames to the container were not written whole"
/usr/bin/python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 0.5 else 1)' "$share" ||
	fail "only $share of the bytes to the container went in frames >= 32 KB"
[ "$(afp tx_errors)" = 0 ] || fail "afpacket tx_errors $(afp tx_errors), last errno $(afp last_tx_errno)"
[ "$(afp rx_truncated)" = 0 ] || fail "afpacket rx_truncated $(afp rx_truncated)"
big_in=$(vx_stat 1 'port("vx99")["vxlan"]["gso_frames"]')
[ "$big_in" -gt 100 ] || fail "the vxlan port cut only $big_in GSO frames from the container"
pass "iperf3 vm2 -> container $to_ct Gbit/s, container -> vm2 $from_ct Gbit/s; afpacket rx gso $rx_gso (avg frame read $rx_avg B), tx gso $tx_gso, $share of bytes to the container in frames >= 32 KB (ct1h tso $tso)"

# --- the link takes no TSO: the kernel cuts what we write --------------------
nh1 ethtool -K ct1h tso off gso off >/dev/null
tx0=$(afp tx_gso_frames)
ct iperf3 -s -1 -D -B "$CT_ADDR" -p 5203 >/dev/null 2>&1
for i in $(seq 50); do ct ss -ltn 2>/dev/null | grep -q ":5203 " && break; sleep 0.05; done
nvm2 iperf3 -c "$CT_ADDR" -p 5203 -t 2 --connect-timeout 5000 -J > "$RIG_DIR/to-ct2.json" || fail "iperf3 vm2 -> container with ct1h tso off"
[ "$(afp tx_errors)" = 0 ] || fail "writes refused with ct1h tso off: errno $(afp last_tx_errno)"
[ "$(afp tx_gso_frames)" -gt "$tx0" ] || fail "no GSO frame written with ct1h tso off"
nh1 ethtool -K ct1h tso on gso on >/dev/null
pass "ct1h tso off: GSO frames still written ($(( $(afp tx_gso_frames) - tx0 )) more), no tx error: dev_queue_xmit segments them"

# --- show config round-trips --------------------------------------------------
got=$(vx 1 show config | grep "type afpacket" || true)
[ "$got" = "$LINE" ] || fail "show config says '$got', expected '$LINE'"
pass "show config: $got"

# --- link down, then up: the port follows, the socket stays -------------------
nh1 ip link set ct1h down
wait_state "state down (link down" || fail "port show does not say link down: $(port_state)"
sleep 0.3
port_state | grep -q "device gone" && fail "a link only down was taken for gone"
nh1 ip link set ct1h up
wait_state "state up" || fail "not up again: $(port_state)"
ct_ping || fail "no traffic after the link came up"
[ "$(vx_port 1 ct1 reattaches)" = 0 ] || fail "link down/up reopened the port"
pass "ct1h down: port down (link down); up: traffic again on the same socket"

# --- link deleted, then recreated: back by itself -------------------------------
nh1 ip link del ct1h
wait_state "state down (device gone" || fail "port show does not say gone: $(port_state)"
[ "$(vx_stat 1 'port("ct1")["lost_events"]')" = 1 ] || fail "lost_events not 1"
c0=$(pid_cpu_us "$VXD_PID_1"); t0=$(date +%s%N)
sleep 1
c1=$(pid_cpu_us "$VXD_PID_1"); t1=$(date +%s%N)
pct=$(( (c1 - c0) * 1000 / ((t1 - t0) / 1000) ))
[ "$pct" -lt 100 ] || fail "vxswitchd used $((pct / 10)).$((pct % 10))% of a core with its link gone"
ct_link
wait_state "state up" || fail "did not reattach: $(port_state)"
ct_ping || fail "no traffic after the link came back"
by=$(vx_port 1 ct1 reattached_by)
[ "$by" = "link event" ] || fail "reattached by '$by', not by its link event"
nvm2 ping -c 3 -i 0.2 -W 2 "$CT_ADDR" >/dev/null || fail "ping vm2 -> container after the reattach"
got=$(vx 1 show config | grep "type afpacket" || true)
[ "$got" = "$LINE" ] || fail "show config after the reattach: '$got'"
pass "ct1h deleted: port down ($((pct / 10)).$((pct % 10))% of a core meanwhile); recreated: reattached by its link event, traffic both ways"

# --- a link in another namespace (netns), with max-macs ----------------------
SW2=$P-sw2; CT2=$P-ct2
rig_ns_add "$SW2"; rig_ns_add "$CT2"
n "$SW2" ip link add ct2h type veth peer name eth0 netns "$CT2"
n "$SW2" ip link set ct2h mtu "$(vm_mtu)" up
n "$CT2" ip link set eth0 mtu "$(vm_mtu)" up
n "$CT2" ip addr add 192.0.2.12/24 dev eth0
LINE2="port add ct2 type afpacket dev ct2h vni $VNI netns $SW2 max-macs 1"
vx 1 $LINE2 >/dev/null || fail "$LINE2"
vx 1 port show | grep "^ct2 " | grep -q "netns $SW2" || fail "port show lacks the netns: $(vx 1 port show)"
ok=0
for i in $(seq 20); do n "$CT2" ping -c 1 -W 1 "$(vm_addr4 2)" >/dev/null 2>&1 && { ok=1; break; }; done
[ "$ok" = 1 ] || fail "no traffic from the container behind netns $SW2"
n "$CT2" /usr/bin/python3 -c '
from scapy.all import Ether, IP, UDP, sendp
sendp([Ether(src="02:24:00:00:00:%02x" % i, dst="ff:ff:ff:ff:ff:ff") / IP(src="192.0.2.12", dst="192.0.2.255") / UDP(dport=9)
       for i in range(5)], iface="eth0", verbose=False)'
sleep 0.3
macs=$(vx_stat 1 'port("ct2")["fdb"]["macs"]'); refused=$(vx_stat 1 'port("ct2")["fdb"]["refused"]')
[ "$macs" = 1 ] && [ "$refused" -ge 5 ] || fail "max-macs 1: $macs MACs learned, $refused refused"
got=$(vx 1 show config | grep "port add ct2 " || true)
[ "$got" = "$LINE2" ] || fail "show config says '$got', expected '$LINE2'"
pass "afpacket port on a link in netns $SW2: traffic; max-macs 1: $macs learned, $refused refused; show config: $got"

# --- refusals -----------------------------------------------------------------
out=$(vx 1 set gso off 2>&1) && fail "set gso off accepted beside an afpacket port"
echo "$out" | grep -Eq "afpacket port ct[12] reads TSO frames whole" || fail "gso off refusal: $out"
[ "$(vx 1 -j show knobs | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["gso"])')" = True ] ||
	fail "gso is not on after the refusal"
pass "set gso off refused: $out"
nh2 ip link add ct9h type veth peer name ct9p
vx 2 set gso off >/dev/null
out=$(vx 2 port add ct9 type afpacket dev ct9h vni "$VNI" 2>&1) && fail "afpacket port accepted with gso off"
echo "$out" | grep -q "gso is off" || fail "refusal with gso off: $out"
vx 2 set gso on >/dev/null
out=$(vx 2 port add ct9 type afpacket dev ct9h vni "$VNI") || fail "afpacket port refused with gso on again"
# ct9h keeps the kernel's 1500, more than the 1450 that fits the underlay
echo "$out" | grep -q "warning: ct9 MTU 1500 is larger than" || fail "no MTU warning for ct9h: $out"
vx 2 port del ct9 >/dev/null
pass "afpacket port refused while gso is off; accepted with gso on, with the MTU warning a tap gets"
out=$(vx 1 port add ct3 type afpacket dev nosuch vni "$VNI" 2>&1) && fail "a missing link was accepted"
echo "$out" | grep -q "no link nosuch" || fail "refusal does not name the missing link: $out"
vx 1 port show | grep -q "^ct3 " && fail "the refused port is listed"
ct_ping || fail "the switch stopped forwarding after a refusal"
pass "missing link refused: $out"
