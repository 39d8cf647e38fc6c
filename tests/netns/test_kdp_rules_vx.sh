#!/bin/bash
# Flower rules on a vxlan port's ingress on the kernel datapath (vxswitchd
# --datapath kernel): frames of the collect_md vxlan device whose VNI's
# vxlan port has rules are decided by vxswitchd's classifier (in_port the
# vxlan port, enc_* keys from the tunnel) and cached per flow in the
# kernel (dp/kernel/bpf/vxdp_rules_abi.h).  Seed 002's picture: the VM
# port and the uplink redirect to each other, everything else dropped.
#
#   vm1 vnet1 192.0.2.1 ─ h1: vxswitchd --datapath kernel ── u1 ══ u2 ── h2: kernel vxlan 99 + bridge ── vm2 192.0.2.2
#     VNI 99: vx99 remote 198.51.100.2          │                    h2: kernel vxlan 100, 203.0.113.2 on it
#   vm3 vnet3 203.0.113.1                       └─ u13 ══ u31 ── h3: kernel vxlan 100, 203.0.113.3 on it
#     VNI 100: vx100 remotes 198.51.100.2 and .3
#
# Checks:
#  - seed 002 on the kernel datapath: vnet1 ingress arp/ip -> redirect vx99,
#    vx99 ingress arp/ip -> redirect vnet1, the rest dropped on both;
#    ping both ways, iperf3 both ways (figures printed, not judged; the
#    kernel datapath without rules measured in the same run beside them);
#    `port show` says vx99 is on the rules path;
#  - counters: `filter show -s` fast (Sent hardware) + slow (Sent software)
#    = datagrams sent, exactly, for a rule on vx99's ingress and one on
#    vnet1's, with the cache invalidated (a rule change elsewhere) between;
#  - a drop rule on vx99's ingress by enc_key_id 99 + inner dst_port on a
#    marked flow from vm2 takes effect from the first datagram sent after
#    `filter add` returns, and is undone from the first one after `filter
#    del` returns; the other flow beside it loses only what upcall_drops
#    counts;
#  - enc_src_ip 198.51.100.3 on vx100's ingress drops h3's datagrams and
#    none of h2's (the same VNI, the same vxlan port);
#  - vnet3's egress keys a frame with where it came in: enc_src_ip
#    198.51.100.3 drops h3's datagrams and not h2's, indev vx100 takes
#    h2's, whether they come by the vxlan device's redirect, re-injected
#    after vx100's ingress rules went up, or after a mirror to vx99;
#  - vx100's egress (the vxlan device's egress hook): enc_* and indev
#    naming a vxlan port refused there;
#    a drop by dst_port on a marked flow from vm3 to h2 from the first
#    datagram after add to the first after del; a pass rule with indev
#    vnet3: fast + slow = sent; a broadcast's two flood copies (h2, h3)
#    each decided there;
#  - stats: vx99's rules path counters (hits, upcalls, re-injections, rule
#    drops); diagnose: 3000 new flows through vx100 with a rule on it are
#    rules_cache_thrashing on vx100, and vx99 (its flows hit) is not;
#  - after the daemon stops: no BPF program of ours is left.
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "krv-$$"
trap rig_cleanup EXIT
PY=/usr/bin/python3
UDP="$PY $PWD/tests/netns/krl_udp.py"
SECS=${KDP_IPERF_SECONDS:-4}
progs_before=$(vxdp_progs)

rig_create 4
VM3=$P-vm3
rig_ns_add "$VM3"
rig_h3
# h2: vm2 behind the kernel's vxlan 99 + bridge; VNI 100 ends on h2 and h3
# in a plain vxlan device with an address of its own.
rig_kernel 2
nh2 ip link add kvx100 type vxlan id 100 local 198.51.100.2 remote 198.51.100.1 dstport 4789 dev u2 udpcsum
n "$H3" ip link add kvx100 type vxlan id 100 local 198.51.100.3 remote 198.51.100.1 dstport 4789 dev u31 udpcsum
for h in "$H2:2" "$H3:3"; do
	n "${h%:*}" ip link set kvx100 mtu 1450 up
	n "${h%:*}" ip addr add "203.0.113.${h#*:}/24" dev kvx100
