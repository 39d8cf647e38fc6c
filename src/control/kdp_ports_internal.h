/* Internals of the control thread's kernel datapath code, shared by
 * kdp_ports.c (open/close, ports, what the operator sees), kdp_fdb.c
 * (learning, ageing, flushing, static entries, fdb show) and
 * kdp_adopt.c (kept state: cleanup, adopting, reconciling).  The
 * contract is control/kdp_ports.h; nothing outside these files includes
 * this one. */
#ifndef VX_CONTROL_KDP_PORTS_INTERNAL_H
#define VX_CONTROL_KDP_PORTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/kdp_ports.h"
#include "dp/capture.h"
#include "dp/dpif.h"
#include "dp/kernel/bpf/vxdp_capture_abi.h"
#include "dp/kernel/kdp.h"

enum {
	KC_MAX_PORTS = 256,
	KC_MAX_VNIS = 256,
	KC_FDB_MAX_DEFAULT = 8192, /* = FDB_DEFAULT_MAX_LEARNED, the userspace datapath's */
	KC_MAX_STATIC = 1024,      /* = FDB_DEFAULT_MAX_STATIC (kdp_fdb.c checks) */
	KC_MAX_EVPN = 16384,       /* remote MACs from EVPN, all VNIs (a quarter of the map) */
};

struct kc_port {
	bool used;
	bool made_veth;          /* type veth: we made the pair, port del removes it */
	bool internal;           /* the kernel end of a VNI's slow-path link (kdp_slowpath.c):
	                          * no config line, not removed by `port del` */
	struct dpif_port_spec spec; /* as given to port_add */
	uint32_t ifindex;        /* 0: a vxlan port (no device of its own) */
	uint32_t flags;          /* VXDP_PORT_VETH */
	uint32_t n_macs;         /* learned behind it */
	/* A vxlan port with `evpn`: the flood VTEPs zebra installed
	 * (kdp_ctl_evpn_vteps), beside the configured remotes. */
	struct dpif_ip evpn_vteps[VXDP_FLOOD_MAX];
	unsigned n_evpn_vteps;
};

struct kc_vni {
	bool used;
	uint32_t vni;
	uint32_t n_macs;         /* learned entries of the VNI */
};

/* A port entry a previous run kept (kdp.h, "Kept state"), until a
 * `port add` of this run claims it or kdp_ctl_adopt_done() removes it. */
struct kc_kept {
	uint32_t ifindex;
	uint32_t flags;          /* VXDP_PORT_OURS: its veth pair is ours */
	bool claimed;
};

/* A capture of one of its ports (kdp_capture.c). */
struct kc_capture {
	struct vxd_capture *cap;     /* the caller's; NULL: a free slot */
	struct vxdp_cap_key key;     /* what the programs copy for it */
	uint64_t dropped_base;       /* the key's counts at its start */
	uint64_t filtered_base;
	bool added;                  /* records since the last doorbell */
};

struct kdp_cap_reader;

struct kdp_ctl {
	struct dpif up;          /* its face behind dp/dpif.h (kdp_dpif.c) */
	struct kdp *k;
	uint16_t dstport;
	bool keep;
	struct kc_kept *kept;    /* adopting: the kept ports; NULL otherwise */
	unsigned n_kept;
	struct kc_port ports[KC_MAX_PORTS];
	struct kc_vni vnis[KC_MAX_VNIS];
	uint64_t last_age_ns;
	uint64_t ageing_ns;      /* `fdb-ageing` (dpif fdb_set_ageing); UINT64_MAX / 2: never */
	uint32_t fdb_max;        /* `fdb-max` (dpif fdb_set_vni_max) */
	uint64_t learned, learn_refused, aged;
	uint32_t n_static;       /* `fdb add` entries (not under the learning caps) */
	uint32_t n_evpn;         /* remote MACs from EVPN (their own cap, KC_MAX_EVPN) */
	struct kdp_rules_ctl *kr;    /* flower rules (kdp_rules.h); NULL: no rules path (kr_why says why) */
	char kr_why[160];
	const struct flower_table *t; /* the published rules */
	int epfd;                    /* the upcall ring, the rules' buffers, the capture reader */
	struct kc_capture caps[VXD_CAPTURE_MAX];
	struct kdp_cap_reader *cap_reader;   /* while a capture runs */
};

_Static_assert(FDB_VNI_ANY == UINT32_MAX, "every VNI, to the FDB's filters and to kdp's walks");

/* The kdp_ctl a dpif operation of the kernel datapath was given. */
static inline struct kdp_ctl *kc_of(struct dpif *dp)
{
	return (struct kdp_ctl *)((char *)dp - offsetof(struct kdp_ctl, up));
}

