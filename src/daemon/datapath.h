/* The vxswitchd datapath: ports, the L2 switch, GRO and the event loop.
 *
 * Single-threaded today, honestly: one thread runs epoll over every port
 * fd, every shared underlay socket and the control socket, and executes
 * control commands between two receive batches (so the FDB and the VNI
 * table have one owner and no locks; struct pkt_pool is per thread too).
 * Workers per core (DESIGN.md) are a later step behind the same functions.
 *
 * Pipeline of one batch:
 *   tap rx:   readv -> flow_extract -> vnet_hdr_validate -> fwd_frame
 *             -> taps (whole, TSO metadata kept) / vxlan ports (GSO +
 *             UDP_SEGMENT when the frame has TSO metadata)
 *   vxlan rx: recvmmsg (UDP_GRO) -> VNI demux -> flow_extract_vxlan
 *             -> GRO (merge + decap) -> fwd_frame -> taps (writev of a
 *             ~64 KB frame with gso metadata)
 * Frames are queued per output port and flushed at the end of the batch.
 *
 * Life cycle: vxd_create() -> vxd_run() (returns on vxd_stop() or a
 * signal) -> vxd_destroy().  Errors: 0 or negative errno. */
#ifndef VX_DAEMON_DATAPATH_H
#define VX_DAEMON_DATAPATH_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/ctl_cmd.h"
#include "packet/drop_reason.h"

struct vxd;
struct ctl_print;
struct ctl_err;

struct vxd_options {
	const char *ctl_path;   /* NULL: no control socket (tests) */
	uint32_t pool_size;     /* pkts; 0: default */
	uint32_t fdb_size;      /* learned entries over all VNIs; 0: VXD_FDB_SIZE_DEFAULT */
	bool quiet;             /* no informational lines on stderr */
};

int vxd_create(const struct vxd_options *opts, struct vxd **out);
void vxd_destroy(struct vxd *vxd);

/* Runs the loop until vxd_stop() (safe from a signal handler). */
int vxd_run(struct vxd *vxd);
void vxd_stop(struct vxd *vxd);

/* Executes one command (the control socket's dispatcher; the config file
 * goes through it too).  Output goes to `out`; refusals fill err->msg. */
int vxd_execute(struct vxd *vxd, const struct ctl_cmd *cmd, struct ctl_print *out,
		struct ctl_err *err);

#endif
