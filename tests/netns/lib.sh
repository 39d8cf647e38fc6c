# Shared rig for the netns system tests and scripts/demo.sh.
#
# The measuring rig of DESIGN.md, on one machine:
#
#   $P-vm1                $P-h1                            $P-h2                $P-vm2
#   vnet1 192.0.2.1  <-- vxswitchd (or kernel     u1 ====== u2   vxswitchd (or kernel  --> vnet2 192.0.2.2
#   2001:db8:1::1        vxlan + bridge)   198.51.100.1    198.51.100.2   vxlan + bridge)       2001:db8:1::2
#                                          2001:db8:ff::1  2001:db8:ff::2
#
# A vxswitchd runs in each host namespace; its tap is created there and moved
# into the VM namespace.  VNI 99, VM MTU 1450 (1430 on an IPv6 underlay).
#
# Usage: source this file, call rig_init PREFIX (names start with PREFIX,
# which must be vxt<N>-$$ or the demo's prefix), then the rig_* functions.
# rig_cleanup removes everything the rig made; callers install it with
# `trap rig_cleanup EXIT`.

BUILD=${BUILD:-build}
[ -n "$BUILD" ] && BUILD=$(cd "$BUILD" 2>/dev/null && pwd || echo "$BUILD")
VXSWITCHD=${VXSWITCHD:-$BUILD/vxswitchd}
VXCTL=${VXCTL:-$BUILD/vxctl}
VNI=${VNI:-99}

rig_init() {
	P=$1
	# A signal ends the script through `exit`, so its EXIT trap (the
	# caller's rig_cleanup) still runs.
	trap 'exit 130' INT
	trap 'exit 143' TERM
	VM1=$P-vm1; VM2=$P-vm2; H1=$P-h1; H2=$P-h2
	RIG_DIR=$(mktemp -d /tmp/$P.XXXX)
	RIG_PIDS=""
	RIG_NS=""
	UNDERLAY=4
}

n()   { local ns=$1; shift; ip netns exec "$ns" "$@"; }
nvm1() { n "$VM1" "$@"; }
nvm2() { n "$VM2" "$@"; }
nh1()  { n "$H1" "$@"; }
nh2()  { n "$H2" "$@"; }

# Underlay and VM addresses for the current $UNDERLAY family.
u_addr() { # u_addr 1|2
	if [ "$UNDERLAY" = 6 ]; then echo "2001:db8:ff::$1"; else echo "198.51.100.$1"; fi
}
vm_addr4() { echo "192.0.2.$1"; }
vm_addr6() { echo "2001:db8:1::$1"; }
vm_mtu() { if [ "$UNDERLAY" = 6 ]; then echo 1430; else echo 1450; fi; }

rig_ns_add() {
	ip netns add "$1"
	RIG_NS="$RIG_NS $1"
	n "$1" ip link set lo up
}

# rig_create [4|6]: namespaces and the underlay veth.
rig_create() {
	UNDERLAY=${1:-4}
	for ns in "$VM1" "$VM2" "$H1" "$H2"; do rig_ns_add "$ns"; done
	ip link add u1 netns "$H1" type veth peer name u2 netns "$H2"
	nh1 ip addr add 198.51.100.1/24 dev u1
	nh2 ip addr add 198.51.100.2/24 dev u2
	nh1 ip addr add 2001:db8:ff::1/64 dev u1 nodad
	nh2 ip addr add 2001:db8:ff::2/64 dev u2 nodad
	nh1 ip link set u1 up
	nh2 ip link set u2 up
	for h in "$H1" "$H2"; do
		n "$h" sysctl -qw net.bridge.bridge-nf-call-iptables=0 2>/dev/null || true
		n "$h" sysctl -qw net.bridge.bridge-nf-call-ip6tables=0 2>/dev/null || true
		n "$h" sysctl -qw net.bridge.bridge-nf-call-arptables=0 2>/dev/null || true
	done
}

