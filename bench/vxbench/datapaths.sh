# Datapaths vxbench can put between the two VMs of the rig.  Sourced by
# bench/vxbench/vxbench; every function runs as root.
#
#   vm1 (192.0.2.1) ── VM port ── h1 ══ underlay veth ul0 ══ h2 ── VM port ── vm2 (192.0.2.2)
#                                198.51.100.1      198.51.100.2
#
# Each datapath provides dp_<name>_up (build the host side, set VM_IF[1..2] to
# the VM-side interface name) and dp_<name>_down (stop its processes; the
# namespaces themselves are removed by rig_down).  Names of namespaces come
# from $NS_PREFIX; scratch files go under $WORK.

VNI=99
VM_MTU=1450

ns() { echo "$NS_PREFIX-$1"; }
in_ns() { local n=$1; shift; ip netns exec "$(ns "$n")" "$@"; }

# Namespaces, the underlay veth and the wire mode; VM interfaces come later.
rig_up() {
	local mode=$1 i
	for n in vm1 vm2 h1 h2; do
		ip netns add "$(ns $n)"
		ip -n "$(ns $n)" link set lo up
	done
	ip link add ul0 netns "$(ns h1)" type veth peer name ul0 netns "$(ns h2)"
	for i in 1 2; do
		ip -n "$(ns h$i)" link set ul0 up
		if [ "$mode" = mtu-wire ]; then
			# Frames cross at MTU size and the receiving end runs GRO, as a real NIC does.
			in_ns h$i ethtool -K ul0 tso off gso off tx-udp_tnl-segmentation off >/dev/null
			in_ns h$i ethtool -K ul0 gro on >/dev/null
		fi
	done
}

rig_down() {
	for n in vm1 vm2 h1 h2; do
		ip netns del "$(ns $n)" 2>/dev/null || true
	done
}

vm_address() {
	local i=$1 dev=$2
	ip -n "$(ns vm$i)" link set "$dev" mtu $VM_MTU up
	ip -n "$(ns vm$i)" addr add 192.0.2.$i/24 dev "$dev"
	ip -n "$(ns vm$i)" addr add 2001:db8:99::$i/64 dev "$dev" nodad
}

underlay_address() {
	ip -n "$(ns h$1)" addr add 198.51.100.$1/24 dev "$2"
	ip -n "$(ns h$1)" link set "$2" up
}

# ---- the Linux kernel: vxlan device + bridge, VM attached by veth ----------

dp_kernel_up() {
	local i r
	for i in 1 2; do
		r=$((3 - i))
		underlay_address $i ul0
		ip link add eth0 netns "$(ns vm$i)" type veth peer name vm0 netns "$(ns h$i)"
		ip -n "$(ns h$i)" link add vx0 type vxlan id $VNI local 198.51.100.$i \
			remote 198.51.100.$r dstport 4789
		ip -n "$(ns h$i)" link add br0 type bridge
		# br_netfilter is built in with bridge-nf-call-* = 1: without this every
		# bridged frame would pay for netfilter.
		in_ns h$i sysctl -qw net.bridge.bridge-nf-call-iptables=0 \
			net.bridge.bridge-nf-call-ip6tables=0 net.bridge.bridge-nf-call-arptables=0
		ip -n "$(ns h$i)" link set vx0 master br0
		ip -n "$(ns h$i)" link set vm0 master br0
		ip -n "$(ns h$i)" link set vm0 mtu $VM_MTU up
		ip -n "$(ns h$i)" link set vx0 up
		ip -n "$(ns h$i)" link set br0 up
		vm_address $i eth0
		VM_IF[$i]=eth0
	done
}

dp_kernel_down() { :; }
dp_kernel_pids() { :; }

# ---- Open vSwitch, userspace (netdev) datapath with userspace tunnelling --------
# One ovsdb-server + ovs-vswitchd per host namespace, each with its own run
# directory (they would collide on per-bridge sockets otherwise).  br-phy
# holds the underlay veth and the tunnel endpoint IP; br-int holds the VM's
# tap and the vxlan port.  userspace-tso-enable is read only at start-up.