done

cat > "$RIG_DIR/h1.conf" <<CONF
port add vx99 type vxlan vni 99 local 198.51.100.1 remote 198.51.100.2
port add vx100 type vxlan vni 100 local 198.51.100.1 remote 198.51.100.2 remote 198.51.100.3
port add vnet1 type veth vni 99 netns $VM1 mtu 1450
port add vnet3 type veth vni 100 netns $VM3 mtu 1450
CONF
vxd_start "$H1" 1 "$VM3" vnet3 --datapath kernel || fail "vxswitchd did not start"
rig_vm_addrs 1 vnet1
n "$VM3" ip link set vnet3 up
n "$VM3" ip addr add 203.0.113.1/24 dev vnet3
VX="$VXCTL --socket $RIG_DIR/h1.sock"
nvm1 ping -c 2 -W 2 192.0.2.2 >/dev/null || fail "vm1 cannot ping vm2 before any rule"
pass "the kernel datapath switches vm1 <-> vm2 before any rule"

# The kernel datapath without rules, for the figures below (same run).
ref12=$(rig_iperf "$SECS" 1) || fail "iperf3 vm1 -> vm2 without rules"
ref21=$(rig_iperf "$SECS" 2) || fail "iperf3 vm2 -> vm1 without rules"

# ---- seed 002 ---------------------------------------------------------------
$VX filter add dev vnet1 ingress protocol arp pref 10 flower action mirred egress redirect dev vx99
$VX filter add dev vnet1 ingress protocol ip pref 20 flower action mirred egress redirect dev vx99
$VX filter add dev vnet1 ingress protocol all pref 100 flower action drop
$VX filter add dev vx99 ingress protocol arp pref 10 flower action mirred egress redirect dev vnet1
$VX filter add dev vx99 ingress protocol ip pref 20 flower action mirred egress redirect dev vnet1
$VX filter add dev vx99 ingress protocol all pref 100 flower action drop
$VX port show | grep -E "^vx99 .*rules kernel-cache" >/dev/null || fail "port show: vx99 not on the rules path"
$VX port show | grep -E "^vx100 .*rules none" >/dev/null || fail "port show: vx100 should have no rules"
pass "port show: vx99 rules kernel-cache, vx100 rules none"
nvm1 ip neigh flush dev vnet1
nvm2 ip neigh flush dev vnet2
nvm1 ping -c 3 -i 0.2 -W 2 192.0.2.2 >/dev/null || fail "seed 002: vm1 cannot ping vm2"
nvm2 ping -c 3 -i 0.2 -W 2 192.0.2.1 >/dev/null || fail "seed 002: vm2 cannot ping vm1"
pass "seed 002 rules: ping both ways (ARP and IP by the redirects)"
g12=$(rig_iperf "$SECS" 1) || fail "seed 002: iperf3 vm1 -> vm2"
g21=$(rig_iperf "$SECS" 2) || fail "seed 002: iperf3 vm2 -> vm1"
echo "iperf3 seed 002 on the kernel datapath: vm1 -> vm2 (vnet1 ingress -> vx99) $g12 Gbit/s," \
	"vm2 -> vm1 (vx99 ingress -> vnet1) $g21 Gbit/s; no rules, same run: $ref12 / $ref21 Gbit/s ($(lscpu | sed -n 's/^Model name: *//p'))"
$VX -j filter show -s dev vx99 ingress > "$RIG_DIR/seed.json"
$PY - "$RIG_DIR/seed.json" <<'EOF' || fail "seed 002 counters"
import json, sys
rules = [r for r in json.load(open(sys.argv[1])) if "options" in r]
ip = [r for r in rules if r.get("pref") == 20][0]["options"]["actions"][0]["stats"]
assert ip.get("hw_packets", 0) > 1000, "vx99's ip redirect: only %s on the fast path" % ip
print("vx99 ingress ip redirect: fast %d slow %d" % (ip.get("hw_packets", 0), ip.get("sw_packets", 0)))
EOF
pass "seed 002: the vxlan port's redirect runs on the kernel path (fast counts)"

