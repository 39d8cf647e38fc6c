# EVPN rig on top of lib.sh: N hosts on one underlay segment, each its own
# FRR (one zebra + one bgpd, started by the test, never the machine's own),
# iBGP full mesh in l2vpn evpn with advertise-all-vni.  A host runs either
# vxswitchd (`port add vx99 ... evpn`, its VM on a tap) or the kernel's
# vxlan + bridge (the standard FRR set-up, its VM on a veth).
#
#   $P-vmN -- hN (vxswitchd or kernel) -- uN ====( $P-fab: bridge fab0 )==== ...
#                                     198.51.100.N
#
# Names: hosts $P-hN, VMs $P-vmN, the fabric $P-fab.  FRR's files (config,
# pid files, sockets, logs) live in $RIG_DIR/frr-hN; -N gives each pair its
# own pathspace, whose empty /var/run/frr/$P-hN/ is removed by evpn_cleanup.
# Source lib.sh first and call evpn_cleanup from the EXIT trap.

FRR_DIR=${FRR_DIR:-/usr/lib/frr}

evpn_fabric() { # N: the fabric and hosts 1..N with their underlay veth
	local i
	rig_ns_add "$P-fab"
	n "$P-fab" ip link add fab0 type bridge
	n "$P-fab" ip link set fab0 up
	for i in $(seq "$1"); do
		rig_ns_add "$P-h$i"
		rig_ns_add "$P-vm$i"
		n "$P-fab" ip link add "f$i" type veth peer name "u$i" netns "$P-h$i"
		n "$P-fab" ip link set "f$i" master fab0 up
		n "$P-h$i" ip addr add "198.51.100.$i/24" dev "u$i"
		n "$P-h$i" ip link set "u$i" up
		n "$P-h$i" sysctl -qw net.bridge.bridge-nf-call-iptables=0 2>/dev/null || true
		n "$P-h$i" sysctl -qw net.bridge.bridge-nf-call-arptables=0 2>/dev/null || true
	done
}

evpn_vm_addr() { # I DEV
	n "$P-vm$1" ip link set "$2" mtu 1450 up
	n "$P-vm$1" ip addr replace "192.0.2.$1/24" dev "$2"
}

# evpn_vxswitchd I: vxswitchd in hI, VNI 99 from EVPN, tap vnetI into vmI;
# with EVPN_DP=kernel, vxswitchd --datapath kernel and a veth pair vnetI
# the daemon makes into vmI (evpn_vm_port says which type).
evpn_vm_port() { if [ "${EVPN_DP:-user}" = kernel ]; then echo veth; else echo tap; fi; }
evpn_vxswitchd() {
	local i=$1 cfg=$RIG_DIR/h$1.conf sock=$RIG_DIR/h$1.sock dp="--datapath ${EVPN_DP:-user}"
	{
		echo "port add vx99 type vxlan vni 99 local 198.51.100.$i evpn"
		echo "port add vnet$i type $(evpn_vm_port) vni 99 netns $P-vm$i mtu 1450"
	} > "$cfg"
	n "$P-h$i" env ${EVPN_VXD_ENV:-} "$VXSWITCHD" $dp -c "$cfg" -s "$sock" -q > "$RIG_DIR/h$i.log" 2>&1 &
	RIG_PIDS="$RIG_PIDS $!"
	vxd_await "$P-h$i" "$P-vm$i" "vnet$i" "$sock" "$i" || return 1
	evpn_vm_addr "$i" "vnet$i"
}

# evpn_kernel I: the kernel's bridge + vxlan in hI as FRR's guide has it,
# a veth into vmI.
evpn_kernel() {
	local i=$1 h=$P-h$1
	n "$h" ip link add br99 type bridge stp_state 0 mcast_snooping 0
	n "$h" ip link set br99 addrgenmode none up
	n "$h" ip link add vx99 type vxlan id 99 local "198.51.100.$i" dstport 4789 nolearning udpcsum
	n "$h" ip link set vx99 master br99 addrgenmode none
	n "$h" bridge link set dev vx99 learning off
	n "$h" ip link set vx99 up
	n "$h" ip link add "kv$i" type veth peer name "vnet$i" netns "$P-vm$i"
	n "$h" ip link set "kv$i" master br99 up
	evpn_vm_addr "$i" "vnet$i"
}

# evpn_rr: a route reflector in $P-h254 (198.51.100.254 on the fabric),
# docs/EVPN.md's configuration: dynamic neighbours from the fabric's /24.
evpn_rr() {
	local h=$P-h254
	rig_ns_add "$h"
	n "$P-fab" ip link add f254 type veth peer name u254 netns "$h"
	n "$P-fab" ip link set f254 master fab0 up
	n "$h" ip addr add 198.51.100.254/24 dev u254
	n "$h" ip link set u254 up
	EVPN_RR=1
	evpn_frr 254 0
}