# rig_wire_mode gso|mtu (DESIGN.md): mtu-wire cuts frames to MTU size on the
# underlay and lets the receiving veth run GRO, as a real NIC would.
rig_wire_mode() {
	local mode=$1
	for pair in "$H1 u1" "$H2 u2"; do
		set -- $pair
		if [ "$mode" = mtu ]; then
			n "$1" ethtool -K "$2" tso off gso off tx-udp_tnl-segmentation off >/dev/null 2>&1 || true
			n "$1" ethtool -K "$2" gro on >/dev/null 2>&1 || true
		else
			n "$1" ethtool -K "$2" tso on gso on tx-udp_tnl-segmentation on >/dev/null 2>&1 || true
			n "$1" ethtool -K "$2" gro off >/dev/null 2>&1 || true
		fi
	done
}

# vx SIDE ARGS...: vxctl against the vxswitchd of host SIDE (1 or 2).
vx() { local side=$1; shift; "$VXCTL" --socket "$RIG_DIR/h$side.sock" "$@"; }

# vx_stat SIDE EXPR: a Python expression over `vxctl -j stats` of host SIDE:
# d is the JSON, port("vnet2") one port, big_share("vnet2") the share of
# bytes delivered in frames >= 32 KB.
vx_stat() {
	local side=$1; shift
	vx "$side" -j stats | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
def port(name): return [p for p in d["ports"] if p["name"] == name][0]
def big_share(name):
	h = port(name)["tx_size_hist"]
	total = sum(b["bytes"] for b in h)
	big = sum(b["bytes"] for b in h if b["bucket"] in ("32K-64K", ">=64K"))
	return round(big / total, 3) if total else 0
print(eval(sys.argv[1]))' "$@"
}

# vx_rule_cache SIDE hits|misses|version: the rules' cache of host SIDE's
# datapath: the userspace flow cache (flow_cache.hits, .misses,
# .rules_version), or on the kernel datapath its cached decisions (each
# port's rules.hits summed; misses are its rules.misses and .stale summed,
# an entry of an older generation being a miss as the userspace cache's
# version change is; rule_cache.generation).
vx_rule_cache() {
	if on_kernel_dp; then
		case $2 in
		version) vx_stat "$1" 'd["rule_cache"]["generation"]' ;;
		misses) vx_stat "$1" "sum(p.get('rules', {}).get('misses', 0) + p.get('rules', {}).get('stale', 0) for p in d['ports'])" ;;
		*) vx_stat "$1" "sum(p.get('rules', {}).get('$2', 0) for p in d['ports'])" ;;
		esac
	else
		case $2 in
		version) vx_stat "$1" 'd["flow_cache"]["rules_version"]' ;;
		*) vx_stat "$1" "d['flow_cache']['$2']" ;;
		esac
	fi
}

# vx_rule_drops SIDE PORT: the frames PORT's rules dropped (the port's
# drops.rule_drop; on the kernel datapath its rules.rule_drops).
vx_rule_drops() {
	if on_kernel_dp; then vx_stat "$1" "port('$2')['rules']['rule_drops']"
	else vx_stat "$1" "port('$2')['drops'].get('rule_drop', 0)"; fi
}

# vx_drops SIDE: "reason count" lines of every drop counter of host SIDE,
# the switch's and every port's summed, sorted (for join against what a
# test sent).
vx_drops() {
	vx "$1" -j stats | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
t = {}
for src in [d["drops"]] + [p["drops"] for p in d["ports"]]:
	for k, v in src.items():
		t[k] = t.get(k, 0) + v
for k in sorted(t):
	print(k, t[k])'
}

# vx_queue_drops SIDE TAP VXPORT: frames the kernel dropped before host
# SIDE's vxswitchd read them, in TAP's queue (kernel_tx_dropped) and in
# VXPORT's socket receive buffer (rx_queue_drops): counted, but not by
# what the frames were.
vx_queue_drops() {
	vx_stat "$1" "port('$2')['tap']['kernel_tx_dropped'] + port('$3')['vxlan']['socket']['rx_queue_drops']"
}

# vx_port SIDE PORT FIELD: one field of PORT in `vxctl -j port show`.
vx_port() {
	vx "$1" -j port show | /usr/bin/python3 -c '
import json, sys
print([p for p in json.load(sys.stdin) if p["name"] == sys.argv[1]][0][sys.argv[2]])' "$2" "$3"
}

