#!/bin/bash
# A full underlay send buffer never blocks the datapath: sends are
# non-blocking, what the kernel will not take waits in a bounded backlog per
# socket, the worker asks for EPOLLOUT and drains it in order, and the
# control socket answers all the while.  The underlay is made slow with a
# tbf qdisc on h1's underlay veth, so the socket's send buffer fills.
#
#   vxt13-PID-vm1       vxt13-PID-h1                               vxt13-PID-h2       vxt13-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 (tbf 200mbit) ======== u2 -- vxswitchd --> vnet2 192.0.2.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt13-$$"
trap rig_cleanup EXIT

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"

# A deep, slow queue: the socket's bytes stay charged to it while they wait,
# so a sender faster than the queue fills the socket's 8 MB send buffer.
nh1 tc qdisc add dev u1 root tbf rate 100mbit burst 64kb limit 32mb

# UDP at 2 Gbit/s (no flow control: TCP would hold its window below 8 MB).
nvm2 iperf3 -s -1 -D -B "$(vm_addr4 2)" -p 5201 --logfile "$RIG_DIR/iperf-s.log" >/dev/null 2>&1
for i in $(seq 50); do nvm2 ss -lun 2>/dev/null | grep -q ":5201 " && break; nvm2 ss -ltn | grep -q ":5201 " && break; sleep 0.05; done
nvm1 iperf3 -c "$(vm_addr4 2)" -p 5201 -u -b 2G -l 1400 -t 3 --connect-timeout 5000 >"$RIG_DIR/udp.log" 2>&1 &
ipid=$!
sleep 1.5
# The control thread answers while the worker is backed up.
t0=$(date +%s%N)
vx 1 stats >/dev/null || fail "vxctl stats while the underlay is full"
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
[ "$ms" -lt 1000 ] || fail "vxctl stats took $ms ms while the underlay was full"
wait "$ipid" || { cat "$RIG_DIR/udp.log" >&2; fail "iperf3 -u over the slow underlay"; }

blocked=$(vx_stat 1 'port("vx99")["vxlan"]["socket"]["tx_backlogged"]')
drops=$(vx_stat 1 'port("vx99")["vxlan"]["socket"]["tx_backlog_drops"]')
[ "$blocked" -gt 0 ] || fail "the send buffer never filled (tx_backlogged 0): the test did not test"
vx 1 diagnose | grep -q "underlay send buffer filled" || fail "diagnose does not mention the full send buffer"
pass "underlay full: $blocked frames waited in the backlog, $drops dropped, vxctl answered in $ms ms"

nh1 tc qdisc del dev u1 root
nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after the underlay drained"
[ "$(vx_stat 1 'port("vx99")["vxlan"]["socket"]["tx_backlog_len"]')" = 0 ] || fail "backlog not drained"
up=$(rig_iperf 2 1) || fail "iperf3 after the underlay drained"
pass "backlog drained (EPOLLOUT resumed it), traffic flows again: $up Gbit/s"
