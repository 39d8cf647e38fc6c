/* The userspace datapath behind the dpif interface (dp/dpif.h): N worker
 * threads (worker.h), each reading its lane of every port and socket.
 * Every operation is a request each worker executes between two batches
 * (the caller waits for all of them), or an fd added to or removed from a
 * worker's epoll set, which epoll allows from the control thread.  The
 * FDB is switch/fdb.h's table, which the workers learn into and the
 * control thread changes beside them without a request. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/dpif.h"
#include "dp/user/dpif_user.h"
#include "dp/user/worker_internal.h"

struct dpif_user {
	struct dpif up;
	struct fdb *fdb;
	uint64_t (*clock)(void);             /* the workers' */
	uint32_t port_vni[VXD_MAX_PORTS];    /* each attached port's VNI, for its FDB counts */
	struct vxd_worker *workers[VXD_MAX_WORKERS];
	unsigned n_workers;
	struct vxd_snapshot *wsnap;          /* one per worker */
	struct flower_counters wfcounters;   /* one worker's rule counters (a copy, sized as fc) */
};

static struct dpif_user *dpif_user(const struct dpif *dp)
{
	return (struct dpif_user *)dp;
}

static int64_t call_all(struct dpif_user *u, const struct vxd_req *req)
{
	return vxd_workers_call(u->workers, u->n_workers, req, NULL);
}

/* req on every worker; if one fails, `undo` on those that had done it. */
static int call_all_or_undo(struct dpif_user *u, struct vxd_req *req, const struct vxd_req *undo)
{
	unsigned done;
	int ret = (int)vxd_workers_call(u->workers, u->n_workers, req, &done);
	if (ret < 0)
		vxd_workers_call(u->workers, done, undo, NULL);
	return ret;
}

static void user_close(struct dpif *dp)
{
	struct dpif_user *u = dpif_user(dp);
	if (!u)
		return;
	for (unsigned i = 0; i < u->n_workers; i++)
		vxd_worker_destroy(u->workers[i]);
	free(u->wsnap);
	flower_counters_fini(&u->wfcounters);
	fdb_destroy(u->fdb);
	free(u);
}

/* open's refusal: err, with its reason in why (NULL: none wanted). */
static int user_refuse(int err, char *why, size_t why_len, const char *what)
{
	if (why)
		snprintf(why, why_len, "the userspace datapath: %s: %s", what, strerror(-err));
	return err;
}

static int user_open(const struct dpif_config *cfg, struct dpif **out, char *why, size_t why_len)
{
	if (cfg->keep || cfg->pin_dir) /* its state is its threads' memory */
		return user_refuse(-EOPNOTSUPP, why, why_len, "nothing of it outlives vxswitchd (keep, pin_dir)");
	if (cfg->n_workers > VXD_MAX_WORKERS)
		return user_refuse(-EINVAL, why, why_len, "too many workers");
	struct dpif_user *u = calloc(1, sizeof(*u));
	if (!u)
		return user_refuse(-ENOMEM, why, why_len, "its state");
	u->up.class = &dpif_user_class;
	u->clock = cfg->clock ? cfg->clock : vxd_now_ns;
	u->wsnap = calloc(cfg->n_workers ? cfg->n_workers : 1, sizeof(*u->wsnap));
	if (!u->wsnap) {
		user_close(&u->up);
		return user_refuse(-ENOMEM, why, why_len, "its snapshots");
	}
	int err = fdb_create(&cfg->fdb, &u->fdb);
	if (err < 0) {
		user_close(&u->up);
		return user_refuse(err, why, why_len, "the FDB");
	}
	for (unsigned i = 0; i < cfg->n_workers; i++) {
		struct vxd_worker_config wcfg = {
			.qsbr = cfg->qsbr,
			.view = cfg->view,
			.pool_size = cfg->pool_size,
			.fdb = u->fdb,
			.index = i,
			.cpu = cfg->cpu ? cfg->cpu[i] : -1,
			.node = cfg->node ? cfg->node[i] : -1,
			.clock = cfg->clock,
		};
		err = vxd_worker_create(&wcfg, &u->workers[i]);
		if (err < 0) {
			user_close(&u->up);
			return user_refuse(err, why, why_len, "a worker thread");
		}
		u->n_workers = i + 1;
	}
	*out = &u->up;
	return 0;
}

/* ---- ports and sockets ------------------------------------------------------ */

static int user_port_attach(struct dpif *dp, uint16_t id, struct port *port, bool new_sock)
{
	if (id < VXD_MAX_PORTS)
		dpif_user(dp)->port_vni[id] = port->vni;
	struct vxd_req req = { .kind = VXD_REQ_PORT_ATTACH, .port_id = id, .port = port };
	struct vxd_req undo = { .kind = VXD_REQ_PORT_DETACH, .port_id = id, .value = new_sock };
	return call_all_or_undo(dpif_user(dp), &req, &undo);
}