# rig_vxswitchd SIDE: start vxswitchd in host SIDE with a tap vnetSIDE moved
# into vmSIDE and a vxlan port vx$VNI to the other host; lines in
# $RIG_EXTRA_CONF are appended to its config file; VAR=value words in
# $RIG_VXD_ENV go into its environment (e.g. an LD_PRELOAD); words in
# $RIG_VXD_ARGS are extra vxswitchd options (e.g. --user nobody); words in
# $RIG_VX_OPTS end the vxlan port's line (e.g. udpcsum off).
rig_vxswitchd() { rig_vxswitchd_start "$1" "$(vm_port_type)"; }

# rig_vxswitchd_bpf SIDE: vxswitchd --datapath kernel in host SIDE (the eBPF
# datapath): the same, with the VM's port a veth pair the daemon makes,
# vnetSIDE moved into the VM's namespace.
rig_vxswitchd_bpf() { rig_vxswitchd_start "$1" veth --datapath kernel; }

# vxd_await_until HOST-NS ID WHAT CHECK...: a vxswitchd just started in
# HOST-NS (its log $RIG_DIR/hID.log) is up once the command CHECK succeeds
# (20 s at most: a start under ASan or TSan on a busy machine takes
# seconds); sets VXD_PID_ID to the daemon itself, not `ip netns exec`'s
# wrapper, and adds it to RIG_PIDS; VXD_WRAP_ID is that wrapper (whose
# exit status is the daemon's), for rig_vxswitchd_stop.  Returns 1 if it is not, with
# "vxswitchd ID did not start (WHAT)" and the daemon's log on stderr.
vxd_await_until() {
	local host=$1 id=$2 what=$3 k p w
	shift 3
	for k in $(seq 400); do
		"$@" && break
		sleep 0.05
	done
	if ! "$@"; then
		echo "vxswitchd $id did not start ($what); the tail of $RIG_DIR/h$id.log:" >&2
		tail -n 40 "$RIG_DIR/h$id.log" >&2
		return 1
	fi
	for p in $(ip netns pids "$host"); do
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = vxswitchd ]; then
			eval "VXD_PID_$id=$p"
			# The shell that started it (whose exit status is the
			# daemon's: `ip netns exec` execs), or the daemon itself.
			w=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null) || w=""
			[ "$w" != "$$" ] || w=$p
			eval "VXD_WRAP_$id=$w"
			RIG_PIDS="$RIG_PIDS $p"
		fi
	done
}
# Readiness checks for vxd_await_until.
vxd_made_dev() { [ -S "$1" ] && n "$2" ip link show "$3" >/dev/null 2>&1; } # SOCK VM-NS DEV
vxd_answers() { [ -S "$RIG_DIR/h$1.sock" ] && vx "$1" version >/dev/null 2>&1; } # ID

# vxd_await HOST-NS VM-NS DEV SOCK ID: up once its control socket SOCK
# exists and it made DEV in VM-NS (the VM's port: traffic can start).
vxd_await() {
	vxd_await_until "$1" "$5" "or made no $3 in $2" vxd_made_dev "$4" "$2" "$3"
}

# vxd_start HOST-NS ID VM-NS DEV [VXSWITCHD-OPTIONS...]: vxswitchd in
# HOST-NS from $RIG_DIR/hID.conf, control socket $RIG_DIR/hID.sock, log
# $RIG_DIR/hID.log; waits (vxd_await) for DEV in VM-NS.
vxd_start() {
	local host=$1 id=$2 vm=$3 dev=$4
	shift 4
	n "$host" "$VXSWITCHD" "$@" -c "$RIG_DIR/h$id.conf" -s "$RIG_DIR/h$id.sock" > "$RIG_DIR/h$id.log" 2>&1 &
	RIG_PIDS="$RIG_PIDS $!"
	vxd_await "$host" "$vm" "$dev" "$RIG_DIR/h$id.sock" "$id"
}

