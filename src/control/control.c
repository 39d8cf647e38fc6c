/* vxswitchd's commands: struct ctl_cmd -> changes to the switch (ports, FDB
 * entries, knobs) and the dispatch of every verb; the long answers are
 * printed by stats_print.c and diagnose.c.  Runs on the control thread:
 * what the worker reads changes by publishing a view (view.c), what it
 * writes by a request (worker.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_print.h"
#include "control/evpn.h"
#include "control/vxd_internal.h"
#include "port/afpacket.h"
#include "port/tap.h"
#include "port/vxlan.h"
#include "util/vlog.h"

#define VXD_VERSION "vxswitchd 0.2"

int vxd_refuse(struct ctl_err *err, int ret, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return ret;
}


void vxd_diag_snapshot(struct vxd *vxd, bool restart)
{
	const struct vxd_snapshot *s = vxd_snapshot(vxd);
	struct vxd_snapshot *old = vxd->diag_prev;
	vxd->diag_prev = vxd->diag_cur;
	vxd->diag_cur = old;
	*vxd->diag_cur = *s;
	if (restart)
		*vxd->diag_prev = *s;
	vxd->diag_cur_ns = vxd_now_ns();
}

/* ---- fdb -------------------------------------------------------------------------- */

/* A port an `fdb add` names, in the datapath whose FDB it goes to
 * (vxd_fdb_dpif): its id there, whether it is a vxlan port, its VNI.
 * Beside the kernel datapath a tap is the userspace one's: its MACs are
 * learned behind its VNI's slow-path link, and a static entry names a
 * kernel port. */
struct vxd_fdb_port {
	uint16_t id;
	bool vxlan;
	uint32_t vni;
};

static int vxd_fdb_port_of(struct vxd *vxd, const char *name, struct vxd_fdb_port *fp, struct ctl_err *err)
{
	struct vxd_dp_port dev;
	if (vxd_devport_find(vxd, name, &dev) && dev.dp == vxd_fdb_dpif(vxd)) {
		/* a port of the datapath that holds the FDB (devports.c) */
		*fp = (struct vxd_fdb_port){ .id = dev.id, .vxlan = dev.vxlan, .vni = dev.vni };
		return 0;
	}
	const struct port *port = vxd_port_by_name(vxd, name);
	if (port && vxd_fdb_dpif(vxd) != vxd->dp)
		return vxd_refuse(err, -EOPNOTSUPP, "port %s: %s beside the kernel datapath, whose FDB has the taps' "
				  "MACs behind the VNI's slow-path link: a static entry names a port of the kernel "
				  "datapath (or use --datapath user)", name,
				  vxd_port_internal(vxd, port->id) ? "a slow-path link's userspace end" : "a tap");
	if (!port)
		return vxd_refuse(err, -ENOENT, "port %s: no such port", name);
	*fp = (struct vxd_fdb_port){ .id = port->id, .vxlan = port_is_vxlan(port), .vni = port->vni };
	return 0;
}

/* Where a static entry points.  A port must be a local port of the
 * entry's VNI: a vxlan port needs a remote (which VTEP?), and a port of
 * another VNI would drop every frame to the MAC as port_not_in_vni.  A
 * remote is behind the VNI's vxlan port of its address family (the
 * kernel datapath finds it itself: one vxlan device serves them all). */
static int vxd_fdb_dst_from_cmd(struct vxd *vxd, const struct ctl_fdb *f, struct fdb_dst *dst,
				struct ctl_err *err)
{
	if (f->dst == CTL_FDB_DST_PORT) {
		struct vxd_fdb_port fp = { 0 };
		int ret = vxd_fdb_port_of(vxd, f->port, &fp, err);
		if (ret < 0)
			return ret;
		if (fp.vxlan)
			return vxd_refuse(err, -EINVAL, "port %s: a vxlan port; say which VTEP: fdb add MAC vni %u remote IP",
					  f->port, f->vni);
		if (fp.vni != f->vni)
			return vxd_refuse(err, -EINVAL, "port %s: in vni %u, not vni %u", f->port, fp.vni, f->vni);
		*dst = fdb_dst_port(fp.id);
		return 0;
	}
	uint8_t family = f->remote.family == AF_INET6 ? 6 : 4;
	uint8_t addr[16] = { 0 };
	memcpy(addr, f->remote.bytes, family == 6 ? 16 : 4);
	*dst = fdb_dst_vtep(0, family, addr);
	if (vxd->kdp)
		return 0;
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		struct port *port = vxd->ports[i];
		if (port && port_is_vxlan(port) && port->vni == f->vni &&
		    vxlan_port_options(port)->local.family == family) {
			dst->port = port->id;
			return 0;
		}
	}
	return vxd_refuse(err, -ENOENT, "vni %u: no vxlan port of that address family", f->vni);
}

