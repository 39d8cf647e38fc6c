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

/* ---- flower rules on kernel ports (control/kdp_rules.h) ------------------ */

struct ctl_flower;
struct flower_table;
struct flower_rule;
struct flower_rule_counters;

/* Kernel ports have flower port ids KDP_CTL_PORT_ID_BASE + n, apart from
 * the userspace datapath's (< VXD_MAX_PORTS). */
enum { KDP_CTL_PORT_ID_BASE = 0x4000 };
/* 0, or -ENOENT when `name` is no kernel port. */
int kdp_ctl_port_id(struct kdp_ctl *kc, const char *name, uint16_t *id);
/* What the kernel datapath cannot do of rule f is refused here, at add:
 * rules on a vxlan port's ingress, tunnel_key csum/nocsum, a dst_port or
 * src_ip other than the shared device's, more kernel actions than a
 * decision holds; and rules at all when the rules path did not open. */
int kdp_ctl_rule_check(struct kdp_ctl *kc, const struct ctl_flower *f, struct ctl_err *err);
/* The published table is now t: ports gain/lose the rules path, cached
 * decisions of older rules are no longer used (before this returns). */
void kdp_ctl_rules_changed(struct kdp_ctl *kc, const struct flower_table *t);
/* Folds the kernel's per-entry counts into the rules (filter show -s). */
void kdp_ctl_rules_sync(struct kdp_ctl *kc);
/* Adds rule r's kernel-datapath counts (fast and slow path) to *rc. */
void kdp_ctl_rule_counts(struct kdp_ctl *kc, const struct flower_rule *r, struct flower_rule_counters *rc);

#endif