# ---- counters: fast + slow = sent, both hooks, across invalidations -----------
nvm1 $UDP recv "$RIG_DIR/rx1.txt" 5001 5002 5003 &
RIG_PIDS="$RIG_PIDS $!"
nvm2 $UDP recv "$RIG_DIR/rx2.txt" 5004 &
RIG_PIDS="$RIG_PIDS $!"
sleep 0.3
$VX filter add dev vx99 ingress protocol ip pref 6 handle 1 flower ip_proto udp dst_port 5003 \
	action mirred egress redirect dev vnet1
$VX filter add dev vnet1 ingress protocol ip pref 6 handle 1 flower ip_proto udp dst_port 5004 \
	action mirred egress redirect dev vx99
for round in 1 2 3; do
	nvm2 $UDP send 192.0.2.1 5003 200 500
	nvm1 $UDP send 192.0.2.2 5004 200 500
	# A rule change on another port: every cached decision is stale.
	case $round in
	1) $VX filter add dev vnet3 ingress protocol ip pref 9 handle 1 flower ip_proto udp dst_port 9 action drop ;;
	2) $VX filter del dev vnet3 ingress protocol ip pref 9 handle 1 flower ;;
	esac
done
sleep 0.3
$VX -j filter show -s dev vx99 ingress > "$RIG_DIR/vx.json"
$VX -j filter show -s dev vnet1 ingress > "$RIG_DIR/vnet.json"
$PY - "$RIG_DIR/vx.json" "$RIG_DIR/vnet.json" "$RIG_DIR/rx1.txt" "$RIG_DIR/rx2.txt" <<'EOF' || fail "counters"
import json, sys
for path, rx, port in ((sys.argv[1], sys.argv[3], 5003), (sys.argv[2], sys.argv[4], 5004)):
    rules = [r for r in json.load(open(path)) if "options" in r and r.get("pref") == 6]
    st = rules[0]["options"]["actions"][0]["stats"]
    hw, sw = st.get("hw_packets", 0), st.get("sw_packets", 0)
    got = sum(1 for l in open(rx) if l.startswith("%d " % port))
    assert hw + sw == 600, "port %d: fast %d + slow %d != 600 sent" % (port, hw, sw)
    assert hw > 0 and sw >= 3, "port %d: fast %d slow %d (3 invalidations: at least 3 upcalls)" % (port, hw, sw)
    assert got == 600, "port %d: received %d of 600" % (port, got)
    print("%s rule (udp %d): fast %d + slow %d = 600 sent = 600 received" % (
        "vx99 ingress" if port == 5003 else "vnet1 ingress", port, hw, sw))
EOF
pass "counters: Sent hardware + Sent software = datagrams sent, exactly, on vx99's ingress and vnet1's"

# ---- marked flow: drop by enc_key_id + inner dst_port, from the next datagram -
nvm2 $UDP marked 192.0.2.1 5001 5002 1500 500 1000 \
	"$VX filter add dev vx99 ingress protocol ip pref 5 handle 1 flower enc_key_id 99 ip_proto udp dst_port 5001 action drop" \
	"$VX filter del dev vx99 ingress protocol ip pref 5 handle 1 flower" > "$RIG_DIR/marks.txt"
sleep 0.5
$VX -j stats > "$RIG_DIR/stats1.json"
$UDP check-marked "$RIG_DIR/rx1.txt" "$RIG_DIR/marks.txt" "$RIG_DIR/stats1.json" - \
	"vx99 ingress, enc_key_id 99 + dst_port 5001" || fail "marked flow"
pass "drop on vx99's ingress by enc_key_id + dst_port: from the first datagram after add returns to the first after del returns"

