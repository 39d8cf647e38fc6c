#!/bin/bash
# The kernel datapath keeps forwarding while vxswitchd is killed and
# restarted (vxswitchd --keep-datapath): its maps and tcx links are pinned
# in bpffs, the vxlan device and veths stay, and the next start adopts
# them and reconciles them with its config.
#
#   vm1 vnet1 192.0.2.1 <= veth => h1 [vxdp0] -- u1 ==== u2 -- [vxdp0] h2 <= veth => vnet2 192.0.2.2 vm2
#
# Checks: a ping at 100/s and an iperf3 stream (0.2 s intervals) run
# while h1's daemon is SIGKILLed and started again, then h2's is stopped
# with SIGTERM and started again: no ping is lost and no interval is
# empty; the adopted ports keep their counters and learned MACs; a
# restart whose config drops a port removes that port's veth pair and
# program; a start without --keep-datapath removes the kept state
# first; `vxswitchd --cleanup` removes it all (pins, device, veths,
# programs).
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt83-$$"
progs_before=$(vxdp_progs)
# A bpffs of the test's own, outside /sys (`ip netns exec` gives each
# daemon a /sys of its own, where a bpffs would die with the daemon);
# unmounting it at the end drops any pin a failure left.
BPFFS=$RIG_DIR/bpffs
mkdir "$BPFFS"
mount -t bpf bpf "$BPFFS"
ns_dir() { echo "$BPFFS/vxswitch/$(stat -L -c %i "/run/netns/$1")-vxdp0"; }
restart_cleanup() {
	local h
	for h in "$H1" "$H2"; do
		ip netns pids "$h" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
	done
	for h in "$H1" "$H2"; do
		[ -e "/run/netns/$h" ] || continue
		n "$h" "$VXSWITCHD" --cleanup --bpffs "$BPFFS" >/dev/null 2>&1 || true
	done
	umount "$BPFFS" 2>/dev/null || true
	rig_cleanup
}
trap restart_cleanup EXIT

rig_create 4
RIG_VXD_ARGS="--keep-datapath --bpffs $BPFFS"
# The control socket exists from the start, but vxswitchd answers on it
# only once its config is applied and the kept state reconciled: a vxctl
# call after each start waits for that.
rig_vxswitchd_bpf 1 || fail "h1"
vx 1 port show >/dev/null || fail "vxctl after the start"  # served: the config is applied and the kept state reconciled
rig_vxswitchd_bpf 2 || fail "h2"
vx 2 port show >/dev/null || fail "vxctl after the start"  # served: the config is applied and the kept state reconciled
grep -q "datapath kernel unavailable" "$RIG_DIR"/h*.log && fail "no kernel datapath: $(cat "$RIG_DIR"/h*.log)"
for i in $(seq 10); do nvm1 ping -c 1 -W 1 192.0.2.2 >/dev/null 2>&1 && break; done
nvm1 ping -c 3 -i 0.1 -q 192.0.2.2 >/dev/null || fail "ping vm1 -> vm2 before any restart"
[ -e "$(ns_dir "$H1")/fdb" ] && [ -e "$(ns_dir "$H1")/link-$(nh1 cat /sys/class/net/vnet1/ifindex)" ] \
	|| fail "nothing pinned in $(ns_dir "$H1"): $(ls "$(ns_dir "$H1")" 2>&1)"
pass "kept state pinned: $(ls "$(ns_dir "$H1")" | tr '\n' ' ')"

mac2=$(nvm2 cat /sys/class/net/vnet2/address)
# The kept tcx link of vnet1: its id, and the program it runs.
link_of() { bpftool -j link show pinned "$(ns_dir "$H1")/link-$(nh1 cat /sys/class/net/vnet1/ifindex)" |
	/usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["id"], d["prog_id"])'; }
read -r link0 prog0 < <(link_of)
tx_before=$(vx 1 -j stats port vnet1 | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["ports"][0]["tx_frames"])')

