# Datapaths vxbench can put between the two VMs of the rig.  Sourced by
# bench/vxbench/vxbench; every function runs as root.  The rig itself
# (namespaces, underlay veth u1/u2, wire modes, the kernel's vxlan + bridge,
# a vxswitchd per host) is tests/netns/lib.sh, shared with the system tests
# and the demo; this file adds Open vSwitch and the per-datapath hooks.
#
#   vm1 (192.0.2.1) ── vnet1 ── h1 ══ underlay veth u1/u2 ══ h2 ── vnet2 ── vm2 (192.0.2.2)
#                              198.51.100.1     198.51.100.2
#
# Each datapath provides dp_<name>_up (build the host side; the VM-side
# interface is vnet1 / vnet2 for all of them), dp_<name>_notes (what the
# datapath said about its own failures, one line each) and dp_<name>_down.

. "$TOP/tests/netns/lib.sh"

vm_ns() { if [ "$1" = 1 ]; then echo "$VM1"; else echo "$VM2"; fi; }
host_ns() { if [ "$1" = 1 ]; then echo "$H1"; else echo "$H2"; fi; }

# rig_up PREFIX MODE: namespaces, underlay and wire mode (gso-wire|mtu-wire).
rig_up() {
	rig_init "$1"
	rig_create 4
	rig_wire_mode "${2%-wire}"
}
rig_down() { rig_cleanup; }

# ---- the Linux kernel: vxlan device + bridge, VM attached by veth ----------
# With the kernel's own defaults (IPv4 outer UDP checksum off): the datapath
# as an operator gets it.

dp_kernel_up() { KERNEL_UDPCSUM=0 rig_kernel 1 && KERNEL_UDPCSUM=0 rig_kernel 2; }
dp_kernel_notes() { :; }
dp_kernel_down() { :; }
# The same with outer UDP checksums on (`udpcsum`), vxswitch's default:
# like for like with vxswitch and vxswitch_bpf.
dp_kernel_csum_up() { KERNEL_UDPCSUM=1 rig_kernel 1 && KERNEL_UDPCSUM=1 rig_kernel 2; }
dp_kernel_csum_notes() { :; }
dp_kernel_csum_down() { :; }

# ---- vxswitch ----------------------------------------------------------------

dp_vxswitch_up() { rig_vxswitchd 1 && rig_vxswitchd 2; }
dp_vxswitch_notes() {
	local n
	n=$(cat "$RIG_DIR"/h*.log 2>/dev/null | grep -ci "error" || true)
	[ "${n:-0}" -eq 0 ] || echo "vxswitchd logged $n error lines"
}
dp_vxswitch_down() { rig_vxswitchd_stop 1; rig_vxswitchd_stop 2; }

# ---- mixed pairs: vxswitch on host 1, another VTEP on host 2 -----------------
# Interop as a benchmark: the same rig, vm1 behind vxswitchd, vm2 behind the
# kernel's vxlan (its defaults, as dp_kernel) or Open vSwitch (as dp_ovs).
# Compare each with the pair of the peer alone (kernel, ovs) in the same run.
# Against Open vSwitch our port needs `udpcsum off` (docs/INTEROP.md: a veth
# underlay leaves our checksums unfinished, and OVS drops them).

dp_vxswitch_kernel_up() { rig_vxswitchd 1 && KERNEL_UDPCSUM=0 rig_kernel 2; }
dp_vxswitch_kernel_notes() { dp_vxswitch_notes; }
dp_vxswitch_kernel_down() { rig_vxswitchd_stop 1; }

dp_vxswitch_ovs_up() {
	RIG_EXTRA_CONF="" rig_vxswitchd 1 || return 1
	vx 1 port del "vx$VNI" && vx 1 port add "vx$VNI" type vxlan vni "$VNI" local "$(u_addr 1)" \
		remote "$(u_addr 2)" udpcsum off >/dev/null || return 1
	ovs_start 2 false afpacket || return 1
	n "$H2" ping -c 1 -W 2 "$(u_addr 1)" >/dev/null 2>&1 || true
}
dp_vxswitch_ovs_notes() { dp_vxswitch_notes; dp_ovs_notes; }
dp_vxswitch_ovs_down() { rig_vxswitchd_stop 1; }

# ---- vxswitch with afpacket ports: each VM behind a veth ---------------------
# As a container is attached: the VM's interface vnetN is one end of a veth,
# the other end kvN stays in the host namespace, and vxswitchd switches it
# with `port add vmN type afpacket dev kvN` (port/afpacket.h).  Against
# dp_vxswitch (the same daemon with taps), this measures the port type.

vxswitchd_afpacket() { # SIDE
	local side=$1 other=$(( 3 - $1 )) host cfg sock i
	host=$(host_ns "$side")
	cfg=$RIG_DIR/h$side.conf
	sock=$RIG_DIR/h$side.sock
	n "$host" ip link add "kv$side" type veth peer name "vnet$side" netns "$(vm_ns "$side")"
	n "$host" ip link set "kv$side" mtu "$(vm_mtu)" up
	{
		echo "port add vx$VNI type vxlan vni $VNI local $(u_addr "$side") remote $(u_addr "$other")"
		echo "port add vm$side type afpacket dev kv$side vni $VNI"
	} > "$cfg"
	n "$host" "$VXSWITCHD" --datapath user -c "$cfg" -s "$sock" -q > "$RIG_DIR/h$side.log" 2>&1 &
	RIG_PIDS="$RIG_PIDS $!"
	for i in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	[ -S "$sock" ] || { cat "$RIG_DIR/h$side.log" >&2; return 1; }
	rig_vm_addrs "$side" "vnet$side"
}

dp_vxswitch_afpacket_up() { vxswitchd_afpacket 1 && vxswitchd_afpacket 2; }

