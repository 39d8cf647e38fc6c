/* `stats`: the workers -- how they were placed, and each one's CPU, busy
 * share, service demand and the traffic it read (worker.h, placement.h).
 * The traffic per worker is how flows spread over them: the kernel's
 * steering (tap queues, the reuseport program) decides, this shows it. */
#include <inttypes.h>

#include "ctl/ctl_print.h"
#include "control/vxd_internal.h"

/* CPU time as a share of wall time since the start, in thousandths. */
static uint64_t busy_permille(uint64_t cpu_us, uint64_t wall_ns)
{
	uint64_t wall_us = wall_ns / 1000;
	return wall_us ? cpu_us * 1000 / wall_us : 0;
}

static void vxd_print_worker(struct ctl_print *p, const struct vxd_worker_snap *ws, uint64_t wall_ns)
{
	uint64_t cpu_us = ws->cpu_user_us + ws->cpu_sys_us;
	ctl_print_open_object(p, NULL);
	ctl_print_uint(p, CTL_PRINT_ANY, "index", "  worker %" PRIu64 ":", ws->index);
	ctl_print_int(p, CTL_PRINT_JSON, "cpu_pinned", NULL, ws->cpu_pinned);
	if (ws->cpu_pinned >= 0)
		ctl_print_text(p, " pinned to cpu %d (node %d),", ws->cpu_pinned, ws->node);
	else
		ctl_print_text(p, " not pinned,");
	ctl_print_int(p, CTL_PRINT_ANY, "cpu_last", " on cpu %" PRId64, ws->cpu_last);
	ctl_print_int(p, CTL_PRINT_JSON, "node", NULL, ws->node);
	ctl_print_uint(p, CTL_PRINT_ANY, "rx_frames", "; read %" PRIu64 " frames", ws->rx_frames);
	ctl_print_uint(p, CTL_PRINT_ANY, "rx_bytes", " %" PRIu64 " bytes", ws->rx_bytes);
	ctl_print_uint(p, CTL_PRINT_ANY, "user_us", "; cpu user %" PRIu64 " us", ws->cpu_user_us);
	ctl_print_uint(p, CTL_PRINT_ANY, "sys_us", " sys %" PRIu64 " us", ws->cpu_sys_us);
	ctl_print_uint(p, CTL_PRINT_ANY, "busy_permille", " busy %" PRIu64 " permille", busy_permille(cpu_us, wall_ns));
	ctl_print_uint(p, CTL_PRINT_JSON, "run_ns", NULL, ws->cpu_run_ns);
	ctl_print_uint(p, CTL_PRINT_ANY, "wait_ns", " (waited for a CPU %" PRIu64 " ns)", ws->cpu_wait_ns);
	ctl_print_float(p, CTL_PRINT_ANY, "us_per_kb", " (%.3f us/KB read)",
			ws->rx_bytes ? (double)cpu_us / ((double)ws->rx_bytes / 1024.0) : 0.0);
	ctl_print_uint(p, CTL_PRINT_ANY, "loops", "; loops %" PRIu64, ws->loops);
	ctl_print_uint(p, CTL_PRINT_ANY, "polls", " polls %" PRIu64, ws->polls);
	ctl_print_uint(p, CTL_PRINT_ANY, "poll_hits", " (with traffic %" PRIu64 ")", ws->poll_hits);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

void vxd_print_workers(struct ctl_print *p, const struct vxd *vxd, const struct vxd_snapshot *snap)
{
	const struct vxd_placement *pl = &vxd->placement;
	ctl_print_open_object(p, "workers");
	ctl_print_uint(p, CTL_PRINT_ANY, "n", "workers: %" PRIu64, snap->n_workers);
	ctl_print_string(p, CTL_PRINT_ANY, "placement", " (%s)", pl->how);
	ctl_print_string(p, CTL_PRINT_JSON, "underlay", NULL, pl->dev);
	ctl_print_int(p, CTL_PRINT_JSON, "underlay_node", NULL, pl->dev_node);
	ctl_print_uint(p, CTL_PRINT_JSON, "poll_us", NULL, vxd->knobs[CTL_KNOB_POLL_US]);
	ctl_print_nl(p);
	ctl_print_open_array(p, "list");
	uint64_t wall_ns = snap->taken_ns > vxd->start_ns ? snap->taken_ns - vxd->start_ns : 0;
	for (unsigned i = 0; i < snap->n_workers; i++)
		vxd_print_worker(p, &snap->workers[i], wall_ns);
	ctl_print_close_array(p);
	ctl_print_close_object(p);
}