static int vxd_fdb_cmd(struct vxd *vxd, const struct ctl_cmd *cmd, struct ctl_print *out, struct ctl_err *err)
{
	struct dpif *dp = vxd_fdb_dpif(vxd);
	struct fdb_dst dst;
	int ret;
	switch (cmd->verb) {
	case CTL_FDB_ADD:
		ret = vxd_fdb_dst_from_cmd(vxd, &cmd->fdb, &dst, err);
		if (ret < 0)
			return ret;
		ret = dp->class->fdb_add(dp, DPIF_FDB_STATIC, cmd->fdb.vni, cmd->fdb.mac, &dst);
		if (ret == -ENOENT && dst.type == FDB_DST_VTEP)
			return vxd_refuse(err, ret, "vni %u: no vxlan port of that address family", cmd->fdb.vni);
		if (ret == -ENOSPC)
			return vxd_refuse(err, ret, "fdb add: at most %d static entries", FDB_DEFAULT_MAX_STATIC);
		if (ret < 0)
			return vxd_refuse(err, ret, "fdb add: %s", strerror(-ret));
		if (vxd_statics_remember(vxd, &cmd->fdb) < 0)
			VLOG_WARN("fdb", "out of memory: `show config` will not list this entry");
		return 0;
	case CTL_FDB_DEL:
		ret = dp->class->fdb_del(dp, DPIF_FDB_STATIC, cmd->fdb.vni, cmd->fdb.mac);
		vxd_statics_forget(vxd, cmd->fdb.vni, cmd->fdb.mac);
		return ret < 0 ? vxd_refuse(err, ret, "fdb del: no such entry") : 0;
	default: { /* CTL_FDB_FLUSH */
		struct fdb_flush_filter filter = {
			.vni = cmd->fdb.has_vni ? cmd->fdb.vni : FDB_VNI_ANY,
			.kinds = FDB_FLUSH_LEARNED,
		};
		size_t n = dp->class->fdb_flush(dp, &filter);
		ctl_print_open_object(out, NULL);
		ctl_print_uint(out, CTL_PRINT_ANY, "flushed", "flushed %" PRIu64 " entries\n", (uint64_t)n);
		ctl_print_close_object(out);
		return 0;
	}
	}
}

/* ---- knobs ---------------------------------------------------------------------- */

/* fdb-ageing and fdb-max: the FDB of every datapath that runs.  fdb-max
 * above one's capacity changes neither (vxd->fdb_capacity says which). */
static int vxd_fdb_knob(struct vxd *vxd, enum ctl_knob knob, uint32_t value)
{
	struct dpif *dps[VXD_MAX_DPIFS];
	unsigned n = vxd_dpifs(vxd, dps);
	for (unsigned i = 0; i < n; i++) {
		struct dpif *dp = dps[i];
		if (knob == CTL_KNOB_FDB_AGEING) {
			dp->class->fdb_set_ageing(dp, vxd_fdb_ageing_ns(value));
			continue;
		}
		uint32_t capacity;
		if (dp->class->fdb_set_vni_max(dp, value, &capacity) < 0) {
			vxd->fdb_capacity = capacity;
			vxd->fdb_capacity_kernel = dp != vxd->dp;
			for (unsigned j = 0; j < i; j++) /* back to what it was */
				dps[j]->class->fdb_set_vni_max(dps[j], vxd->knobs[CTL_KNOB_FDB_MAX], &capacity);
			return -ERANGE;
		}
	}
	return 0;
}

/* upcall-rate and upcall-burst: every datapath with upcalls; -EOPNOTSUPP
 * when none runs (the userspace datapath reads every frame itself). */
static int vxd_upcall_knob(struct vxd *vxd, uint32_t rate, uint32_t burst)
{
	struct dpif *dps[VXD_MAX_DPIFS];
	unsigned n = vxd_dpifs(vxd, dps);
	int ret = -EOPNOTSUPP;
	for (unsigned i = 0; i < n; i++)
		if (dps[i]->class->upcall_limit && (ret = dps[i]->class->upcall_limit(dps[i], rate, burst)) < 0)
			return ret;
	return ret;
}

/* Sets every tap's offloads; on a refusal puts back the ones already
 * changed, so the knob and the taps keep agreeing. */
