/* What each request of the control thread does on the worker (worker.h):
 * port io set-up and tear-down, FDB changes and dumps, GRO rebuilds and
 * counter snapshots.  Runs on the worker thread between two batches (or on
 * the caller's when the thread is not running). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dp/user/worker_internal.h"
#include "util/schedstat.h"

int vxd_worker_gro_rebuild(struct vxd_worker *w, uint32_t max_size, uint64_t hold_ns)
{
	struct gro_config cfg = {
		.max_flows = GRO_DEFAULT_MAX_FLOWS,
		.max_size = max_size > GRO_DEFAULT_MAX_SIZE ? GRO_DEFAULT_MAX_SIZE : max_size,
		.hold_ns = hold_ns,
		.emit = dp_gro_collect,
		.emit_aux = w,
	};
	/* Build the new table first: on failure the old one stays, untouched. */
	struct gro_table *next;
	int err = gro_create(&cfg, &next);
	if (err < 0)
		return err;
	if (w->gro) {
		dp_gro_complete(w, true);
		/* Keep the counters across a rebuild. */
		struct gro_stats st;
		gro_get_stats(w->gro, &st);
		st.flows_held = 0; /* the replaced table's runs were flushed */
		gro_stats_add(&w->gro_base, &st);
		w->gro_carried = true;
		gro_destroy(w->gro);
	}
	w->gro = next;
	return 0;
}

static int vxd_req_attach(struct vxd_worker *w, struct vxd_req *req)
{
	struct vxd_wport *wp = &w->ports[req->port_id];
	if (wp->port)
		return -EEXIST;
	memset(&wp->io, 0, sizeof(wp->io));
	int err = port_io_init(req->port, &wp->io, w->index);
	if (err < 0)
		return err;
	wp->port = req->port;
	return 0;
}

/* Flushes what is queued for the port and frees its io (the control side
 * forgets the port's FDB entries once every worker let it go). */
static int vxd_req_detach(struct vxd_worker *w, struct vxd_req *req)
{
	struct vxd_wport *wp = &w->ports[req->port_id];
	if (!wp->port)
		return -ENOENT;
	dp_flush_all(w);
	dp_vtep_forget(w, req->port_id);
	/* The socket's lane keeps receive buffers from our pool: they come
	 * back on this thread, which alone touches the pool. */
	if (req->value && port_is_vxlan(wp->port))
		vxlan_sock_rx_release(vxlan_sock_lane(vxlan_port_sock(wp->port), w->index));
	vxd_capture_detach_port(w, req->port_id);
	port_io_fini(wp->port, &wp->io);
	memset(&wp->io, 0, sizeof(wp->io));
	wp->port = NULL;
	wp->lost_ns = wp->lost_events = 0;
	return 0;
}

