#!/bin/bash
# The vxlan port's outer-header options do what they say on the wire:
# capture the sender's underlay veth (as test_wire_csum.sh does: mtu-wire,
# tx checksum offload off on u1, so the capture holds finished checksums)
# and read every VXLAN datagram's outer IPv4 DF, UDP source port and UDP
# checksum with tshark.
#   1. defaults: DF set on the full-size frames of TSO sends, source port
#      4789 (fixed), checksum computed (non-zero);
#   2. `udpcsum off srcport 40000-40010 df unset` on vx99 of host 1 (and
#      udpcsum off on host 2): checksum 0 on every datagram, source ports
#      only in the range and more than one of them for iperf3 -P 4, DF
#      clear; TCP still flows both ways; port show says so; UDP_SEGMENT,
#      which the kernel refuses without a checksum, falls back;
#   3. `df inherit`: TCP (inner DF) goes out with DF, a ping -M dont
#      without;
#   4. refusals at port add: a second VNI on the same socket with another
#      udpcsum, a srcport range over the cap.
#
#   vxt9-PID-vm1        vxt9-PID-h1          tcpdump here          vxt9-PID-h2        vxt9-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ========================= u2 -- vxswitchd --> vnet2 192.0.2.2
#                                    198.51.100.1      VNI 99      198.51.100.2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt9-$$"
trap rig_cleanup EXIT

rig_create 4
rig_wire_mode mtu
nh1 ethtool -K u1 tx off >/dev/null
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping"

VX1="vx99 type vxlan vni 99 local 198.51.100.1 remote 198.51.100.2"
VX2="vx99 type vxlan vni 99 local 198.51.100.2 remote 198.51.100.1"

# fields FILE: "df len srcport csum" per outer datagram from host 1 (the
# first of each comma list: tshark lists the inner IP/UDP fields after).
fields() {
	tshark -r "$1" -o udp.check_checksum:FALSE -d udp.port==4789,vxlan -Y 'vxlan && ip.src == 198.51.100.1' \
		-T fields -e ip.flags.df -e ip.len -e udp.srcport -e udp.checksum 2>/dev/null |
		awk '{ for (i = 1; i <= 4; i++) sub(/,.*/, "", $i); print $1, $2, $3, $4 }'
}
# Replaces vx99 of host SIDE with one configured by the rest of the words.
readd() {
	local side=$1; shift
	vx "$side" port del vx99
	vx "$side" port add "$@" >/dev/null
	nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after port add $*"
}