ovs_start() {
	local i=$1 tso=$2 uplink_type=$3 d="$WORK/ovs-h$1"
	mkdir -p "$d"
	ovsdb-tool create "$d/conf.db" /usr/share/openvswitch/vswitch.ovsschema
	in_ns h$i ovsdb-server "$d/conf.db" --remote=punix:"$d/db.sock" \
		--pidfile="$d/ovsdb-server.pid" --detach --log-file="$d/ovsdb.log" --unixctl="$d/ovsdb.ctl"
	local vsctl="ovs-vsctl --db=unix:$d/db.sock --timeout=10"
	$vsctl --no-wait init
	$vsctl --no-wait set Open_vSwitch . other_config:userspace-tso-enable=$tso \
		other_config:pmd-cpu-mask=0x2
	OVS_RUNDIR="$d" in_ns h$i ovs-vswitchd unix:"$d/db.sock" --pidfile="$d/ovs-vswitchd.pid" \
		--detach --log-file="$d/vswitchd.log" --unixctl="$d/vswitchd.ctl"
	$vsctl add-br br-phy -- set bridge br-phy datapath_type=netdev
	if [ "$uplink_type" = afxdp ]; then
		$vsctl add-port br-phy ul0 -- set interface ul0 type=afxdp-nonpmd options:xdp-mode=native
	else
		$vsctl add-port br-phy ul0
	fi
	$vsctl add-br br-int -- set bridge br-int datapath_type=netdev
	$vsctl add-port br-int vnet$i -- set interface vnet$i type=tap
	$vsctl add-port br-int vx0 -- set interface vx0 type=vxlan \
		options:remote_ip=198.51.100.$((3 - i)) options:key=$VNI
	underlay_address $i br-phy
	local tries=0
	while ! ip -n "$(ns h$i)" link show vnet$i >/dev/null 2>&1; do
		tries=$((tries + 1)); [ $tries -lt 50 ] || { echo "ovs: vnet$i never appeared" >&2; return 1; }
		sleep 0.1
	done
	# OVS keeps using the tap after it moves into the VM namespace.
	ip -n "$(ns h$i)" link set vnet$i netns "$(ns vm$i)"
	vm_address $i vnet$i
	VM_IF[$i]=vnet$i
}

ovs_up() {
	ovs_start 1 "$1" "$2" && ovs_start 2 "$1" "$2"
	# OVS learns the next hop's MAC by snooping ARP: prime it.
	in_ns h1 ping -c 1 -W 2 198.51.100.2 >/dev/null 2>&1 || true
}

dp_ovs_up() { ovs_up false afpacket; }
dp_ovs_tso_up() { ovs_up true afpacket; }
dp_ovs_afxdp_up() { ovs_up false afxdp; }

# Notes for the report: what the datapath said about its own failures.
dp_ovs_notes() {
	local n
	n=$(cat "$WORK"/ovs-h*/vswitchd.log 2>/dev/null | grep -ci "offload flags is not supported" || true)
	if [ "${n:-0}" -gt 0 ]; then
		echo "known limitation of OVS 3.1 with userspace-tso: tunneling packets with offload flags is not supported ($n log lines); TCP from VMs with TX offloads on is dropped at encapsulation"
	fi
	n=$(cat "$WORK"/ovs-h*/vswitchd.log 2>/dev/null | grep -ci "ERR" || true)
	[ "${n:-0}" -eq 0 ] || echo "ovs-vswitchd logged $n ERR lines"
}
dp_ovs_tso_notes() { dp_ovs_notes; }
dp_ovs_afxdp_notes() { dp_ovs_notes; }
dp_kernel_notes() { :; }
dp_vxswitch_notes() {
	local n
	n=$(cat "$WORK"/vxswitchd-h*.log 2>/dev/null | grep -ci "error" || true)
	[ "${n:-0}" -eq 0 ] || echo "vxswitchd logged $n error lines"
}

dp_ovs_down() {
	local f
	for f in "$WORK"/ovs-h*/*.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	sleep 0.2
	for f in "$WORK"/ovs-h*/*.pid; do
		[ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	done
	rm -rf "$WORK"/ovs-h*
	return 0
}
dp_ovs_tso_down() { dp_ovs_down; }
dp_ovs_afxdp_down() { dp_ovs_down; }

# ---- vxswitch --------------------------------------------------------------

dp_vxswitch_up() {
	local i r
	for i in 1 2; do
		r=$((3 - i))
		underlay_address $i ul0
		cat >"$WORK/vxswitchd-h$i.conf" <<-EOF
		# vxbench: host $i
		port add vx0 type vxlan vni $VNI local 198.51.100.$i remote 198.51.100.$r
		port add vnet$i type tap vni $VNI netns $(ns vm$i) mtu $VM_MTU
		EOF
		# ip netns exec execs the daemon itself, so $! is vxswitchd's pid.
		ip netns exec "$(ns h$i)" "$VXSWITCHD" -c "$WORK/vxswitchd-h$i.conf" \
			-s "$WORK/vxswitchd-h$i.sock" >"$WORK/vxswitchd-h$i.log" 2>&1 &
		echo $! >"$WORK/vxswitchd-h$i.pid"
		local tries=0
		while ! ip -n "$(ns vm$i)" link show vnet$i >/dev/null 2>&1; do
			tries=$((tries + 1))
			if [ $tries -ge 50 ]; then
				echo "vxswitchd on h$i did not create vnet$i:" >&2
				cat "$WORK/vxswitchd-h$i.log" >&2
				return 1
			fi
			sleep 0.1
		done
		vm_address $i vnet$i
		VM_IF[$i]=vnet$i
	done
}

dp_vxswitch_down() {
	local f
	for f in "$WORK"/vxswitchd-h*.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	sleep 0.2
	for f in "$WORK"/vxswitchd-h*.pid; do
		[ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
		rm -f "$f"
	done
	rm -f "$WORK"/vxswitchd-h*.sock
	return 0
}
