#!/bin/bash
# A rough figure for flower rules on the kernel datapath: iperf3 single
# stream vm1 -> vm2 on one host through vxswitchd --datapath kernel with
# no rule, 1 rule, and 10,000 rules whose hit rule is the last (lowest
# priority), against the kernel's bridge between two veths measured in the
# same run.  Noisy: 2 shared vCPUs, one run of SECS seconds each.
set -e
cd "$(dirname "$0")/.."
. tests/netns/lib.sh
rig_init "krlb-$$"
trap rig_cleanup EXIT
SECS=${SECS:-5}
rig_create 4
for ns in "$P-vm3" "$P-vm4"; do rig_ns_add "$ns"; done
cat > "$RIG_DIR/h1.conf" <<CONF
port add vnet1 type veth vni 99 netns $VM1 mtu 1450
port add vnet2 type veth vni 99 netns $VM2 mtu 1450
CONF
nh1 "$VXSWITCHD" --datapath kernel -c "$RIG_DIR/h1.conf" -s "$RIG_DIR/h1.sock" > "$RIG_DIR/h1.log" 2>&1 &
RIG_PIDS="$RIG_PIDS $!"
for i in $(seq 100); do [ -S "$RIG_DIR/h1.sock" ] && nvm2 ip link show vnet2 >/dev/null 2>&1 && break; sleep 0.05; done
for v in 1 2; do n "$P-vm$v" ip link set vnet$v up; n "$P-vm$v" ip addr add 192.0.2.$v/24 dev vnet$v; done
# the kernel's bridge: vm3 <-> vm4 over kb3/kb4 in h1
nh1 ip link add kbr type bridge
for v in 3 4; do
	nh1 ip link add kb$v type veth peer name vnet$v netns "$P-vm$v"
	nh1 ip link set kb$v mtu 1450 master kbr up
	n "$P-vm$v" ip link set vnet$v mtu 1450 up
	n "$P-vm$v" ip addr add 192.0.2.$v/24 dev vnet$v
done
nh1 ip link set kbr up
VX="$VXCTL --socket $RIG_DIR/h1.sock"
bw() { # CLIENT_NS SERVER_NS SERVER_ADDR
	n "$2" iperf3 -s -D -1 -p 5201; sleep 0.3
	n "$1" iperf3 -c "$3" -p 5201 -t "$SECS" -J | /usr/bin/python3 -c \
		'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9))'
}
nvm1 ping -c 1 -W 2 192.0.2.2 >/dev/null
n "$P-vm3" ping -c 1 -W 2 192.0.2.4 >/dev/null
echo "bridge:     $(bw "$P-vm3" "$P-vm4" 192.0.2.4) Gbit/s"
echo "no rules:   $(bw "$VM1" "$VM2" 192.0.2.2) Gbit/s"
$VX filter add dev vnet1 ingress protocol ip pref 20000 flower ip_proto tcp action pass
echo "1 rule:     $(bw "$VM1" "$VM2" 192.0.2.2) Gbit/s"
$VX filter del dev vnet1 ingress protocol ip pref 20000 flower
/usr/bin/python3 - > "$RIG_DIR/rules.batch" <<'EOF'
for i in range(9999):
    print("filter add dev vnet1 ingress protocol ip pref %d flower ip_proto udp dst_ip 203.0.113.%d src_port %d action drop"
          % (i + 1, i % 250 + 1, i + 1))
print("filter add dev vnet1 ingress protocol ip pref 20000 flower ip_proto tcp action pass")
EOF
$VX -batch "$RIG_DIR/rules.batch"
echo "rules on vnet1: $($VX filter show dev vnet1 ingress | grep -c handle)"
echo "10k rules:  $(bw "$VM1" "$VM2" 192.0.2.2) Gbit/s (hit rule last)"
echo "bridge:     $(bw "$P-vm3" "$P-vm4" 192.0.2.4) Gbit/s"
$VX filter show -s dev vnet1 ingress | tail -12 | grep Sent
$VX stats | grep "^rule cache"
lscpu | grep "Model name"
