#!/bin/bash
# vxctl diagnose and stats on the kernel datapath (vxswitchd --datapath
# kernel), from the programs' own counters.  Each finding is caused for
# real, then seen in `diagnose` (exit 1, the sentence, the JSON fields):
#   - a healthy pair after pings both ways: no problem (exit 0);
#   - remote_silent: a second vxlan port of VNI 99 names 198.51.100.9,
#     where nobody listens; broadcasts flooded to it, nothing back;
#   - upcalls_dropped: a MAC flood from vm1 (blast.py, 3000 new source
#     MACs at once) beyond the port's upcall rate (1000/s, burst 100);
#   - rules_cache_thrashing: a rule on vnet1 and 3000 new UDP flows, each
#     a miss of the kernel's decision cache;
#   - program_not_attached: the tcx link of an afpacket port detached from
#     outside (bpftool link detach), then its device deleted;
#   - mtu_underlay: the VM-facing veth's MTU raised over what fits;
#   - small_frames_kernel: vm2's stream reaches vm1 in MTU-sized frames
#     (mtu-wire, GRO off on h1's underlay veth and vxlan device);
#   - --metrics: the kernel ports in the port families and the kernel's
#     own (drops by the programs' reasons, upcalls, attached, per VTEP),
#     promtool check metrics passes;
#   - stats -j of a kernel port has the userspace datapath's keys
#     (rx_frames, tx_frames, tx_avg_frame, drops{}, tx_size_hist[]),
#     a vxlan port its remotes' counters, and vnis[].
#
#   kcd-PID-vm1 vnet1 <= veth => vnet1 [h1 vxdp0] u1 ===== u2 [vxdp0 h2] vnet2 <= veth => vnet2 kcd-PID-vm2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "kcd-$$"
trap rig_cleanup EXIT

rig_create 4
RIG_VXD_ARGS="--metrics 198.51.100.1:9118" rig_vxswitchd_bpf 1
rig_vxswitchd_bpf 2
grep -q "datapath kernel unavailable" "$RIG_DIR"/h*.log && fail "no kernel datapath: $(cat "$RIG_DIR"/h*.log)"
for i in $(seq 10); do nvm1 ping -c 1 -W 1 "$(vm_addr4 2)" >/dev/null 2>&1 && break; done
nvm1 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping vm1 -> vm2"
nvm2 ping -c 3 -i 0.2 -W 2 "$(vm_addr4 1)" >/dev/null || fail "ping vm2 -> vm1"

# ---- stats: the userspace datapath's keys ----------------------------------
vx_stat 1 '1 if all(k in port("vnet1") for k in ("rx_frames", "rx_bytes", "tx_frames", "tx_bytes", "tx_avg_frame", "drops", "tx_size_hist", "fdb")) else 0' | grep -qx 1 ||
	fail "vnet1's stats keys: $(vx 1 -j stats port vnet1)"
[ "$(vx_stat 1 'port("vnet1")["tx_frames"] >= 6 and sum(b["frames"] for b in port("vnet1")["tx_size_hist"]) == port("vnet1")["tx_frames"]')" = True ] ||
	fail "vnet1's tx_frames and histogram: $(vx 1 -j stats port vnet1)"
[ "$(vx_stat 1 'port("vx99")["tx_frames"] >= 3 and port("vx99")["rx_frames"] >= 3 and port("vx99")["remotes"][0]["remote"] == "198.51.100.2"')" = True ] ||
	fail "vx99's stats from its remote: $(vx 1 -j stats port vx99)"
[ "$(vx_stat 1 '[v for v in d["vnis"] if v["vni"] == 99][0]["ports"]')" = 1 ] || fail "vnis: $(vx 1 -j stats)"
pass "stats: vnet1 $(vx_stat 1 'port("vnet1")["tx_frames"]') frames to the VM in the histogram, vx99 tx $(vx_stat 1 'port("vx99")["tx_frames"]') rx $(vx_stat 1 'port("vx99")["rx_frames"]') from 198.51.100.2, per VNI"

# stats --watch reads the kernel datapath's answer (one JSON line a sample).
out=$(vx 1 -j stats --watch 0.2 -c 2 2>&1) || fail "stats --watch: $out"
[ "$(printf '%s\n' "$out" | grep -c '"ports"')" -ge 1 ] && grep -q '"vnet1"' <<<"$out" || fail "stats --watch: $out"
pass "stats --watch on the kernel datapath: $(printf '%s\n' "$out" | tail -1 | cut -c1-120)"