# evpn_frr I N: zebra + bgpd in hI, iBGP to every other host of 1..N, or
# (after evpn_rr) to the route reflector only; I = 254: the reflector.
evpn_frr() {
	local i=$1 hosts=$2 d=$RIG_DIR/frr-h$1 j peers=""
	EVPN_FRR_HOSTS="${EVPN_FRR_HOSTS:-} $i"
	mkdir -p "$d"
	# FRR drops to user frr: it needs to reach its own directory.
	chmod o+x "$RIG_DIR"
	chmod 777 "$d"
	: > "$d/vtysh.conf"
	printf 'hostname h%s\nlog file %s/zebra.log\n' "$i" "$d" > "$d/zebra.conf"
	if [ "$i" = 254 ]; then
		peers=LEAVES
	elif [ -n "${EVPN_RR:-}" ]; then
		peers=198.51.100.254
	else
		for j in $(seq "$hosts"); do [ "$j" = "$i" ] || peers="$peers 198.51.100.$j"; done
	fi
	{
		echo "frr defaults datacenter"
		echo "hostname h$i"
		echo "log file $d/bgpd.log"
		echo "router bgp 65000"
		echo " bgp router-id 198.51.100.$i"
		echo " no bgp default ipv4-unicast"
		[ "$i" = 254 ] && echo " neighbor LEAVES peer-group"
		for j in $peers; do
			echo " neighbor $j remote-as internal"
			echo " neighbor $j timers 1 3"
			echo " neighbor $j timers connect 1"
		done
		[ "$i" = 254 ] && echo " bgp listen range 198.51.100.0/24 peer-group LEAVES"
		echo " address-family l2vpn evpn"
		for j in $peers; do
			echo "  neighbor $j activate"
			[ "$i" = 254 ] && echo "  neighbor $j route-reflector-client"
		done
		[ "$i" = 254 ] || echo "  advertise-all-vni"
		echo " exit-address-family"
	} > "$d/bgpd.conf"
	# EVPN_CONF_DIR (scripts/frr): its leaf.conf / rr.conf as they are,
	# with the hostname and router-id of this host: the shipped files run.
	if [ -n "${EVPN_CONF_DIR:-}" ] && [ "$i" = 254 ]; then
		{ cat "$EVPN_CONF_DIR/rr.conf"; echo "log file $d/bgpd.log"; } > "$d/bgpd.conf"
	elif [ -n "${EVPN_CONF_DIR:-}" ]; then
		{ sed -e "s/^hostname leaf1$/hostname leaf$i/" -e "s/router-id 198.51.100.1$/router-id 198.51.100.$i/" \
			"$EVPN_CONF_DIR/leaf.conf"; echo "log file $d/bgpd.log"; } > "$d/bgpd.conf"
	fi
	local common="-N $P-h$i --vty_socket $d -z $d/zserv.api -u frr -g frr -P 0"
	n "$P-h$i" "$FRR_DIR/zebra" -d $common -i "$d/zebra.pid" -f "$d/zebra.conf" -s 16777216 \
		--log "file:$d/zebra.log" 2>>"$d/stderr" || fail "zebra did not start in h$i: $(cat "$d/stderr")"
	local k
	for k in $(seq 100); do [ -S "$d/zserv.api" ] && break; sleep 0.05; done
	n "$P-h$i" "$FRR_DIR/bgpd" -d $common -i "$d/bgpd.pid" -f "$d/bgpd.conf" \
		--log "file:$d/bgpd.log" 2>>"$d/stderr" || fail "bgpd did not start in h$i: $(cat "$d/stderr")"
}

evpn_vtysh() { # I COMMAND
	n "$P-h$1" vtysh --vty_socket "$RIG_DIR/frr-h$1" --config_dir "$RIG_DIR/frr-h$1" -c "$2"
}

# evpn_frr_stop I: kills zebra and bgpd of hI (SIGKILL: a host that dies).
evpn_frr_stop() {
	local d=$RIG_DIR/frr-h$1 f pid
	for f in bgpd zebra; do
		pid=$(cat "$d/$f.pid" 2>/dev/null) || continue
		kill -9 "$pid" 2>/dev/null || true
	done
}

evpn_cleanup() {
	local i
	for i in ${EVPN_FRR_HOSTS:-}; do
		evpn_frr_stop "$i"
		rm -rf "/var/run/frr/$P-h$i" "/etc/frr/$P-h$i" 2>/dev/null || true
	done
	EVPN_FRR_HOSTS=""
	rig_cleanup
}

