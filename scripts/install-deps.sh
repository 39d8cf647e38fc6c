#!/bin/sh
# Installs the Debian packages vxswitch needs to build, test, bench and demo.
# Idempotent; run as root (the demo and tests need root anyway).
set -e
PKGS="build-essential clang libclang-rt-14-dev libcmocka-dev libpcap-dev pkg-config
      tshark python3-scapy iperf3 iproute2 iputils-ping ethtool tcpdump procps
      libdpdk-dev systemd man-db libcap2-bin libmicrohttpd-dev libjansson-dev curl valgrind
      libbpf-dev bpftool libelf-dev zlib1g-dev libmnl-dev frr"
# frr: tests/netns/test_evpn.sh starts its own zebra + bgpd per host
# namespace (-N pathspace, files under the test's directory); the machine's
# own FRR service and /etc/frr are never used.
# promtool (`promtool check metrics` in tests/netns/test_metrics.sh) comes only
# with the prometheus server package (about 100 MB).  It is installed without
# its recommends (node-exporter, another server), and the prometheus service
# its postinst enables is stopped and disabled: nothing is left listening.
PROM_PKGS="prometheus"
# tests/netns/test_qemu_guest.sh: a real Linux guest under QEMU (TCG) with a
# busybox initramfs; without recommends (no GUI, no firmware bundles).  Its
# guest kernel is not installed: the test fetches it with apt-get download.
NOREC_PKGS="qemu-system-x86 busybox-static"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
prom_missing=""
for p in $PROM_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || prom_missing="$prom_missing $p"
done
norec_missing=""
for p in $NOREC_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || norec_missing="$norec_missing $p"
done
[ -z "$missing$prom_missing$norec_missing" ] && exit 0
echo "installing:$missing$prom_missing$norec_missing"
export DEBIAN_FRONTEND=noninteractive
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
apt-get update -qq
[ -z "$missing" ] || apt-get install -y -qq $missing >/dev/null
[ -z "$norec_missing" ] || apt-get install -y -qq --no-install-recommends $norec_missing >/dev/null
if [ -n "$prom_missing" ]; then
	apt-get install -y -qq --no-install-recommends $prom_missing >/dev/null
	if command -v systemctl >/dev/null 2>&1; then
		systemctl disable --now prometheus >/dev/null 2>&1 || true
	fi
fi
