/* The control side of the datapath (dp/dpif.h): opening it with its FDB
 * sized and its workers where the placement says (placement.h), closing
 * it, and the ports' and sockets' place in its poll sets. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control/vxd_internal.h"
#include "dp/user/dpif_user.h"
#include "util/vlog.h"

int vxd_workers_start(struct vxd *vxd)
{
	struct fdb_config fcfg = {
		.max_learned = vxd->opts.fdb_size ? vxd->opts.fdb_size : VXD_FDB_SIZE_DEFAULT,
		.max_learned_per_vni = FDB_DEFAULT_MAX_LEARNED,
		.hash_seed = vxd_now_ns() ^ (uint64_t)getpid() << 32,
	};
	/* Remote MACs from BGP EVPN have their own bound, as many as the
	 * learned ones (within the table's sanity bound). */
	uint64_t room = (uint64_t)FDB_MAX_ENTRIES - fcfg.max_learned - FDB_DEFAULT_MAX_STATIC;
	fcfg.max_evpn = room < fcfg.max_learned ? (uint32_t)(room ? room : 1) : fcfg.max_learned;
	if (fcfg.max_learned_per_vni > fcfg.max_learned)
		fcfg.max_learned_per_vni = fcfg.max_learned;
	vxd->knobs[CTL_KNOB_FDB_MAX] = fcfg.max_learned_per_vni;
	vxd->fdb_capacity = fcfg.max_learned;
	const struct vxd_placement *pl = &vxd->placement;
	struct dpif_config dcfg = {
		.qsbr = &vxd->qsbr,
		.view = &vxd->view,
		.fdb = fcfg,
		.pool_size = vxd->opts.pool_size ? vxd->opts.pool_size : VXD_POOL_DEFAULT,
		.n_workers = pl->n_workers,
		.cpu = pl->cpu,
		.node = pl->node,
		.clock = vxd->opts.clock,
	};
	char why[256];
	int err = dpif_user_class.open(&dcfg, &vxd->dp, why, sizeof(why));
	if (err < 0) {
		VLOG_ERR("vxd", "%s", why);
		return err;
	}
	vxd->n_workers = vxd->dp->class->n_lanes(vxd->dp);
	return 0;
}

void vxd_workers_stop(struct vxd *vxd)
{
	if (vxd->dp) {
		for (unsigned i = 0; i < VXD_MAX_SOCKS; i++)
			if (vxd->socks[i])
				vxd->dp->class->sock_release(vxd->dp, vxd->socks[i]);
		vxd->dp->class->close(vxd->dp);
		vxd->dp = NULL;
	}
	vxd->n_workers = 0;
}

/* ---- poll sets ---------------------------------------------------------- */

int vxd_watch_port(struct vxd *vxd, struct port *port)
{
	return vxd->dp->class->port_watch(vxd->dp, port);
}

void vxd_unwatch_port(struct vxd *vxd, struct port *port)
{
	vxd->dp->class->port_unwatch(vxd->dp, port);
}

int vxd_watch_sock(struct vxd *vxd, unsigned slot, struct vxlan_sock *sock)
{
	return vxd->dp->class->sock_watch(vxd->dp, slot, sock);
}

void vxd_unwatch_sock(struct vxd *vxd, struct vxlan_sock *sock)
{
	vxd->dp->class->sock_unwatch(vxd->dp, sock);
}

/* ---- the workers line ---------------------------------------------------- */

int vxd_workers_check(const struct vxd *vxd, const struct ctl_workers *w, struct ctl_err *err)
{
	const struct ctl_workers *run = &vxd->workers_asked;
	bool same_cpus = true;
	if (w->has_cpus) {
		cpu_set_t a, b;
		same_cpus = run->has_cpus && vxd_cpulist_parse(w->cpus, &a) == 0 && vxd_cpulist_parse(run->cpus, &b) == 0 &&
			    CPU_EQUAL(&a, &b);
	}
	if (w->n == vxd->n_workers && same_cpus)
		return 0;
	char now[sizeof(vxd->placement.how) + 32];
	if (run->has_cpus)
		snprintf(now, sizeof(now), "%u workers on cpus %s", vxd->n_workers, run->cpus);
	else
		snprintf(now, sizeof(now), "%u workers (%s)", vxd->n_workers, vxd->placement.how);
	return vxd_refuse(err, -EBUSY, "workers %u%s%s: %s run; workers are set at start-up (vxswitchd --workers, "
			  "--cpus, or this line in the config file): restart vxswitchd to change them", w->n,
			  w->has_cpus ? " cpus " : "", w->has_cpus ? w->cpus : "", now);
}