# ---- enc_src_ip: only that remote's frames ---------------------------------------
n "$VM3" $UDP recv "$RIG_DIR/rx3.txt" 5010 5011 &
RIG_PIDS="$RIG_PIDS $!"
sleep 0.3
nh2 ping -c 1 -W 2 203.0.113.1 >/dev/null || fail "h2 cannot reach vm3 over VNI 100"
n "$H3" ping -c 1 -W 2 203.0.113.1 >/dev/null || fail "h3 cannot reach vm3 over VNI 100"
$VX filter add dev vx100 ingress protocol ip pref 1 handle 1 flower enc_src_ip 198.51.100.3 ip_proto udp action drop
nh2 $UDP send 203.0.113.1 5010 50 500
n "$H3" $UDP send 203.0.113.1 5011 50 500
sleep 0.3
from2=$(grep -c "^5010 " "$RIG_DIR/rx3.txt" || true)
from3=$(grep -c "^5011 " "$RIG_DIR/rx3.txt" || true)
[ "$from2" = 50 ] || fail "enc_src_ip 198.51.100.3: vm3 got $from2 of h2's 50 (h2 is 198.51.100.2)"
[ "$from3" = 0 ] || fail "enc_src_ip 198.51.100.3: vm3 got $from3 of h3's 50"
$VX -j filter show -s dev vx100 ingress > "$RIG_DIR/enc.json"
$PY - "$RIG_DIR/enc.json" <<'EOF' || fail "enc_src_ip counters"
import json, sys
rules = [r for r in json.load(open(sys.argv[1])) if "options" in r]
st = rules[0]["options"]["actions"][0]["stats"]
assert st["packets"] == 50, "enc_src_ip rule counted %s, want 50 (h3's)" % st
EOF
$VX filter del dev vx100 ingress protocol ip pref 1 handle 1 flower
n "$H3" $UDP send 203.0.113.1 5011 20 500
sleep 0.3
from3=$(grep -c "^5011 " "$RIG_DIR/rx3.txt" || true)
[ "$from3" = 20 ] || fail "after del: vm3 got $from3 of h3's 20"
pass "enc_src_ip 198.51.100.3 on vx100: h3's 50 dropped (counted 50), h2's 50 delivered; after del h3's arrive"

# ---- vnet3's egress: the tunnel a frame came out of ----------------------------------
# An egress frame is keyed with where it came in, as on the userspace
# datapath: enc_src_ip 198.51.100.3 at vnet3's egress drops h3's datagrams
# and none of h2's; indev vx100 there takes h2's to 5018.  vx100's ingress
# has rules for them too: each flow's first datagrams go up and come back
# by the re-injection veth (vnet3's egress then reads their slot's
# origin), the later ones reach it by the vxlan device's redirect (its
# received tunnel key); for 5017 a mirror to vx99 runs first, whose
# tunnel key replaces the frame's until it is put back.
n "$VM3" $UDP recv "$RIG_DIR/rx5.txt" 5016 5017 5018 &
RIG_PIDS="$RIG_PIDS $!"
sleep 0.3
$VX filter add dev vx100 ingress protocol ip pref 1 flower ip_proto udp dst_port 5016 action pass
$VX filter add dev vx100 ingress protocol ip pref 2 flower ip_proto udp dst_port 5017 action mirred egress mirror dev vx99
$VX filter add dev vnet3 egress protocol ip pref 1 flower enc_src_ip 198.51.100.3 ip_proto udp action drop
$VX filter add dev vnet3 egress protocol ip pref 2 flower indev vx100 ip_proto udp dst_port 5018 action drop
for h in "$H2" "$H3"; do
	n "$h" $UDP send 203.0.113.1 5016 50 500
	n "$h" $UDP send 203.0.113.1 5017 30 500
