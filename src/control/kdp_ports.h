/* The kernel datapath (dp/kernel/kdp.h) as vxswitchd's control thread drives it: its ports
 * (netdevs with our program on their ingress: `afpacket` links, `veth`
 * pairs it makes, and `vxlan` ports, which become a VNI's flood list of
 * remote VTEPs on the shared collect_md device), learning from upcalls,
 * ageing from the programs' last-used times, and what `port show`,
 * `fdb show` and `stats` print of them.
 *
 * Who calls it: control/ (vxd.c opens it for `--datapath kernel`, polls
 * kdp_ctl_fd() in the control loop and calls kdp_ctl_tick() every turn;
 * devports.c gives it every `port add` but a tap's, as a struct
 * dpif_port_spec, through its dpif).  One thread; nothing blocks but the
 * netlink requests of port add/del (they wait for the kernel's ack).
 *
 * Tap ports are not its: their `port add` goes to the userspace
 * datapath, which serves them beside it, joined to this one
 * by a slow-path link per VNI (control/kdp_slowpath.c), whose kernel end
 * is an internal port here (kdp_ctl_internal_add: no config line, `port
 * del` refuses it, `port show` says "type slowpath").
 *
 * What it refuses on the kernel datapath, with a message saying so: an
 * afpacket link in another namespace (a
 * redirect reaches only devices of ours), vxlan options the shared device
 * cannot honour per port (another dstport, srcport, udpcsum off, df),
 * and more than VXDP_FLOOD_MAX targets in one VNI.
 *
 * Static entries (`fdb add` through its dpif, control.c; kdp_fdb.c):
 * checked as the userspace datapath checks them, at most 1,024, never
 * aged nor flushed, never moved by learning; they go with their port.
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

#include <string.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_print.h"
#include "dp/dpif.h"

struct kdp_ctl;

/* Loads the programs and makes the vxlan device (kdp.h).  On failure
 * `why` says what failed: the caller falls back to the userspace
 * datapath and logs it.
 *
 * keep (vxswitchd --keep-datapath): the state outlives the daemon
 * (kdp.h, "Kept state") and a start with keep adopts what a previous run
 * kept: until kdp_ctl_adopt_done() every kept port goes on forwarding;
 * a `port add` of the same port (a veth pair: the same name) takes it
 * over with its counters, learned MACs and attachment, without a gap.
 * A start without keep removes kept state first (its programs would
 * still be switching beside the new ones).  bpffs: where the state is
 * pinned (NULL: /sys/fs/bpf). */
int kdp_ctl_open(uint16_t dstport, bool keep, const char *bpffs, struct kdp_ctl **out, char *why,
		 size_t why_len);
/* Once the start-up configuration is applied: kept ports no `port add`
 * claimed are removed (veth pairs of ours deleted), then VNIs without a
 * port and FDB entries of removed ports; the caps count what stays. */
void kdp_ctl_adopt_done(struct kdp_ctl *kc);
/* Removes every port (veths it made included), the device, the programs;
 * with keep, leaves them all switching. */
void kdp_ctl_close(struct kdp_ctl *kc);
/* Removes kept state (vxswitchd --cleanup): veth pairs of ours, pins,
 * the device.  0 when there was none. */
int kdp_ctl_cleanup(uint16_t dstport, const char *bpffs, char *why, size_t why_len);

/* Readable when upcalls wait. */
int kdp_ctl_fd(struct kdp_ctl *kc);

/* Handles waiting upcalls and, once a second, ages the FDB (by the
 * ageing time its dpif was given: fdb_set_ageing). */
void kdp_ctl_tick(struct kdp_ctl *kc);

/* ---- The kernel datapath's dpif -----------------------------------------
 * The kernel datapath behind dp/dpif.h (control/kdp_dpif.c): its life
 * cycle, ports, FDB, rules and captures;
 *   open/close: kdp_ctl_open(0, keep, pin_dir)/kdp_ctl_close; fd, run,
 *     startup_done: kdp_ctl_fd, kdp_ctl_tick, kdp_ctl_adopt_done;
 * the FDB map seen as switch/fdb.h's table,
 *   fdb_add/del: an operator's static entry (dst.port a kernel port id,
 *     KDP_CTL_PORT_ID_BASE + n: a VM port of the VNI; or a VTEP of the
 *     VNI's vxlan port of that family; at most 1,024) or an EVPN one
 *     (IPv4 VTEPs; kdp_ctl_evpn_mac_add's rules below);
 *   fdb_lookup, fdb_dump: as kdp_ctl_fdb_lookup / _walk;
 *   fdb_flush: with a dst, everything behind that port; without, the
 *     learned entries of the VNI (static and EVPN entries never flush);
 *   fdb_set_ageing: what kdp_ctl_tick ages by (UINT64_MAX / 2: never);
 *   fdb_set_vni_max: the per-VNI learning cap (0: 8192, the userspace
 *     datapath's default; -ERANGE above the map's 65,536).
 *   capture_start/stop: a capture of a kernel port (cap->port_id its
 *     kernel port id): the programs copy its key's frames, the reader
 *     (polled by kdp_ctl_tick) files them into cap's ring through cap's
 *     filter, which the programs run first when cap is its key's one
 *     capture (kdp_capture.c says more); outer captures -EOPNOTSUPP;
 *   rule_check: what it cannot do of a rule on one of its ports
 *     (tunnel_key csum/nocsum, a dst_port or src_ip other than the shared
 *     device's, more kernel actions than a decision holds; rules at all
 *     when the rules path did not open); rules_changed: ports gain or
 *     lose the rules path, and the generation the programs check moves
 *     on, so no cached decision of an older table is used after it
 *     returns; rule_counters: the cache entries' counts, folded, and the
 *     upcalls' (control/kdp_rules.h).
 *   upcall_limit: every port's upcall token bucket (dp/kernel/kdp.h,
 *     kdp_upcall_limit_set);
 *   port_add/port_del: a port from its spec (the refusals above; the
 *     same spec again is 0); port_del of a slow-path link's end -EPERM
 *     (it goes with kdp_ctl_internal_del); port_flood_vteps: EVPN's
 *     VTEPs of a vxlan port (IPv4; -E2BIG past VXDP_FLOOD_MAX).
 *   port_dump, port_stats, port_vteps, dp_stats, fdb_vni_macs: its ports'
 *     counters and its own, from the programs' per-CPU maps
 *     (kdp_dpif_stats.c); show: what only it says in `stats` and `port
 *     show` (kdp_stats.c).  snapshot stays NULL: it has no worker
 *     threads. */