# vxd_stop_all HOST-NS: every process of RIG_PIDS signalled; returns once
# the vxswitchd of HOST-NS has exited (5 s at most each: bounds a daemon
# that does not, which the caller's checks of what is left then show).
vxd_stop_all() {
	local pid i
	for pid in $RIG_PIDS; do kill "$pid" 2>/dev/null || true; done
	for pid in $(ip netns pids "$1"); do
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = vxswitchd ] || continue
		for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	done
}

# rig_mirror_port NAME: a port NAME in VNI $VNI of h1's vxswitchd, of
# vm_port_type, its VM end up in a namespace of its own, MIR_NS ($P-NAME):
# the target of a mirred, watched with `n "$MIR_NS" tcpdump -i NAME`.
rig_mirror_port() {
	MIR_NS=$P-$1
	rig_ns_add "$MIR_NS"
	vx 1 port add "$1" type "$(vm_port_type)" vni "$VNI" netns "$MIR_NS" || return 1
	n "$MIR_NS" ip link set "$1" up
}
nmir() { n "$MIR_NS" "$@"; }

# rig_h3: a third host, H3 ($P-h3), with its own underlay link to h1 only:
# u13 198.51.100.1 in h1 == u31 198.51.100.3 in h3 (host routes both ways).
rig_h3() {
	H3=$P-h3
	rig_ns_add "$H3"
	ip link add u13 netns "$H1" type veth peer name u31 netns "$H3"
	nh1 ip addr add 198.51.100.1/32 dev u13
	nh1 ip link set u13 up
	nh1 ip route add 198.51.100.3/32 dev u13
	n "$H3" ip addr add 198.51.100.3/32 dev u31
	n "$H3" ip link set u31 up
	n "$H3" ip route add 198.51.100.1/32 dev u31
}

# rig_vxswitchd_start SIDE PORT-TYPE [VXSWITCHD-OPTIONS...]: the two above;
# sets VXD_PID_SIDE (the daemon itself, not `ip netns exec`'s wrapper).
# Without a --datapath among the options: --datapath $VXT_DP, user unless
# set (the tests of the userspace datapath say so; the daemon's default is
# the kernel one).  On the kernel datapath a `type tap` port is a veth pair
# the daemon makes.
rig_vxswitchd_start() {
	local side=$1 type=$2 other=$(( 3 - $1 )) host vm cfg sock
	shift 2
	case " $* ${RIG_VXD_ARGS:-} " in *" --datapath "*) ;; *) set -- --datapath "${VXT_DP:-user}" "$@" ;; esac
	if [ "$side" = 1 ]; then host=$H1; vm=$VM1; else host=$H2; vm=$VM2; fi
	cfg=$RIG_DIR/h$side.conf
	sock=$RIG_DIR/h$side.sock
	{
		echo "port add vx$VNI type vxlan vni $VNI local $(u_addr "$side") remote $(u_addr "$other")${RIG_VX_OPTS:+ $RIG_VX_OPTS}"
		echo "port add vnet$side type $type vni $VNI netns $vm mtu $(vm_mtu)"
		[ -z "${RIG_EXTRA_CONF:-}" ] || printf '%s\n' "$RIG_EXTRA_CONF"
	} > "$cfg"
	n "$host" env ${RIG_VXD_ENV:-} "$VXSWITCHD" "$@" -c "$cfg" -s "$sock" -q ${RIG_VXD_ARGS:-} \
		> "$RIG_DIR/h$side.log" 2>&1 &
	RIG_PIDS="$RIG_PIDS $!"
	vxd_await "$host" "$vm" "vnet$side" "$sock" "$side" || return 1
	rig_vm_addrs "$side" "vnet$side"
}

rig_vm_addrs() { # SIDE DEV
	local vm
	if [ "$1" = 1 ]; then vm=$VM1; else vm=$VM2; fi
	n "$vm" ip link set "$2" mtu "$(vm_mtu)" up
	n "$vm" ip addr replace "$(vm_addr4 "$1")/24" dev "$2"
	n "$vm" ip addr replace "$(vm_addr6 "$1")/64" dev "$2" nodad
}