static int vxd_apply_tap_offload(struct vxd *vxd, bool on)
{
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		if (!vxd->ports[i] || !port_is_tap(vxd->ports[i]))
			continue;
		int ret = tap_port_set_offload(vxd->ports[i], on);
		if (ret == 0)
			continue;
		for (unsigned j = 1; j < i; j++)
			if (vxd->ports[j] && port_is_tap(vxd->ports[j]))
				tap_port_set_offload(vxd->ports[j], !on);
		return ret;
	}
	return 0;
}

static int vxd_apply_udp_gro(struct vxd *vxd, bool on)
{
	for (unsigned i = 0; i < VXD_MAX_SOCKS; i++) {
		if (!vxd->socks[i])
			continue;
		int ret = vxlan_sock_set_udp_gro(vxd->socks[i], on);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* What a knob does beyond being published: 0, or a refusal's errno. */
static int vxd_apply_knob(struct vxd *vxd, enum ctl_knob knob, uint32_t value)
{
	switch (knob) {
	case CTL_KNOB_GSO:
		for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
			if (vxd->ports[i] && port_is_vxlan(vxd->ports[i]))
				vxlan_port_set_gso(vxd->ports[i], value);
		return vxd_apply_tap_offload(vxd, value && vxd->knobs[CTL_KNOB_TAP_TSO]);
	case CTL_KNOB_TAP_TSO:
		return vxd_apply_tap_offload(vxd, value && vxd->knobs[CTL_KNOB_GSO]);
	case CTL_KNOB_UDP_GRO:
		return vxd_apply_udp_gro(vxd, value);
	case CTL_KNOB_UDP_SEGMENT:
		for (unsigned i = 0; i < VXD_MAX_SOCKS; i++)
			if (vxd->socks[i])
				vxlan_sock_set_udp_segment(vxd->socks[i], value);
		return 0;
	case CTL_KNOB_GRO_HOLD_US:
	case CTL_KNOB_GRO_MAX_SIZE:
		return vxd->dp->class->gro_config(vxd->dp,
						  knob == CTL_KNOB_GRO_MAX_SIZE ? value : vxd->knobs[CTL_KNOB_GRO_MAX_SIZE],
						  (uint64_t)(knob == CTL_KNOB_GRO_HOLD_US ? value : vxd->knobs[CTL_KNOB_GRO_HOLD_US]) *
							  1000ull);
	case CTL_KNOB_FDB_AGEING:
	case CTL_KNOB_FDB_MAX:
		return vxd_fdb_knob(vxd, knob, value);
	case CTL_KNOB_UPCALL_RATE:
	case CTL_KNOB_UPCALL_BURST:
		return vxd_upcall_knob(vxd, knob == CTL_KNOB_UPCALL_RATE ? value : vxd->knobs[CTL_KNOB_UPCALL_RATE],
				       knob == CTL_KNOB_UPCALL_BURST ? value : vxd->knobs[CTL_KNOB_UPCALL_BURST]);
	default:
		return 0;
	}
}

static int vxd_knob_refusal(struct vxd *vxd, enum ctl_knob knob, uint32_t value, int ret, struct ctl_err *err)
{
	const char *name = ctl_knob_info(knob)->name;
	if (knob == CTL_KNOB_FDB_MAX && vxd->fdb_capacity_kernel)
		return vxd_refuse(err, ret, "fdb-max %u: above the %u entries the kernel datapath's FDB map holds",
				  value, vxd->fdb_capacity);
	if (knob == CTL_KNOB_FDB_MAX)
		return vxd_refuse(err, ret, "fdb-max %u: above the %u learned entries the table was sized for "
				  "at start-up (vxswitchd --fdb-size)", value, vxd->fdb_capacity);
	if (knob == CTL_KNOB_UDP_GRO && ret == -EOPNOTSUPP)
		return vxd_refuse(err, ret, "udp-gro: refused by the kernel at start-up");
	if ((knob == CTL_KNOB_UPCALL_RATE || knob == CTL_KNOB_UPCALL_BURST) && ret == -EOPNOTSUPP)
		return vxd_refuse(err, ret, "%s %u: the userspace datapath has no upcalls (it reads every frame "
				  "itself): a kernel datapath knob%s%s", name, value, vxd->kdp_why[0] ? "; " : "",
				  vxd->kdp_why);
	return vxd_refuse(err, ret, "%s: %s", name, strerror(-ret));
}

/* gso off with an afpacket port: refused.  Its link hands over TSO frames
 * whole whatever we ask (port/afpacket.h), and without GSO the vxlan port
 * would drop every one of them. */
static int vxd_gso_off_refused(const struct vxd *vxd, struct ctl_err *err)
{
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i] && port_is_afpacket(vxd->ports[i]))
			return vxd_refuse(err, -EBUSY, "gso off: afpacket port %s reads TSO frames whole (a packet socket "
					  "cannot ask for them cut) and the vxlan port would drop them all without GSO: "
					  "delete it first", vxd->ports[i]->name);
	return 0;
}