# ---- healthy ------------------------------------------------------------------
rc=0; out=$(vx 1 diagnose) || rc=$?
[ "$rc" = 0 ] && grep -q "no problem found" <<<"$out" || fail "healthy h1: diagnose exits $rc: $out"
rc=0; out=$(vx 2 diagnose port vnet2) || rc=$?
[ "$rc" = 0 ] || fail "healthy h2 vnet2: diagnose exits $rc: $out"
pass "healthy pair: no problem found on h1, nor for h2's vnet2"

# ---- remote_silent -------------------------------------------------------------
vx 1 port add vxs type vxlan vni 99 local 198.51.100.1 remote 198.51.100.9 || fail "port add vxs"
nvm1 ping -b -c 8 -i 0.2 -W 1 192.0.2.255 >/dev/null 2>&1 || true
sleep 3.2
nvm1 ping -c 2 -i 0.2 -W 2 "$(vm_addr4 2)" >/dev/null || fail "ping after the broadcasts"
line=$(diag_names 1 remote_silent 'f["remote"] == "198.51.100.9" and f["sent"] >= 5 and f["rx_datagrams"] == 0' \
	"vxs: remote VTEP 198.51.100.9 is silent")
vx 1 -j diagnose | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(1 if [f for f in d["findings"] if f["cause"] == "remote_silent" and f["remote"] == "198.51.100.2"] else 0)' ||
	fail "198.51.100.2 (which answers) called silent: $(vx 1 diagnose)"
pass "remote_silent: $line"
vx 1 port del vxs

# ---- upcalls_dropped -------------------------------------------------------------
d0=$(vx_stat 1 'port("vnet1")["kernel"]["upcall_drops"]')
nvm1 /usr/bin/python3 tests/netns/blast.py vnet1 3000 macs >/dev/null || fail "blast.py"
d1=$(vx_stat 1 'port("vnet1")["kernel"]["upcall_drops"]')
[ "$d1" -gt "$d0" ] || fail "a 3000-MAC flood dropped no upcall ($d0 -> $d1)"
line=$(diag_names 1 upcalls_dropped 'f["upcall_drops"] > 0 and f["upcalls"] > 0' "vnet1: [0-9]+ learning upcalls dropped")
pass "upcalls_dropped: $line"

# ---- rules_cache_thrashing --------------------------------------------------------
# A rule on vnet1 (it matches none of what follows) puts the port on the
# rules path; 3000 UDP datagrams to 3000 ports are 3000 new flows, each
# a miss of the kernel's decision cache.  Established flows (the pings
# before) would hit.
vx 1 filter add dev vnet1 ingress pref 1 protocol ip flower ip_proto udp dst_port 7 action drop || fail "filter add"
nvm1 /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for p in range(20000, 23000):
    s.sendto(b"x" * 32, (sys.argv[1], p))
    if p % 100 == 0:
        time.sleep(0.01)' "$(vm_addr4 2)"
line=$(diag_names 1 rules_cache_thrashing 'f["misses"] >= 2000 and f["miss_permille"] >= 500' "vnet1: the kernel's rule cache missed [0-9]+ of [0-9]+ lookups")
vx 1 filter del dev vnet1 ingress pref 1 || fail "filter del"
pass "rules_cache_thrashing: $line"

# ---- program_not_attached ---------------------------------------------------------
links() { nh1 bpftool -j link show 2>/dev/null | /usr/bin/python3 -c 'import json,sys; print(" ".join(str(l["id"]) for l in json.load(sys.stdin)))'; }
before=" $(links) "
nh1 ip link add kcdx type veth peer name kcdy
nh1 ip link set kcdx up
nh1 ip link set kcdy up
vx 1 port add ct type afpacket dev kcdx vni 99 || fail "afpacket port on kcdx"
new=""
for id in $(links); do case "$before" in *" $id "*) ;; *) new="$new $id" ;; esac; done
[ "$(vx_stat 1 'port("ct")["kernel"]["attached"]')" = True ] || fail "ct not attached: $(vx 1 stats port ct)"
[ "$(echo $new | wc -w)" = 1 ] || fail "port add ct made links:$new"
nh1 bpftool link detach id $new || fail "bpftool link detach id $new"
[ "$(vx_stat 1 'port("ct")["kernel"]["attached"]')" = False ] || fail "stats says ct is still attached"
line=$(diag_names 1 program_not_attached 'f["dev"] == "kcdx" and f["device_gone"] == 0' "ct: the kernel datapath's program vxdp_port_ingress is no longer on kcdx")
nh1 ip link del kcdx
line2=$(diag_names 1 program_not_attached 'f["device_gone"] == 1' "ct: its device")
vx 1 port del ct
pass "program_not_attached: detached: $line; deleted: $line2"

