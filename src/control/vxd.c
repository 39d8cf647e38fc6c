/* vxswitchd's life cycle and its control loop (vxd.h): the control thread
 * waits on the control socket and a wake-up eventfd; the worker it starts
 * moves the packets. */
#include <errno.h>
#include <net/if.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ctl/ctl_config.h"
#include "ctl/ctl_print.h"
#include "ctl/ctl_server.h"
#include "report/metrics_http.h"
#include "control/vxd_internal.h"
#include "port/rtnl.h"
#include "switch/flower_table.h"
#include "control/kdp_ports.h"
#include "dp/kernel/kdp.h" /* the upcall knobs' defaults */
#include "util/vlog.h"


static void vxd_default_knobs(uint32_t *knobs)
{
	knobs[CTL_KNOB_GRO] = 1;
	knobs[CTL_KNOB_GSO] = 1;
	knobs[CTL_KNOB_TAP_TSO] = 1;
	knobs[CTL_KNOB_UDP_GRO] = 1;
	knobs[CTL_KNOB_UDP_SEGMENT] = 1;
	knobs[CTL_KNOB_RX_CSUM] = 1;
	/* 0: held runs complete when the socket poll ends, as the kernel's
	 * default gro_flush_timeout 0 does at the end of a NAPI poll. */
	knobs[CTL_KNOB_GRO_HOLD_US] = 0;
	knobs[CTL_KNOB_GRO_MAX_SIZE] = 65535;
	knobs[CTL_KNOB_FDB_AGEING] = (uint32_t)(FDB_DEFAULT_AGEING_NS / 1000000000ull);
	knobs[CTL_KNOB_UPCALL_RATE] = KDP_UPCALL_RATE_DEFAULT;
	knobs[CTL_KNOB_UPCALL_BURST] = KDP_UPCALL_BURST_DEFAULT;
}

/* What the config file says of the workers, read before they start: its
 * `workers` line (into *w when the command line said nothing), and the
 * underlay device when --underlay is not given: the link that holds the
 * local address of its first vxlan port, if it is there already ("" when
 * there is none). */
static void vxd_config_prescan(const struct vxd *vxd, struct ctl_workers *w, char dev[IF_NAMESIZE])
{
	dev[0] = '\0';
	struct ctl_config cfg;
	char err[CTL_CONFIG_ERR_SIZE];
	if (!vxd->opts.config_path || ctl_config_load(vxd->opts.config_path, &cfg, err, sizeof(err)) < 0)
		return; /* a bad file is refused when it is applied */
	bool found_dev = false;
	for (size_t i = 0; i < cfg.n_cmds; i++) {
		const struct ctl_cmd *c = &cfg.cmds[i];
		if (c->verb == CTL_WORKERS && !w->n && !w->has_cpus)
			*w = c->workers;
		if (c->verb != CTL_PORT_ADD || c->port_add.type != CTL_PORT_VXLAN || found_dev)
			continue;
		found_dev = true;
		const struct ctl_ip *ip = &c->port_add.local;
		int ifindex = rtnl_addr_ifindex(ip->family == AF_INET6 ? 6 : 4, ip->bytes);
		if (ifindex > 0 && !if_indextoname((unsigned)ifindex, dev))
			dev[0] = '\0';
	}
	ctl_config_release(&cfg);
}

/* Where the workers go (placement.h).  A refusal (a bad --cpus) is logged
 * here: the caller only has the errno. */
static int vxd_plan_workers(struct vxd *vxd)
{
	char dev[IF_NAMESIZE];
	struct ctl_workers *w = &vxd->workers_asked;
	if (vxd->opts.workers || vxd->opts.cpus) {
		w->n = vxd->opts.workers;
		if (vxd->opts.cpus) {
			w->has_cpus = true;
			snprintf(w->cpus, sizeof(w->cpus), "%s", vxd->opts.cpus);
		}
	}
	vxd_config_prescan(vxd, w, dev);
	struct vxd_placement_request req = {
		.workers = w->n,
		.cpus = w->has_cpus ? w->cpus : NULL,
		.dev = vxd->opts.underlay ? vxd->opts.underlay : dev[0] ? dev : NULL,
	};
	char err[256] = "";
	int ret = vxd_place(&req, &vxd->placement, err, sizeof(err));
	if (ret < 0) {
		VLOG_ERR("vxd", "%s", err[0] ? err : strerror(-ret));
		return ret;
	}
	VLOG_INFO("vxd", "%u worker%s: %s", vxd->placement.n_workers, vxd->placement.n_workers == 1 ? "" : "s",
		  vxd->placement.how);
	if (w->n || w->has_cpus)
		w->n = vxd->placement.n_workers; /* what runs, for show config */
	return 0;
}

