# vxbench flower: iperf3 through flower rules, vxswitch and the kernel's tc
# flower side by side, in one run.  Sourced by bench/vxbench/vxbench.
#
# Cases, each rep builds the rig afresh (gso-wire) and runs all of them,
# the vx_* on vxswitch's userspace datapath (taps) and the same as kdp_* on
# its kernel datapath (veths; rules as decisions cached in the kernel):
#   vx_1       vxswitch, one rule on vnet1's ingress: `protocol ip flower
#              action mirred egress redirect dev vx99` (the hit rule)
#   vx_10k     the same daemon, with 9,999 rules before it (-batch): the hit
#              rule is the lowest priority (pref 10000); the 9,999 match UDP
#              ports under 16 distinct masks (dst_ip or src_ip prefixes /25
#              to /32), so the TCP stream matches none of them
#   vx_10k_crr netperf TCP_CRR vm1 -> vm2 through the 10,000 rules: a new
#              TCP connection per transaction, each a flow the datapath has
#              not seen (on the kernel datapath the megaflow the first
#              connection's upcall installed serves the rest: no rule reads
#              the source port)
#   vx_seed    seed 002 on both hosts: ARP (pref 1) and IP (pref 2)
#              redirected between the VM tap and the vxlan port both ways,
#              everything else dropped (pref 3); vm1->vm2 and vm2->vm1
#   k_0        the kernel's vxlan + bridge with no rules (the goals'
#              reference)
#   k_1, k_10k the kernel datapath of the rig (vxlan device + bridge, VM on
#              a veth) with the same rules given to `tc -batch` on the
#              VM-facing veth kv1 (clsact ingress, in software), the hit
#              rule redirecting to the vxlan device kvx.  The classifier is
#              tc flower (skip_hw) where the kernel has it; this rig's
#              kernel is built without CONFIG_NET_CLS_FLOWER (and without
#              act_gact, and loads no modules), so there the same matches
#              go to tc's u32, the software classifier it has
#              (KERNEL_CLS=flower|u32, chosen by a probe when unset).
# vx_1 and vx_10k alternate order between reps.  Every figure is the median
# of the reps, with min..max.  Output: a table, raw.txt, results.json.

FLOWER_N=${FLOWER_N:-10000}