# rig_kernel SIDE: the kernel's vxlan + bridge in host SIDE, and a veth
# into the VM namespace (the VM's interface is also called vnetSIDE).
rig_kernel() {
	local side=$1 other=$(( 3 - $1 )) host vm dev
	if [ "$side" = 1 ]; then host=$H1; vm=$VM1; dev=u1; else host=$H2; vm=$VM2; dev=u2; fi
	# IPv4: outer UDP checksums on (udpcsum) unless KERNEL_UDPCSUM=0, the
	# kernel's own default; our UDP_GRO merges only checksummed datagrams.
	local csum=udpcsum
	[ "${KERNEL_UDPCSUM:-1}" = 0 ] && csum=noudpcsum
	[ "$UNDERLAY" = 6 ] && csum=""
	n "$host" ip link add kvx type vxlan id "$VNI" local "$(u_addr "$side")" remote "$(u_addr "$other")" \
		dstport 4789 dev "$dev" $csum
	n "$host" ip link add kbr type bridge
	n "$host" ip link set kvx master kbr
	n "$host" ip link add "kv$side" type veth peer name "vnet$side" netns "$vm"
	n "$host" ip link set "kv$side" mtu "$(vm_mtu)" master kbr up
	n "$host" ip link set kvx mtu "$(vm_mtu)" up
	n "$host" ip link set kbr up
	rig_vm_addrs "$side" "vnet$side"
}

rig_kernel_down() { # SIDE
	local host
	if [ "$1" = 1 ]; then host=$H1; else host=$H2; fi
	n "$host" ip link del kvx 2>/dev/null || true
	n "$host" ip link del kbr 2>/dev/null || true
	n "$host" ip link del "kv$1" 2>/dev/null || true
}

rig_vxswitchd_stop() { # SIDE
	local pid
	eval "pid=\${VXD_PID_$1:-}"
	[ -n "$pid" ] || return 0
	local rc=0
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || rc=$?
	# Not our child (`ip netns exec` is): wait until it is gone, so that a
	# daemon started next does not race its exit (socket file, tap), and
	# what the test checks next (links, programs gone) is the daemon's
	# finished stop.  30 s: a stop under a sanitizer on a busy machine.
	local i
	for i in $(seq 600); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	eval "VXD_PID_$1="
	if kill -0 "$pid" 2>/dev/null; then
		echo "FAIL: vxswitchd $1 (pid $pid) still runs 30 s after SIGTERM; its stack and the tail of $RIG_DIR/h$1.log:" >&2
		cat "/proc/$pid/stack" >&2 2>/dev/null || true
		tail -n 20 "$RIG_DIR/h$1.log" >&2 2>/dev/null || true
		return 1
	fi
	[ "$i" -lt 100 ] || echo "vxswitchd $1 took $((i / 20)) s to stop" >&2
	# Its exit status, through the shell that started it (`ip netns exec`
	# execs the daemon): a stop that crashed says so here, not later as
	# whatever it left behind.
	local wrap
	eval "wrap=\${VXD_WRAP_$1:-}"
	eval "VXD_WRAP_$1="
	[ -n "$wrap" ] || return 0
	if [ "$wrap" != "$pid" ]; then
		rc=0
		wait "$wrap" 2>/dev/null || rc=$?
	fi
	[ "$rc" = 127 ] && return 0 # not this shell's child (started in a subshell)
	if [ "$rc" != 0 ]; then
		# A sanitizer's report whole (it is what the status means), else the tail.
		echo "FAIL: vxswitchd $1 exited with status $rc on SIGTERM; $RIG_DIR/h$1.log says:" >&2
		if grep -Eq "Sanitizer|runtime error" "$RIG_DIR/h$1.log" 2>/dev/null; then
			sed -n '/Sanitizer\|runtime error/,$p' "$RIG_DIR/h$1.log" | head -n 200 >&2
		else
			tail -n 40 "$RIG_DIR/h$1.log" >&2 2>/dev/null || true
		fi
		return 1
	fi
	return 0
}

