/* The kernel datapath (dp/kernel/kdp.h) as vxswitchd's control thread drives it: its ports
 * (netdevs with our program on their ingress: `afpacket` links, `veth`
 * pairs it makes, and `vxlan` ports, which become a VNI's flood list of
 * remote VTEPs on the shared collect_md device), learning from upcalls,
 * ageing from the programs' last-used times, and what `port show`,
 * `fdb show` and `stats` print of them.
 *
 * Who calls it: control/ (vxd.c opens it for `--datapath kernel`, polls
 * kdp_ctl_fd() in the control loop and calls kdp_ctl_tick() every turn;
 * control.c offers each command to kdp_ctl_execute() first).  One thread;
 * nothing blocks but the netlink requests of port add/del (they wait for
 * the kernel's ack).
 *
 * What it refuses on the kernel datapath, with a message saying so: tap
 * ports (their fds would need the userspace datapath and a bridge between
 * the two, not built yet), an afpacket link in another namespace (a
 * redirect reaches only devices of ours), vxlan options the shared device
 * cannot honour per port (another dstport, srcport, udpcsum off, df),
 * static `fdb add`/`fdb del` (not yet), and more than VXDP_FLOOD_MAX
 * targets in one VNI.
 *
 * Learning: an upcall installs (vni, mac) -> its port or VTEP after the
 * caps: a port's max-macs, the VNI's `fdb-max`; a remote is learned only
 * from a VTEP that a vxlan port of that VNI names (as the userspace
 * datapath does).  Entries unused for `fdb-ageing` seconds are removed. */
#ifndef VX_CONTROL_KDP_PORTS_H
#define VX_CONTROL_KDP_PORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_print.h"

struct kdp_ctl;

/* Loads the programs and makes the vxlan device (kdp.h).  On failure
 * `why` says what failed: the caller falls back to the userspace
 * datapath and logs it. */
int kdp_ctl_open(uint16_t dstport, struct kdp_ctl **out, char *why, size_t why_len);
/* Removes every port (veths it made included), the device, the programs. */
void kdp_ctl_close(struct kdp_ctl *kc);

/* Readable when upcalls wait. */
int kdp_ctl_fd(struct kdp_ctl *kc);

/* Handles waiting upcalls and, once a second, ages the FDB.  fdb_max: the
 * per-VNI cap (0: 8192, the userspace datapath's default), ageing_s: the
 * ageing time (0: never). */
void kdp_ctl_tick(struct kdp_ctl *kc, uint32_t fdb_max, uint32_t ageing_s);

/* Offers a command: true when the kernel datapath handled it (the result
 * in *ret), false when it is the userspace datapath's. */
bool kdp_ctl_execute(struct kdp_ctl *kc, const struct ctl_cmd *cmd, struct ctl_print *out,
		     struct ctl_err *err, int *ret);

/* Appends the kernel ports' lines to an open `port show` array, the
 * kernel FDB's entries to an open `fdb show` array (vni: one VNI, or
 * UINT32_MAX for all). */
void kdp_ctl_port_show(struct kdp_ctl *kc, struct ctl_print *out);
void kdp_ctl_fdb_show(struct kdp_ctl *kc, uint32_t vni, struct ctl_print *out);

/* ---- for capture, stats and diagnose of kernel ports (kdp_capture.c,
 * kdp_diag.c) ---- */

struct kdp_ctl_port_info {
	const struct ctl_port_add *cfg; /* its `port add` (valid until the port goes) */
	uint32_t ifindex;           /* its device; 0 for a vxlan port */
	uint32_t flags;             /* VXDP_PORT_VETH */
	uint32_t n_macs;            /* MACs learned behind it */
};
/* Port `name` (-ENOENT: not a kernel port). */
int kdp_ctl_port_info(struct kdp_ctl *kc, const char *name, struct kdp_ctl_port_info *out);
/* The i-th slot's port; false past the last slot or for an empty one
 * (iterate i from 0 while i < kdp_ctl_port_slots()). */
bool kdp_ctl_port_at(struct kdp_ctl *kc, unsigned i, struct kdp_ctl_port_info *out);
unsigned kdp_ctl_port_slots(void);
struct kdp *kdp_ctl_kdp(struct kdp_ctl *kc);
/* Learning's own counts (what `stats` prints as learned/learn_refused/aged). */
void kdp_ctl_learn_counts(const struct kdp_ctl *kc, uint64_t *learned, uint64_t *refused, uint64_t *aged);
/* MACs learned in `vni`, and the cap on them now. */
uint32_t kdp_ctl_vni_macs(struct kdp_ctl *kc, uint32_t vni, uint32_t *cap);

#endif