static int vxd_open_control(struct vxd *vxd)
{
	vxd->epfd = epoll_create1(EPOLL_CLOEXEC);
	vxd->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (vxd->epfd < 0 || vxd->wake_fd < 0)
		return -errno;
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = VXD_WAKE_SRC };
	if (epoll_ctl(vxd->epfd, EPOLL_CTL_ADD, vxd->wake_fd, &ev) < 0)
		return -errno;
	if (!vxd->opts.ctl_path)
		return 0;
	struct ctl_server_opts sopts = { .path = vxd->opts.ctl_path,
					 .share_group = vxd->opts.ctl_share_group,
					 .group = vxd->opts.ctl_group };
	int err = ctl_server_create(&sopts, &vxd->ctl);
	if (err < 0)
		return err;
	ev = (struct epoll_event){ .events = EPOLLIN, .data.u32 = VXD_CTL_SRC };
	return epoll_ctl(vxd->epfd, EPOLL_CTL_ADD, ctl_server_fd(vxd->ctl), &ev) < 0 ? -errno : 0;
}

/* --datapath kernel or the default: the programs, the vxlan device, the
 * upcall ring in the control loop; any failure leaves the userspace
 * datapath, said why (kdp_why: logged, shown by stats and diagnose). */
static void vxd_kdp_open(struct vxd *vxd)
{
	if (vxd->opts.datapath_why) {
		snprintf(vxd->kdp_why, sizeof(vxd->kdp_why), "%s", vxd->opts.datapath_why);
		VLOG_WARN("vxd", "datapath kernel unavailable (%s): using the userspace datapath", vxd->kdp_why);
		return;
	}
	if (vxd->opts.datapath && strcmp(vxd->opts.datapath, "kernel"))
		return;
	struct dpif_config cfg = { .keep = vxd->opts.keep_datapath, .pin_dir = vxd->opts.bpffs };
	struct dpif *kdp;
	int err = kdp_dpif_class.open(&cfg, &kdp, vxd->kdp_why, sizeof(vxd->kdp_why));
	if (err == 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = VXD_KDP_SRC };
		if (epoll_ctl(vxd->epfd, EPOLL_CTL_ADD, kdp->class->fd(kdp), &ev) == 0) {
			vxd->kdp = kdp;
			/* Its FDB under the knobs as they are (the userspace
			 * datapath's got them at its open). */
			uint32_t capacity;
			kdp->class->fdb_set_ageing(kdp, vxd_fdb_ageing_ns(vxd->knobs[CTL_KNOB_FDB_AGEING]));
			kdp->class->fdb_set_vni_max(kdp, vxd->knobs[CTL_KNOB_FDB_MAX], &capacity);
			VLOG_INFO("vxd", "datapath kernel%s: eBPF programs loaded and attached",
				  vxd->opts.datapath ? "" : " (the default)");
			return;
		}
		snprintf(vxd->kdp_why, sizeof(vxd->kdp_why), "cannot poll the upcall ring: %s", strerror(errno));
		kdp->class->close(kdp);
	}
	VLOG_WARN("vxd", "datapath kernel unavailable (%s): using the userspace datapath", vxd->kdp_why);
}

