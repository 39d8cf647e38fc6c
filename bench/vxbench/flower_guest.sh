#!/bin/bash
# vxbench flower in a KVM guest whose kernel has tc flower.
#
#   bench/vxbench/flower_guest.sh [-n REPS] [-t SECONDS]
#
# The rig machine's kernel is built without CONFIG_NET_CLS_FLOWER, so
# `vxbench flower` there can only compare vxswitch with tc u32.  This runs
# the same `vxbench flower` (same script, same vxswitchd build) inside a
# guest booted with Debian's cloud kernel (cls_flower, act_gact, act_mirred
# as modules; KVM or, by default, TCG), fetched once as test_qemu_guest.sh does (apt-get download
# into $GUEST_DIR, unpacked there, never installed): there the kernel side
# is tc flower with the very lines vxswitch gets.  The guest's whole
# userland is an initramfs built here from the host's binaries (their
# ldd closure), Python's standard library, the guest kernel's modules and
# this tree's build; the guest prints the results on its console and
# powers off.  Figures from the guest compare with each other only (one
# run, one kernel), not with the host's.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
GUEST_DIR=${GUEST_DIR:-$BUILD/guest}
ARGS=("$@")
[ "$(id -u)" = 0 ] || { echo "flower_guest: needs root" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null && command -v busybox >/dev/null ||
	{ echo "flower_guest: needs qemu-system-x86 and busybox-static" >&2; exit 2; }

vmlinuz=$(ls "$GUEST_DIR"/root/boot/vmlinuz-* 2>/dev/null | head -1)
if [ -z "$vmlinuz" ]; then
	mkdir -p "$GUEST_DIR"
	pkg=$(apt-cache depends linux-image-cloud-amd64 | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	(cd "$GUEST_DIR" && apt-get download "$pkg" >/dev/null)
	dpkg -x "$GUEST_DIR/$pkg"_*.deb "$GUEST_DIR/root"
	vmlinuz=$(ls "$GUEST_DIR"/root/boot/vmlinuz-* | head -1)
fi
KVER=${vmlinuz##*/vmlinuz-}
WORK=$(mktemp -d /tmp/vxflower-guest.XXXX)
trap 'rm -rf "$WORK"' EXIT
R=$WORK/root
mkdir -p "$R"/{proc,sys,dev,tmp,run,etc,root,var} "$R/lib/modules"
ln -s ../run "$R/var/run"

# Programs the rig and vxbench use, with their libraries.
progs="bash busybox ip tc ss iperf3 ethtool sysctl timeout getconf mktemp seq sed mawk grep cat head tail
	date bc tr cut wc id env uname ping rm mkdir cp ls chmod touch sort uniq tee dirname basename lscpu sleep xargs mount
	modprobe insmod ln mv"
for p in $progs; do
	f=$(command -v "$p") || { echo "flower_guest: no $p on this host" >&2; exit 2; }
	f=$(readlink -f "$f")
	mkdir -p "$R/usr/bin"
	cp "$f" "$R/usr/bin/$p"
	ldd "$f" 2>/dev/null | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' >>"$WORK/libs"
done
ln -s mawk "$R/usr/bin/awk"
ln -s usr/bin "$R/bin"; ln -s usr/bin "$R/sbin"
for f in $(sort -u "$WORK/libs"); do cp --parents -L "$f" "$R"; done
mkdir -p "$R/lib64" && cp -L /lib64/ld-linux-x86-64.so.2 "$R/lib64/"
# /usr/bin/python3 (the system's, as the tests use) and its standard
# library, without its tests
py=$(readlink -f /usr/bin/python3); pyv=${py##*/}
cp "$py" "$R/usr/bin/python3"
ldd "$py" | awk '$3 ~ /^\// { print $3 }' | while read -r f; do cp --parents -L "$f" "$R"; done
mkdir -p "$R/usr/lib"
(cd /usr/lib && tar --exclude="$pyv/test" --exclude="__pycache__" --exclude="$pyv/idlelib" \
	--exclude="$pyv/tkinter" --exclude="$pyv/ensurepip" -cf - "$pyv") | tar -xf - -C "$R/usr/lib"
ln -s python3 "$R/usr/bin/$pyv"
cp -a /etc/iproute2 "$R/etc/" 2>/dev/null || true
[ -d /usr/share/iproute2 ] && cp --parents -a /usr/share/iproute2 "$R"
echo "root:x:0:0:root:/root:/bin/bash" >"$R/etc/passwd"
echo "root:x:0:" >"$R/etc/group"

# The guest kernel's modules the rig needs, and their modules.dep.
M=$GUEST_DIR/root/lib/modules/$KVER
mkdir -p "$R/lib/modules/$KVER"
cp -a "$M/kernel" "$R/lib/modules/$KVER/"
cp "$M"/modules.order "$M"/modules.builtin* "$R/lib/modules/$KVER/" 2>/dev/null || true
depmod -b "$R" "$KVER"

# This tree: the build and the benchmark, at the same paths.
for f in vxswitchd vxctl tests/tools/frame_sizes; do cp --parents "$BUILD/$f" "$R" 2>/dev/null ||
	{ mkdir -p "$R/$(dirname "$BUILD/$f")"; cp "$BUILD/$f" "$R/$BUILD/$f"; }; done
for f in $(ldd "$BUILD/vxswitchd" "$BUILD/vxctl" | awk '$3 ~ /^\// { print $3 }' | sort -u); do cp --parents -L "$f" "$R"; done
mkdir -p "$R/$TOP/tests/netns" "$R/$TOP/bench/vxbench"
cp "$TOP/tests/netns/lib.sh" "$R/$TOP/tests/netns/"
cp "$HERE"/vxbench "$HERE"/*.sh "$HERE"/*.py "$R/$TOP/bench/vxbench/"

cat >"$R/init" <<INIT
#!/bin/bash
export PATH=/usr/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp; mount -t tmpfs run /run
for m in veth vxlan bridge tun cls_flower act_gact act_mirred sch_ingress cls_u32; do modprobe \$m || echo "GUEST: no module \$m"; done
ip link set lo up
echo GUEST-UP \$(uname -r)
FLOWER_DEBUG=${FLOWER_DEBUG:-} FLOWER_N=${FLOWER_N:-10000} BUILD=$BUILD $TOP/bench/vxbench/vxbench flower ${ARGS[*]:-} -o /tmp/out 2>&1 | sed 's/^/GUEST| /'
echo GUEST-DONE
echo o > /proc/sysrq-trigger
INIT
chmod +x "$R/init"
(cd "$R" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$WORK/initrd.gz"
echo "flower_guest: initramfs $(du -h "$WORK/initrd.gz" | cut -f1), kernel $KVER; booting"
# KVM, where it works, else TCG (this rig's nested KVM hangs: ACCEL=tcg).
# Under TCG every figure is an emulated machine's: only the ratios between
# the cases of the run mean anything.
accel=${ACCEL:-tcg}
timeout "${GUEST_TIMEOUT:-3000}" qemu-system-x86_64 -accel "$accel" -smp 2 -m 4096 -display none -monitor none \
	-no-reboot -kernel "$vmlinuz" -initrd "$WORK/initrd.gz" \
	-append "console=ttyS0 quiet panic=-1 rdinit=/init" -serial "file:$WORK/console.log" >"$WORK/qemu.log" 2>&1 || true
tr -d "\r" <"$WORK/console.log" | tee "${CONSOLE_LOG:-/dev/null}" | grep -E "^GUEST"
