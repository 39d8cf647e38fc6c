#!/bin/sh
# Installs the Debian packages vxswitch needs to build, test, bench and demo.
# Idempotent; run as root (the demo and tests need root anyway).
set -e
PKGS="build-essential clang libclang-rt-14-dev libcmocka-dev libpcap-dev pkg-config
      tshark python3-scapy iperf3 iproute2 iputils-ping ethtool tcpdump procps
      libdpdk-dev systemd man-db libcap2-bin"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
apt-get update -qq
apt-get install -y -qq $missing >/dev/null
