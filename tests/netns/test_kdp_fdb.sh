#!/bin/bash
# Static FDB entries on the kernel datapath (vxswitchd --datapath kernel):
# `fdb add` to a remote VTEP the vxlan port does not flood to sends that
# MAC's frames there (seen on the underlay); learning does not move a
# static entry; ageing and `fdb flush` leave it (flush takes the learned
# ones and says how many); `fdb del` removes it; show config lists it
# while it is there; a local static entry goes with its port; bad entries
# are refused with the reason, as on the userspace datapath.  `fdb-max`
# reaches the kernel's FDB through its dpif: above the kernel map's 65,536
# it is refused by the kernel datapath with its reason (h1 runs with a
# larger --fdb-size, which the userspace FDB would take) and changes
# nothing; 500 becomes the VNI's cap.  (Ageing through it:
# test_kdp_overlay.)
#
#   vm1 vnet1 192.0.2.1 <= veth => h1 [vxdp0] u1 ==== u2 [vxdp0] h2 <= veth => vnet2 192.0.2.2 vm2
#                                  (198.51.100.3: routed out of u1, nobody there)
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt84-$$"
trap rig_cleanup EXIT

rig_create 4
RIG_VXD_ARGS="--fdb-size 100000" rig_vxswitchd_bpf 1 || fail "h1"
rig_vxswitchd_bpf 2 || fail "h2"
grep -q "datapath kernel unavailable" "$RIG_DIR"/h*.log && fail "no kernel datapath: $(cat "$RIG_DIR"/h*.log)"
nh1 ip route add 198.51.100.3/32 dev u1
nh1 ip neigh replace 198.51.100.3 lladdr "$(nh2 cat /sys/class/net/u2/address)" dev u1
for i in $(seq 10); do nvm1 ping -c 1 -W 1 192.0.2.2 >/dev/null 2>&1 && break; done
nvm1 ping -c 2 -i 0.1 -q 192.0.2.2 >/dev/null || fail "ping vm1 -> vm2"

MACX=02:00:5e:00:00:77
vx 1 fdb add "$MACX" vni 99 remote 198.51.100.3 || fail "fdb add remote"
vx 1 fdb show vni 99 | grep -q "^$MACX vni 99 port vx99 remote 198.51.100.3 static " || fail "fdb show: $(vx 1 fdb show)"
[ "$(vx 1 -j fdb show vni 99 | /usr/bin/python3 -c "
import json, sys
print([e['source'] for e in json.load(sys.stdin) if e['mac'] == '$MACX'])")" = "['static']" ] || fail "fdb show -j: $(vx 1 -j fdb show)"
vx 1 show config | grep -q "^fdb add $MACX vni 99 remote 198.51.100.3" || fail "show config: $(vx 1 show config)"

# vm1's frames to MACX leave for 198.51.100.3, not the flood remote.
nvm1 ip neigh replace 192.0.2.77 lladdr "$MACX" dev vnet1
nh1 timeout 10 tcpdump -i u1 -nn -l -c 3 "udp port 4789 and dst host 198.51.100.3" > "$RIG_DIR/to3.txt" 2> "$RIG_DIR/to3.err" &
cap=$!
for i in $(seq 100); do grep -q listening "$RIG_DIR/to3.err" && break; sleep 0.05; done
nvm1 ping -c 3 -i 0.1 -W 1 192.0.2.77 >/dev/null 2>&1 || true
wait "$cap" || fail "no datagram to 198.51.100.3: $(cat "$RIG_DIR/to3.txt" "$RIG_DIR/to3.err")"
pass "static remote entry: vm1's frames to $MACX went to 198.51.100.3 ($(wc -l < "$RIG_DIR/to3.txt") datagrams seen)"

# Learning does not move it: vm2 sends a frame from MACX.
nvm2 /usr/bin/python3 -c "
from scapy.all import Ether, ARP, sendp
sendp(Ether(src='$MACX', dst='ff:ff:ff:ff:ff:ff') / ARP(psrc='192.0.2.9', pdst='192.0.2.1', hwsrc='$MACX'), iface='vnet2', count=3, verbose=False)"
sleep 0.5
vx 1 fdb show vni 99 | grep -q "^$MACX vni 99 port vx99 remote 198.51.100.3 static " || fail "learning moved the static entry: $(vx 1 fdb show)"
pass "a frame from $MACX arriving from 198.51.100.2 did not move the static entry"