# iperf_run SERVER_NS CLIENT_NS ADDR PORT SECONDS JSON [iperf3 client args]:
# a one-shot server, one TCP stream to it; prints Gbit/s (receiver side).
iperf_run() {
	local sns=$1 cns=$2 addr=$3 port=$4 secs=$5 json=$6; shift 6
	iperf_server "$sns" "$addr" "$port" "$json"
	n "$cns" iperf3 -c "$addr" -p "$port" -t "$secs" --connect-timeout 5000 -J "$@" > "$json" 2>&1 || {
		cat "$json" >&2; return 1; }
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.2f" % (d["end"]["sum_received"]["bits_per_second"]/1e9))' "$json"
}

# iperf_server NS ADDR PORT JSON: a one-client iperf3 server, once it listens.
iperf_server() {
	n "$1" iperf3 -s -1 -D -B "$2" -p "$3" --logfile "$4.server.log" >/dev/null 2>&1
	local i
	# Until the server listens; 30 s only bounds a broken one (2.5 s was
	# too short for a daemonising iperf3 with the other core busy).
	for i in $(seq 600); do
		n "$1" ss -ltn 2>/dev/null | grep -q ":$3 " && break
		sleep 0.05
	done
}

# rig_iperf_start FROM_SIDE / rig_iperf_stop LABEL: one TCP stream from
# vmFROM to the other VM, a report a second, from start until stop (600 s
# at most): a stream that covers a churn however long the machine makes
# it, and ends with it, where a fixed -t had to outlast the slowest run
# (and 40 s of a 10-s churn was waiting).  Stop interrupts the client
# (SIGINT: iperf3 still writes its JSON, the intervals so far), prints
# "  LABEL (Gbit/s): r1 r2 ..." and fails (1) if the client failed or
# (2) if a full interval carried no stream (under 0.05 Gbit/s); the last,
# cut short by the stop, counts only if it lasted half a second.  The mean
# of the intervals is left in $RIG_DIR/iperf.json.rate.
rig_iperf_start() {
	local to=$(( 3 - $1 )) fromns=$VM1 tons=$VM2
	[ "$1" = 1 ] || { fromns=$VM2; tons=$VM1; }
	RIG_IPERF_CLIENT="iperf3 -c $(vm_addr4 "$to") -p 5201 -t 600 "
	iperf_server "$tons" "$(vm_addr4 "$to")" 5201 "$RIG_DIR/iperf.json"
	n "$fromns" $RIG_IPERF_CLIENT--connect-timeout 5000 -J -i 1 >"$RIG_DIR/iperf.json" 2>&1 &
	RIG_IPERF_PID=$!
}
rig_iperf_stop() {
	pkill -INT -f "^$RIG_IPERF_CLIENT" || true
	wait "$RIG_IPERF_PID" || true
	/usr/bin/python3 - "$RIG_DIR/iperf.json" "$1" <<'PY'
import json, sys
try:
	d = json.load(open(sys.argv[1]))
except ValueError:
	print(open(sys.argv[1]).read(), file=sys.stderr)
	sys.exit(1)
if d.get("error", "interrupt").find("interrupt") < 0 or not d.get("intervals"):
	print("iperf3: %s" % d.get("error", "no intervals"), file=sys.stderr)
	sys.exit(1)
iv = [i["sum"] for i in d["intervals"]]
if len(iv) > 1 and iv[-1]["seconds"] < 0.5:
	iv = iv[:-1]
rates = [i["bits_per_second"] / 1e9 for i in iv]
print("  %s (Gbit/s):" % sys.argv[2], " ".join("%.2f" % r for r in rates))
open(sys.argv[1] + ".rate", "w").write("%.2f\n" % (sum(rates) / len(rates)))
sys.exit(0 if min(rates) > 0.05 else 2)
PY
}

# rig_iperf SECONDS FROM_SIDE [extra iperf3 client args]: one TCP stream from
# vmFROM to the other VM; prints Gbit/s (receiver side).
rig_iperf() {
	local secs=$1 from=$2 to=$(( 3 - $2 )) fromns tons; shift 2
	if [ "$from" = 1 ]; then fromns=$VM1; tons=$VM2; else fromns=$VM2; tons=$VM1; fi
	iperf_run "$tons" "$fromns" "$(vm_addr4 "$to")" 5201 "$secs" "$RIG_DIR/iperf.json" "$@"
}