# flower_rules FILE DEV TARGET N [u32]: N-1 rules that the test stream does
# not match, then the hit rule at pref N.  The flower lines serve vxctl
# -batch and would serve tc -batch as they are (tc's grammar is ours); with
# u32, the same matches in tc's u32 (this rig's kernel has no cls_flower,
# see below), every action a mirred (it has no gact either: the 9,999
# never match, so their action never runs), 2000 rules a pref (u32's
# limits), so the walk is linear in the rules as u32's is.
flower_rules() {
	local file=$1 dev=$2 target=$3 n=$4 kind=${5:-flower}
	/usr/bin/python3 - "$dev" "$target" "$n" "$kind" >"$file" <<-'PY'
	import sys
	dev, target, n, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
	redirect = "action mirred egress redirect dev %s" % target
	for k in range(n - 1):
	    m = k % 16
	    plen = 25 + m % 8
	    field, base = ("dst_ip", (203, 0, 113)) if m < 8 else ("src_ip", (198, 51, 100))
	    host = ((k // 16) % (1 << (plen - 24))) << (32 - plen)
	    addr = "%d.%d.%d.%d/%d" % (*base, host, plen)
	    port = 1 + k % 60000
	    if kind == "u32":
	        # u32 gives an instance (a pref) at most 2048 rules, a block at
	        # most 2047 instances: 2000 rules a pref, in order
	        print("filter add dev %s ingress pref %d protocol ip u32 match ip %s %s match ip protocol 17 0xff "
	              "match ip dport %d 0xffff %s" % (dev, 1 + k // 2000, field[:3], addr, port, redirect))
	    else:
	        print("filter add dev %s ingress pref %d protocol ip flower skip_hw %s %s ip_proto udp dst_port %d "
	              "action drop" % (dev, k + 1, field, addr, port))
	if kind == "u32":
	    print("filter add dev %s ingress pref %d protocol ip u32 match u32 0 0 %s" % (dev, n, redirect))
	else:
	    print("filter add dev %s ingress pref %d protocol ip flower skip_hw %s" % (dev, n, redirect))
	PY
}

# One iperf3 stream vmFROM -> vmTO: "gbps machine_us_per_kb" (the whole
# machine's busy CPU per KB moved, measure_tcp's).
flower_iperf() {
	local r
	r=$(measure_tcp "$1" "$2" 1)
	set -- $r
	echo "$1 $3"
}

# The same with the CPU time of host SIDE's vxswitchd (all its threads)
# per KB moved: "gbps daemon_us_per_kb machine_us_per_kb".  On a shared
# machine the throughput swings with the neighbours; the daemon's own CPU
# per KB much less.  On the kernel datapath the daemon is off the path
# (upcalls only): there the machine's figure is the one that compares.
flower_iperf_cpu() { # FROM TO SIDE
	local pid c0 c1 r
	eval "pid=\$VXD_PID_$3"
	c0=$(pid_cpu_us "$pid")
	r=$(measure_tcp "$1" "$2" 1)
	c1=$(pid_cpu_us "$pid")
	set -- $r
	/usr/bin/python3 -c 'import sys; g, b, c, m = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
print("%.3f %.3f %s" % (g, c / (b / 1024) if b else -1, m))' "$1" "$2" "$((c1 - c0))" "$3"
}

# flower_row NAME REP "gbps daemon machine" (or "gbps machine" with
# NAME's daemon column absent): its rows of the raw file.
flower_row() {
	set -- "$1" "$2" $3
	echo "$1 $2 $3" >>"$RAW"
	if [ $# = 5 ]; then
		echo "$1_cpu $2 $4" >>"$RAW"
		echo "$1_mcpu $2 $5" >>"$RAW"
	else
		echo "$1_mcpu $2 $4" >>"$RAW"
	fi
}

seed_rules_on() { # SIDE TAP VXLAN
	local s=$1 tap=$2 vxp=$3 a b
	for pair in "$tap $vxp" "$vxp $tap"; do
		set -- $pair
		vx "$s" filter add dev "$1" pref 1 ingress protocol arp flower skip_hw action mirred egress redirect dev "$2" &&
		vx "$s" filter add dev "$1" pref 2 ingress protocol ip flower skip_hw action mirred egress redirect dev "$2" &&
		vx "$s" filter add dev "$1" pref 3 ingress protocol all flower action drop || return 1
	done
}

# flower_vxswitch_rep REP DATAPATH(user|kernel) NAME(vx|kdp): the vxswitch
# cases on one datapath, their rows named NAME_*.
flower_vxswitch_rep() {
	local rep=$1 dp=$2 name=$3 vxp="vx$VNI" one ten crr10 f r
	rig_up "$NS_PREFIX" gso-wire
	VXT_DP=$dp rig_vxswitchd 1 && VXT_DP=$dp rig_vxswitchd 2 && wait_for_overlay ||
		{ echo "vxswitch rig failed: $(cat "$RIG_DIR"/h*.log 2>/dev/null | tail -5 | tr '\n' ' ')" >&2
		  [ -z "${FLOWER_DEBUG:-}" ] || { n "$VM1" ping -c 3 -W 3 "$(vm_addr4 2)" >&2; vx 1 stats >&2; vx 2 stats >&2; }
		  return 1; }
	flower_rules "$RIG_DIR/rules" vnet1 "$vxp" "$FLOWER_N"
	tail -1 "$RIG_DIR/rules" >"$RIG_DIR/hit"
	head -n -1 "$RIG_DIR/rules" >"$RIG_DIR/rest"
	sed 's/^filter add \(dev [^ ]* ingress pref [0-9]*\) .*/filter del \1/' "$RIG_DIR/rest" >"$RIG_DIR/rest-del"
	vx 1 -batch "$RIG_DIR/hit" || return 1
	if [ $((rep % 2)) = 1 ]; then
		one=$(flower_iperf_cpu 1 2 1)
		vx 1 -batch "$RIG_DIR/rest" || return 1
		ten=$(flower_iperf_cpu 1 2 1)
		crr10=$(crr)
	else
		vx 1 -batch "$RIG_DIR/rest" || return 1
		ten=$(flower_iperf_cpu 1 2 1)
		crr10=$(crr)
		vx 1 -batch "$RIG_DIR/rest-del" || return 1
		one=$(flower_iperf_cpu 1 2 1)
	fi
	local hits
	hits=$(vx 1 -j filter show -s dev vnet1 ingress | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(r["options"]["actions"][0]["stats"]["packets"] for r in d
          if "options" in r and r["pref"] == int(sys.argv[1])))' "$FLOWER_N")
	flower_row "${name}_1" "$rep" "$one"
	flower_row "${name}_10k" "$rep" "$ten"
	echo "${name}_10k_crr $rep $crr10" >>"$RAW"
	set -- $one $ten
	echo "  rep $rep vxswitch ($dp datapath): 1 rule $1, $FLOWER_N rules $4 Gbit/s, TCP_CRR $crr10/s; h1 vxswitchd CPU $2 and $5 us/KB, machine $3 and $6 (hit rule counted $hits packets)"
	vx 1 filter del dev vnet1 ingress
	seed_rules_on 1 vnet1 "$vxp" && seed_rules_on 2 vnet2 "$vxp" || return 1
	n "$VM1" ip neigh flush all; n "$VM2" ip neigh flush all
	wait_for_overlay || return 1
	# each direction with the CPU of its sending host's daemon (tap in,
	# rules, encapsulation: the same work both ways)
	f=$(flower_iperf_cpu 1 2 1); r=$(flower_iperf_cpu 2 1 2)
	flower_row "${name}_seed_fwd" "$rep" "$f"
	flower_row "${name}_seed_rev" "$rep" "$r"
	set -- $f $r
	echo "  rep $rep vxswitch ($dp datapath) seed 002: vm1->vm2 $1, vm2->vm1 $4 Gbit/s; sender's vxswitchd CPU $2 and $5 us/KB, machine $3 and $6"
	rig_vxswitchd_stop 1; rig_vxswitchd_stop 2
	rig_down
	RIG_DIR=
}

flower_kernel_rep() { # REP
	local rep=$1 zero one ten crr10 t0 t1
	rig_up "$NS_PREFIX" gso-wire
	KERNEL_UDPCSUM=0 rig_kernel 1 && KERNEL_UDPCSUM=0 rig_kernel 2 && wait_for_overlay ||
		{ echo "kernel rig failed" >&2; return 1; }
	flower_rules "$RIG_DIR/rules" kv1 kvx "$FLOWER_N" "$KERNEL_CLS"
	tail -1 "$RIG_DIR/rules" >"$RIG_DIR/tc-hit"
	head -n -1 "$RIG_DIR/rules" >"$RIG_DIR/tc-rest"
	zero=$(flower_iperf 1 2)
	n "$H1" tc qdisc add dev kv1 clsact
	n "$H1" tc -batch "$RIG_DIR/tc-hit"
	one=$(flower_iperf 1 2)
	t0=$(date +%s.%N)
	n "$H1" tc -batch "$RIG_DIR/tc-rest"
	t1=$(date +%s.%N)
	ten=$(flower_iperf 1 2)
	crr10=$(crr)
	local hits
	hits=$(n "$H1" tc -s filter show dev kv1 ingress pref "$FLOWER_N" | awk '/Sent/ { print $4; exit }')
	flower_row k_0 "$rep" "$zero"
	flower_row k_1 "$rep" "$one"
	flower_row k_10k "$rep" "$ten"
	echo "k_10k_crr $rep $crr10" >>"$RAW"
	echo "  rep $rep kernel: no rules ${zero% *}; tc $KERNEL_CLS: 1 rule ${one% *}, $FLOWER_N rules ${ten% *} Gbit/s (machine CPU ${zero#* }, ${one#* }, ${ten#* } us/KB), TCP_CRR $crr10/s (tc -batch of $((FLOWER_N - 1)) took $(echo "$t1 - $t0" | bc) s; hit rule counted $hits packets)"
	rig_down
	RIG_DIR=
}

# flower if this kernel's tc has cls_flower, else u32 (said on stderr).
flower_kernel_probe() {
	local ns="vxbp$$" cls=u32
	ip netns add "$ns"
	ip netns exec "$ns" ip link add vxbpa type veth peer name vxbpb
	ip netns exec "$ns" tc qdisc add dev vxbpa clsact
	if ip netns exec "$ns" tc filter add dev vxbpa ingress pref 1 protocol ip flower skip_hw \
		action mirred egress redirect dev vxbpb 2>/dev/null; then
		cls=flower
	else
		echo "vxbench flower: this kernel's tc has no flower classifier (CONFIG_NET_CLS_FLOWER); the kernel side uses u32" >&2
	fi
	ip netns del "$ns"
	echo "$cls"
}

cmd_flower() {
	local reps=3 out=""
	SECONDS_PER_RUN=10 PINGS=0
	while [ $# -gt 0 ]; do
		case $1 in
		-n) reps=$2; shift ;;
		-t) SECONDS_PER_RUN=$2; shift ;;
		-o) out=$2; shift ;;
		*) echo "vxbench flower: unknown option '$1' (-n REPS -t SECONDS -o DIR)" >&2; exit 2 ;;
		esac
		shift
	done
	[ "$(id -u)" = 0 ] || { echo "vxbench: needs root (network namespaces)" >&2; exit 2; }
	[ -x "$VXSWITCHD" ] && [ -x "$FRAME_SIZES" ] || make -C "$TOP" -s BUILD="$BUILD" all
	bench_deps_netperf
	KERNEL_CLS=${KERNEL_CLS:-$(flower_kernel_probe)}
	out=${out:-$TOP/bench-results/flower-$(date +%Y%m%d-%H%M%S)}
	mkdir -p "$out"
	NS_PREFIX="vxb$$"
	RAW="$out/raw.txt"
	: >"$RAW"
	trap cleanup EXIT INT TERM
	echo "vxbench flower: $reps reps x ${SECONDS_PER_RUN}s, $FLOWER_N rules, kernel classifier tc $KERNEL_CLS; $(lscpu | sed -n 's/^Model name: *//p')"
	local rep
	for rep in $(seq "$reps"); do
		flower_vxswitch_rep "$rep" user vx
		flower_vxswitch_rep "$rep" kernel kdp
		flower_kernel_rep "$rep"
	done
	/usr/bin/python3 - "$RAW" "$out/results.json" "$FLOWER_N" "$KERNEL_CLS" <<-'PY'
	import json, statistics, sys
	raw, out, n, kcls = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
	cases = {}
	for line in open(raw):
	    name, rep, v = line.split()
	    cases.setdefault(name, []).append(float(v))
	med = {k: statistics.median(v) for k, v in cases.items()}
	def cell(k):
	    v = cases[k]
	    fmt = "%.3f (%.3f..%.3f)" if k.endswith("cpu") else "%.0f (%.0f..%.0f)" if k.endswith("_crr") \
	        else "%.2f (%.2f..%.2f)"
	    return fmt % (med[k], min(v), max(v))
	def ratio(a, b):
	    return med[a] / med[b] if med.get(b) else float("nan")
	def seed_ratio(p):
	    f, r = med[p + "_seed_fwd"], med[p + "_seed_rev"]
	    return "%.3f" % (min(f, r) / max(f, r))
	rows = []
	for p, what in (("vx", "userspace"), ("kdp", "kernel")):
	    rows += [
	        ("vxswitch, %s datapath, 1 rule (the hit rule)" % what, cell(p + "_1")),
	        ("vxswitch, %s datapath, %d rules, hit rule lowest priority" % (what, n), cell(p + "_10k")),
	        ("  ratio %d / 1 (goal >= 0.95)" % n, "%.3f" % ratio(p + "_10k", p + "_1")),
	        ("  ratio %d rules / kernel with no rules (goal >= 1.0)" % n, "%.3f" % ratio(p + "_10k", "k_0")),
	    ]
	    # The daemon's own CPU: on the kernel datapath it is off the path.
	    if p == "vx":
	        rows += [
	            ("  h1 vxswitchd CPU us/KB, 1 rule", cell(p + "_1_cpu")),
	            ("  h1 vxswitchd CPU us/KB, %d rules" % n, cell(p + "_10k_cpu")),
	        ]
	    rows += [
	        ("  machine CPU us/KB, 1 rule", cell(p + "_1_mcpu")),
	        ("  machine CPU us/KB, %d rules" % n, cell(p + "_10k_mcpu")),
	        ("  TCP_CRR through %d rules, transactions/s" % n, cell(p + "_10k_crr")),
	        ("  seed 002, vm1->vm2", cell(p + "_seed_fwd")),
	        ("  seed 002, vm2->vm1", cell(p + "_seed_rev")),
	        ("    ratio slower / faster (goal >= 0.90)", seed_ratio(p)),
	        ("    ratio each / kernel with no rules (goal >= 0.90)",
	         "%.3f / %.3f" % (ratio(p + "_seed_fwd", "k_0"), ratio(p + "_seed_rev", "k_0"))),
	    ]
	    if p == "vx":
	        rows += [
	            ("    sender's vxswitchd CPU us/KB, vm1->vm2", cell(p + "_seed_fwd_cpu")),
	            ("    sender's vxswitchd CPU us/KB, vm2->vm1", cell(p + "_seed_rev_cpu")),
	        ]
	    rows += [
	        ("    machine CPU us/KB, vm1->vm2 / vm2->vm1",
	         "%s / %s" % (cell(p + "_seed_fwd_mcpu"), cell(p + "_seed_rev_mcpu"))),
	    ]
	rows += [
	    ("kernel vxlan + bridge, no rules", cell("k_0")),
	    ("  machine CPU us/KB", cell("k_0_mcpu")),
	    ("kernel tc %s (software), 1 rule" % kcls, cell("k_1")),
	    ("kernel tc %s (software), %d rules" % (kcls, n), cell("k_10k")),
	    ("  machine CPU us/KB, 1 rule / %d rules" % n, "%s / %s" % (cell("k_1_mcpu"), cell("k_10k_mcpu"))),
	    ("  ratio kernel %d / 1" % n, "%.3f" % ratio("k_10k", "k_1")),
	    ("  TCP_CRR through %d rules, transactions/s" % n, cell("k_10k_crr")),
	    ("ratio vxswitch / kernel tc, %d rules: userspace, kernel datapath" % n,
	     "%.3f, %.3f" % (ratio("vx_10k", "k_10k"), ratio("kdp_10k", "k_10k"))),
	    ("ratio TCP_CRR kernel datapath / userspace datapath, %d rules" % n, "%.3f" % ratio("kdp_10k_crr", "vx_10k_crr")),
	]
	w = max(len(r[0]) for r in rows)
	print("\nGbit/s, one iperf3 stream (TCP_CRR: transactions/s), median of %d (min..max):" % len(cases["vx_1"]))
	for a, b in rows:
	    print("  %-*s  %s" % (w, a, b))
	json.dump({"cases": cases, "median": med}, open(out, "w"), indent=1)
	PY
	echo "raw: $RAW"
}