done
nh2 $UDP send 203.0.113.1 5018 20 500
sleep 0.3
got=$(for p in 5016 5017 5018; do grep -c "^$p " "$RIG_DIR/rx5.txt" || true; done | tr '\n' ' ')
[ "$got" = "50 30 0 " ] || fail "vnet3's egress by enc_src_ip .3 and indev vx100: vm3 got $got of 5016, 5017, 5018 (want h2's 50 30 and none)"
$VX -j -s filter show dev vnet3 egress > "$RIG_DIR/origin.json"
$PY - "$RIG_DIR/origin.json" <<'EOF' || fail "vnet3 egress counters"
import json, sys
rules = {r["pref"]: r["options"]["actions"][0]["stats"] for r in json.load(open(sys.argv[1])) if "options" in r}
enc, ind = rules[1], rules[2]
assert enc["packets"] == 80 and enc.get("hw_packets", 0) > 0, "enc_src_ip .3 counted %s, want h3's 80, fast > 0" % enc
assert ind["packets"] == 20, "indev vx100 dst_port 5018 counted %s, want 20" % ind
print("vnet3 egress: enc_src_ip .3 dropped %d (fast %d + slow %d), indev vx100 dropped %d" % (
    enc["packets"], enc.get("hw_packets", 0), enc.get("sw_packets", 0), ind["packets"]))
EOF
$VX filter del dev vnet3 egress protocol ip pref 1 flower
$VX filter del dev vnet3 egress protocol ip pref 2 flower
$VX filter del dev vx100 ingress protocol ip pref 1 flower
$VX filter del dev vx100 ingress protocol ip pref 2 flower
pass "vnet3's egress keyed by where frames came in: enc_src_ip .3 took h3's 80 (re-injected, redirected, after a mirror to vx99), indev vx100 h2's 20; h2's 80 delivered"

# ---- vx100's egress: the vxlan device's egress hook --------------------------------
nh2 $UDP recv "$RIG_DIR/rx4.txt" 5001 5002 5013 &
RIG_PIDS="$RIG_PIDS $!"
sleep 0.3
n "$VM3" ping -c 1 -W 2 203.0.113.2 >/dev/null || fail "vm3 cannot reach h2 over VNI 100"
if out=$($VX filter add dev vx100 egress protocol ip flower enc_key_id 100 action drop 2>&1); then
	fail "enc_key_id on vx100's egress accepted"
fi
grep -q "enc_. keys are refused on a vxlan port's egress" <<<"$out" || fail "enc_key_id on vx100's egress: $out"
if out=$($VX filter add dev vx100 egress protocol ip flower indev vx99 action drop 2>&1); then
	fail "indev vx99 on vx100's egress accepted"
fi
grep -q "indev vx99 is refused on a vxlan port's egress" <<<"$out" || fail "indev vx99 on vx100's egress: $out"
n "$VM3" $UDP marked 203.0.113.2 5001 5002 1500 500 1000 \
	"$VX filter add dev vx100 egress protocol ip pref 5 handle 1 flower ip_proto udp dst_port 5001 action drop" \
	"$VX filter del dev vx100 egress protocol ip pref 5 handle 1 flower" > "$RIG_DIR/marks4.txt"
sleep 0.5
$VX -j stats > "$RIG_DIR/stats4.json"
$UDP check-marked "$RIG_DIR/rx4.txt" "$RIG_DIR/marks4.txt" "$RIG_DIR/stats4.json" - \
	"vx100 egress, dst_port 5001" || fail "marked flow at vx100's egress"
pass "drop at vx100's egress: from the first datagram after add returns to the first after del returns"
$VX filter add dev vx100 egress protocol ip pref 6 handle 1 flower indev vnet3 ip_proto udp dst_port 5013 action pass
$VX port show | grep -E "^vx100 .*egress-rules kernel-cache" >/dev/null ||
	fail "port show: vx100's egress rules: $($VX port show | grep ^vx100)"
n "$VM3" $UDP send 203.0.113.2 5013 300 500
$VX filter add dev vx100 egress protocol ip pref 7 handle 1 flower ip_proto udp dst_port 5014 action drop
# The same datagrams broadcast: flooded, one copy to each remote, each
# through the device's egress with its own tunnel key, both dropped.
n "$VM3" $PY -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
for i in range(10):
    s.sendto(b"x", ("203.0.113.255", 5014))'