int vxd_create(const struct vxd_options *opts, struct vxd **out)
{
	struct vxd *vxd = calloc(1, sizeof(*vxd));
	if (!vxd)
		return -ENOMEM;
	vxd->opts = *opts;
	vxd->epfd = vxd->wake_fd = -1;
	for (unsigned w = 0; w < VXD_MAX_WATCHES; w++)
		vxd->watches[w].fd = -1;
	for (unsigned i = 0; i < VXD_MAX_PORTS; i++)
		vxd->links[i].watch = -1;
	vlog_set_level(opts->quiet ? VLOG_WARN : VLOG_INFO);
	vxd_default_knobs(vxd->knobs);
	qsbr_init(&vxd->qsbr);
	int err = -ENOMEM;
	vxd->snap = calloc(1, sizeof(*vxd->snap));
	vxd->diag_prev = calloc(1, sizeof(*vxd->diag_prev));
	vxd->diag_cur = calloc(1, sizeof(*vxd->diag_cur));
	struct vni_table *vnis = NULL;
	if (!vxd->snap || !vxd->diag_prev || !vxd->diag_cur || (err = vni_table_create(&vnis)) < 0)
		goto err_destroy;
	err = vxd_publish(vxd, vnis);
	if (err < 0) {
		vni_table_destroy(vnis);
		goto err_destroy;
	}
	vxd_evpn_reap();
	err = vxd_plan_workers(vxd);
	if (err == 0)
		err = vxd_workers_start(vxd);
	if (err == 0)
		err = vxd_open_control(vxd);
	if (err < 0)
		goto err_destroy;
	vxd_kdp_open(vxd);
	memcpy(vxd->knob_defaults, vxd->knobs, sizeof(vxd->knobs));
	vxd->start_ns = vxd_now_ns();
	vxd_diag_snapshot(vxd, true);
	*out = vxd;
	return 0;

err_destroy:
	vxd_destroy(vxd);
	return err;
}

unsigned vxd_dpifs(struct vxd *vxd, struct dpif *out[VXD_MAX_DPIFS])
{
	unsigned n = 0;
	if (vxd->dp)
		out[n++] = vxd->dp;
	if (vxd->kdp)
		out[n++] = vxd->kdp;
	return n;
}

struct dpif *vxd_fdb_dpif(const struct vxd *vxd)
{
	return vxd->kdp ? vxd->kdp : vxd->dp;
}

bool vxd_datapath_kernel(const struct vxd *vxd)
{
	return vxd->kdp != NULL;
}

void vxd_startup_done(struct vxd *vxd)
{
	struct dpif *dps[VXD_MAX_DPIFS];
	unsigned n = vxd_dpifs(vxd, dps);
	for (unsigned i = 0; i < n; i++)
		if (dps[i]->class->startup_done)
			dps[i]->class->startup_done(dps[i]);
}

void vxd_destroy(struct vxd *vxd)
{
	if (!vxd)
		return;
	vxd_capture_end_all(vxd, "vxswitchd stopping");
	vxd_slowpath_close(vxd);
	if (vxd->kdp) { /* before the ports: its programs send to them */
		struct dpif *kdp = vxd->kdp;
		vxd->kdp = NULL; /* what runs next (port removal) sees the userspace datapath alone */
		kdp->class->close(kdp);
	}
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		if (vxd->ports[i] && vxd_port_remove(vxd, (uint16_t)i, NULL) < 0)
			VLOG_ERR("vxd", "port %s: cannot be removed cleanly", vxd->ports[i]->name);
	vxd_evpn_close(vxd);
	vxd_workers_stop(vxd);
	/* Ports a failed removal left: the worker is gone, nothing reads them. */
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++)
		port_destroy(vxd->ports[i]);
	for (unsigned i = 0; i < VXD_MAX_SOCKS; i++)
		vxlan_sock_unref(vxd->socks[i]);
	vxd_links_close(vxd);
	ctl_server_destroy(vxd->ctl);
	metrics_http_stop(vxd->metrics);
	if (vxd->epfd >= 0)
		close(vxd->epfd);
	if (vxd->wake_fd >= 0)
		close(vxd->wake_fd);
	vxd_view_free(atomic_load(&vxd->view));
	flower_table_destroy(vxd->flower); /* no view holds it any more */
	if (vxd->fcounters)
		flower_counters_fini(vxd->fcounters);
	free(vxd->fcounters);
	free(vxd->snap);
	free(vxd->diag_prev);
	free(vxd->diag_cur);
	free(vxd->statics);
	free(vxd);
}

int vxd_apply_config(struct vxd *vxd, struct ctl_print *out, struct ctl_err *err)
{
	return vxd_reload(vxd, vxd->opts.config_path, out, err);
}

