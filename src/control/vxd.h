/* vxswitchd: the daemon as a library (vxswitchd_main.c and the tests use
 * it).
 *
 * Threads: the control thread (the caller of vxd_run) serves the control
 * socket and executes commands; N datapath workers (dp/user/worker.h, one
 * per queue of every tap and lane of every socket, placed by placement.h),
 * started by vxd_create(), move packets.  Commands change the switch by
 * publishing new immutable versions of what the workers read and by
 * requests the workers execute between two batches; docs/DESIGN.md draws
 * it.
 *
 * Life cycle: vxd_create() (the worker forwards from now on) -> vxd_run()
 * (returns on vxd_stop() or a signal) -> vxd_destroy().  vxd_execute() may
 * be called before vxd_run (the config file) or without it (tests), always
 * from one thread.  Errors: 0 or negative errno. */
#ifndef VX_CONTROL_VXD_H
#define VX_CONTROL_VXD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct vxd;
struct ctl_cmd;
struct ctl_print;
struct ctl_err;

struct vxd_options {
	const char *ctl_path;   /* NULL: no control socket (tests) */
	bool ctl_share_group;   /* --group: the socket is ctl_group's, 0660 */
	gid_t ctl_group;
	uint32_t pool_size;     /* pkts; 0: default */
	uint32_t fdb_size;      /* learned entries over all VNIs; 0: VXD_FDB_SIZE_DEFAULT */
	const char *config_path; /* the config file `reload` and SIGHUP re-read; NULL: none */
	bool quiet;             /* no informational lines on stderr */
	uint64_t (*clock)(void); /* the worker's clock; NULL: CLOCK_MONOTONIC (tests warp it) */
	/* Workers and where they run (control/placement.h). */
	unsigned workers;        /* 0: by the placement rules */
	const char *cpus;        /* NULL: by the rules */
	const char *underlay;    /* the device whose NUMA node counts; NULL: found from the config */
	/* "kernel": afpacket, veth and vxlan ports on the eBPF datapath
	 * (control/kdp_ports.h), if its programs load and attach, else the
	 * userspace one with the reason logged, shown by stats and diagnose;
	 * "user": userspace.  NULL, the default: as "kernel", and a start-up
	 * config the kernel datapath refuses (vxswitchd_main.c) starts again
	 * on the userspace one, datapath_why saying why. */
	const char *datapath;
	const char *datapath_why;
	/* datapath came from --datapath (it wins over the config file's
	 * `datapath` line, at start and on reload); false: from that line
	 * (vxswitchd_main.c read it before anything started) or the default. */
	bool datapath_cmdline;
	/* With "kernel": the programs, maps and devices outlive vxswitchd
	 * and the next start adopts them (control/kdp_ports.h). */
	bool keep_datapath;
	const char *bpffs;       /* where kept state is pinned; NULL: /sys/fs/bpf */
};

int vxd_create(const struct vxd_options *opts, struct vxd **out);
/* The kernel datapath serves the switch's ports (it loaded and attached). */
bool vxd_datapath_kernel(const struct vxd *vxd);
void vxd_destroy(struct vxd *vxd);

/* Serves the control socket until vxd_stop() (safe from a signal handler). */
int vxd_run(struct vxd *vxd);
void vxd_stop(struct vxd *vxd);
/* Asks the control loop to re-read the config file (safe from a signal
 * handler: SIGHUP). */
void vxd_request_reload(struct vxd *vxd);
/* Applies opts.config_path (at start-up: from an empty switch).  Refusals
 * say FILE:LINE: why in err->msg. */
int vxd_apply_config(struct vxd *vxd, struct ctl_print *out, struct ctl_err *err);
/* After the start-up config: each datapath lets go what it adopted from a
 * kept run and the config did not name (dpif startup_done; the kernel
 * datapath's kept ports: control/kdp_ports.h). */
void vxd_startup_done(struct vxd *vxd);

/* Serves GET /metrics on SPEC ("ADDR:PORT", "[ADDR6]:PORT"; metrics.c),
 * polled by the control loop.  Called once, after vxd_create and before
 * root is given up.  Refusals (a bad SPEC, bind failed) say why in err:
 * "--metrics 192.0.2.1:0: ...". */
int vxd_metrics_start(struct vxd *vxd, const char *spec, char *err, size_t err_size);

/* Executes one command (the control socket's dispatcher; the config file
 * goes through it too).  Output goes to `out`; refusals fill err->msg. */
int vxd_execute(struct vxd *vxd, const struct ctl_cmd *cmd, struct ctl_print *out,
		struct ctl_err *err);

#endif
