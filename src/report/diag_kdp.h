/* `diagnose` of the ports a datapath serves itself (the kernel
 * datapath's): pure judgement (as diag.h) over their dpif counters
 * (dp/dpif.h, "Counters"), which report/diagnose_dp.c reads: each port's
 * drops by the datapath's reasons, learning upcalls and their drops, the
 * size histogram of what the VM receives, its rule path; each vxlan
 * port's remote VTEPs; whether the datapath's program is still on each
 * device, and on its own; MTUs.  Findings use diag.h's causes: those of
 * the userspace datapath where the cause is the same (remote_silent,
 * vni_no_vxlan, mtu_underlay, port_drops) and the kernel's own
 * (program_not_attached, upcalls_dropped, small_frames_kernel,
 * rules_cache_thrashing: a port with rules whose lookups in the
 * datapath's decision cache mostly miss, so its frames take the slow
 * path through vxswitchd's classifier).  Judged on totals since the port
 * was added (the counters have no window yet).
 *
 * No port of the kernel datapath is ever forced onto the slow path: taps
 * (the only ports that would need it) are refused at `port add`, so there
 * is no such finding. */
#ifndef VX_REPORT_DIAG_KDP_H
#define VX_REPORT_DIAG_KDP_H

#include <stdbool.h>
#include <stdint.h>

#include "dp/dpif.h"
#include "report/diag.h"

enum diag_kdp_limits {
	DIAG_KDP_MAX_PORTS = 256,
	DIAG_KDP_MAX_REMOTES = 16,
	DIAG_KDP_SMALL_MIN_BYTES = 16 << 20, /* bytes to a VM before its frame sizes are judged */
	DIAG_KDP_SMALL_BOUND = 8192,         /* "small": frames under this (the histogram's first two buckets) */
	DIAG_KDP_THRASH_MIN_MISSES = 2000,   /* rule-cache misses before a port's miss share is judged */
	DIAG_KDP_THRASH_PERMILLE = 500,      /* ... thrashing when this share of lookups misses or more */
};

struct diag_kdp_remote {
	char addr[48];
	struct dpif_vtep_stats s;
};

struct diag_kdp_port {
	struct dpif_port_stats st;   /* who it is, its device, MTU and counters */
	unsigned n_remotes;          /* a vxlan port's */
	struct diag_kdp_remote remotes[DIAG_KDP_MAX_REMOTES];
};

struct diag_kdp_input {
	struct dpif_dp_stats dp;     /* the datapath's own device and rule cache */
	unsigned n_ports;
	struct diag_kdp_port ports[DIAG_KDP_MAX_PORTS];
};

/* Appends the findings of `k` to r; in: only its `only` and knobs are read. */
void diag_judge_kdp(const struct diag_input *in, const struct diag_kdp_input *k, struct diag_report *r);

#endif
