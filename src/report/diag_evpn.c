/* diagnose: EVPN ports (`port add ... evpn`, control/evpn.h).  What can go
 * wrong between vxswitchd and FRR that vxswitchd can see by itself:
 *   - no zebra in its network namespace: nobody reads the shadow devices,
 *     nothing is advertised, no remote VTEP will ever come;
 *   - zebra there but no flood VTEP (and no static remote): no BGP peer
 *     advertises the VNI (sessions down, peers without advertise-all-vni
 *     or without this VNI), so the VMs reach nobody;
 *   - MACs behind a VTEP that has no flood entry: that peer advertises
 *     MACs (type-2) but no ingress replication (type-3), so broadcast
 *     (ARP) from here never reaches it;
 *   - a VNI zebra does not see, and why: zebra 8.4 takes a vxlan device
 *     only when it is up and a bridge port, so a shadow device someone
 *     took down, out of its bridge or away is named (the shadow vxlan's
 *     state read now, port/evpn_shadow.h);
 *   - a MAC flapping between hosts: it moved (remote VTEP <-> here, or
 *     VTEP <-> VTEP) 5 times within 180 s, the defaults of FRR's
 *     duplicate-address detection: two VMs with one MAC, or a loop.  FRR
 *     counts the same moves (a datagram does not move a local MAC of an
 *     EVPN VNI, only zebra's remote route does, so zebra sees each flap
 *     as a move: docs/EVPN.md), and the finding names where to look. */
#include <inttypes.h>

#include "report/diag.h"

static void diag_evpn_port(const struct diag_input *in, struct diag_report *r, const struct diag_port *p)
{
	struct diag_finding *f;
	if (!p->evpn_zebra) {
		f = diag_add(r, in, DIAG_EVPN_NO_ZEBRA, p->name,
			"%s: evpn, but no zebra runs in vxswitchd's network namespace: FRR (zebra + bgpd with "
			"advertise-all-vni) must run there to drive the shadow devices of VNI %u",
			p->name, p->vni);
		diag_num(f, "vni", p->vni);
		return;
	}
	if (p->evpn_fault) {
		f = diag_add(r, in, DIAG_EVPN_VNI_UNSEEN, p->name,
			"%s: zebra does not see VNI %u: its shadow devices are not as zebra needs them (%s: "
			"the vxlan %s must be up and a port of the bridge %s, which must be up); nothing of VNI %u "
			"is advertised or installed. Remove and add the port again (vxswitchd makes them anew)",
			p->name, p->vni, p->evpn_fault, p->evpn_shadow_vx, p->evpn_shadow_br, p->vni);
		diag_str(f, "reason", p->evpn_fault);
		diag_str(f, "device", p->evpn_shadow_vx);
		diag_num(f, "vni", p->vni);
		return;
	}
	if (p->evpn_macs_flapping) {
		f = diag_add(r, in, DIAG_EVPN_MAC_FLAPPING, p->name,
			"%s: %" PRIu32 " MACs of VNI %u flap between hosts (moved 5 times or more within 180 s, "
			"FRR's duplicate-address detection thresholds; zebra counts the same moves: `vtysh -c "
			"'show evpn mac vni %u duplicate'`); %s moved %" PRIu32 " times, last between here and %s: "
			"two VMs with one MAC, or a loop",
			p->name, p->evpn_macs_flapping, p->vni, p->vni, p->evpn_flap_mac, p->evpn_flap_moves,
			p->evpn_flap_vtep);
		diag_num(f, "macs", p->evpn_macs_flapping);
		diag_str(f, "mac", p->evpn_flap_mac);
		diag_num(f, "moves", p->evpn_flap_moves);
		diag_str(f, "vtep", p->evpn_flap_vtep);
		diag_num(f, "vni", p->vni);
	}
	if (p->evpn_vteps == 0 && p->n_remotes == 0) {
		f = diag_add(r, in, DIAG_EVPN_NO_REMOTES, p->name,
			"%s: zebra runs but installed no flood entry for VNI %u: no BGP peer advertises it "
			"(check `vtysh -c 'show bgp l2vpn evpn summary'` and that the peers have advertise-all-vni "
			"and this VNI); the VMs of VNI %u reach no other host",
			p->name, p->vni, p->vni);
		diag_num(f, "vni", p->vni);
	}
	if (p->evpn_macs_no_flood) {
		f = diag_add(r, in, DIAG_EVPN_VTEP_NO_FLOOD, p->name,
			"%s: %" PRIu32 " MACs of VNI %u are behind VTEP %s, which has no flood entry (it advertises "
			"no type-3 route: ingress replication off there?): broadcast and ARP from here do not reach it",
			p->name, p->evpn_macs_no_flood, p->vni, p->evpn_no_flood_vtep);
		diag_num(f, "macs", p->evpn_macs_no_flood);
		diag_str(f, "vtep", p->evpn_no_flood_vtep);
		diag_num(f, "vni", p->vni);
	}
}

void diag_judge_evpn(const struct diag_input *in, struct diag_report *r)
{
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (in->ports[i].kind == DIAG_PORT_VXLAN && in->ports[i].evpn)
			diag_evpn_port(in, r, &in->ports[i]);
}