static void user_port_detach(struct dpif *dp, uint16_t id, bool sock_goes)
{
	struct vxd_req req = { .kind = VXD_REQ_PORT_DETACH, .port_id = id, .value = sock_goes };
	call_all(dpif_user(dp), &req);
}

static void user_port_unwatch(struct dpif *dp, struct port *port)
{
	struct dpif_user *u = dpif_user(dp);
	for (unsigned i = 0; i < u->n_workers; i++) {
		struct port_io lane = { .lane = i };
		if (port_lane_reads(port, i, u->n_workers))
			vxd_worker_unwatch(u->workers[i], port_io_fd(port, &lane));
	}
}

static int user_port_watch(struct dpif *dp, struct port *port)
{
	struct dpif_user *u = dpif_user(dp);
	for (unsigned i = 0; i < u->n_workers; i++) {
		if (!port_lane_reads(port, i, u->n_workers))
			continue;
		struct port_io lane = { .lane = i };
		int err = vxd_worker_watch(u->workers[i], VXD_SRC_FRAME, port->id, port_io_fd(port, &lane));
		if (err < 0) {
			user_port_unwatch(dp, port);
			return err;
		}
	}
	return 0;
}

/* Every worker marks it, whatever one says (an afpacket socket does not
 * always say its link went: port/afpacket.h). */
static void user_port_lost(struct dpif *dp, uint16_t id)
{
	struct dpif_user *u = dpif_user(dp);
	for (unsigned i = 0; i < u->n_workers; i++) {
		struct vxd_req req = { .kind = VXD_REQ_PORT_LOST, .port_id = id };
		vxd_worker_call(u->workers[i], &req);
	}
}

static void user_sock_unwatch(struct dpif *dp, struct vxlan_sock *sock)
{
	struct dpif_user *u = dpif_user(dp);
	for (unsigned i = 0; i < u->n_workers; i++)
		vxd_worker_unwatch(u->workers[i], vxlan_sock_fd(vxlan_sock_lane(sock, i)));
}

static int user_sock_watch(struct dpif *dp, unsigned slot, struct vxlan_sock *sock)
{
	struct dpif_user *u = dpif_user(dp);
	for (unsigned i = 0; i < u->n_workers; i++) {
		int err = vxd_worker_watch(u->workers[i], VXD_SRC_SOCK, slot, vxlan_sock_fd(vxlan_sock_lane(sock, i)));
		if (err < 0) {
			user_sock_unwatch(dp, sock);
			return err;
		}
	}
	return 0;
}

static void user_sock_release(struct dpif *dp, struct vxlan_sock *sock)
{
	struct vxd_req req = { .kind = VXD_REQ_SOCK_RELEASE, .sock = sock };
	call_all(dpif_user(dp), &req);
}

/* ---- knobs, capture ------------------------------------------------------------ */

static int user_gro_config(struct dpif *dp, uint32_t max_size, uint64_t hold_ns)
{
	struct vxd_req req = { .kind = VXD_REQ_GRO_CONFIG, .gro = { .max_size = max_size, .hold_ns = hold_ns } };
	return (int)call_all(dpif_user(dp), &req);
}

/* ---- the FDB ------------------------------------------------------------------ */

/* The workers' clock (worker.h). */
static uint64_t user_now(const struct dpif_user *u)
{
	return u->clock();
}

static int user_fdb_add(struct dpif *dp, enum dpif_fdb_kind kind, uint32_t vni, const uint8_t mac[6],
			const struct fdb_dst *dst)
{
	struct dpif_user *u = dpif_user(dp);
	return kind == DPIF_FDB_EVPN ? fdb_add_evpn(u->fdb, vni, mac, dst, user_now(u))
				     : fdb_add_static(u->fdb, vni, mac, dst, user_now(u));
}

static int user_fdb_del(struct dpif *dp, enum dpif_fdb_kind kind, uint32_t vni, const uint8_t mac[6])
{
	struct dpif_user *u = dpif_user(dp);
	return kind == DPIF_FDB_EVPN ? fdb_del_evpn(u->fdb, vni, mac) : fdb_del(u->fdb, vni, mac);
}

static bool user_fdb_lookup(struct dpif *dp, uint32_t vni, const uint8_t mac[6], struct fdb_dst *dst)
{
	struct dpif_user *u = dpif_user(dp);
	return fdb_lookup(u->fdb, vni, mac, user_now(u), dst);
}

static size_t user_fdb_flush(struct dpif *dp, const struct fdb_flush_filter *filter)
{
	return fdb_flush(dpif_user(dp)->fdb, filter);
}

static int user_fdb_dump(struct dpif *dp, uint32_t vni, fdb_dump_cb *cb, void *ctx)
{
	struct dpif_user *u = dpif_user(dp);
	return fdb_dump(u->fdb, vni, user_now(u), cb, ctx);
}

static void user_fdb_set_ageing(struct dpif *dp, uint64_t ageing_ns)
{
	fdb_set_ageing(dpif_user(dp)->fdb, ageing_ns);
}

