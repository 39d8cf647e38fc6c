#!/bin/bash
# test_evpn_diag.sh on vxswitchd's kernel datapath (VMs on veth pairs):
# diagnose's EVPN findings with FRR, and a MAC flapping between two hosts
# that FRR's duplicate-address detection sees as moves (the programs do
# not let a datagram move a local MAC of an EVPN VNI).
EVPN_DP=kernel exec bash "$(dirname "$0")/test_evpn_diag.sh"