# Ageing and flush leave it; flush takes the learned entries.
mac2=$(nvm2 cat /sys/class/net/vnet2/address)
vx 1 set fdb-ageing 1
sleep 3
vx 1 fdb show vni 99 | grep -q "^$MACX " || fail "static entry aged out: $(vx 1 fdb show)"
vx 1 set fdb-ageing 300
nvm1 ping -c 2 -i 0.1 -q 192.0.2.2 >/dev/null || fail "ping after ageing"
vx 1 fdb show vni 99 | grep -q "^$mac2 " || fail "vm2 not learned again: $(vx 1 fdb show)"
out=$(vx 1 fdb flush vni 99) || fail "fdb flush"
echo "$out" | grep -q "^flushed [1-9][0-9]* entries" || fail "flush said: $out"
vx 1 fdb show vni 99 | grep -q "^$mac2 " && fail "flush left vm2's learned entry: $(vx 1 fdb show)"
vx 1 fdb show vni 99 | grep -q "^$MACX " || fail "flush removed the static entry"
pass "ageing (1 s) and fdb flush left the static entry; flush: $out"

# A local static entry, and its removal with the port.
CT=$P-ct
rig_ns_add "$CT"
vx 1 port add vct type veth vni 99 netns "$CT" mtu 1450 || fail "port add vct"
MACL=02:00:5e:00:00:78
vx 1 fdb add "$MACL" vni 99 port vct || fail "fdb add port"
vx 1 fdb show vni 99 | grep -q "^$MACL vni 99 port vct static " || fail "local static: $(vx 1 fdb show)"
vx 1 port del vct || fail "port del vct"
vx 1 fdb show vni 99 | grep -q "^$MACL " && fail "the local static entry outlived its port"
pass "a local static entry went with its port"

# Refusals, with the reason.
out=$(vx 1 fdb add 02:00:5e:00:00:79 vni 99 port vx99 2>&1) && fail "fdb add to a vxlan port accepted"
echo "$out" | grep -q "say which VTEP" || fail "refusal: $out"
out=$(vx 1 fdb add 02:00:5e:00:00:79 vni 98 port vnet1 2>&1) && fail "fdb add to the wrong vni accepted"
echo "$out" | grep -q "in vni 99, not vni 98" || fail "refusal: $out"
out=$(vx 1 fdb add 02:00:5e:00:00:79 vni 99 port nosuch 2>&1) && fail "fdb add to no port accepted"
pass "refused: vxlan port without VTEP, wrong VNI, no such port"

# fdb del: gone from the kernel and from show config.
vx 1 fdb del "$MACX" vni 99 || fail "fdb del"
vx 1 fdb show vni 99 | grep -q "^$MACX " && fail "fdb del left it"
vx 1 show config | grep -q "$MACX" && fail "show config still lists it"
out=$(vx 1 fdb del "$MACX" vni 99 2>&1) && fail "a second fdb del succeeded"
echo "$out" | grep -q "no such entry" || fail "second del said: $out"
pass "fdb del removed it (and a second del: $out)"

# fdb-max above the kernel map's size: refused by the kernel datapath,
# nothing changed (the userspace FDB, sized 100,000 here, took it and was
# put back).
before=$(vx 1 show knobs | grep "^fdb-max ")
out=$(vx 1 set fdb-max 70000 2>&1) && fail "fdb-max 70000 accepted on the kernel datapath: $out"
echo "$out" | grep -q "fdb-max 70000: above the 65536 entries the kernel datapath's FDB map holds" ||
	fail "fdb-max 70000: $out"
[ "$(vx 1 show knobs | grep "^fdb-max ")" = "$before" ] || fail "refused fdb-max changed it: $(vx 1 show knobs | grep fdb-max)"
vx 1 set fdb-max 500 || fail "fdb-max 500"
[ "$(vx 1 -j stats | /usr/bin/python3 -c "import json,sys; print([v['max_macs'] for v in json.load(sys.stdin)['vnis'] if v['vni'] == 99][0])")" = 500 ] ||
	fail "fdb-max 500 did not reach the kernel datapath: $(vx 1 -j stats)"
pass "fdb-max 70000 refused by the kernel datapath (its map holds 65536), knob unchanged; fdb-max 500 reaches its VNI cap"
