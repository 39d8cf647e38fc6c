/* `vxswitchd --metrics`: the control side of the metrics endpoint.  The
 * HTTP server (metrics_http.c) is polled by the control loop, and each
 * scrape renders here, on the control thread: one worker snapshot (the
 * same SNAPSHOT request as `vxctl stats`), the ports' names and VNIs from
 * the control thread's own table, the threads' CPU times, and
 * metrics_text_write over all of it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include "report/metrics_http.h"
#include "report/metrics_text.h"
#include "control/vxd_internal.h"
#include "dp/dpif.h"
#include "port/tap.h"
#include "port/vxlan.h"

static void thread_cpu(uint64_t *user_us, uint64_t *sys_us)
{
	struct rusage ru = { 0 };
	getrusage(RUSAGE_THREAD, &ru);
	*user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000ull + (uint64_t)ru.ru_utime.tv_usec;
	*sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000ull + (uint64_t)ru.ru_stime.tv_usec;
}

static int vxd_metrics_render(void *ctx, char **text, size_t *len)
{
	struct vxd *vxd = ctx;
	const struct vxd_snapshot *snap = vxd_snapshot(vxd);
	struct metrics_port *ports = calloc(VXD_MAX_PORTS, sizeof(*ports));
	if (!ports)
		return -ENOMEM;
	size_t n = 0;
	for (unsigned i = 1; i < VXD_MAX_PORTS; i++) {
		const struct port *port = vxd->ports[i];
		if (!port || !snap->ports[i].present)
			continue;
		struct metrics_port *mp = &ports[n++];
		*mp = (struct metrics_port){ .name = port->name, .type = port->cls->kind_name, .vni = port->vni,
					     .snap = &snap->ports[i], .vxlan = port_is_vxlan(port) };
		struct tap_kernel_stats ks;
		if (port_is_tap(port) && tap_port_kernel_stats(port, &ks) == 0) {
			mp->has_kernel = true;
			mp->kernel_tx_dropped = ks.tx_dropped;
		}
	}
	/* The ports a datapath serves itself (metrics_dp.c). */
	struct dpif *devdp = vxd_devport_dpif(vxd);
	struct vxd_devport_metrics *devm = NULL;
	if (dpif_has_port_counters(devdp)) {
		size_t n_dev;
		devm = vxd_devport_metrics_read(devdp, ports + n, VXD_MAX_PORTS - n, &n_dev);
		n += n_dev;
	}
	/* One series per worker thread, and the control thread's. */
	struct metrics_thread_cpu cpu[VXD_MAX_WORKERS + 1];
	char names[VXD_MAX_WORKERS][16];
	size_t n_cpu = 0;
	for (unsigned i = 0; i < snap->n_workers; i++) {
		const struct vxd_worker_snap *ws = &snap->workers[i];
		snprintf(names[i], sizeof(names[i]), "worker%u", ws->index);
		cpu[n_cpu++] = (struct metrics_thread_cpu){ .thread = names[i], .user_us = ws->cpu_user_us,
							  .sys_us = ws->cpu_sys_us };
	}
	cpu[n_cpu] = (struct metrics_thread_cpu){ .thread = "control" };
	thread_cpu(&cpu[n_cpu].user_us, &cpu[n_cpu].sys_us);
	n_cpu++;
	struct metrics_input in = { .snap = snap, .ports = ports, .n_ports = n, .cpu = cpu, .n_cpu = n_cpu };
	FILE *out = open_memstream(text, len);
	int ret = out ? metrics_text_write(out, &in) : -ENOMEM;
	if (out && ret == 0 && devm)
		vxd_devport_metrics_write(devm, out);
	if (out && fclose(out) != 0)
		ret = -ENOMEM;
	free(ports);
	vxd_devport_metrics_free(devm);
	return ret;
}

int vxd_metrics_start(struct vxd *vxd, const char *spec, char *err, size_t err_size)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char why[METRICS_ERR_SIZE];
	int ret = metrics_parse_addr(spec, &ss, &len, why);
	if (ret == 0)
		ret = metrics_http_start((struct sockaddr *)&ss, len, vxd_metrics_render, vxd, &vxd->metrics, why);
	if (ret < 0) {
		snprintf(err, err_size, "--metrics %s: %s", spec, why);
		return ret;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = VXD_METRICS_SRC };
	if (epoll_ctl(vxd->epfd, EPOLL_CTL_ADD, metrics_http_fd(vxd->metrics), &ev) < 0) {
		ret = -errno;
		snprintf(err, err_size, "--metrics %s: epoll: %s", spec, strerror(-ret));
		metrics_http_stop(vxd->metrics);
		vxd->metrics = NULL;
	}
	return ret;
}

void vxd_metrics_run(struct vxd *vxd)
{
	if (vxd->metrics)
		metrics_http_run(vxd->metrics);
}