sleep 0.3
$VX -j filter show -s dev vx100 egress > "$RIG_DIR/vxe.json"
$PY - "$RIG_DIR/vxe.json" "$RIG_DIR/rx4.txt" <<'EOF' || fail "vx100 egress counters"
import json, sys
rules = {r["pref"]: r["options"]["actions"][0]["stats"] for r in json.load(open(sys.argv[1])) if "options" in r}
st = rules[6]
hw, sw = st.get("hw_packets", 0), st.get("sw_packets", 0)
got = sum(1 for l in open(sys.argv[2]) if l.startswith("5013 "))
assert hw + sw == 300 and hw > 0, "vx100 egress pass: fast %d + slow %d, want 300 with fast > 0" % (hw, sw)
assert got == 300, "h2 received %d of 300" % got
assert rules[7]["packets"] == 20, "the broadcast's copies at vx100's egress: %s, want 2 x 10" % rules[7]
print("vx100 egress pass (udp 5013): fast %d + slow %d = 300 sent = 300 received; broadcast drop: %d copies (2 remotes x 10)" % (
    hw, sw, rules[7]["packets"]))
EOF
pass "vx100's egress: fast + slow = sent, flood copies decided one by one"
$VX filter del dev vx100 egress protocol ip pref 6 handle 1 flower
$VX filter del dev vx100 egress protocol ip pref 7 handle 1 flower
n "$VM3" ping -c 1 -W 2 203.0.113.2 >/dev/null || fail "vm3 -> h2 after vx100's egress rules went"

# ---- stats and diagnose of a vxlan port's rules path -------------------------------
$VX -j stats > "$RIG_DIR/stats2.json"
$PY - "$RIG_DIR/stats2.json" <<'EOF' || fail "stats: vx99's rules path"
import json, sys
p = [p for p in json.load(open(sys.argv[1]))["ports"] if p["name"] == "vx99"][0]["rules"]
assert p["hits"] > 1000 and p["upcalls"] > 0 and p["reinjected"] > 0 and p["rule_drops"] > 0, p
print("vx99 rules path: hits %d misses %d upcalls %d reinjected %d rule_drops %d" % (
    p["hits"], p["misses"], p["upcalls"], p["reinjected"], p["rule_drops"]))
EOF
pass "stats: vx99's rules path counted (hits, upcalls, re-injections, rule drops)"
# A rule on vx100 (it matches none of what follows) and 3000 new UDP flows
# from h2: each a miss of the kernel's decision cache.
$VX filter add dev vx100 ingress protocol ip pref 1 handle 1 flower ip_proto udp dst_port 7 action drop
nh2 $PY -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for p in range(20000, 23000):
    s.sendto(b"x" * 32, ("203.0.113.1", p))
    if p % 100 == 0:
        time.sleep(0.01)'
line=$(diag_names 1 rules_cache_thrashing 'f["misses"] >= 2000 and f["miss_permille"] >= 500' \
	"vx100: the kernel's rule cache missed [0-9]+ of [0-9]+ lookups")
pass "diagnose: rules_cache_thrashing on vx100 ($line)"
$VX -j diagnose | $PY -c '
import json, sys
bad = [f for f in json.load(sys.stdin)["findings"] if f["cause"] == "rules_cache_thrashing" and "vx99" in f["text"]]
sys.exit(1 if bad else 0)' || fail "diagnose: vx99 (established flows, hits) was found thrashing too"
pass "diagnose: vx99, whose flows hit, is not"
$VX stats | grep -E "^rule cache"

# ---- nothing left --------------------------------------------------------------
vxd_stop_all "$H1"
sleep 0.3
progs_left=$(vxdp_progs_new "$progs_before")
[ -z "$progs_left" ] || fail "BPF programs left: ids $progs_left"
pass "no BPF program left after the daemon stopped"
echo "test_kdp_rules_vx: all ok"