# rig_underlay_iperf SECONDS: one TCP stream h1 -> h2 over the underlay veth,
# the kernel alone; prints Gbit/s.  A reference taken in the same minute as
# an overlay figure: when the host slows (its steal reached 19 % of a case
# here), both fall, and a ratio of the two still says what the switch did.
rig_underlay_iperf() {
	iperf_run "$H2" "$H1" "$(u_addr 2)" 5209 "$1" "$RIG_DIR/iperf-u.json"
}

# Bytes the last rig_iperf moved (receiver side).
rig_iperf_bytes() {
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(int(d["end"]["sum_received"]["bytes"]))' "$RIG_DIR/iperf.json"
}

# CPU time (user+sys, microseconds) of a process and its threads.
pid_cpu_us() {
	local hz; hz=$(getconf CLK_TCK)
	awk -v hz="$hz" '{ printf "%.0f\n", ($14 + $15) * 1000000 / hz }' "/proc/$1/stat"
}

# CPU time (microseconds) spent by the whole machine outside idle, from /proc/stat.
sys_busy_us() {
	local hz; hz=$(getconf CLK_TCK)
	awk -v hz="$hz" '/^cpu / { printf "%.0f\n", ($2 + $3 + $4 + $7 + $8) * 1000000 / hz }' /proc/stat
}

# rig_capture NS IFACE FILE [FILTER...]: tcpdump in the background, packet-
# buffered; rig_capture_stop ends it (SIGINT to tcpdump itself, not to the
# `ip netns exec` wrapper) once it has written everything.
rig_capture() {
	local ns=$1 dev=$2 file=$3 p i; shift 3
	n "$ns" tcpdump -i "$dev" -nn -U --immediate-mode -w "$file" "$@" >/dev/null 2>"$file.err" &
	RIG_PIDS="$RIG_PIDS $!"
	RIG_CAPTURE_PID=""
	# --immediate-mode: each frame handed over as it comes, not in blocks
	# of up to a second, which a SIGINT could leave undelivered (a test's
	# last pings went missing so).  Listening once it said so (its socket
	# bound, its filter set): up to
	# 30 s, as a loaded machine (CI's sanitizer runs beside) took over the
	# 5 s this waited before and a test's pings went by unseen.
	for i in $(seq 600); do
		for p in $(ip netns pids "$ns"); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = tcpdump ] && RIG_CAPTURE_PID=$p
		done
		[ -n "$RIG_CAPTURE_PID" ] && grep -q "listening on" "$file.err" 2>/dev/null && break
		sleep 0.05
	done
	grep -q "listening on" "$file.err" 2>/dev/null || fail "tcpdump on $dev in $ns did not start in 30 s: $(cat "$file.err")"
	sleep 0.2
}
rig_capture_stop() {
	[ -n "${RIG_CAPTURE_PID:-}" ] || return 0
	sleep 0.3
	kill -INT "$RIG_CAPTURE_PID" 2>/dev/null || true
	local i
	for i in $(seq 100); do
		kill -0 "$RIG_CAPTURE_PID" 2>/dev/null || break
		sleep 0.05
	done
	RIG_CAPTURE_PID=""
}

rig_cleanup() {
	local pid ns left i
	for pid in $RIG_PIDS; do kill "$pid" 2>/dev/null || true; done
	# A daemon stuck where SIGTERM cannot reach its loop (a control thread
	# blocked in a syscall) would outlive the test: 3 s, then SIGKILL.
	for i in $(seq 30); do
		left=""
		for pid in $RIG_PIDS; do kill -0 "$pid" 2>/dev/null && left="$left $pid"; done
		[ -z "$left" ] && break
		sleep 0.1
	done
	for pid in $left; do kill -9 "$pid" 2>/dev/null || true; done
	for pid in $RIG_PIDS; do wait "$pid" 2>/dev/null || true; done
	for ns in $RIG_NS; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
		sleep 0.05
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
		ip netns del "$ns" 2>/dev/null || true
	done
	[ -n "${RIG_DIR:-}" ] && rm -rf "$RIG_DIR"
	RIG_PIDS=""; RIG_NS=""
}