# evpn_trap: the EXIT trap (after rig_init): evpn_cleanup, and with
# EVPN_DP=kernel the test fails if a vxdp_* program it loaded is left.
evpn_trap() {
	if [ "${EVPN_DP:-user}" = kernel ]; then rig_trap_bpf evpn_cleanup; else trap evpn_cleanup EXIT; fi
}

# evpn_established I N: hI has N established l2vpn evpn sessions.
evpn_established() {
	evpn_vtysh "$1" "show bgp l2vpn evpn summary json" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
peers = d.get("peers", {})
print(sum(1 for p in peers.values() if p.get("state") == "Established"))' 2>/dev/null || echo 0
}

# evpn_fdb_has I MAC [SOURCE]: vxswitchd of hI has MAC in VNI 99 (of that source).
evpn_fdb_has() {
	"$VXCTL" --socket "$RIG_DIR/h$1.sock" -j fdb show vni 99 | /usr/bin/python3 -c '
import json, sys
mac, src = sys.argv[1], sys.argv[2]
sys.exit(0 if any(e["mac"] == mac and (not src or e.get("source") == src) for e in json.load(sys.stdin)) else 1)' "$2" "${3:-}"
}

# evpn_vteps I: the EVPN flood VTEPs of hI's vx99, sorted, space separated.
evpn_vteps() {
	"$VXCTL" --socket "$RIG_DIR/h$1.sock" -j port show | /usr/bin/python3 -c '
import json, sys
p = [p for p in json.load(sys.stdin) if p["name"] == "vx99"][0]
print(" ".join(sorted(p.get("evpn", {}).get("vteps", []))))'
}

# FRR's duplicate-address detection (DAD), read from zebra (used by
# test_evpn_diag; docs/EVPN.md, "MAC flaps and FRR's duplicate-address
# detection").
# evpn_dad_cfg I: zebra's DAD settings on hI, "on|off MAX_MOVES SECONDS".
evpn_dad_cfg() {
	evpn_vtysh "$1" "show evpn json" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
print("on" if d.get("isDuplicateAddrDetection") else "off", d.get("maxMoves"), d.get("detectionTime"))' 2>/dev/null ||
		echo "unknown"
}

# evpn_zebra_mac I MAC: zebra's entry of MAC in VNI 99 on hI, as
# "TYPE DETECTION_COUNT dup|-" (TYPE local, remote or auto), or "none"
# when zebra has no entry of it.
evpn_zebra_mac() {
	evpn_vtysh "$1" "show evpn mac vni 99 mac $2 json" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    d = {}
m = d.get(sys.argv[1].lower())
print("none" if m is None else "%s %d %s" % (m.get("type"), m.get("detectionCount", 0),
                                               "dup" if m.get("isDuplicate") else "-"))' "$2"
}

# evpn_frr_dup I MAC: FRR's DAD on hI lists MAC as a duplicate
# (`show evpn mac vni 99 duplicate`).
evpn_frr_dup() {
	evpn_vtysh "$1" "show evpn mac vni 99 duplicate" 2>/dev/null | grep -qi -- "$2"
}

# evpn_fdb_source I MAC: how vxswitchd of hI has MAC in VNI 99:
# "SOURCE WHERE" (SOURCE learned, static or evpn; WHERE the local port or
# the remote VTEP), or "none".
evpn_fdb_source() {
	"$VXCTL" --socket "$RIG_DIR/h$1.sock" -j fdb show vni 99 | /usr/bin/python3 -c '
import json, sys
e = [e for e in json.load(sys.stdin) if e["mac"] == sys.argv[1].lower()]
print("none" if not e else "%s %s" % (e[0].get("source"), e[0].get("remote") or e[0].get("port")))' "$2"
}

# evpn_local_kept I: datagrams vxswitchd of hI did not let move a local MAC
# (EVPN VNI): switch.fdb_evpn_local_kept, or the kernel datapath's
# vxlan_device.evpn_local_kept.
evpn_local_kept() {
	"$VXCTL" --socket "$RIG_DIR/h$1.sock" -j stats | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d.get("vxlan_device", {}).get("evpn_local_kept", d.get("switch", {}).get("fdb_evpn_local_kept", -1)))'
}

# evpn_local_dels I: how many times vxswitchd of hI withdrew a local MAC
# from its shadow port (port show -j, evpn.local_dels of vx99).
evpn_local_dels() {
	"$VXCTL" --socket "$RIG_DIR/h$1.sock" -j port show | /usr/bin/python3 -c '
import json, sys
p = [p for p in json.load(sys.stdin) if p["name"] == "vx99"][0]
print(p.get("evpn", {}).get("local_dels", 0))'
}