# ---- mtu_underlay -------------------------------------------------------------------
nh1 ip link set vnet1 mtu 1500
line=$(diag_names 1 mtu_underlay 'f["mtu"] == 1500 and f["fits"] == 1450' "vnet1: VM MTU 1500 is larger than the 1450")
nh1 ip link set vnet1 mtu "$(vm_mtu)"
pass "mtu_underlay: $line"

# ---- small_frames_kernel ----------------------------------------------------------
# mtu-wire with GRO off on h1's underlay veth: vm2's stream reaches vm1 in
# MTU-sized frames (the kernel datapath hands on what the kernel's GRO built).
rig_wire_mode mtu
nh1 ethtool -K u1 gro off >/dev/null
nh1 ethtool -K vxdp0 gro off >/dev/null # the vxlan device's own GRO cells would merge them too
g=$(rig_iperf 2 2) || fail "iperf3 vm2 -> vm1 in mtu-wire"
echo "  vnet1 after it: $(vx 1 stats port vnet1 | grep -E 'tx sizes|rx ')"
line=$(diag_names 1 small_frames_kernel 'f["small_permille"] >= 500 and f["frames"] > 1000' "vnet1: the VM receives small frames")
rig_wire_mode gso
nh1 ethtool -K vxdp0 gro on >/dev/null
pass "small_frames_kernel ($g Gbit/s, GRO off on u1 and vxdp0): $line"

# ---- --metrics ----------------------------------------------------------------------
nh1 curl -sS --max-time 3 http://198.51.100.1:9118/metrics > "$RIG_DIR/m" || fail "scrape"
promtool check metrics < "$RIG_DIR/m" > "$RIG_DIR/promtool" 2>&1 || { cat "$RIG_DIR/promtool" >&2; fail "promtool check metrics"; }
metric() { awk -v k="$1" '$1 == k { print $2 }' "$RIG_DIR/m"; }
[ "$(metric 'vxswitch_port_tx_packets_total{port="vnet1",vni="99",type="veth"}')" -gt 0 ] || fail "metrics: vnet1 tx: $(grep vnet1 "$RIG_DIR/m" | head)"
[ "$(metric 'vxswitch_kdp_port_upcall_drops_total{port="vnet1",vni="99",type="veth"}')" -gt 0 ] || fail "metrics: upcall drops"
[ "$(metric 'vxswitch_kdp_program_attached{port="vnet1",vni="99",type="veth"}')" = 1 ] || fail "metrics: attached"
[ "$(metric 'vxswitch_kdp_vtep_rx_frames_total{port="vx99",vni="99",type="vxlan",remote="198.51.100.2"}')" -gt 0 ] || fail "metrics: vtep rx"
grep -q '^vxswitch_port_tx_frame_size_bytes_bucket{port="vnet1",vni="99",type="veth",le="+Inf"}' "$RIG_DIR/m" || fail "metrics: size histogram of vnet1"
pass "--metrics: kernel ports in the port families and the size histogram, upcall drops $(metric 'vxswitch_kdp_port_upcall_drops_total{port="vnet1",vni="99",type="veth"}'), per-VTEP rx; promtool check metrics passes"

# Every finding says its port: diagnose port vnet1 has vnet1's only.
rc=0; out=$(vx 1 -j diagnose port vnet1) || rc=$?
/usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["findings"] and all(f.get("port") == "vnet1" for f in d["findings"]) else 1)' "$out" ||
	fail "diagnose port vnet1: $out"
rc=0; out=$(vx 1 diagnose port nosuch 2>&1) || rc=$?
[ "$rc" = 1 ] && grep -q "no such port" <<<"$out" || fail "diagnose port nosuch: $rc $out"
pass "diagnose port vnet1: its findings only; an unknown port refused"
