#!/bin/bash
# The vxlan port's outer-header options on the kernel datapath (vxswitchd
# --datapath kernel): the program sets them per datagram with the tunnel
# key (BPF_F_ZERO_CSUM_TX, BPF_F_DONT_FRAGMENT), since the collect_md vxlan
# device is shared by every VNI.  Read on the wire with tshark on h1's
# underlay veth (tx checksum offload off there, so a computed checksum is
# finished in the capture):
#   1. defaults on both hosts: DF set, UDP checksum computed (non-zero),
#      as on the userspace datapath;
#   2. h1's vx99 with `udpcsum off df unset`: checksum 0 and DF clear on
#      every datagram h1 sends, h2's (defaults) unchanged (the pings'
#      datagrams, 10 from each host); iperf3 both ways; show config keeps
#      the words;
#   3. h1's vx99 with `srcport 40000-40003`: 32 UDP flows and the pings
#      leave h1 from those ports only, at least two of them (the program
#      chooses each flow's port, bpf/vxdp_abi.h), where the defaults left
#      from the namespace's ip_local_port_range (step 1);
#   4. refused with the reason: df inherit, mtu, srcport above 65534, a
#      second vxlan port of the same VNI with other settings, udpcsum off
#      over IPv6.
#
#   kvo-PID-vm1 vnet1 <= veth => [h1 vxdp0] u1 ===== u2 [vxdp0 h2] <= veth => vnet2 kvo-PID-vm2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "kvo-$$"
trap rig_cleanup EXIT

# fields FILE SRC: "df csum" per VXLAN datagram from SRC (the first of each
# comma list: tshark lists the inner IP/UDP fields after the outer ones).
fields() {
	tshark -r "$1" -o udp.check_checksum:FALSE -d udp.port==4789,vxlan -Y "vxlan && ip.src == $2" \
		-T fields -E occurrence=f -e ip.flags.df -e udp.checksum -e udp.srcport 2>/dev/null
}
# wire LABEL: pings both ways under a capture of u1 (10 datagrams from each
# host), then iperf3 both ways outside it (the datapath carries big GSO
# frames too; a capture of those would hold 10^5 datagrams for tshark);
# prints "N DF ZERO" for h1's datagrams then the same for h2's; h1's
# source ports, sorted, in $RIG_DIR/LABEL.sports.
wire() {
	local pcap=$RIG_DIR/$1.pcap s
	rig_capture "$H1" u1 "$pcap" -s 200 udp port 4789
	nvm1 ping -c 5 -i 0.1 -W 2 "$(vm_addr4 2)" >/dev/null || fail "$1: ping vm1 -> vm2"
	nvm2 ping -c 5 -i 0.1 -W 2 "$(vm_addr4 1)" >/dev/null || fail "$1: ping vm2 -> vm1"
	# 32 more flows from vm1 (one datagram to each of 32 UDP ports).
	nvm1 bash -c "for p in \$(seq 5000 5031); do echo x > /dev/udp/$(vm_addr4 2)/\$p; done"
	rig_capture_stop
	fields "$pcap" 198.51.100.1 | awk '{ print $3 }' | sort -n > "$RIG_DIR/$1.sports"
	rig_iperf 1 1 >/dev/null || fail "$1: iperf3 vm1 -> vm2"
	rig_iperf 1 2 >/dev/null || fail "$1: iperf3 vm2 -> vm1"
	for s in 198.51.100.1 198.51.100.2; do
		fields "$pcap" "$s" | awk '{ n++; if ($1 == 1 || $1 == "True") d++; if ($2 == "0x0000" || $2 == "0") z++ }
			END { printf "%d %d %d ", n + 0, d + 0, z + 0 }'
	done
	echo
}

rig_create 4
nh1 ethtool -K u1 tx off >/dev/null
nh2 ethtool -K u2 tx off >/dev/null
rig_vxswitchd_bpf 1
rig_vxswitchd_bpf 2
grep -q "datapath kernel unavailable" "$RIG_DIR"/h*.log && fail "no kernel datapath: $(cat "$RIG_DIR"/h*.log)"
for i in $(seq 10); do nvm1 ping -c 1 -W 1 "$(vm_addr4 2)" >/dev/null 2>&1 && break; done