static void vxd_req_snapshot(struct vxd_worker *w, struct vxd_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->taken_ns = w->clock();
	for (unsigned i = 0; i < VXD_MAX_PORTS; i++) {
		const struct vxd_wport *wp = &w->ports[i];
		struct vxd_port_snap *ps = &s->ports[i];
		if (!wp->port)
			continue;
		ps->present = true;
		ps->stats = wp->io.stats;
		ps->lost_ns = wp->lost_ns;
		ps->lost_events = wp->lost_events;
		s->workers[0].rx_frames += wp->io.stats.rx_frames;
		s->workers[0].rx_bytes += wp->io.stats.rx_bytes;
		if (port_is_tap(wp->port)) {
			tap_port_get_info(wp->port, &wp->io, &ps->tap);
		} else if (port_is_afpacket(wp->port)) {
			afpacket_port_get_info(wp->port, &wp->io, &ps->afp);
		} else if (port_is_vxlan(wp->port)) {
			vxlan_port_get_info(wp->port, &wp->io, &ps->vx);
			vxlan_sock_get_stats(vxlan_sock_lane(vxlan_port_sock(wp->port), w->index), &ps->sock);
		}
	}
	memcpy(s->drops, w->drops, sizeof(s->drops));
	s->rx_csum = w->rx_csum;
	s->whole_big_tcp_marked = w->whole_big_tcp_marked;
	s->gro_pool_low_flushes = w->gro_pool_low_flushes;
	s->loops = w->loops;
	s->requests = w->requests;
	if (w->gro)
		gro_get_stats(w->gro, &s->gro);
	if (w->gro_carried)
		gro_stats_add(&s->gro, &w->gro_base);
	s->fwd = w->fwd.stats;
	pkt_pool_get_stats(w->pool, &s->pool);
	s->pool_size = w->pool_size;
	vxd_worker_cpu(&s->cpu_user_us, &s->cpu_sys_us);
	struct vxd_worker_snap *ws = &s->workers[0];
	s->n_workers = 1;
	ws->index = w->index;
	ws->cpu_pinned = w->cpu_pinned;
	ws->node = w->node;
	ws->cpu_last = vxd_worker_cpu_now();
	ws->cpu_user_us = s->cpu_user_us;
	ws->cpu_sys_us = s->cpu_sys_us;
	ws->loops = w->loops;
	ws->polls = w->polls;
	ws->poll_hits = w->poll_hits;
	if (s->cpu_user_us || s->cpu_sys_us) /* taken on the worker */
		schedstat_self(&s->cpu_run_ns, &s->cpu_wait_ns);
	ws->cpu_run_ns = s->cpu_run_ns;
	ws->cpu_wait_ns = s->cpu_wait_ns;
	memcpy(s->vteps, w->vteps, w->n_vteps * sizeof(w->vteps[0]));
	s->n_vteps = w->n_vteps;
	flow_cache_get_stats(w->fcache, &s->flow_cache);
	struct flow_cache_stats eg; /* the egress rules' cache (dp_egress.c): counted with it */
	flow_cache_get_stats(w->fcache_egress, &eg);
	s->flow_cache.hits += eg.hits;
	s->flow_cache.misses += eg.misses;
	s->flow_cache.evictions += eg.evictions;
	s->vteps_untracked = w->vteps_untracked;
	vxd_capture_get_state(w, &s->capture);
}

static int64_t vxd_req_run(struct vxd_worker *w, struct vxd_req *req)
{
	switch (req->kind) {
	case VXD_REQ_PORT_ATTACH:
		return vxd_req_attach(w, req);
	case VXD_REQ_PORT_DETACH:
		return vxd_req_detach(w, req);
	case VXD_REQ_SOCK_RELEASE:
		vxlan_sock_rx_release(vxlan_sock_lane(req->sock, w->index));
		return 0;
	case VXD_REQ_GRO_CONFIG:
		return vxd_worker_gro_rebuild(w, req->gro.max_size, req->gro.hold_ns);
	case VXD_REQ_SNAPSHOT:
		vxd_req_snapshot(w, req->snap);
		if (req->fcounters)
			flower_counters_copy(req->fcounters, w->fcounters);
		return 0;
	case VXD_REQ_CAPTURE_START:
		return vxd_capture_attach(w, req->capture);
	case VXD_REQ_CAPTURE_STOP:
		return vxd_capture_detach(w, req->capture);
	case VXD_REQ_PORT_LOST:
		if (req->port_id >= VXD_MAX_PORTS || !w->ports[req->port_id].port)
			return -ENOENT;
		dp_frame_lost(w, w->ports[req->port_id].port);
		return w->ports[req->port_id].lost_ns ? 0 : -EAGAIN;
	}
	return -EOPNOTSUPP;
}

void vxd_worker_execute(struct vxd_worker *w, struct vxd_req *req)
{
	/* Off the thread (not started, or stopped) there is no turn that
	 * loaded the view: the caller owns it and it cannot change under us. */
	bool borrowed = !w->view;
	if (borrowed) {
		w->view = qsbr_load(w->view_slot);
		w->fwd.vnis = w->view ? w->view->vnis : NULL;
	}
	req->result = w->view || req->kind == VXD_REQ_SNAPSHOT ? vxd_req_run(w, req) : -ENODEV;
	if (borrowed)
		w->view = NULL;
}
