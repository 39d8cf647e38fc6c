#!/bin/bash
# Which datapath runs.  The config file's `datapath kernel|user` line (its
# first; ctl_config.h): a daemon started with only that line (no
# --datapath) runs the kernel datapath; --datapath on the command line
# wins over it and says so; a reload whose file changes it is refused
# whole (nothing of that reload applied) while the switch keeps
# forwarding; vxctl refuses `datapath` at run time; a misplaced line stops
# the start with FILE:LINE:word.  The default (neither): the kernel
# datapath; where it cannot serve, the userspace one with the reason in
# the log, `vxctl stats` and `diagnose` (kernel_datapath_unavailable):
# a config it refuses (df inherit), a daemon without CAP_BPF.  A datapath
# chosen explicitly has no such finding.
#
#   vm1 vnet1 192.0.2.1 <= veth => h1 [vxdp0] -- u1 ==== u2 -- [vxdp0] h2 <= veth => vnet2 192.0.2.2 vm2
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "ksl-$$"
rig_trap_bpf
rig_create 4

# start SIDE CONF [vxswitchd options]: the daemon of host SIDE from CONF,
# not quiet (its choice of datapath is logged); waits until `vxctl version`
# answers (which datapath it chose is what is checked, not traffic).
# START_WRAP: a command it runs under (setpriv).
start() {
	local side=$1 cfg=$2 host; shift 2
	if [ "$side" = 1 ]; then host=$H1; else host=$H2; fi
	rm -f "$RIG_DIR/h$side.sock"
	n "$host" ${START_WRAP:-} "$VXSWITCHD" -c "$cfg" -s "$RIG_DIR/h$side.sock" "$@" > "$RIG_DIR/h$side.log" 2>&1 &
	RIG_PIDS="$RIG_PIDS $!"
	vxd_await_until "$host" "$side" "no answer to vxctl version" vxd_answers "$side"
}
conf() { # SIDE DATAPATH-LINE...: the rig's two ports after the given first lines
	local side=$1 other=$(( 3 - $1 )) vm; shift
	if [ "$side" = 1 ]; then vm=$VM1; else vm=$VM2; fi
	printf '%s\n' "$@"
	echo "port add vx99 type vxlan vni 99 local $(u_addr "$side") remote $(u_addr "$other")"
	echo "port add vnet$side type veth vni 99 netns $vm mtu 1450"
}
kernel_in_stats() { # SIDE: 0 when `vxctl -j stats` says the kernel datapath
	vx "$1" -j stats | /usr/bin/python3 -c 'import json,sys; sys.exit(json.load(sys.stdin).get("datapath") != "kernel")'
}

# 1. A misplaced line: the start stops, FILE:LINE:word named.
printf '# comment\nset gro off\ndatapath kernel\n' > "$RIG_DIR/late.conf"
if nh2 "$VXSWITCHD" -c "$RIG_DIR/late.conf" -s "$RIG_DIR/late.sock" > "$RIG_DIR/late.log" 2>&1; then
	fail "a start with datapath on line 3 was accepted"
fi
grep -q "late.conf:3: word 1 \"datapath\": must be the first line" "$RIG_DIR/late.log" ||
	fail "misplaced datapath line: $(cat "$RIG_DIR/late.log")"
pass "datapath on line 3 (after set): the start is refused: $(grep -o 'late.conf:3:.*' "$RIG_DIR/late.log" | cut -c1-90)..."

# --keep-datapath needs the kernel datapath: from the option or the line.
printf 'set gro off\n' > "$RIG_DIR/noline.conf"
rc=0; nh2 "$VXSWITCHD" --keep-datapath -c "$RIG_DIR/noline.conf" -s "$RIG_DIR/k.sock" > "$RIG_DIR/k.log" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "datapath kernel\` as CONFIG's first line" "$RIG_DIR/k.log" ||
	fail "--keep-datapath without any datapath kernel: rc $rc, $(cat "$RIG_DIR/k.log")"
pass "--keep-datapath with neither --datapath kernel nor the line: refused (exit 2)"

# 2. --datapath user wins over the file's datapath kernel, and says so;
# reloading that file is accepted (the command line still wins).
printf 'datapath kernel\nport add vx99 type vxlan vni 99 local %s remote %s\n' "$(u_addr 2)" "$(u_addr 1)" \
	> "$RIG_DIR/h2.conf"
start 2 "$RIG_DIR/h2.conf" --datapath user || fail "h2 --datapath user"
grep -q "datapath user: --datapath on the command line wins over .*h2.conf:1 (datapath kernel)" "$RIG_DIR/h2.log" ||
	fail "no word of which datapath won: $(cat "$RIG_DIR/h2.log")"
