#!/bin/bash
# diagnose names what is wrong with the underlay and the VNIs, one rig per
# cause; each time `vxctl diagnose` exits 1 and `-j` has the cause:
#   - a wrong remote VTEP (an unused address of the underlay subnet):
#     remote_silent for that address, with no ICMP port unreachable;
#   - the two hosts on different dstports (4789 against 4790): both remotes
#     silent, each naming its own dstport and the ICMP port unreachable the
#     other host's kernel sent back (IP_RECVERR on the underlay socket);
#   - a tap in a VNI (7) with no vxlan port: vni_no_vxlan;
#   - an underlay MTU of 1400 under VMs of MTU 1450: mtu_underlay.
#
#   vxt62-PID-vm1       vxt62-PID-h1                          vxt62-PID-h2       vxt62-PID-vm2
#   vnet1 192.0.2.1 <-- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
#                      198.51.100.1                  198.51.100.2   VNI 99
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt62-$$"
trap rig_cleanup EXIT

# send_unknown SECONDS: vm1 pings vm2 through a static neighbour entry,
# five frames a second, so frames go out whether or not anything answers.
send_unknown() {
	nvm1 ip neigh replace "$(vm_addr4 2)" lladdr 02:00:5e:00:53:02 dev vnet1
	nvm1 ping -c $(( $1 * 5 )) -i 0.2 -W 1 "$(vm_addr4 2)" >/dev/null 2>&1 || true
}
readd_vxlan() { # SIDE ARGS...: vx99 again with other settings
	vx "$1" port del vx99 >/dev/null
	vx "$1" port add vx99 type vxlan vni 99 "${@:2}" >/dev/null
}

# ---- a wrong remote ------------------------------------------------------------
rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
readd_vxlan 1 local 198.51.100.1 remote 198.51.100.9
send_unknown 4
line=$(diag_names 1 remote_silent 'f["remote"] == "198.51.100.9" and f["sent"] >= 5 and f["rx_datagrams"] == 0 and f["silent_s"] >= 3 and f["icmp_port_unreach"] == 0' \
	"vx99: remote VTEP 198.51.100.9 is silent: [0-9]+ frames sent to it .* check its address")
pass "wrong remote: $line"
rig_cleanup; rig_init "vxt62-$$"

# ---- dstport mismatch -------------------------------------------------------------
rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
readd_vxlan 2 local 198.51.100.2 remote 198.51.100.1 dstport 4790
nvm2 ip neigh replace "$(vm_addr4 1)" lladdr 02:00:5e:00:53:01 dev vnet2
nvm2 ping -c 20 -i 0.2 -W 1 "$(vm_addr4 1)" >/dev/null 2>&1 &
send_unknown 4
wait $! || true
line=$(diag_names 1 remote_silent 'f["remote"] == "198.51.100.2" and f["dstport"] == 4789 and f["sent"] >= 5 and f["icmp_port_unreach"] > 0' \
	"remote VTEP 198.51.100.2 is silent.*[0-9]+ ICMP port unreachable came back from it: nothing listens on UDP 4789 there.*listens on UDP 4789")
diag_names 2 remote_silent 'f["remote"] == "198.51.100.1" and f["dstport"] == 4790 and f["icmp_port_unreach"] > 0' "nothing listens on UDP 4790 there" >/dev/null
unreach=$(vx_stat 1 'port("vx99")["vxlan"]["socket"]["rx_icmp_port_unreach"]')
rxerr=$(vx_stat 1 'port("vx99")["vxlan"]["socket"]["rx_errors"]')
txerr=$(vx_stat 1 'port("vx99")["vxlan"]["socket"]["tx_errors"]')
[ "$unreach" -gt 0 ] && [ "$rxerr" = 0 ] && [ "$txerr" = 0 ] || fail "h1's socket: $unreach port unreachable, $rxerr rx errors, $txerr tx errors"
pass "dstport 4789 against 4790: both sides name a silent remote and the ICMP port unreachable ($unreach at h1, none counted as socket errors): $line"
rig_cleanup; rig_init "vxt62-$$"

# ---- a tap with no vxlan port in its VNI ---------------------------------------------
rig_create 4
rig_vxswitchd 1
rig_vxswitchd 2
rig_ns_add "$P-vm3"
vx 1 port add vnet3 type tap vni 7 netns "$P-vm3" >/dev/null
n "$P-vm3" ip link set vnet3 up
n "$P-vm3" ip addr add 203.0.113.3/24 dev vnet3
n "$P-vm3" ping -c 3 -i 0.2 -W 1 203.0.113.4 >/dev/null 2>&1 || true
line=$(diag_names 1 vni_no_vxlan 'f["port"] == "vnet3" and f["vni"] == 7 and f["taps"] == 1' \
	"VNI 7 has 1 tap \(vnet3\) and no vxlan port")
# The healthy VNI 99 stays quiet about it.
vx 1 -j diagnose | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(1 if any(f.get("port") in ("vnet1", "vx99") for f in d["findings"]) else 0)' ||
	fail "diagnose blames VNI 99's ports: $(vx 1 diagnose)"
pass "tap in a VNI without a vxlan port: $line"
rig_cleanup; rig_init "vxt62-$$"

# ---- VM MTU over what the underlay carries ---------------------------------------------
rig_create 4
nh1 ip link set u1 mtu 1400
nh2 ip link set u2 mtu 1400
rig_vxswitchd 1
rig_vxswitchd 2
nvm1 ping -c 2 -i 0.2 -W 1 -M do -s 1422 "$(vm_addr4 2)" >/dev/null 2>&1 || true
line=$(diag_names 1 mtu_underlay 'f["port"] == "vnet1" and f["mtu"] == 1450 and f["fits"] == 1350 and f["underlay_mtu"] == 1400' \
	"vnet1: VM MTU 1450 is larger than the 1350 that fits")
pass "MTU mismatch: $line"