static int vxd_set(struct vxd *vxd, const struct ctl_set *set, struct ctl_err *err)
{
	uint32_t old = vxd->knobs[set->knob];
	if (set->knob == CTL_KNOB_GSO && !set->value && vxd_gso_off_refused(vxd, err) < 0)
		return -EBUSY;
	vxd_diag_snapshot(vxd, true);
	int ret = vxd_apply_knob(vxd, set->knob, set->value);
	if (ret < 0) {
		vxd_apply_knob(vxd, set->knob, old); /* what applied before the refusal */
		return vxd_knob_refusal(vxd, set->knob, set->value, ret, err);
	}
	vxd->knobs[set->knob] = set->value;
	ret = vxd_publish(vxd, NULL);
	if (ret < 0) {
		vxd->knobs[set->knob] = old;
		vxd_apply_knob(vxd, set->knob, old);
		return vxd_knob_refusal(vxd, set->knob, set->value, ret, err);
	}
	return 0;
}

static void vxd_show_knobs(const struct vxd *vxd, struct ctl_print *p)
{
	ctl_print_open_object(p, NULL);
	for (unsigned k = 0; k < CTL_KNOB_COUNT; k++) {
		const struct ctl_knob_info *ki = ctl_knob_info(k);
		char fmt[96];
		if (ki->kind == CTL_KNOB_BOOL) {
			snprintf(fmt, sizeof(fmt), "%s %%s\n", ki->name);
			ctl_print_bool(p, CTL_PRINT_ANY, ki->name, fmt, vxd->knobs[k]);
		} else {
			snprintf(fmt, sizeof(fmt), "%s %%" PRIu64 "\n", ki->name);
			ctl_print_uint(p, CTL_PRINT_ANY, ki->name, fmt, vxd->knobs[k]);
		}
	}
	ctl_print_close_object(p);
}

/* ---- dispatch ------------------------------------------------------------------- */

static int vxd_execute_one(struct vxd *vxd, const struct ctl_cmd *cmd, struct ctl_print *out, struct ctl_err *err);

/* A datapath's own port came or went: EVPN follows (control/evpn.h).  A
 * port whose shadow devices cannot be made goes again, refused. */
static int vxd_devport_evpn(struct vxd *vxd, const struct ctl_cmd *cmd, struct ctl_err *err)
{
	if (cmd->verb == CTL_PORT_DEL) {
		vxd_evpn_port_removed(vxd, cmd->port.name);
		return 0;
	}
	const struct ctl_port_add *pa = &cmd->port_add;
	if (pa->type != CTL_PORT_VXLAN || !(pa->given & CTL_PK_EVPN))
		return 0;
	int ret = vxd_evpn_kport_added(vxd, pa, err);
	if (ret < 0) {
		struct ctl_err e = { 0 };
		if (vxd_devport_del(vxd, pa->name, &e) < 0)
			VLOG_ERR("port", "%s: refused for evpn but cannot be removed: %s", pa->name, e.msg);
	}
	return ret;
}

/* With the kernel datapath, taps are the userspace datapath's beside it
 * (kdp_slowpath.c): their commands first, their links pruned after. */
int vxd_execute(struct vxd *vxd, const struct ctl_cmd *cmd, struct ctl_print *out, struct ctl_err *err)
{
	int ret;
	if (vxd->kdp && vxd_slowpath_execute(vxd, cmd, out, err, &ret))
		return ret;
	ret = vxd_execute_one(vxd, cmd, out, err);
	if (vxd->kdp && cmd->verb == CTL_PORT_DEL)
		vxd_slowpath_prune(vxd);
	return ret;
}

/* A port a datapath serves itself (devports.c), when one runs: `port add`
 * of any type but tap, `port del` of such a port.  True with *ret its
 * result, EVPN's shadow devices made or removed after it. */