int kc_refuse(struct ctl_err *err, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* What `port show` and `stats` call it: the `port add` type's name, or
 * "slowpath" for a slow-path link's kernel end. */
const char *kc_type_name(const struct kc_port *p);
struct kc_port *kc_by_name(struct kdp_ctl *kc, const char *name);
struct kc_port *kc_by_ifindex(struct kdp_ctl *kc, uint32_t ifindex);
/* The vxlan port of `vni` naming remote `addr` (family by VXDP_FDB_V6),
 * configured or from EVPN. */
struct kc_port *kc_vtep(struct kdp_ctl *kc, uint32_t vni, uint32_t flags, const uint8_t *addr);
struct kc_vni *kc_vni(struct kdp_ctl *kc, uint32_t vni, bool make);

struct kdp_rules_ctl;
struct flower_table;

/* kdp_ports_rules.c */
void kc_rules_open(struct kdp_ctl *kc);
/* Port p's flower port id (KDP_CTL_PORT_ID_BASE + slot). */
uint16_t kc_id(const struct kdp_ctl *kc, const struct kc_port *p);
/* The port of id `id`; NULL when none. */
struct kc_port *kc_by_id(struct kdp_ctl *kc, uint16_t id);

/* kdp_capture.c: dpif capture_start/stop; the copies waiting into the
 * captures' rings (kdp_ctl_tick); every capture stopped (close). */
int kd_capture_start(struct dpif *dp, struct vxd_capture *cap, char *why, size_t why_len);
/* kdp_ports.c: dpif port_flood_vteps. */
int kd_port_flood_vteps(struct dpif *dp, uint16_t id, const struct dpif_ip *vteps, unsigned n);
void kd_capture_stop(struct dpif *dp, struct vxd_capture *cap);
void kc_capture_poll(struct kdp_ctl *kc);
void kc_capture_close(struct kdp_ctl *kc);

/* kdp_ports.c: dpif port_add, port_del. */
int kd_port_add(struct dpif *dp, const struct dpif_port_spec *spec, uint16_t *id, char *why, size_t why_len);
int kd_port_del(struct dpif *dp, uint16_t id);

/* kdp_ports_rules.c: dpif rule_check, rules_changed, rule_counters. */
struct flower_counters;
struct flower_spec;
struct flower_table;
int kd_rule_check(struct dpif *dp, const struct flower_spec *f, char *why, size_t why_len);
void kd_rules_changed(struct dpif *dp, const struct flower_table *t);
int kd_rule_counters(struct dpif *dp, struct flower_counters *fc);

/* kdp_dpif_stats.c: dpif port_dump, port_stats, port_vteps, dp_stats,
 * fdb_vni_macs; kdp_stats.c: dpif show. */
/* The programs' counters in the dpif's words (drops named by their reasons). */
void kd_counters(const struct vxdp_counters *c, struct dpif_port_stats *o);
int kd_port_dump(struct dpif *dp, unsigned *cursor, uint16_t *id);
int kd_port_stats(struct dpif *dp, uint16_t id, struct dpif_port_stats *o);
int kd_port_vteps(struct dpif *dp, uint16_t id, struct dpif_vtep_stats *out, unsigned max);
int kd_dp_stats(struct dpif *dp, struct dpif_dp_stats *o);
uint32_t kd_fdb_vni_macs(struct dpif *dp, uint32_t vni, uint32_t *cap);
void kd_show(struct dpif *dp, enum dpif_show_part part, uint16_t id, const struct dpif_port_stats *st,
	     struct ctl_print *p);

/* kdp_fdb.c */
/* The map value a static entry to dst is: a VM port of vni (dst.port a
 * kernel port id), or a VTEP of vni's vxlan port of that family (dst.port
 * not read).  -EINVAL for a port that is none of vni's VM ports, -ENOENT
 * without such a vxlan port. */
int kc_static_dst_val(struct kdp_ctl *kc, uint32_t vni, const struct fdb_dst *dst, struct vxdp_fdb_val *v);
/* Puts static entry (vni, mac) -> v (VXDP_FDB_STATIC set): replaces
 * what is there; -ENOSPC past KC_MAX_STATIC. */
int kc_static_put(struct kdp_ctl *kc, uint32_t vni, const uint8_t mac[6], const struct vxdp_fdb_val *v);
/* Deletes (vni, mac), whatever it is; -ENOENT when absent. */
int kc_fdb_del(struct kdp_ctl *kc, uint32_t vni, const uint8_t mac[6]);
/* The learned entries of vni (UINT32_MAX: all) go; how many. */
unsigned kc_flush_learned(struct kdp_ctl *kc, uint32_t vni);
/* An entry removed: the caps no longer count it. */
void kc_forget(struct kdp_ctl *kc, uint32_t vni, const struct vxdp_fdb_val *v);
/* vni's VXDP_VNI_* flags, from its vxlan port's settings (kdp_ports.c). */
struct kdp_vni_outer kc_vni_outer(const struct kdp_ctl *kc, uint32_t vni);
/* Every entry behind port p (learned and static) goes with it. */
unsigned kc_flush_port(struct kdp_ctl *kc, const struct kc_port *p);

/* kdp_adopt.c */
/* kdp_open adopted kept maps: note the kept ports, to claim or remove. */
void kc_adopt_begin(struct kdp_ctl *kc);
/* A veth pair of a kept run named as p: taken over (true) or not. */
bool kc_adopt_veth(struct kdp_ctl *kc, struct kc_port *p);
void kc_kept_claim(struct kdp_ctl *kc, uint32_t ifindex);

#endif
