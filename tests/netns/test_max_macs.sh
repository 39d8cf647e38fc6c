#!/bin/bash
# max-macs (port security): a VM flooding 20,000 source MACs against
# `max-macs 100` fills only its own allowance; the flood is counted and
# named by diagnose; the other VM's entries and traffic are untouched.
#
#   vxt16-PID-vm1       vxt16-PID-h1                          vxt16-PID-h2       vxt16-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt16-$$"
trap rig_cleanup EXIT

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
vx 1 port del vnet1 >/dev/null
vx 1 port add vnet1 type tap vni 99 netns "$VM1" mtu "$(vm_mtu)" max-macs 100 >/dev/null || fail "port add with max-macs"
rig_vm_addrs 1 vnet1
vx 1 port show | grep -q "^vnet1 " || fail "vnet1 missing"
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping before the flood"
mac2=$(nvm2 cat /sys/class/net/vnet2/address)

nvm1 /usr/bin/python3 -c '
from scapy.all import Ether, IP, UDP, sendp
frames = [Ether(src="02:f1:00:%02x:%02x:%02x" % (i >> 16, (i >> 8) & 255, i & 255), dst="ff:ff:ff:ff:ff:ff") /
          IP(src="192.0.2.1", dst="192.0.2.255") / UDP(sport=9, dport=9) for i in range(20000)]
sendp(frames, iface="vnet1", verbose=False)'
sleep 0.5
macs=$(vx_stat 1 'port("vnet1")["fdb"]["macs"]')
refused=$(vx_stat 1 'port("vnet1")["fdb"]["refused"]')
behind=$(vx 1 fdb show vni 99 | grep -c " port vnet1 ")
[ "$macs" -le 100 ] && [ "$behind" -le 100 ] || fail "max-macs 100 did not hold: $macs counted, $behind in fdb show"
[ "$refused" -ge 19000 ] || fail "only $refused refused MACs counted"
vx 1 diagnose | grep -q "vnet1: .* refused by max-macs 100" || fail "diagnose does not name max-macs"
vx 1 fdb show vni 99 | grep -q "^$mac2 vni 99 port vx99" || fail "vm2's entry on h1 was disturbed"
nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after the flood"
up=$(rig_iperf 2 2) || fail "iperf3 vm2->vm1 after the flood"
pass "20000 MACs against max-macs 100: $macs learned, $refused refused and counted, vm2 unaffected ($up Gbit/s)"
vx 1 show config | grep -q "^port add vnet1 type tap .*max-macs 100" || fail "show config lacks max-macs"
pass "show config keeps max-macs"