# ---- 1. defaults ----------------------------------------------------------------
read -r n1 df1 z1 n2 df2 z2 < <(wire defaults)
[ "$n1" -ge 10 ] && [ "$n2" -ge 10 ] || fail "defaults: captured $n1 / $n2 datagrams"
[ "$df1" = "$n1" ] && [ "$df2" = "$n2" ] || fail "defaults: DF on $df1 of h1's $n1, $df2 of h2's $n2"
[ "$z1" = 0 ] && [ "$z2" = 0 ] || fail "defaults: zero checksums on $z1 of h1's, $z2 of h2's"
read -r lo hi < <(nh1 cat /proc/sys/net/ipv4/ip_local_port_range)
sp=$RIG_DIR/defaults.sports
awk -v lo="$lo" -v hi="$hi" '$1 < lo || $1 > hi { bad++ } END { exit bad > 0 }' "$sp" ||
	fail "defaults: h1's source ports outside $lo-$hi: $(uniq "$sp" | tr '\n' ' ')"
pass "defaults: DF set and checksum computed on all of h1's $n1 and h2's $n2 datagrams; h1's from $(uniq "$sp" | wc -l) source ports, all in ip_local_port_range $lo-$hi"

# ---- 2. udpcsum off df unset on h1 --------------------------------------------------
VX1="vx99 type vxlan vni 99 local $(u_addr 1) remote $(u_addr 2)"
vx 1 port del vx99
vx 1 port add $VX1 udpcsum off df unset || fail "port add $VX1 udpcsum off df unset"
read -r n1 df1 z1 n2 df2 z2 < <(wire off)
[ "$n1" -ge 10 ] && [ "$n2" -ge 10 ] || fail "udpcsum off df unset: captured $n1 / $n2 datagrams"
[ "$df1" = 0 ] && [ "$z1" = "$n1" ] || fail "udpcsum off df unset: h1 sent $n1 with DF on $df1 and zero checksums on $z1"
[ "$df2" = "$n2" ] && [ "$z2" = 0 ] || fail "h2 (defaults) changed: DF on $df2 of $n2, $z2 zero checksums"
vx 1 show config | grep -q "^port add $VX1 udpcsum off df unset" || fail "show config: $(vx 1 show config)"
pass "udpcsum off df unset: all of h1's $n1 datagrams with checksum 0 and no DF, h2's $n2 as before; show config keeps the words"

# ---- 3. srcport on h1 ---------------------------------------------------------------
vx 1 port del vx99
vx 1 port add $VX1 srcport 40000-40003 || fail "port add $VX1 srcport 40000-40003"
read -r n1 df1 z1 n2 df2 z2 < <(wire srcport)
sp=$RIG_DIR/srcport.sports
[ "$n1" -ge 42 ] || fail "srcport: captured $n1 of h1's datagrams, want the pings' 10 and 32 flows"
awk '$1 < 40000 || $1 > 40003 { bad++ } END { exit bad > 0 }' "$sp" ||
	fail "srcport 40000-40003: h1 sent from $(uniq "$sp" | tr '\n' ' ')"
used=$(uniq "$sp" | wc -l)
[ "$used" -ge 2 ] || fail "srcport 40000-40003: 33 flows all left from $(uniq "$sp")"
[ "$df1" = "$n1" ] && [ "$z1" = 0 ] || fail "srcport: DF on $df1 of $n1, $z1 zero checksums (the other settings are the defaults)"
vx 1 show config | grep -q "^port add $VX1 srcport 40000-40003" || fail "show config: $(vx 1 show config)"
pass "srcport 40000-40003: all of h1's $n1 datagrams from those ports, $used of them used ($(uniq -c "$sp" | awk '{ printf "%s:%s ", $2, $1 }')); show config keeps the words"

# ---- 4. refused -------------------------------------------------------------------
refused() { # PATTERN words...
	local pat=$1 out rc=0; shift
	out=$(vx 1 "$@" 2>&1) || rc=$?
	[ "$rc" != 0 ] && grep -q -- "$pat" <<<"$out" || fail "not refused with '$pat' (rc $rc): $* -> $out"
	echo "$out"
}
a=$(refused "df inherit" port add vx98 type vxlan vni 98 local "$(u_addr 1)" remote 198.51.100.9 df inherit)
b=$(refused "mtu: the kernel datapath cannot" port add vx98 type vxlan vni 98 local "$(u_addr 1)" remote 198.51.100.9 mtu 1400)
e=$(refused "ports up to 65534" port add vx98 type vxlan vni 98 local "$(u_addr 1)" remote 198.51.100.9 srcport 65530-65535)
c=$(refused "differ from port vx99" port add vx97 type vxlan vni 99 local "$(u_addr 1)" remote 198.51.100.9)
d=$(refused "over IPv6" port add vx96 type vxlan vni 96 local 2001:db8:ff::1 remote 2001:db8:ff::2 udpcsum off)
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after the refusals"
pass "refused: $a | $b | $e | $c | $d"
