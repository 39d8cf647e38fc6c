#!/bin/bash
# ARP and IPv6 neighbour discovery resolve through flooding (broadcast and
# multicast go to every local port of the VNI and, head-end replicated, to
# every remote VTEP); once both MACs are learned, unicast stops flooding.
# After `fdb flush`, unknown unicast floods again and still arrives.
#
#   vxt4-PID-vm1        vxt4-PID-h1                          vxt4-PID-h2        vxt4-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
#                                   198.51.100.1   VNI 99   198.51.100.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt4-$$"
trap rig_cleanup EXIT

rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
mac1=$(nvm1 cat /sys/class/net/vnet1/address)
mac2=$(nvm2 cat /sys/class/net/vnet2/address)

fl0=$(vx_stat 1 'd["switch"]["flooded"]')
nvm1 ping -c 1 -W 2 "$(vm_addr4 2)" >/dev/null || fail "first ping (ARP through flooding)"
fl1=$(vx_stat 1 'd["switch"]["flooded"]')
[ "$fl1" -gt "$fl0" ] || fail "the ARP request was not flooded on h1 ($fl0 -> $fl1)"
[ "$(vx_stat 1 'd["switch"]["replicated"]')" -ge 1 ] || fail "no head-end replication to the remote VTEP"
vx 1 fdb show | grep -q "^$mac2 vni 99 port vx99 remote 198.51.100.2" || fail "h1 did not learn vm2's MAC behind the VTEP: $(vx 1 fdb show)"
vx 1 fdb show | grep -q "^$mac1 vni 99 port vnet1" || fail "h1 did not learn vm1's MAC on vnet1"
vx 2 fdb show | grep -q "^$mac1 vni 99 port vx99 remote 198.51.100.1" || fail "h2 did not learn vm1's MAC"
pass "ARP resolved through flooding; both switches learned both MACs"

uu1=$(vx_stat 1 'd["switch"]["unknown_unicast"]'); uu2=$(vx_stat 2 'd["switch"]["unknown_unicast"]')
un1=$(vx_stat 1 'd["switch"]["unicast"]')
nvm1 ping -c 20 -i 0.05 -W 2 "$(vm_addr4 2)" >/dev/null || fail "pings after learning"
nvm2 ping -c 20 -i 0.05 -W 2 "$(vm_addr4 1)" >/dev/null || fail "pings back after learning"
[ "$(vx_stat 1 'd["switch"]["unknown_unicast"]')" = "$uu1" ] || fail "h1 still floods unknown unicast after learning"
[ "$(vx_stat 2 'd["switch"]["unknown_unicast"]')" = "$uu2" ] || fail "h2 still floods unknown unicast after learning"
[ "$(vx_stat 1 'd["switch"]["unicast"]')" -ge $((un1 + 80)) ] || fail "pings were not forwarded as known unicast"
pass "after learning, 80 pings crossed as known unicast, no unknown-unicast flooding"

fl=$(vx_stat 2 'd["switch"]["flooded"]')
nvm2 ping -6 -c 2 -i 0.2 -W 2 "$(vm_addr6 1)" >/dev/null || fail "IPv6 ping (ND through flooding)"
[ "$(vx_stat 2 'd["switch"]["flooded"]')" -gt "$fl" ] || fail "the neighbour solicitation was not flooded"
pass "IPv6 neighbour discovery resolved through flooding"

# Any frame of vm2's that reaches h1 between the flush and the ping (a
# neighbour probe of its kernel) teaches h1 its MAC again, and the ping
# then crosses as known unicast: up to 3 tries, the counter read first.
flooded=0
for try in 1 2 3; do
	uu1=$(vx_stat 1 'd["switch"]["unknown_unicast"]')
	vx 1 fdb flush >/dev/null
	nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after fdb flush"
	[ "$(vx_stat 1 'd["switch"]["unknown_unicast"]')" -gt "$uu1" ] && { flooded=1; break; }
done
[ "$flooded" = 1 ] || fail "no unknown-unicast flooding after fdb flush (3 tries)"
pass "after fdb flush, unknown unicast is flooded and still delivered, then learned again"

# A MAC flood from a VM against a cap lowered while the switch runs: the
# cap holds (nothing evicted, new MACs refused and counted), a static entry
# still goes in, the VMs keep talking; raising the cap lets it learn again.
nvm1 ping -c 1 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping before the MAC flood"
vx 1 set fdb-max 50 || fail "set fdb-max 50 refused"
[ "$(vx 1 show knobs | grep '^fdb-max ')" = "fdb-max 50" ] || fail "show knobs does not say fdb-max 50"
refused0=$(vx_stat 1 'd["switch"]["fdb_refused_full"]')
flood_macs() { # COUNT FIRST: frames from COUNT distinct unicast MACs out of vm1
	nvm1 /usr/bin/python3 -c '
import sys
from scapy.all import Ether, IP, UDP, sendp
n, first = int(sys.argv[1]), int(sys.argv[2])
frames = [Ether(src="02:f1:00:00:%02x:%02x" % ((first + i) >> 8, (first + i) & 255), dst="ff:ff:ff:ff:ff:ff") /
          IP(src="192.0.2.1", dst="192.0.2.255") / UDP(sport=9, dport=9) for i in range(n)]
sendp(frames, iface="vnet1", verbose=False)' "$@"
}
flood_macs 300 0
sleep 0.3
n99=$(vx 1 fdb show vni 99 | grep -c " vni 99 ")
[ "$n99" -le 50 ] || fail "fdb-max 50 did not hold: $n99 entries in VNI 99"
refused=$(( $(vx_stat 1 'd["switch"]["fdb_refused_full"]') - refused0 ))
[ "$refused" -ge 250 ] || fail "only $refused new MACs counted as refused (fdb full)"
vx 1 fdb show | grep -q "^$mac1 vni 99 port vnet1" || fail "vm1's own entry was evicted by the flood"
vx 1 fdb add 02:aa:bb:cc:dd:ee vni 99 port vnet1 || fail "static entry refused while the VNI is full"
nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "VMs cannot talk during a capped MAC flood"
pass "fdb-max 50 set live: flood of 300 MACs left $n99 entries, $refused refused; static entry added; VMs still talk"
vx 1 set fdb-max 400 || fail "set fdb-max 400 refused"
flood_macs 300 1000
sleep 0.3
n99b=$(vx 1 fdb show vni 99 | grep -c " vni 99 ")
[ "$n99b" -gt "$n99" ] && [ "$n99b" -le 401 ] || fail "after raising fdb-max to 400: $n99b entries (was $n99)"
vx 1 set fdb-max 100000 2>"$RIG_DIR/err" && fail "fdb-max above the table size was accepted"
grep -q "above the 65536 learned entries" "$RIG_DIR/err" || fail "refusal does not say why: $(cat "$RIG_DIR/err")"
pass "fdb-max raised live to 400: $n99b entries; above the table size refused with the reason"
