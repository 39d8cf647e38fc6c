#!/bin/bash
# A real Linux guest on an afpacket port: QEMU (TCG) boots a Debian cloud
# kernel whose own virtio-net driver negotiates offloads through QEMU's tap
# backend (vnet_hdr); the switch reads and writes that tap's netdev side
# with an afpacket port, across VXLAN to a namespace VM.
#
#   QEMU guest (in h1)            vxt25-PID-h1                           vxt25-PID-h2       vxt25-PID-vm2
#   eth0 192.0.2.21 == qtap1 -- vxswitchd -- u1 ============== u2 -- vxswitchd --> vnet2 192.0.2.2
#   (virtio-net)      (port g1 type afpacket dev qtap1)                          (tap)
#
# Checks: ping and a short iperf3 both ways from the guest; `ethtool -k` in
# the guest says TSO is on; frames of more than one MSS cross the afpacket
# port whole both ways (its GSO counters, its tx size histogram).  Speed is
# not judged under TCG.  A TCG boot and iperf3 under emulation: ~30 s, part of
# `make netns` and so of `make test`.
#
# Needs qemu-system-x86 and busybox-static; the guest kernel
# (linux-image-*-cloud-amd64) is fetched once with apt-get download into
# $GUEST_DIR (default $BUILD/guest) and unpacked there, never installed.
set -e
cd "$(dirname "$0")/../.."
. tests/netns/lib.sh
rig_init "vxt25-$$"
trap rig_cleanup EXIT
GUEST_DIR=${GUEST_DIR:-$BUILD/guest}
QEMU_TIMEOUT=${QEMU_TIMEOUT:-300}
G_ADDR=192.0.2.21

for c in qemu-system-x86_64 busybox; do
	command -v "$c" >/dev/null || fail "$c missing: apt-get install qemu-system-x86 busybox-static"
done