# fail MESSAGE: print and exit 1 (cleanup runs from the trap).
fail() { echo "FAIL: $*" >&2; exit 1; }

# vxdp_progs: the ids of the kernel datapath's programs (vxdp_*) loaded on
# the machine, one per line, sorted.  vxdp_progs_new BEFORE: those loaded
# now that were not in BEFORE (an earlier vxdp_progs), space-separated:
# what a test left behind, whatever other programs came and went meanwhile.
vxdp_progs() { bpftool prog show 2>/dev/null | awk '/name vxdp_/ { sub(":", "", $1); print $1 }' | sort; }
vxdp_progs_new() { comm -13 <(printf '%s\n' "$1") <(vxdp_progs) | tr '\n' ' ' | sed 's/ *$//'; }

# rig_trap_bpf [CLEANUP]: the EXIT trap of a test that starts the kernel
# datapath, in place of `trap rig_cleanup EXIT` (after rig_init): CLEANUP
# (rig_cleanup unless named), then the test fails if a vxdp_* program it
# loaded is still there.
rig_trap_bpf() {
	RIG_BPF_BEFORE=$(vxdp_progs)
	RIG_BPF_CLEANUP=${1:-rig_cleanup}
	trap rig_cleanup_bpf EXIT
}
rig_cleanup_bpf() {
	local rc=$? left
	"$RIG_BPF_CLEANUP"
	left=$(vxdp_progs_new "$RIG_BPF_BEFORE")
	if [ -n "$left" ]; then
		echo "FAIL: BPF programs left: ids $left" >&2
		exit 1
	fi
	exit "$rc"
}
pass() { echo "ok: $*"; }

# rig_each_datapath "$0" "$@": at the top of a test that holds on either
# datapath: unless VXT_DP names one, the test runs itself once per
# datapath, VXT_DP=user then VXT_DP=kernel, and exits with the first
# failure.  rig_trap: the EXIT trap for VXT_DP (rig_trap_bpf on the kernel
# datapath, which also fails the test for a program left behind).
rig_each_datapath() {
	[ -n "${VXT_DP:-}" ] && return 0
	local dp
	for dp in user kernel; do
		echo "-- $(basename "$1") on the $dp datapath"
		VXT_DP=$dp "$@" || exit $?
	done
	exit 0
}
rig_trap() {
	if [ "${VXT_DP:-user}" = kernel ]; then rig_trap_bpf "$@"; else trap "${1:-rig_cleanup}" EXIT; fi
}
# on_kernel_dp: true when this run is on the kernel datapath.  vm_port_type:
# the type of a VM's port there (a veth pair the daemon makes: a tap would
# run beside it on the userspace datapath), else tap.
on_kernel_dp() { [ "${VXT_DP:-user}" = kernel ]; }
vm_port_type() { if on_kernel_dp; then echo veth; else echo tap; fi; }

# diag_names SIDE CAUSE PYCOND PATTERN: `vxctl diagnose` of host SIDE exits 1
# and its text matches PATTERN (grep -E); `-j diagnose` has a finding of
# CAUSE for which the Python condition PYCOND over `f` holds (e.g.
# 'f["remote"] == "198.51.100.9"').  Prints the matching line.
diag_names() {
	local side=$1 cause=$2 cond=$3 pattern=$4 out rc=0
	out=$(vx "$side" diagnose) || rc=$?
	[ "$rc" = 1 ] || fail "h$side's diagnose exits $rc (1 expected, cause $cause): $out"
	grep -Eq -- "$pattern" <<<"$out" || fail "h$side's diagnose does not say /$pattern/: $out"
	vx "$side" -j diagnose | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
ok = [f for f in d["findings"] if f["cause"] == sys.argv[1] and eval(sys.argv[2], {"f": f})]
sys.exit(0 if ok and d["problems"] > 0 else 1)' "$cause" "$cond" ||
		fail "h$side's -j diagnose has no $cause finding with $cond: $(vx "$side" -j diagnose)"
	grep -E -- "$pattern" <<<"$out" | head -1 | cut -c1-160
}