# ---- 1. defaults -------------------------------------------------------------
PCAP=$RIG_DIR/default.pcap
rig_capture "$H1" u1 "$PCAP" -c 4000 "udp dst port 4789 and src host 198.51.100.1"
rig_iperf 1 1 >/dev/null || fail "tcp iperf3"
rig_capture_stop
fields "$PCAP" > "$RIG_DIR/default.txt"
read -r full full_df ports zero < <(awk '$2 >= 1400 { n++; if ($1 == 1 || $1 == "True") d++ }
	{ p[$3] = 1; if ($4 == "0x0000" || $4 == "0") z++ }
	END { np = 0; for (k in p) np++; print n + 0, d + 0, np, z + 0 }' "$RIG_DIR/default.txt")
sport=$(awk '{ print $3 }' "$RIG_DIR/default.txt" | sort -u | tr '\n' ' ')
echo "  default: $full full-size datagrams, $full_df with DF; source ports: $sport; $zero zero checksums"
[ "$full" -gt 1000 ] || fail "only $full full-size datagrams captured"
[ "$full_df" = "$full" ] || fail "DF clear on $((full - full_df)) of $full full-size datagrams by default"
[ "$sport" = "4789 " ] || fail "default source ports: $sport"
[ "$zero" = 0 ] || fail "$zero zero UDP checksums with udpcsum on"
vx 1 port show | grep -q "vx99 .* srcport 4789 (fixed) udpcsum on df set" || fail "port show defaults: $(vx 1 port show)"
pass "defaults: DF on all $full full-size datagrams, source port 4789, checksums computed"

# ---- 2. udpcsum off, srcport range, df unset ----------------------------------
readd 2 $VX2 udpcsum off
readd 1 $VX1 udpcsum off srcport 40000-40010 df unset
show=$(vx 1 port show)
echo "$show" | grep -q "vx99 .* srcport 40000-40010 udpcsum off df unset" || fail "port show: $show"
vx 1 -j port show | /usr/bin/python3 -c '
import json, sys
p = [p for p in json.load(sys.stdin) if p["name"] == "vx99"][0]
assert (p["srcport_min"], p["srcport_max"], p["srcport_hash"], p["udpcsum"], p["df"]) == \
	(40000, 40010, True, False, "unset"), p' || fail "port show -j"

PCAP=$RIG_DIR/options.pcap
rig_capture "$H1" u1 "$PCAP" -c 6000 "udp dst port 4789 and src host 198.51.100.1"
gbit=$(rig_iperf 2 1 -P 4) || fail "tcp iperf3 -P 4 with udpcsum off"
rig_capture_stop
back=$(rig_iperf 1 2) || fail "tcp iperf3 from vm2 with udpcsum off"
fields "$PCAP" > "$RIG_DIR/options.txt"
read -r total full full_df zero outside < <(awk '{ n++; if ($4 == "0x0000" || $4 == "0") z++
	if ($3 < 40000 || $3 > 40010) o++ }
	$2 >= 1400 { f++; if ($1 == 1 || $1 == "True") d++ }
	END { print n + 0, f + 0, d + 0, z + 0, o + 0 }' "$RIG_DIR/options.txt")
# ports that carried a flow's data (50+ full-size datagrams), not just the
# control connection's few
nports=$(awk '$2 >= 1400 { c[$3]++ } END { for (k in c) if (c[k] >= 50) n++; print n + 0 }' "$RIG_DIR/options.txt")
ports=$(awk '{ c[$3]++ } END { for (k in c) printf "%s:%d ", k, c[k] }' "$RIG_DIR/options.txt")
echo "  options: $total datagrams ($gbit Gbit/s -P 4, $back Gbit/s back), $zero zero checksums, $nports source ports with data ($ports), $outside outside the range, $full_df of $full full-size with DF"
[ "$total" -gt 1000 ] || fail "only $total datagrams captured"
[ "$zero" = "$total" ] || fail "udpcsum off: $((total - zero)) of $total datagrams with a checksum"
[ "$outside" = 0 ] || fail "$outside datagrams with a source port outside 40000-40010"
[ "$nports" -gt 1 ] || fail "iperf3 -P 4 flows took one source port only: $ports"
[ "$full" -gt 500 ] && [ "$full_df" = 0 ] || fail "df unset: $full_df of $full full-size datagrams with DF"
vx_stat 1 'port("vx99")["vxlan"]["socket"]["udp_segment"] is False and port("vx99")["vxlan"]["socket"]["udp_segment_fallbacks"] >= 1' |
	grep -q True || fail "udpcsum off: UDP_SEGMENT not refused and fallen back: $(vx 1 stats port vx99)"
pass "udpcsum off: $zero/$total zero checksums, TCP both ways ($gbit, $back Gbit/s); srcport: $nports ports, all in 40000-40010; df unset: DF on 0 of $full; UDP_SEGMENT refused by the kernel, fell back"

# ---- 3. df inherit -----------------------------------------------------------
readd 1 $VX1 df inherit
PCAP=$RIG_DIR/inherit.pcap
rig_capture "$H1" u1 "$PCAP" -c 3000 "udp dst port 4789 and src host 198.51.100.1"
nvm1 ping -c 5 -i 0.1 -s 1200 -M dont "$(vm_addr4 2)" >/dev/null || fail "ping -M dont"
rig_iperf 1 1 >/dev/null || fail "tcp iperf3 with df inherit"
rig_capture_stop
# inner: ICMP echo requests (no DF) and full-size TCP (DF)
icmp=$(tshark -r "$PCAP" -d udp.port==4789,vxlan -Y 'vxlan && ip.src == 198.51.100.1 && icmp.type == 8' \
	-T fields -e ip.flags.df 2>/dev/null | awk -F, '{ print $1 }' | sort | uniq -c | tr '\n' ' ')
tcp=$(tshark -r "$PCAP" -d udp.port==4789,vxlan -Y 'vxlan && ip.src == 198.51.100.1 && tcp && ip.len >= 1400' \
	-T fields -e ip.flags.df 2>/dev/null | awk -F, '{ print $1 }' | sort | uniq -c | tr '\n' ' ')
echo "  inherit: outer DF of ICMP echo (inner DF clear): $icmp; of full-size TCP (inner DF set): $tcp"
echo "$icmp" | grep -Eq '^ *5 (0|False) *$' || fail "df inherit: pings without DF went out with DF: $icmp"
echo "$tcp" | grep -Eq '^ *[0-9]+ (1|True) *$' || fail "df inherit: TCP went out without DF: $tcp"
pass "df inherit: outer DF follows the inner (ICMP -M dont: clear, TCP: set)"

# ---- 4. refusals at port add ----------------------------------------------------
out=$(vx 1 port add vx100 type vxlan vni 100 local 198.51.100.1 remote 198.51.100.2 udpcsum off 2>&1) && rc=0 || rc=$?
[ "$rc" = 1 ] && echo "$out" | grep -q "udpcsum off differs from udpcsum on of the other ports" ||
	fail "udpcsum conflict on a shared socket: rc $rc: $out"
out=$(vx 1 port add vx100 type vxlan vni 100 local 198.51.100.1 remote 198.51.100.2 df set 2>&1) && rc=0 || rc=$?
[ "$rc" = 1 ] && echo "$out" | grep -q "df set differs from df inherit" || fail "df conflict: rc $rc: $out"
out=$(vx 1 port add vx100 type vxlan vni 100 local 198.51.100.1 remote 198.51.100.2 srcport 40000-40100 2>&1) && rc=0 || rc=$?
[ "$rc" = 1 ] && echo "$out" | grep -q '"srcport" range of 101 ports, at most 64' || fail "srcport cap: rc $rc: $out"
vx 1 port show | grep -q vx100 && fail "a refused port was added"
pass "refused: another udpcsum or df on a shared socket, a srcport range over 64 ports (exit 1, the word named)"
