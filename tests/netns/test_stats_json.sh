#!/bin/bash
# `vxctl -j stats` against docs/STATS.md: the set of keys the daemon prints
# (a tap, an afpacket port and a vxlan port, every counter, zeros included) equals the set the
# document lists, so a counter added without its line there fails here; and
# the counters match a known scapy stream exactly, by frame, byte and drop
# reason, on both switches.
#
#   vxt41-PID-vm1       vxt41-PID-h1                          vxt41-PID-h2       vxt41-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt41-$$"
trap rig_cleanup EXIT
DOC=docs/STATS.md
PY=/usr/bin/python3

rig_create 4
# An afpacket port on a veth of h1 whose ends have no addresses and no IPv6:
# it prints its keys and adds no frame of its own to the counts below.
nh1 ip link add afp1 type veth peer name afp1p
for d in afp1 afp1p; do nh1 sysctl -qw net.ipv6.conf.$d.disable_ipv6=1; nh1 ip link set $d up; done
RIG_EXTRA_CONF="port add afp1 type afpacket dev afp1 vni $VNI" rig_vxswitchd 1
rig_vxswitchd 2

# ---- the keys ----------------------------------------------------------------
vx 1 -j stats | $PY tests/netns/stats_doc.py "$DOC" keys > "$RIG_DIR/printed"
$PY tests/netns/stats_doc.py "$DOC" stats > "$RIG_DIR/documented"
if ! diff -u "$RIG_DIR/documented" "$RIG_DIR/printed" > "$RIG_DIR/keys.diff"; then
	cat "$RIG_DIR/keys.diff" >&2
	fail "vxctl -j stats and $DOC disagree (- documented only, + printed only)"
fi
n=$(wc -l < "$RIG_DIR/printed")
pass "vxctl -j stats prints exactly the $n keys $DOC lists"

# The comparison can fail: the document less one row and one reason.
grep -v -e '^| `ports\[\]\.tx_avg_frame`' -e '^| `tx_error`' "$DOC" > "$RIG_DIR/short.md"
$PY tests/netns/stats_doc.py "$RIG_DIR/short.md" stats > "$RIG_DIR/short"
missing=$(comm -13 "$RIG_DIR/short" "$RIG_DIR/printed" | tr '\n' ' ')
[ "$missing" = "drops.tx_error ports[].drops.tx_error ports[].tx_avg_frame " ] ||
	fail "an undocumented key went unnoticed (found: $missing)"
pass "a key missing from the document is caught ($missing)"

# ---- exact counts --------------------------------------------------------------
# No IPv6 on the VMs' interfaces: nothing but the stream below crosses.
nvm1 sysctl -qw net.ipv6.conf.vnet1.disable_ipv6=1
nvm2 sysctl -qw net.ipv6.conf.vnet2.disable_ipv6=1
sleep 0.5
counts() { # SIDE PORT -> "rx_frames rx_bytes tx_frames tx_bytes truncated_ipv4"
	vx_stat "$1" "' '.join(str(x) for x in (port('$2')['rx_frames'], port('$2')['rx_bytes'], port('$2')['tx_frames'], port('$2')['tx_bytes'], port('$2')['drops']['truncated_ipv4']))"
}
read -r a_rx a_rxb _ _ a_tr <<< "$(counts 1 vnet1)"
read -r b_rx b_rxb _ _ _ <<< "$(counts 2 vx99)"
read -r _ _ c_tx c_txb _ <<< "$(counts 2 vnet2)"
# 50 broadcast UDP frames of 200 bytes, then 7 frames whose IPv4 header is
# cut short (Ethernet type 0x0800, 10 bytes of it): truncated_ipv4.
nvm1 $PY -c '
from scapy.all import Ether, IP, UDP, Raw, sendp
good = Ether(src="02:41:00:00:00:01", dst="ff:ff:ff:ff:ff:ff") / IP(src="192.0.2.1", dst="192.0.2.255") / UDP(sport=9, dport=9)
good = good / Raw(b"x" * (200 - len(good)))
bad = Ether(src="02:41:00:00:00:01", dst="ff:ff:ff:ff:ff:ff", type=0x0800) / Raw(b"\x45" + b"\x00" * 9)
sendp([good] * 50 + [bad] * 7, iface="vnet1", verbose=False)'
sleep 0.5
read -r z_rx z_rxb _ _ z_tr <<< "$(counts 1 vnet1)"
read -r y_rx y_rxb _ _ _ <<< "$(counts 2 vx99)"
read -r _ _ x_tx x_txb _ <<< "$(counts 2 vnet2)"
d="vnet1 rx $((z_rx - a_rx)) frames $((z_rxb - a_rxb)) bytes, truncated_ipv4 $((z_tr - a_tr));"
d="$d h2 vx99 rx $((y_rx - b_rx)) frames $((y_rxb - b_rxb)) bytes; vnet2 tx $((x_tx - c_tx)) frames $((x_txb - c_txb)) bytes"
# vnet1 counts every frame it read, the 7 bad ones (24 bytes each) too,
# which are then dropped; only the 50 cross.
[ "$((z_rx - a_rx))" = 57 ] && [ "$((z_rxb - a_rxb))" = 10168 ] && [ "$((z_tr - a_tr))" = 7 ] || fail "$d"
[ "$((y_rx - b_rx))" = 50 ] && [ "$((y_rxb - b_rxb))" = 10000 ] || fail "$d"
[ "$((x_tx - c_tx))" = 50 ] && [ "$((x_txb - c_txb))" = 10000 ] || fail "$d"
pass "50 frames of 200 bytes and 7 truncated: $d"
zero=$(vx_stat 1 'sum(1 for r, v in port("vnet1")["drops"].items() if v == 0 and r != "truncated_ipv4")')
[ "$zero" -ge 40 ] || fail "only $zero zero drop reasons printed for vnet1"
pass "vnet1's other drop reasons are printed as 0 ($zero of them)"