static int user_fdb_set_vni_max(struct dpif *dp, uint32_t max, uint32_t *capacity)
{
	struct dpif_user *u = dpif_user(dp);
	*capacity = fdb_get_max_learned(u->fdb);
	return fdb_set_max_learned_per_vni(u->fdb, max);
}

static int user_fdb_set_port_max(struct dpif *dp, uint16_t port, uint32_t max)
{
	return fdb_set_port_max(dpif_user(dp)->fdb, port, max);
}

static void user_fdb_port_forget(struct dpif *dp, uint16_t port)
{
	fdb_port_forget(dpif_user(dp)->fdb, port);
}

/* The FDB's counts, read from the table now. */
static void user_snapshot_fdb(const struct dpif_user *u, struct vxd_snapshot *out)
{
	fdb_get_stats(u->fdb, &out->fdb);
	for (unsigned i = 0; i < VXD_MAX_PORTS; i++) {
		struct vxd_port_snap *ps = &out->ports[i];
		if (!ps->present)
			continue;
		fdb_get_port_stats(u->fdb, (uint16_t)i, &ps->fdb);
		ps->fdb_vni_learned = fdb_count_vni(u->fdb, u->port_vni[i]);
	}
}

/* ---- counters --------------------------------------------------------------- */

static int user_snapshot(struct dpif *dp, struct vxd_snapshot *out)
{
	struct dpif_user *u = dpif_user(dp);
	memset(out, 0, sizeof(*out));
	struct vxd_req reqs[VXD_MAX_WORKERS];
	for (unsigned i = 0; i < u->n_workers; i++)
		reqs[i] = (struct vxd_req){ .kind = VXD_REQ_SNAPSHOT, .snap = &u->wsnap[i] };
	vxd_workers_call_each(u->workers, u->n_workers, reqs);
	for (unsigned i = 0; i < u->n_workers; i++) {
		if (reqs[i].result < 0)
			return (int)reqs[i].result;
		vxd_snapshot_add(out, &u->wsnap[i]);
	}
	user_snapshot_fdb(u, out);
	return 0;
}

/* The workers one by one, through one rule-counter scratch (sized as fc,
 * the caller's: the table's slots). */
static int user_rule_counters(struct dpif *dp, struct flower_counters *fc)
{
	struct dpif_user *u = dpif_user(dp);
	if (flower_counters_reserve(&u->wfcounters, fc->n) < 0)
		return -ENOMEM;
	for (unsigned i = 0; i < u->n_workers; i++) {
		struct vxd_req req = { .kind = VXD_REQ_SNAPSHOT, .snap = &u->wsnap[i], .fcounters = &u->wfcounters };
		vxd_worker_call(u->workers[i], &req);
		if (req.result < 0)
			return (int)req.result;
		flower_counters_merge(fc, &u->wfcounters);
	}
	return 0;
}

static int user_capture_start(struct dpif *dp, struct vxd_capture *cap, char *why, size_t why_len)
{
	(void)why; /* what a worker refuses has no other reason than its errno */
	(void)why_len;
	cap->realtime_offset_ns = vxd_capture_realtime_offset(dpif_user(dp)->clock());
	struct vxd_req req = { .kind = VXD_REQ_CAPTURE_START, .capture = cap };
	struct vxd_req undo = { .kind = VXD_REQ_CAPTURE_STOP, .capture = cap };
	return call_all_or_undo(dpif_user(dp), &req, &undo);
}

/* Every worker lets it go, whatever one says. */
static void user_capture_stop(struct dpif *dp, struct vxd_capture *cap)
{
	struct dpif_user *u = dpif_user(dp);
	for (unsigned i = 0; i < u->n_workers; i++) {
		struct vxd_req req = { .kind = VXD_REQ_CAPTURE_STOP, .capture = cap };
		vxd_worker_call(u->workers[i], &req);
	}
}

static unsigned user_n_lanes(const struct dpif *dp)
{
	return dpif_user(dp)->n_workers;
}

const struct dpif_class dpif_user_class = {
	.name = "user",
	.open = user_open,
	.close = user_close,
	.port_attach = user_port_attach,
	.port_detach = user_port_detach,
	.port_watch = user_port_watch,
	.port_unwatch = user_port_unwatch,
	.port_lost = user_port_lost,
	.sock_watch = user_sock_watch,
	.sock_unwatch = user_sock_unwatch,
	.sock_release = user_sock_release,
	.gro_config = user_gro_config,
	.fdb_add = user_fdb_add,
	.fdb_del = user_fdb_del,
	.fdb_lookup = user_fdb_lookup,
	.fdb_flush = user_fdb_flush,
	.fdb_dump = user_fdb_dump,
	.fdb_set_ageing = user_fdb_set_ageing,
	.fdb_set_vni_max = user_fdb_set_vni_max,
	.fdb_set_port_max = user_fdb_set_port_max,
	.fdb_port_forget = user_fdb_port_forget,
	.rule_counters = user_rule_counters,
	.snapshot = user_snapshot,
	.capture_start = user_capture_start,
	.capture_stop = user_capture_stop,
	.n_lanes = user_n_lanes,
};
