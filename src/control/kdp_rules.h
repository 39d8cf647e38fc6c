/* Flower rules on the kernel datapath, vxswitchd's side: the slow path
 * and the owner of the kernel's decision cache (design and maps:
 * dp/kernel/bpf/vxdp_rules_abi.h; plumbing: dp/kernel/kdp_rules.h).
 *
 * The classifier of the published struct flower_table (switch/
 * flower_table.h) decides every frame a port with rules sends up:
 *   1. the bytes are parsed by flow_extract() (the userspace datapath's
 *      parser: the same key the userspace datapath would classify), a
 *      malformed frame is dropped (counted) as it would be there; a frame
 *      of the vxlan device is the inner frame, in_port the vxlan port its
 *      (VNI, remote) names, the key's tunnel section what the program's
 *      key says (as decap_vxlan fills it; the outer UDP source port,
 *      which no rule matches, left zero);
 *   2. flower_table_classify(), its rules counted as the slow path (tc's
 *      "Sent software") with the skb's length;
 *   3. the verdict compiled into a kernel action list (kr_compile);
 *   4. if the program's key equals the one made from flow_extract's key,
 *      the entry (key -> generation, counter slot, actions) is installed,
 *      keyed by the key under its hook's mask (kdp_rules_key.h: the bits
 *      the hook's rules read, so that one entry serves a megaflow);
 *   5. the frame is re-injected with that decision (never lost, never
 *      decided twice).
 * Entries are counted in the kernel per slot; kdp_rules_sync() folds the
 * counts since the last fold into every rule of the entry's verdict as
 * the fast path (tc's "Sent hardware").  A rule change bumps the
 * generation (kdp_rules_changed, before the command returns), then the
 * old entries are deleted at the next tick and their slots freed a second
 * later after a last fold, so fast + slow is exact across eviction.
 * Idle entries (no packet for KR_IDLE_S) are evicted the same way; a full
 * map leaves new flows on the slow path (counted: cache_full).
 *
 * Who calls it: control/kdp_ports.c (which owns the ports it asks about
 * through the callbacks) and kdp_ports_rules.c, the kernel datapath's
 * dpif rule operations (rule_check, rules_changed, rule_counters), on
 * the control thread.  One thread. */
#ifndef VX_CONTROL_KDP_RULES_H
#define VX_CONTROL_KDP_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_print.h"
#include "dp/dpif.h"
#include "dp/kernel/bpf/vxdp_rules_abi.h"
#include "dp/kernel/kdp.h"
#include "switch/flower_table.h"

struct kdp_rules_ctl;

/* What the rules need of a port (kdp_ports.c answers). */
struct kr_port {
	uint32_t ifindex;        /* 0: a vxlan port */
	uint32_t flags;          /* VXDP_PORT_VETH */
	uint32_t vni;
	unsigned n_remotes;      /* vxlan */
	const struct dpif_ip *remotes;
};
typedef bool kr_port_fn(void *aux, uint16_t id, struct kr_port *out);
typedef bool kr_ifindex_fn(void *aux, uint32_t ifindex, uint16_t *id);
/* The vxlan port of `vni` naming remote `addr` (family 4 or 6). */
typedef bool kr_vtep_fn(void *aux, uint32_t vni, uint8_t family, const uint8_t *addr, uint16_t *id);

int kdp_rules_ctl_open(struct kdp *k, kr_port_fn *port, kr_ifindex_fn *by_ifindex, kr_vtep_fn *by_vtep,
		       void *aux, struct kdp_rules_ctl **out, char *why, size_t why_len);
void kdp_rules_ctl_close(struct kdp_rules_ctl *kr);
/* Readable when missed frames wait. */
int kdp_rules_ctl_fd(const struct kdp_rules_ctl *kr);

/* Missed frames, then (once a second) eviction and the freeing of slots. */
void kdp_rules_tick(struct kdp_rules_ctl *kr);

/* The table is now t (NULL: none): ports gain or lose the rules path
 * (a vxlan port: its VNI, map rvnis), the generation moves on.
 * `ids[0..n)`: the kernel ports (the port callback describes them). */
void kdp_rules_changed(struct kdp_rules_ctl *kr, const struct flower_table *t, const uint16_t *ids, size_t n);

/* Folds what the kernel counted since the last fold into the rules. */
void kdp_rules_sync(struct kdp_rules_ctl *kr);
/* Syncs, then adds the kernel datapath's count of each rule into fc
 * (flower_counters_merge: slot by slot, the same rule's summed). */
void kdp_rules_counters(struct kdp_rules_ctl *kr, struct flower_counters *fc);


/* The rules path of port ifindex (stats; a VNI's vxlan ports: key
 * VXDP_RSTATS_VNI | vni), and the cache's own counters. */
void kdp_rules_print_port(struct kdp_rules_ctl *kr, uint32_t ifindex, struct ctl_print *out);
void kdp_rules_print(struct kdp_rules_ctl *kr, struct ctl_print *out);
/* For diagnose: whether port ifindex is on the rules path and its
 * counters (*s), and the cache's live entries and refusals (full). */
bool kdp_rules_port_stats(struct kdp_rules_ctl *kr, uint32_t ifindex, struct vxdp_rstats *s);
/* The same for the port of flower id `id`; a vxlan port's are its VNI's
 * (rstats key VXDP_RSTATS_VNI | vni: the VNI's vxlan ports together). */
bool kdp_rules_port_id_stats(struct kdp_rules_ctl *kr, uint16_t id, struct vxdp_rstats *s);
void kdp_rules_cache_state(const struct kdp_rules_ctl *kr, uint64_t *entries, uint64_t *cache_full);

#endif