kernel_in_stats 2 && fail "--datapath user ran the kernel datapath anyway"
nh2 ip link show vxdp0 >/dev/null 2>&1 && fail "--datapath user made the kernel datapath's vxdp0"
vx 2 reload > "$RIG_DIR/reload.out" 2>&1 || fail "reload of the same file under --datapath user: $(cat "$RIG_DIR/reload.out")"
[ "$(vx 2 show config | head -1)" = "datapath user" ] || fail "show config of --datapath user: $(vx 2 show config)"
vx 2 -j diagnose | grep -q kernel_datapath_unavailable && fail "--datapath user chosen, yet: $(vx 2 diagnose)"
vx 2 stats | grep -q "kernel datapath is unavailable" && fail "--datapath user chosen, yet stats: $(vx 2 stats | head -2)"
pass "--datapath user wins over the file's datapath kernel (logged), no vxdp0, no finding; reload of that file accepted"
rig_vxswitchd_stop 2

# 3. Only the config line: both hosts run the kernel datapath.
conf 1 "# the datapath comes first" "datapath kernel" > "$RIG_DIR/h1.conf"
conf 2 "datapath kernel" > "$RIG_DIR/h2.conf"
start 1 "$RIG_DIR/h1.conf" || fail "h1"
start 2 "$RIG_DIR/h2.conf" || fail "h2"
grep -q "datapath kernel: from .*h1.conf:2" "$RIG_DIR/h1.log" || fail "h1 log: $(cat "$RIG_DIR/h1.log")"
grep -q "datapath kernel unavailable" "$RIG_DIR"/h*.log && fail "no kernel datapath: $(cat "$RIG_DIR"/h*.log)"
rig_vm_addrs 1 vnet1
rig_vm_addrs 2 vnet2
for side in 1 2; do
	vx "$side" port show | grep -E "^vnet$side .*datapath kernel" >/dev/null ||
		fail "port show of h$side: $(vx "$side" port show)"
	kernel_in_stats "$side" || fail "stats of h$side: $(vx "$side" stats | head -3)"
done
for i in $(seq 10); do nvm1 ping -c 1 -W 1 192.0.2.2 >/dev/null 2>&1 && break; done
nvm1 ping -c 3 -i 0.1 -W 1 -q 192.0.2.2 >/dev/null || fail "ping vm1 -> vm2"
[ "$(vx 1 show config | head -1)" = "datapath kernel" ] || fail "show config: $(vx 1 show config)"
pass "only \`datapath kernel\` in the files: port show and stats say kernel, vm1 -> vm2 pings; show config starts with it"

# 4. vxctl refuses datapath at run time.
for v in kernel user; do
	if vx 1 datapath "$v" > "$RIG_DIR/dp.out" 2>&1; then fail "vxctl datapath $v accepted"; fi
	grep -q "start-time setting" "$RIG_DIR/dp.out" || fail "vxctl datapath $v: $(cat "$RIG_DIR/dp.out")"
done
pass "vxctl datapath kernel|user refused: $(head -c 90 "$RIG_DIR/dp.out")..."

# 5. Reloads that change the datapath are refused whole, forwarding goes on.
nvm1 ping -i 0.02 -c 150 -W 1 -q 192.0.2.2 > "$RIG_DIR/ping.txt" 2>&1 &
pinger=$!
conf 1 "datapath user" "set fdb-ageing 77" > "$RIG_DIR/h1.conf"
if vx 1 reload > "$RIG_DIR/r1.out" 2>&1; then fail "a reload to datapath user was accepted"; fi
grep -q "h1.conf:1: datapath user: vxswitchd runs datapath kernel.*restart vxswitchd" "$RIG_DIR/r1.out" ||
	fail "reload to user: $(cat "$RIG_DIR/r1.out")"
conf 1 "set fdb-ageing 77" "datapath kernel" > "$RIG_DIR/h1.conf"
if vx 1 reload > "$RIG_DIR/r3.out" 2>&1; then fail "a reload with datapath on line 2 was accepted"; fi
grep -q "h1.conf:2: word 1 \"datapath\"" "$RIG_DIR/r3.out" || fail "reload, misplaced line: $(cat "$RIG_DIR/r3.out")"
vx 1 show knobs | grep -E "fdb-ageing +77" >/dev/null && fail "a refused reload set fdb-ageing 77"
wait "$pinger" || true
lost=$(awk '/packets transmitted/ {print $1 - $4}' "$RIG_DIR/ping.txt")
[ "$lost" = 0 ] || fail "pings lost across the refused reloads: $(cat "$RIG_DIR/ping.txt")"
pass "reloads to datapath user / with it on line 2 refused, fdb-ageing untouched, 0 of 150 pings lost: $(head -c 100 "$RIG_DIR/r1.out")..."
# Without the line the file asks for the default, kernel: what runs.
conf 1 > "$RIG_DIR/h1.conf"
vx 1 reload > "$RIG_DIR/r2.out" 2>&1 || fail "a reload without the datapath line (the default, kernel): $(cat "$RIG_DIR/r2.out")"
pass "a reload without the datapath line is accepted on the kernel datapath (the default is kernel)"

