/* evpn: vxswitchd as a VTEP of a BGP EVPN fabric run by an unmodified FRR.
 *
 * What.
 *   A vxlan port added with `evpn` gets its remote VTEPs (flood list),
 *   remote MACs, and the advertisement of its local MACs from FRR's zebra,
 *   through kernel devices zebra knows how to drive (port/evpn_shadow.h):
 *     zebra -> us   the neighbour entries zebra installs on the shadow
 *                   vxlan (port/evpn_neigh.h classifies them):
 *                   remote MAC -> an FDB entry of source evpn behind that
 *                   VTEP (fdb_add_evpn); zero MAC -> the VTEP joins the
 *                   VNI's flood set (head-end replication), published in
 *                   the VNI table, which is also what lets the datapath
 *                   accept that VTEP's datagrams; deletions undo both.
 *     us -> zebra   every EVPN_LOCAL_SYNC_MS, the MACs the FDB learned
 *                   behind local ports of the VNI are written as
 *                   extern_learn entries on the shadow veth port (zebra
 *                   advertises them as type-2 routes) and deleted once
 *                   they age out of our FDB.
 *   The port's static `remote`s stay: they are in the flood set as well,
 *   and an EVPN flood entry for one of them changes nothing.
 *
 * Consistency.
 *   One NETLINK_ROUTE socket subscribed to RTNLGRP_NEIGH feeds the
 *   changes.  At a port's start and whenever the kernel says messages were
 *   lost (ENOBUFS), the whole AF_BRIDGE FDB is dumped and applied as a
 *   set: entries it has are (re)installed, EVPN entries and flood VTEPs it
 *   lacks are removed.  Applying is idempotent, so a message seen twice
 *   (the dump racing an event) does no harm.  At vxswitchd's start,
 *   shadow devices a previous vxswitchd left (their alias says so) are
 *   deleted (vxd_evpn_reap): zebra then withdraws what they advertised.
 *
 * The life-cycle calls vxd.c makes (reap, input, close) are declared in
 * vxd_internal.h, so that vxd.c need not include this header.
 *
 * Datapaths: the same on both.  With the kernel datapath the FDB is its
 * map and the flood set its VNI's flood list (control/kdp_ports.h, "BGP
 * EVPN"), and local MACs are what its programs learned behind local ports
 * (veths, links, and the taps' slow-path link alike).
 *
 * Threads: the control thread only.  The FDB and VNI table changes go
 * through their own contracts (switch/fdb.h, vxd_publish). */
#ifndef VX_CONTROL_EVPN_H
#define VX_CONTROL_EVPN_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/ctl_cmd.h"

struct vxd;
struct ctl_print;

enum {
	EVPN_LOCAL_SYNC_MS = 100,
	VXD_EVPN_MAX_VNIS = 64,   /* EVPN ports per daemon */
	VXD_EVPN_MAX_LOCAL = 4096, /* local MACs advertised per VNI */
};

/* Port `id` (a vxlan port whose port_cfg has `evpn`) was just added:
 * creates its shadow devices and mirrors what zebra has.  Refused (the
 * caller removes the port again) when the devices cannot be made.
 * kport: the same for a port of the kernel datapath (control/kdp_ports.h),
 * whose FDB map and flood lists then take what zebra has. */
int vxd_evpn_port_added(struct vxd *vxd, uint16_t id, struct ctl_err *err);
int vxd_evpn_kport_added(struct vxd *vxd, const struct ctl_port_add *pa, struct ctl_err *err);

/* Port `name` goes (userspace: before; kernel: after, its FDB entries
 * went with it): its EVPN VTEPs leave the flood lists, its shadow devices
 * are deleted.  Nothing for a port without evpn. */
void vxd_evpn_port_removed(struct vxd *vxd, const char *name);

/* `port show`: the port's EVPN state (nothing for a port without evpn). */
void vxd_evpn_print_port(struct ctl_print *p, const struct vxd *vxd, const char *name);

/* For diagnose and tests: how many EVPN flood VTEPs port `name` has, or
 * -1 when it is not an EVPN port. */
int vxd_evpn_n_vteps(const struct vxd *vxd, const char *name);

/* What diagnose judges of an EVPN port (report/diag_evpn.c). */
struct vxd_evpn_diag {
	bool zebra;                /* a process named zebra in our network namespace */
	uint32_t vteps;            /* flood VTEPs from EVPN */
	uint32_t macs_no_flood;    /* EVPN MACs behind a VTEP without a flood entry */
	char no_flood_vtep[48];    /* one such VTEP */
	int fault;                 /* enum evpn_shadow_fault: why zebra would not see the VNI */
	char shadow_vx[16], shadow_br[16];
	uint32_t macs_flapping;    /* MACs that moved EVPN_DAD_MOVES times within 180 s */
	uint8_t flap_mac[6];       /* the one that moved most */
	uint32_t flap_moves;
	char flap_vtep[48];        /* the remote VTEP it last moved to or from */
};
/* false when port `name` is not an EVPN port. */
bool vxd_evpn_diag(const struct vxd *vxd, const char *name, struct vxd_evpn_diag *out);

#endif