struct dpif;
extern const struct dpif_class kdp_dpif_class;
struct dpif *kdp_ctl_dpif(struct kdp_ctl *kc);
/* The kernel datapath's control side behind dp (NULL: dp is another
 * datapath's). */
struct kdp_ctl *kdp_ctl_of(struct dpif *dp);
/* Whether the capture copies' reader is open (a capture runs). */
bool kdp_ctl_capture_reading(const struct kdp_ctl *kc);


/* The kernel end of a VNI's slow-path link (control/kdp_slowpath.c): link
 * `dev`, in vxswitchd's namespace and there already, becomes a port of
 * `vni` that no config line names (no port_add made it); frames
 * reach it by a plain redirect (its veth peer is in this namespace, where
 * bpf_redirect_peer drops).  Learning puts the taps' MACs behind it.
 * *id: its port id (FDB entries behind it name it). */
int kdp_ctl_internal_add(struct kdp_ctl *kc, const char *dev, uint32_t vni, uint16_t *id, struct ctl_err *err);
/* Removes it, and the entries learned behind it. */
void kdp_ctl_internal_del(struct kdp_ctl *kc, const char *dev);
bool kdp_ctl_is_internal(struct kdp_ctl *kc, const char *name);


/* ---- BGP EVPN on the kernel datapath (control/evpn.c) --------------------
 * What evpn.c does with the userspace datapath's FDB and VNI table, here
 * on the kernel's FDB map and flood lists.  An EVPN entry (VXDP_FDB_EVPN)
 * is a remote MAC behind an IPv4 VTEP: never aged nor flushed, not moved
 * by what a remote sends, moved by a local port's frame (mobility: the
 * local entry replaces it, and evpn.c advertises it); at most KC_MAX_EVPN
 * of them (-ENOSPC beyond), counted apart from the learning caps. */
struct fdb_dst;
struct fdb_entry_info;
/* 0; -EEXIST when an operator's static entry holds the MAC (it stays);
 * -ENOSPC when full; -ENOENT without a vxlan port of that VNI. */
int kdp_ctl_evpn_mac_add(struct kdp_ctl *kc, uint32_t vni, const uint8_t mac[6], const uint8_t vtep[4]);
/* Removes an EVPN entry (-ENOENT: none, or the MAC is not EVPN's now). */
int kdp_ctl_evpn_mac_del(struct kdp_ctl *kc, uint32_t vni, const uint8_t mac[6]);
/* The kernel FDB seen as switch/fdb.h's types: dst.port is the port's
 * flower port id (kdp_ctl_port_id).  walk: every entry of vni (UINT32_MAX:
 * all), the callback's return value is ignored. */
bool kdp_ctl_fdb_lookup(struct kdp_ctl *kc, uint32_t vni, const uint8_t mac[6], struct fdb_dst *out);
int kdp_ctl_fdb_walk(struct kdp_ctl *kc, uint32_t vni, int (*cb)(const struct fdb_entry_info *e, void *ctx),
		     void *ctx);

/* A port's address as ctl_print prints it. */
static inline struct ctl_ip kdp_ctl_ip(const struct dpif_ip *a)
{
	struct ctl_ip ip = { .family = a->family };
	memcpy(ip.bytes, a->bytes, sizeof(ip.bytes));
	return ip;
}

/* ---- for the slow-path links (kdp_slowpath.c) and captures
 * (kdp_capture.c) ---- */

struct kdp_ctl_port_info {
	const struct dpif_port_spec *spec; /* what it serves (valid until the port goes) */
	bool internal;              /* a slow-path link's kernel end (kdp_ctl_internal_add) */
};
/* The name of the vxlan port of `vni` whose remotes (configured or from
 * EVPN) include `addr` (IPv6 when v6, else the first 4 bytes), or NULL. */
const char *kdp_ctl_vtep_port(struct kdp_ctl *kc, uint32_t vni, bool v6, const uint8_t *addr);
/* A vxlan port's remote VTEPs at most: its configured ones and EVPN's. */
enum { KDP_CTL_MAX_REMOTES = CTL_MAX_REMOTES + 64 /* VXDP_FLOOD_MAX */ };
/* Port `name` (-ENOENT: not a kernel port). */
int kdp_ctl_port_info(struct kdp_ctl *kc, const char *name, struct kdp_ctl_port_info *out);

/* ---- flower rules on kernel ports (control/kdp_rules.h) ------------------ */

/* Kernel ports have flower port ids KDP_CTL_PORT_ID_BASE + n, apart from
 * the userspace datapath's (< VXD_MAX_PORTS). */
enum { KDP_CTL_PORT_ID_BASE = 0x4000 };
/* 0, or -ENOENT when `name` is no kernel port. */
int kdp_ctl_port_id(struct kdp_ctl *kc, const char *name, uint16_t *id);
#endif