# 6. A reload that keeps the datapath applies (fdb-ageing 77 takes).
conf 1 "datapath kernel" "set fdb-ageing 77" > "$RIG_DIR/h1.conf"
vx 1 reload > "$RIG_DIR/r4.out" 2>&1 || fail "reload keeping datapath kernel: $(cat "$RIG_DIR/r4.out")"
vx 1 show knobs | grep -E "fdb-ageing +77" >/dev/null || fail "fdb-ageing after the reload: $(vx 1 show knobs)"
vx 1 show config > "$RIG_DIR/show.conf"
cp "$RIG_DIR/show.conf" "$RIG_DIR/h1.conf"
vx 1 reload > "$RIG_DIR/r5.out" 2>&1 || fail "show config fed back to reload: $(cat "$RIG_DIR/r5.out")"
nvm1 ping -c 3 -i 0.1 -W 1 -q 192.0.2.2 >/dev/null || fail "ping after the reloads"
pass "a reload keeping datapath kernel applies (fdb-ageing 77); show config fed back reloads cleanly"

# 7. The default, neither line nor --datapath: the kernel datapath.
rig_vxswitchd_stop 2
conf 2 > "$RIG_DIR/h2.conf"
start 2 "$RIG_DIR/h2.conf" || fail "h2 with the default datapath"
grep -q "datapath kernel (the default): eBPF programs loaded" "$RIG_DIR/h2.log" || fail "h2's log: $(cat "$RIG_DIR/h2.log")"
kernel_in_stats 2 || fail "the default did not run the kernel datapath: $(vx 2 stats | head -3)"
vx 2 show config | grep -q "^datapath" && fail "show config of the default has a datapath line: $(vx 2 show config)"
rig_vm_addrs 2 vnet2
nvm1 ip neigh flush all # vm2's device is new, its MAC too
for i in $(seq 10); do nvm1 ping -c 1 -W 1 192.0.2.2 >/dev/null 2>&1 && break; done
nvm1 ping -c 3 -i 0.1 -W 1 -q 192.0.2.2 >/dev/null || fail "ping vm1 -> vm2 on the default: $(vx 2 port show; vx 2 fdb show)"
pass "the default (no line, no --datapath): the kernel datapath, logged; show config names no datapath; vm1 -> vm2 pings"

# 8. The default, and a config the kernel datapath refuses (df inherit):
# the switch starts again on the userspace datapath and says why.
rig_vxswitchd_stop 2
{
	echo "port add vx99 type vxlan vni 99 local $(u_addr 2) remote $(u_addr 1) df inherit"
	echo "port add vnet2 type tap vni 99 netns $VM2 mtu 1450"
} > "$RIG_DIR/h2.conf"
start 2 "$RIG_DIR/h2.conf" || fail "h2 with a config the kernel datapath refuses"
grep -q "the default datapath, kernel, refused the configuration (.*df inherit.*): starting again on the userspace" \
	"$RIG_DIR/h2.log" || fail "h2's log: $(cat "$RIG_DIR/h2.log")"
kernel_in_stats 2 && fail "df inherit on the kernel datapath?"
why=$(vx_stat 2 'd["kernel_unavailable"]')
grep -q "df inherit" <<<"$why" || fail "stats' kernel_unavailable: $why"
vx 2 stats | head -1 | grep -q "^datapath user: the kernel datapath is unavailable: .*df inherit" || fail "stats: $(vx 2 stats | head -2)"
diag_names 2 kernel_datapath_unavailable '"df inherit" in f["text"]' "kernel datapath is unavailable.*--datapath user" >/dev/null
nh2 ip link show vxdp0 >/dev/null 2>&1 && fail "the refused kernel datapath left vxdp0"
rig_vm_addrs 2 vnet2
nvm1 ip neigh flush all
for i in $(seq 10); do nvm1 ping -c 1 -W 1 192.0.2.2 >/dev/null 2>&1 && break; done
nvm1 ping -c 3 -i 0.1 -W 1 -q 192.0.2.2 >/dev/null || fail "ping vm1 (kernel) -> vm2 (userspace, after the fallback)"
pass "default + df inherit: started again on the userspace datapath; log, stats and diagnose say why ($why); vm1 -> vm2 pings"

# 9. The default without CAP_BPF (the programs cannot load): the userspace
# datapath, and why.
rig_vxswitchd_stop 2
echo "port add vx99 type vxlan vni 99 local $(u_addr 2) remote $(u_addr 1)" > "$RIG_DIR/h2.conf"
START_WRAP="setpriv --bounding-set -bpf,-sys_admin,-perfmon" start 2 "$RIG_DIR/h2.conf" ||
	fail "h2 without CAP_BPF"
grep -q "datapath kernel unavailable (.*Operation not permitted.*): using the userspace datapath" "$RIG_DIR/h2.log" ||
	fail "h2's log without CAP_BPF: $(cat "$RIG_DIR/h2.log")"
kernel_in_stats 2 && fail "the kernel datapath without CAP_BPF?"
diag_names 2 kernel_datapath_unavailable '"not permitted" in f["text"]' "kernel datapath is unavailable" >/dev/null
pass "default without CAP_BPF: the userspace datapath; log, stats and diagnose: $(vx_stat 2 'd["kernel_unavailable"]')"
