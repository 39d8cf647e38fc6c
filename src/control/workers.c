/* The control side of the workers (worker.h): starting them where the
 * placement says (placement.h), stopping them, and adding and removing a
 * port's or a socket's fds in each worker's poll set. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control/vxd_internal.h"
#include "util/vlog.h"

int vxd_workers_start(struct vxd *vxd)
{
	struct fdb_config fcfg = {
		.max_learned = vxd->opts.fdb_size ? vxd->opts.fdb_size : VXD_FDB_SIZE_DEFAULT,
		.max_learned_per_vni = FDB_DEFAULT_MAX_LEARNED,
		.hash_seed = vxd_now_ns() ^ (uint64_t)getpid() << 32,
	};
	if (fcfg.max_learned_per_vni > fcfg.max_learned)
		fcfg.max_learned_per_vni = fcfg.max_learned;
	vxd->knobs[CTL_KNOB_FDB_MAX] = fcfg.max_learned_per_vni;
	int err = fdb_create(&fcfg, &vxd->fdb);
	if (err < 0)
		return err;
	vxd->wsnap = calloc(vxd->placement.n_workers ? vxd->placement.n_workers : 1, sizeof(*vxd->wsnap));
	if (!vxd->wsnap)
		return -ENOMEM;
	const struct vxd_placement *pl = &vxd->placement;
	for (unsigned i = 0; i < pl->n_workers; i++) {
		struct vxd_worker_config wcfg = {
			.qsbr = &vxd->qsbr,
			.view = &vxd->view,
			.pool_size = vxd->opts.pool_size ? vxd->opts.pool_size : VXD_POOL_DEFAULT,
			.fdb = vxd->fdb,
			.index = i,
			.cpu = pl->cpu[i],
			.node = pl->node[i],
			.clock = vxd->opts.clock,
		};
		err = vxd_worker_create(&wcfg, &vxd->workers[i]);
		if (err < 0)
			return err;
		vxd->n_workers = i + 1;
	}
	return 0;
}

void vxd_workers_stop(struct vxd *vxd)
{
	for (unsigned i = 0; i < VXD_MAX_SOCKS; i++) {
		if (!vxd->socks[i])
			continue;
		struct vxd_req req = { .kind = VXD_REQ_SOCK_RELEASE, .sock = vxd->socks[i] };
		vxd_call_all(vxd, &req);
	}
	for (unsigned i = 0; i < vxd->n_workers; i++)
		vxd_worker_destroy(vxd->workers[i]);
	vxd->n_workers = 0;
	free(vxd->wsnap);
	free(vxd->wfcounters);
	vxd->wsnap = NULL;
	vxd->wfcounters = NULL;
	fdb_destroy(vxd->fdb);
	vxd->fdb = NULL;
}

/* ---- poll sets ---------------------------------------------------------- */

int vxd_watch_port(struct vxd *vxd, struct port *port)
{
	for (unsigned i = 0; i < vxd->n_workers; i++) {
		if (!port_lane_reads(port, i, vxd->n_workers))
			continue;
		struct port_io lane = { .lane = i };
		int err = vxd_worker_watch(vxd->workers[i], VXD_SRC_FRAME, port->id, port_io_fd(port, &lane));
		if (err < 0) {
			vxd_unwatch_port(vxd, port);
			return err;
		}
	}
	return 0;
}

void vxd_unwatch_port(struct vxd *vxd, struct port *port)
{
	for (unsigned i = 0; i < vxd->n_workers; i++) {
		struct port_io lane = { .lane = i };
		if (port_lane_reads(port, i, vxd->n_workers))
			vxd_worker_unwatch(vxd->workers[i], port_io_fd(port, &lane));
	}
}

int vxd_watch_sock(struct vxd *vxd, unsigned slot, struct vxlan_sock *sock)
{
	for (unsigned i = 0; i < vxd->n_workers; i++) {
		int err = vxd_worker_watch(vxd->workers[i], VXD_SRC_SOCK, slot, vxlan_sock_fd(vxlan_sock_lane(sock, i)));
		if (err < 0) {
			vxd_unwatch_sock(vxd, sock);
			return err;
		}
	}
	return 0;
}

void vxd_unwatch_sock(struct vxd *vxd, struct vxlan_sock *sock)
{
	for (unsigned i = 0; i < vxd->n_workers; i++)
		vxd_worker_unwatch(vxd->workers[i], vxlan_sock_fd(vxlan_sock_lane(sock, i)));
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
