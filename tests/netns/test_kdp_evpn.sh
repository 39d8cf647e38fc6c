#!/bin/bash
# BGP EVPN through FRR on vxswitchd's kernel datapath: test_evpn.sh as it
# is (three hosts and a route reflector, vxswitch and the kernel's own
# vxlan + bridge in one fabric, a 10,000-MAC burst with netlink overflow,
# a VM moved and back, ageing, a host killed, a restart), with h1 and h2
# on `--datapath kernel` and their VMs on veth pairs.
EVPN_DP=kernel exec bash "$(dirname "$0")/test_evpn.sh"