static bool vxd_execute_devport(struct vxd *vxd, const struct ctl_cmd *cmd, struct ctl_err *err, int *ret)
{
	if (!vxd_devport_dpif(vxd))
		return false;
	/* A tap is the userspace datapath's, beside it (kdp_slowpath.c took
	 * its line first, and refused one named as a port here). */
	if (cmd->verb == CTL_PORT_ADD && cmd->port_add.type != CTL_PORT_TAP)
		*ret = vxd_devport_add(vxd, &cmd->port_add, err);
	else if (cmd->verb == CTL_PORT_DEL && vxd_devport_by_name(vxd, cmd->port.name))
		*ret = vxd_devport_del(vxd, cmd->port.name, err);
	else
		return false;
	if (*ret == 0)
		*ret = vxd_devport_evpn(vxd, cmd, err);
	return true;
}

static int vxd_port_del(struct vxd *vxd, const char *name, struct ctl_err *err)
{
	struct port *port = vxd_port_by_name(vxd, name);
	if (!port)
		return vxd_refuse(err, -ENOENT, "port %s: no such port", name);
	if (vxd_filters_port_in_use(vxd, port->id, port->name, err) < 0)
		return -EBUSY;
	/* port del (unlike a shutdown) deletes a tap a vxswitchd made. */
	bool tap = port_is_tap(port);
	if (tap)
		tap_port_set_delete(port, true);
	int ret = vxd_port_remove(vxd, port->id, err);
	if (ret == 0)
		VLOG_INFO("port", "%s: removed", name);
	else if (tap)
		tap_port_set_delete(port, false);
	return ret;
}

static int vxd_execute_one(struct vxd *vxd, const struct ctl_cmd *cmd, struct ctl_print *out, struct ctl_err *err)
{
	int kret;
	if (vxd_execute_devport(vxd, cmd, err, &kret))
		return kret;
	switch (cmd->verb) {
	case CTL_PORT_ADD:
		if (cmd->port_add.type == CTL_PORT_VETH)
			return vxd_refuse(err, -EOPNOTSUPP, "port %s: type veth needs the kernel datapath (%s)",
					  cmd->port_add.name, vxd->kdp_why[0] ? vxd->kdp_why : "vxswitchd --datapath kernel");
		return vxd_port_add(vxd, &cmd->port_add, out, err);
	case CTL_PORT_DEL:
		return vxd_port_del(vxd, cmd->port.name, err);
	case CTL_PORT_SHOW:
		vxd_port_show(vxd, out);
		return 0;
	case CTL_FDB_SHOW:
		return vxd_fdb_show(vxd, cmd->fdb.has_vni ? cmd->fdb.vni : FDB_VNI_ANY, out, err);
	case CTL_FDB_ADD:
	case CTL_FDB_DEL:
	case CTL_FDB_FLUSH:
		return vxd_fdb_cmd(vxd, cmd, out, err);
	case CTL_STATS:
		return vxd_stats(vxd, &cmd->port, out, err);
	case CTL_SET:
		return vxd_set(vxd, &cmd->set, err);
	case CTL_SHOW_KNOBS:
		vxd_show_knobs(vxd, out);
		return 0;
	case CTL_DIAGNOSE:
		return vxd_diagnose(vxd, &cmd->port, out, err);
	case CTL_RELOAD:
		return vxd_reload(vxd, vxd->opts.config_path, out, err);
	case CTL_SHOW_CONFIG:
		vxd_show_config(vxd, out);
		return 0;
	case CTL_SAVE:
		return vxd_save(vxd, cmd->save.has_path ? cmd->save.path : vxd->opts.config_path, out, err);
	case CTL_CAPTURE:
		return vxd_capture_start(vxd, &cmd->capture, err);
	case CTL_FILTER:
		return vxd_filter(vxd, &cmd->filter, out, err);
	case CTL_WORKERS:
		return vxd_workers_check(vxd, &cmd->workers, err);
	case CTL_DATAPATH: /* vxctl refuses it first; any other client too */
		return vxd_refuse(err, -EBUSY, "datapath: chosen at start-up (vxswitchd --datapath, or the config "
				  "file's first line), before any port; running: %s: restart vxswitchd to change it",
				  vxd->kdp ? "kernel" : "user");
	case CTL_BATCH:
		return vxd_filter_batch(vxd, &cmd->batch, out, err);
	case CTL_VERSION:
		ctl_print_open_object(out, NULL);
		ctl_print_string(out, CTL_PRINT_ANY, "version", "%s\n", VXD_VERSION);
		ctl_print_close_object(out);
		return 0;
	default:
		return vxd_refuse(err, -EOPNOTSUPP, "unknown command");
	}
}