void vxd_request_reload(struct vxd *vxd)
{
	vxd->reload_pending = 1;
	uint64_t one = 1;
	if (write(vxd->wake_fd, &one, sizeof(one)) < 0) {
		/* Already signalled. */
	}
}

static void vxd_reload_now(struct vxd *vxd)
{
	vxd->reload_pending = 0;
	struct ctl_print out;
	struct ctl_err err = { 0 };
	ctl_print_init(&out, false, 0);
	if (vxd_apply_config(vxd, &out, &err) < 0)
		VLOG_ERR("config", "SIGHUP: %s (the running state stays as it was up to that line)", err.msg);
	ctl_print_finish(&out);
	ctl_print_release(&out);
}

void vxd_stop(struct vxd *vxd)
{
	vxd->stop = 1;
	uint64_t one = 1;
	if (write(vxd->wake_fd, &one, sizeof(one)) < 0) {
		/* Already signalled. */
	}
}

static int vxd_dispatch(void *ctx, const struct ctl_cmd *cmd, struct ctl_print *out, struct ctl_err *err)
{
	return vxd_execute(ctx, cmd, out, err);
}

/* A failure of ctl_server_handle is fatal to the control socket only (a
 * broken listener or epoll set; per-client trouble is counted inside): the
 * VMs keep their network, the socket stops being polled so the loop does
 * not spin, and the operator is told why vxctl cannot reach us. */
static void vxd_serve_control(struct vxd *vxd)
{
	int ret = ctl_server_handle(vxd->ctl, vxd_dispatch, vxd);
	if (ret >= 0)
		return;
	VLOG_ERR("control", "control socket %s failed (%s): no more commands; forwarding goes on",
		 vxd->opts.ctl_path, strerror(-ret));
	epoll_ctl(vxd->epfd, EPOLL_CTL_DEL, ctl_server_fd(vxd->ctl), NULL);
}

/* Every datapath's work for the control thread (dpif run). */
static void vxd_dpifs_run(struct vxd *vxd)
{
	struct dpif *dps[VXD_MAX_DPIFS];
	unsigned n = vxd_dpifs(vxd, dps);
	for (unsigned i = 0; i < n; i++)
		if (dps[i]->class->run)
			dps[i]->class->run(dps[i]);
}

int vxd_run(struct vxd *vxd)
{
	while (!vxd->stop) {
		struct epoll_event events[8];
		int n = epoll_wait(vxd->epfd, events, 8, vxd->reattach_retry_until_ns ? VXD_REATTACH_RETRY_MS : 1000);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < n; i++) {
			if (events[i].data.u32 == VXD_CTL_SRC) {
				vxd_serve_control(vxd);
			} else if (events[i].data.u32 == VXD_METRICS_SRC) {
				/* below, once per turn */
			} else if (events[i].data.u32 == VXD_EVPN_SRC || events[i].data.u32 == VXD_EVPN_TIMER_SRC) {
				vxd_evpn_input(vxd, events[i].data.u32);
			} else if (events[i].data.u32 >= VXD_LINK_SRC) {
				vxd_links_input(vxd, events[i].data.u32 - VXD_LINK_SRC);
			} else {
				uint64_t v;
				if (read(vxd->wake_fd, &v, sizeof(v)) < 0) {
					/* EAGAIN */
				}
			}
		}
		/* Every turn (at least once a second): the scrapes that are
		 * ready, and the connection timeouts. */
		vxd_metrics_run(vxd);
		vxd_capture_drain(vxd);
		vxd_dpifs_run(vxd);
		if (vxd->reload_pending)
			vxd_reload_now(vxd);
		uint64_t now = vxd_now_ns();
		if (vxd->reattach_retry_until_ns) {
			if (now >= vxd->reattach_retry_until_ns || vxd_reattach_lost(vxd, "link event") == 0)
				vxd->reattach_retry_until_ns = 0;
		}
		if (now - vxd->last_reattach_ns >= 1000000000ull) {
			vxd->last_reattach_ns = now;
			vxd_reattach_lost(vxd, "periodic check");
		}
		if (vxd_now_ns() - vxd->diag_cur_ns > VXD_DIAG_WINDOW_NS)
			vxd_diag_snapshot(vxd, false);
	}
	return 0;
}