# Traffic across the restarts: ping at 100/s for 9 s, iperf3 for 9 s.
nvm1 ping -i 0.01 -c 900 -W 1 -q 192.0.2.2 > "$RIG_DIR/ping.txt" 2>&1 &
pinger=$!
nvm2 iperf3 -s -1 -D -B 192.0.2.2 -p 5201 --logfile "$RIG_DIR/iperf.server.log" >/dev/null 2>&1
for i in $(seq 600); do nvm2 ss -ltn | grep -q ":5201 " && break; sleep 0.05; done
nvm1 iperf3 -c 192.0.2.2 -p 5201 -t 9 -i 0.2 -J > "$RIG_DIR/iperf.json" 2>&1 &
iperf=$!
sleep 2
kill -9 "$VXD_PID_1"
for i in $(seq 100); do kill -0 "$VXD_PID_1" 2>/dev/null || break; sleep 0.02; done
VXD_PID_1=
rm -f "$RIG_DIR/h1.sock"
sleep 1   # forwarding with no daemon at all
rig_vxswitchd_bpf 1 || fail "h1 restart"
vx 1 port show >/dev/null || fail "vxctl after the start"  # served: the config is applied and the kept state reconciled
sleep 1
rig_vxswitchd_stop 2
sleep 0.5
rig_vxswitchd_bpf 2 || fail "h2 restart"
vx 2 port show >/dev/null || fail "vxctl after the start"  # served: the config is applied and the kept state reconciled
wait "$iperf" || fail "iperf3 across the restarts: $(tail -5 "$RIG_DIR/iperf.json")"
wait "$pinger" || true
lost=$(awk '/packets transmitted/ {print $1 - $4}' "$RIG_DIR/ping.txt")
sent=$(awk '/packets transmitted/ {print $1}' "$RIG_DIR/ping.txt")
read -r n_iv min_iv med_iv < <(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
iv = sorted(i["sum"]["bits_per_second"] / 1e9 for i in d["intervals"])
print(len(iv), "%.2f" % iv[0], "%.2f" % iv[len(iv) // 2])' "$RIG_DIR/iperf.json")
[ "$sent" -ge 850 ] || fail "ping sent only $sent: $(cat "$RIG_DIR/ping.txt")"
[ "$lost" = 0 ] || fail "$lost of $sent pings lost across the restarts: $(cat "$RIG_DIR/ping.txt")"
awk -v m="$min_iv" 'BEGIN { exit !(m > 0) }' || fail "an iperf3 interval with nothing through (min $min_iv Gbit/s of $n_iv)"
pass "SIGKILL + restart of h1, SIGTERM + restart of h2 under traffic: 0 of $sent pings lost (100/s), iperf3 $n_iv intervals of 0.2 s, min $min_iv Gbit/s, median $med_iv"

# Adopted: the counters go on, the learned remote MAC is still there.
tx_after=$(vx 1 -j stats port vnet1 | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["ports"][0]["tx_frames"])')
[ "$tx_after" -gt "$tx_before" ] || fail "vnet1's counters restarted: $tx_before before, $tx_after after"
vx 1 fdb show vni 99 | grep -q "^$mac2 vni 99 port vx99 remote 198.51.100.2 " || fail "fdb after restart: $(vx 1 fdb show)"
[ "$(vx_port 1 vnet1 datapath)" = kernel ] || fail "port show after restart: $(vx 1 port show)"
read -r link1 prog1 < <(link_of)
[ "$link1" = "$link0" ] && [ "$prog1" != "$prog0" ] || fail "vnet1's link $link0 prog $prog0 before, link $link1 prog $prog1 after"
bpftool prog show id "$prog0" >/dev/null 2>&1 && fail "the killed daemon's program $prog0 is still loaded"
pass "adopted: vnet1 tx_frames $tx_before -> $tx_after, vm2's MAC still behind 198.51.100.2, tcx link $link0 switched from program $prog0 (freed) to $prog1"

# A restart whose config drops a port: its veth pair and program go.
VM9=$P-vm9
rig_ns_add "$VM9"
vx 1 port add vnet9 type veth vni 99 netns "$VM9" mtu 1450 || fail "port add vnet9"
n "$VM9" ip link show vnet9 >/dev/null || fail "no vnet9 in vm9"
RIG_EXTRA_CONF="port add vnet9 type veth vni 99 netns $VM9 mtu 1450"
rig_vxswitchd_stop 1
rig_vxswitchd_bpf 1 || fail "h1 restart with vnet9"
vx 1 port show >/dev/null || fail "vxctl after the start"  # served: the config is applied and the kept state reconciled
n "$VM9" ip link show vnet9 >/dev/null || fail "vnet9 lost in a restart that names it"
RIG_EXTRA_CONF=""
rig_vxswitchd_stop 1
rig_vxswitchd_bpf 1 || fail "h1 restart without vnet9"
vx 1 port show >/dev/null || fail "vxctl after the start"  # served: the config is applied and the kept state reconciled
n "$VM9" ip link show vnet9 >/dev/null 2>&1 && fail "vnet9 still in vm9 after a restart without it"
nh1 ip link show vnet9 >/dev/null 2>&1 && fail "vnet9's host end left in h1"
nvm1 ping -c 3 -i 0.1 -W 1 -q 192.0.2.2 >/dev/null || fail "ping after the reconcile"
# Every pinned link is one of a device that exists (the rules'
# re-injection veth is made anew at each start: its old link's pin goes).
for l in "$(ns_dir "$H1")"/link-*; do
	nh1 ip -o link show | grep -q "^${l##*/link-}: " || fail "pin $l of no device: $(ls "$(ns_dir "$H1")")"
done
pass "a restart whose config no longer names vnet9 removed its veth pair; vm1 -> vm2 still forwards"

# Reload on the kernel datapath: show config lists its ports, and feeding
# it back changes nothing; a port added to the file is added, one dropped
# from it is removed (its veth pair with it).
vx 1 show config > "$RIG_DIR/show1.txt"
grep -q "^port add vnet1 type veth vni 99 netns $VM1" "$RIG_DIR/show1.txt" || fail "show config: $(cat "$RIG_DIR/show1.txt")"
grep -q "^port add vx99 type vxlan vni 99 " "$RIG_DIR/show1.txt" || fail "show config lacks vx99: $(cat "$RIG_DIR/show1.txt")"
cp "$RIG_DIR/show1.txt" "$RIG_DIR/h1.conf"
ifx=$(nh1 cat /sys/class/net/vnet1/ifindex)
vx 1 reload >/dev/null || fail "reload of show config"
[ "$(nh1 cat /sys/class/net/vnet1/ifindex)" = "$ifx" ] || fail "reload of an unchanged config replaced vnet1"
echo "port add vnet9 type veth vni 99 netns $VM9 mtu 1450" >> "$RIG_DIR/h1.conf"
vx 1 reload >/dev/null || fail "reload adding vnet9"
n "$VM9" ip link show vnet9 >/dev/null 2>&1 || fail "reload did not add vnet9: $(vx 1 port show)"
cp "$RIG_DIR/show1.txt" "$RIG_DIR/h1.conf"
vx 1 reload >/dev/null || fail "reload removing vnet9"
vx 1 port show | grep -q "^vnet9 " && fail "reload left vnet9 in port show"
n "$VM9" ip link show vnet9 >/dev/null 2>&1 && fail "reload left vnet9's veth pair"
nvm1 ping -c 3 -i 0.1 -W 1 -q 192.0.2.2 >/dev/null || fail "ping after the reloads"
pass "reload on the kernel datapath: show config fed back changes nothing (vnet1 ifindex $ifx kept), vnet9 added then removed with its pair"

# A start without --keep-datapath removes the kept state first.
rig_vxswitchd_stop 2
RIG_VXD_ARGS="--bpffs $BPFFS"
# The rig's start returns while the kept vnet2 is still there; the daemon
# then deletes it (kept state) and makes it anew: its addresses are set
# once vxctl is answered (the config applied).
rig_vxswitchd_bpf 2 2>/dev/null || true
vx 2 port show >/dev/null || fail "h2 without keep did not start: $(cat "$RIG_DIR/h2.log")"
rig_vm_addrs 2 vnet2
grep -q "removing the kernel datapath state a previous run kept" "$RIG_DIR/h2.log" || fail "h2 log: $(cat "$RIG_DIR/h2.log")"
[ -e "$(ns_dir "$H2")" ] && fail "kept state of h2 left: $(ls "$(ns_dir "$H2")")"
nvm1 ip neigh flush dev vnet1   # vm2's new veth has a new MAC
for i in $(seq 10); do nvm1 ping -c 1 -W 1 192.0.2.2 >/dev/null 2>&1 && break; done
nvm1 ping -c 3 -i 0.1 -W 1 -q 192.0.2.2 >/dev/null || fail "ping with h2 not keeping: $(cat "$RIG_DIR/h2.log"; vx 2 port show; vx 2 fdb show; vx 1 fdb show)"
rig_vxswitchd_stop 2
nh2 ip link show vxdp0 >/dev/null 2>&1 && fail "vxdp0 left in h2 by a run without keep"
pass "a start without --keep-datapath removed the kept state; its own stop left nothing"

# --cleanup removes what h1 keeps: pins, device, veths, programs.
rig_vxswitchd_stop 1
nvm1 ping -c 2 -i 0.1 -W 1 -q 192.0.2.1 >/dev/null 2>&1 || true
nh1 ip link show vxdp0 >/dev/null 2>&1 || fail "h1 stopped with keep: vxdp0 should still be there"
nh1 "$VXSWITCHD" --cleanup --bpffs "$BPFFS" || fail "vxswitchd --cleanup"
[ -e "$(ns_dir "$H1")" ] && fail "pins left after --cleanup: $(ls "$(ns_dir "$H1")")"
nh1 ip link show vxdp0 >/dev/null 2>&1 && fail "vxdp0 left after --cleanup"
nh1 ip link show vnet1 >/dev/null 2>&1 && fail "vnet1 left after --cleanup"
progs_left=$(vxdp_progs_new "$progs_before")
[ -z "$progs_left" ] || fail "BPF programs left: ids $progs_left"
pass "--cleanup: no pin, no vxdp0, no veth, no program left"