# ---- vxswitch's kernel datapath: eBPF on the VMs' veths and a collect_md vxlan ----
# vxswitchd --datapath kernel with `type veth` ports (the pair made by the
# daemon, vnetN moved into the VM's namespace): established flows never
# leave the kernel (docs/DESIGN.md, "Two datapaths").

dp_vxswitch_bpf_up() { rig_vxswitchd_bpf 1 && rig_vxswitchd_bpf 2; }
dp_vxswitch_bpf_notes() { dp_vxswitch_notes; }
dp_vxswitch_bpf_down() { rig_vxswitchd_stop 1; rig_vxswitchd_stop 2; }
# The kernel datapath with the kernel's IPv4 default, zero outer UDP
# checksums (`udpcsum off`): like for like with `kernel`.
dp_vxswitch_bpf_nocsum_up() { RIG_VX_OPTS="udpcsum off" dp_vxswitch_bpf_up; }
dp_vxswitch_bpf_nocsum_notes() { dp_vxswitch_notes; }
dp_vxswitch_bpf_nocsum_down() { dp_vxswitch_bpf_down; }
dp_vxswitch_afpacket_notes() { dp_vxswitch_notes; }
dp_vxswitch_afpacket_down() { :; } # rig_cleanup stops the daemons with the namespaces

# ---- Open vSwitch, userspace (netdev) datapath with userspace tunnelling --------
# One ovsdb-server + ovs-vswitchd per host namespace, each with its own run
# directory (they would collide on per-bridge sockets otherwise).  br-phy
# holds the underlay veth and the tunnel endpoint IP; br-int holds the VM's
# tap and the vxlan port.  userspace-tso-enable is read only at start-up.
# rig_cleanup stops the daemons with everything else in the namespaces.

ovs_start() {
	local i=$1 tso=$2 uplink_type=$3 d="$RIG_DIR/ovs-h$1" host dev
	host=$(host_ns "$i")
	dev=u$i
	mkdir -p "$d"
	ovsdb-tool create "$d/conf.db" /usr/share/openvswitch/vswitch.ovsschema
	n "$host" ovsdb-server "$d/conf.db" --remote=punix:"$d/db.sock" \
		--pidfile="$d/ovsdb-server.pid" --detach --log-file="$d/ovsdb.log" --unixctl="$d/ovsdb.ctl"
	local vsctl="ovs-vsctl --db=unix:$d/db.sock --timeout=10"
	$vsctl --no-wait init
	# Documented best settings: a PMD core for the AF_XDP variant, TSO per variant.
	$vsctl --no-wait set Open_vSwitch . other_config:userspace-tso-enable="$tso" \
		other_config:pmd-cpu-mask=0x2
	OVS_RUNDIR="$d" n "$host" ovs-vswitchd unix:"$d/db.sock" --pidfile="$d/ovs-vswitchd.pid" \
		--detach --log-file="$d/vswitchd.log" --unixctl="$d/vswitchd.ctl"
	$vsctl add-br br-phy -- set bridge br-phy datapath_type=netdev
	if [ "$uplink_type" = afxdp ]; then
		$vsctl add-port br-phy "$dev" -- set interface "$dev" type=afxdp-nonpmd options:xdp-mode=native
	else
		$vsctl add-port br-phy "$dev"
	fi
	$vsctl add-br br-int -- set bridge br-int datapath_type=netdev
	$vsctl add-port br-int "vnet$i" -- set interface "vnet$i" type=tap
	$vsctl add-port br-int vx0 -- set interface vx0 type=vxlan \
		options:remote_ip="$(u_addr $((3 - i)))" options:key="$VNI"
	# The tunnel endpoint address belongs on br-phy, not on the veth.
	n "$host" ip addr flush dev "$dev"
	n "$host" ip addr add "$(u_addr "$i")/24" dev br-phy
	n "$host" ip link set br-phy up
	local tries=0
	while ! n "$host" ip link show "vnet$i" >/dev/null 2>&1; do
		tries=$((tries + 1)); [ $tries -lt 50 ] || { echo "ovs: vnet$i never appeared" >&2; return 1; }
		sleep 0.1
	done
	# OVS keeps using the tap after it moves into the VM namespace.
	n "$host" ip link set "vnet$i" netns "$(vm_ns "$i")"
	rig_vm_addrs "$i" "vnet$i"
}

ovs_up() {
	ovs_start 1 "$1" "$2" && ovs_start 2 "$1" "$2"
	# OVS learns the next hop's MAC by snooping ARP: prime it.
	n "$H1" ping -c 1 -W 2 "$(u_addr 2)" >/dev/null 2>&1 || true
}

dp_ovs_up() { ovs_up false afpacket; }
dp_ovs_tso_up() { ovs_up true afpacket; }
dp_ovs_afxdp_up() { ovs_up false afxdp; }

dp_ovs_notes() {
	local n
	n=$(cat "$RIG_DIR"/ovs-h*/vswitchd.log 2>/dev/null | grep -ci "offload flags is not supported" || true)
	if [ "${n:-0}" -gt 0 ]; then
		echo "known limitation of OVS 3.1 with userspace-tso: tunneling packets with offload flags is not supported ($n log lines); TCP from VMs with TX offloads on is dropped at encapsulation"
	fi
	n=$(cat "$RIG_DIR"/ovs-h*/vswitchd.log 2>/dev/null | grep -c "|ERR|" || true)
	[ "${n:-0}" -eq 0 ] || echo "ovs-vswitchd logged $n ERR lines"
}
dp_ovs_tso_notes() { dp_ovs_notes; }
dp_ovs_afxdp_notes() { dp_ovs_notes; }

dp_ovs_down() { :; }
dp_ovs_tso_down() { :; }
dp_ovs_afxdp_down() { :; }