# ---- the guest kernel, once ------------------------------------------------------
guest_kernel() {
	local vmlinuz
	vmlinuz=$(ls "$GUEST_DIR"/root/boot/vmlinuz-* 2>/dev/null | head -1)
	if [ -z "$vmlinuz" ]; then
		mkdir -p "$GUEST_DIR"
		local pkg
		pkg=$(apt-cache depends linux-image-cloud-amd64 | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
		[ -n "$pkg" ] || fail "apt-cache knows no linux-image-cloud-amd64"
		(cd "$GUEST_DIR" && apt-get download "$pkg" >/dev/null 2>&1) || fail "apt-get download $pkg"
		dpkg -x "$GUEST_DIR/$pkg"_*.deb "$GUEST_DIR/root"
		vmlinuz=$(ls "$GUEST_DIR"/root/boot/vmlinuz-* | head -1)
	fi
	echo "$vmlinuz"
}
VMLINUZ=$(guest_kernel)
KVER=${VMLINUZ##*/vmlinuz-}
MODS=$GUEST_DIR/root/lib/modules/$KVER/kernel

# ---- the initramfs: busybox, virtio-net's modules, iperf3, ethtool -----------------
build_initramfs() {
	local r=$RIG_DIR/initramfs f
	mkdir -p "$r"/{bin,sbin,proc,sys,dev,tmp,lib/modules,lib64,lib/x86_64-linux-gnu}
	cp /bin/busybox "$r/bin/busybox"
	for f in sh mount insmod ip ping sed grep cat echo sleep poweroff awk; do ln -s busybox "$r/bin/$f"; done
	for f in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci failover net_failover virtio_net; do
		cp "$(find "$MODS" -name "$f.ko" | head -1)" "$r/lib/modules/" || fail "module $f not in $MODS"
	done
	cp /usr/bin/iperf3 /usr/sbin/ethtool "$r/bin/"
	for f in $(ldd /usr/bin/iperf3 /usr/sbin/ethtool | awk '$3 ~ /^\// { print $3 } $1 ~ /^\/lib64/ { print $1 }' | sort -u); do
		cp "$f" "$r$f"
	done
	cat > "$r/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci failover net_failover virtio_net; do
	insmod /lib/modules/$m.ko
done
arg() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
ip link set lo up
ip link set eth0 mtu 1450 up
ip addr add "$(arg vmip)/24" dev eth0
echo GUEST-UP
ethtool -k eth0 | grep -E '^(tcp-segmentation-offload|tx-checksumming|generic-receive-offload):' | sed 's/^/GUEST-ETHTOOL /'
peer=$(arg peer)
ethtool -k eth0 > /tmp/eth.log 2>&1 || { echo GUEST-ETHTOOL-FAIL; cat /tmp/eth.log; }
if ping -c 5 -W 3 "$peer"; then echo GUEST-PING-OK; else echo GUEST-PING-FAIL; fi
if iperf3 -c "$peer" -t 3 -f m > /tmp/tx.log 2>&1; then echo GUEST-IPERF-TX-OK; else echo GUEST-IPERF-TX-FAIL; fi
grep receiver /tmp/tx.log | sed 's/^/GUEST-TX /'
if iperf3 -c "$peer" -t 3 -f m -R > /tmp/rx.log 2>&1; then echo GUEST-IPERF-RX-OK; else echo GUEST-IPERF-RX-FAIL; fi
grep receiver /tmp/rx.log | sed 's/^/GUEST-RX /'
echo GUEST-DONE
poweroff -f
INIT
	chmod +x "$r/init"
	(cd "$r" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$RIG_DIR/initrd.gz"
}
build_initramfs

# ---- the rig: the guest's tap exists before the switch opens it -----------------
rig_create 4
nh1 ip tuntap add dev qtap1 mode tap vnet_hdr
nh1 ip link set qtap1 mtu "$(vm_mtu)" up
RIG_EXTRA_CONF="port add g1 type afpacket dev qtap1 vni $VNI" rig_vxswitchd 1
rig_vxswitchd 2
nvm2 iperf3 -s -D -B "$(vm_addr4 2)" -p 5201 >/dev/null 2>&1

t0=$(date +%s)
nh1 timeout "$QEMU_TIMEOUT" qemu-system-x86_64 -accel tcg -m 512 -display none -monitor none -no-reboot \
	-kernel "$VMLINUZ" -initrd "$RIG_DIR/initrd.gz" \
	-append "console=ttyS0 quiet panic=-1 vmip=$G_ADDR peer=$(vm_addr4 2)" \
	-netdev tap,id=n0,ifname=qtap1,script=no,downscript=no,vnet_hdr=on \
	-device virtio-net-pci,netdev=n0,mac=52:54:00:00:25:21,vectors=0 \
	-serial "file:$RIG_DIR/console.log" > "$RIG_DIR/qemu.log" 2>&1 &
QPID=$!
RIG_PIDS="$RIG_PIDS $QPID"
# While the guest runs: the switch sees the tap's TSO come on once QEMU
# passes on what the guest's driver negotiated (and off again at its reset).
tso_seen=False
while kill -0 "$QPID" 2>/dev/null; do
	[ "$tso_seen" = True ] || tso_seen=$(vx_port 1 g1 link_tso 2>/dev/null || echo False)
	sleep 0.5
done
wait "$QPID" || true
secs=$(( $(date +%s) - t0 ))
C=$RIG_DIR/console.log
grep -q GUEST-DONE "$C" || { tail -40 "$C" >&2; cat "$RIG_DIR/qemu.log" >&2; fail "the guest did not finish in ${QEMU_TIMEOUT}s"; }
grep -q GUEST-PING-OK "$C" || { cat "$C" >&2; vx 1 port show >&2; vx 1 stats port g1 >&2; fail "ping guest -> vm2"; }
grep -q GUEST-IPERF-TX-OK "$C" || { grep GUEST "$C" >&2; fail "iperf3 guest -> vm2"; }
grep -q GUEST-IPERF-RX-OK "$C" || { grep GUEST "$C" >&2; fail "iperf3 vm2 -> guest"; }
grep -q "GUEST-ETHTOOL tcp-segmentation-offload: on" "$C" || { grep GUEST-ETHTOOL "$C" >&2; fail "guest's TSO is not on"; }
tx=$(sed -n 's/^GUEST-TX .* \([0-9.]*\) Mbits\/sec.*/\1/p' "$C" | head -1)
rx=$(sed -n 's/^GUEST-RX .* \([0-9.]*\) Mbits\/sec.*/\1/p' "$C" | head -1)
pass "guest booted (${secs}s with its tests, TCG): ping, iperf3 guest -> vm2 $tx Mbit/s, vm2 -> guest $rx Mbit/s; guest ethtool: $(grep GUEST-ETHTOOL "$C" | sed 's/GUEST-ETHTOOL //' | tr -d '\r' | tr '\n' ' ')"

afp() { vx_stat 1 "port(\"g1\")[\"afpacket\"][\"$1\"]"; }
rx_gso=$(afp rx_gso_frames); tx_gso=$(afp tx_gso_frames); share=$(vx_stat 1 'big_share("g1")')
[ "$rx_gso" -gt 0 ] || fail "no GSO frame read from the guest's tap (rx_gso_frames 0)"
[ "$tx_gso" -gt 0 ] || fail "no GSO frame written to the guest's tap (tx_gso_frames 0)"
[ "$(afp tx_errors)" = 0 ] || fail "writes to the guest's tap refused: errno $(afp last_tx_errno)"
over=$(vx_stat 1 'sum(b["frames"] for b in port("g1")["tx_size_hist"] if b["bucket"] != "<1.5K")')
[ "$over" -gt 0 ] || fail "no frame of more than one MSS written to the guest's tap"
[ "$tso_seen" = True ] || fail "port show: link tso of qtap1 not on once QEMU set the guest's offloads"
pass "afpacket port on QEMU's tap (link tso on once QEMU negotiated it): rx gso $rx_gso, tx gso $tx_gso, $over frames over 1.5 KB to the guest ($share of bytes in frames >= 32 KB), no tx error"
