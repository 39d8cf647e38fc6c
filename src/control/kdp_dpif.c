/* The kernel datapath behind dp/dpif.h (contract: control/kdp_ports.h,
 * "The kernel datapath's dpif"): its life cycle and its FDB operations
 * here (the FDB over the map and the caps kdp_fdb.c keeps), its ports
 * (kdp_ports.c: port_add and port_del from a struct dpif_port_spec,
 * port_flood_vteps), its rule operations (kdp_ports_rules.c) and its
 * capture operations (kdp_capture.c), its counters (kdp_dpif_stats.c)
 * and what only it prints (kdp_stats.c, show).  snapshot is NULL: it has
 * no worker threads. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "control/kdp_ports_internal.h"

static int kd_fdb_add(struct dpif *dp, enum dpif_fdb_kind kind, uint32_t vni, const uint8_t mac[6],
		      const struct fdb_dst *dst)
{
	struct kdp_ctl *kc = kc_of(dp);
	if (kind == DPIF_FDB_EVPN) {
		if (dst->type != FDB_DST_VTEP || dst->family != 4)
			return -EAFNOSUPPORT; /* EVPN's VTEPs are IPv4 here (docs/EVPN.md) */
		return kdp_ctl_evpn_mac_add(kc, vni, mac, dst->addr);
	}
	struct vxdp_fdb_val v;
	int err = kc_static_dst_val(kc, vni, dst, &v);
	return err < 0 ? err : kc_static_put(kc, vni, mac, &v);
}

static int kd_fdb_del(struct dpif *dp, enum dpif_fdb_kind kind, uint32_t vni, const uint8_t mac[6])
{
	struct kdp_ctl *kc = kc_of(dp);
	return kind == DPIF_FDB_EVPN ? kdp_ctl_evpn_mac_del(kc, vni, mac) : kc_fdb_del(kc, vni, mac);
}

static bool kd_fdb_lookup(struct dpif *dp, uint32_t vni, const uint8_t mac[6], struct fdb_dst *dst)
{
	return kdp_ctl_fdb_lookup(kc_of(dp), vni, mac, dst);
}

/* A filter with a destination takes everything behind that port; one
 * without takes learned entries only (static and EVPN entries never
 * flush here: they go with their port, or one by one). */
static size_t kd_fdb_flush(struct dpif *dp, const struct fdb_flush_filter *filter)
{
	struct kdp_ctl *kc = kc_of(dp);
	if (filter->dst) {
		const struct kc_port *p = kc_by_id(kc, filter->dst->port);
		return p ? kc_flush_port(kc, p) : 0;
	}
	return kc_flush_learned(kc, filter->vni); /* FDB_VNI_ANY is kdp's UINT32_MAX: every VNI */
}

static int kd_fdb_dump(struct dpif *dp, uint32_t vni, fdb_dump_cb *cb, void *ctx)
{
	return kdp_ctl_fdb_walk(kc_of(dp), vni, cb, ctx);
}

static void kd_fdb_set_ageing(struct dpif *dp, uint64_t ageing_ns)
{
	kc_of(dp)->ageing_ns = ageing_ns ? ageing_ns : FDB_DEFAULT_AGEING_NS;
}

/* 0: the default cap (the userspace datapath's FDB_DEFAULT_MAX_LEARNED);
 * the map holds VXDP_FDB_SIZE entries over all VNIs. */
static int kd_fdb_set_vni_max(struct dpif *dp, uint32_t max, uint32_t *capacity)
{
	*capacity = VXDP_FDB_SIZE;
	if (max > VXDP_FDB_SIZE)
		return -ERANGE;
	kc_of(dp)->fdb_max = max ? max : KC_FDB_MAX_DEFAULT;
	return 0;
}

static int kd_upcall_limit(struct dpif *dp, uint32_t rate, uint32_t burst)
{
	return kdp_upcall_limit_set(kc_of(dp)->k, rate, burst);
}

/* ---- life cycle ------------------------------------------------------------ */

static int kd_open(const struct dpif_config *cfg, struct dpif **out, char *why, size_t why_len)
{
	char scratch[8];
	struct kdp_ctl *kc;
	int err = kdp_ctl_open(0, cfg->keep, cfg->pin_dir, &kc, why ? why : scratch, why ? why_len : sizeof(scratch));
	if (err < 0)
		return err;
	*out = kdp_ctl_dpif(kc);
	return 0;
}

static void kd_close(struct dpif *dp)
{
	kdp_ctl_close(kc_of(dp));
}

static int kd_fd(struct dpif *dp)
{
	return kdp_ctl_fd(kc_of(dp));
}

static void kd_run(struct dpif *dp)
{
	kdp_ctl_tick(kc_of(dp));
}

static void kd_startup_done(struct dpif *dp)
{
	kdp_ctl_adopt_done(kc_of(dp));
}

const struct dpif_class kdp_dpif_class = {
	.name = "kernel",
	.open = kd_open,
	.close = kd_close,
	.fd = kd_fd,
	.run = kd_run,
	.startup_done = kd_startup_done,
	.port_add = kd_port_add,
	.port_del = kd_port_del,
	.port_flood_vteps = kd_port_flood_vteps,
	.upcall_limit = kd_upcall_limit,
	.fdb_add = kd_fdb_add,
	.fdb_del = kd_fdb_del,
	.fdb_lookup = kd_fdb_lookup,
	.fdb_flush = kd_fdb_flush,
	.fdb_dump = kd_fdb_dump,
	.fdb_set_ageing = kd_fdb_set_ageing,
	.fdb_set_vni_max = kd_fdb_set_vni_max,
	.rule_check = kd_rule_check,
	.rules_changed = kd_rules_changed,
	.rule_counters = kd_rule_counters,
	.capture_start = kd_capture_start,
	.capture_stop = kd_capture_stop,
	.port_dump = kd_port_dump,
	.port_stats = kd_port_stats,
	.port_vteps = kd_port_vteps,
	.dp_stats = kd_dp_stats,
	.fdb_vni_macs = kd_fdb_vni_macs,
	.show = kd_show,
};

struct dpif *kdp_ctl_dpif(struct kdp_ctl *kc)
{
	return &kc->up;
}

struct kdp_ctl *kdp_ctl_of(struct dpif *dp)
{
	return dp && dp->class == &kdp_dpif_class ? kc_of(dp) : NULL;
}
