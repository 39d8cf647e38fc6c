/* What `stats` and `diagnose` read of the kernel datapath beyond the
 * ports' counters (kdp.h): the per remote VTEP counters
 * (bpf/vxdp_diag_abi.h) and whether a program is still attached where
 * it was put (tcx links can be detached by others with `bpftool net
 * detach`, a cls_bpf filter removed with `tc filter del`, a clsact qdisc
 * deleted).
 *
 * Who calls it: vxswitchd's control thread (control/kdp_dpif_stats.c,
 * kdp_stats.c) and the unit tests.  Functions return 0 or -errno. */
#ifndef VXSWITCH_DP_KERNEL_KDP_DIAG_H
#define VXSWITCH_DP_KERNEL_KDP_DIAG_H

#include <stdint.h>

#include "dp/kernel/bpf/vxdp_abi.h"
#include "dp/kernel/bpf/vxdp_diag_abi.h"

struct kdp;

/* The VTEP's counters summed over CPUs (last_*: the latest); -ENOENT
 * when no frame went to or came from it yet.  flags: VXDP_FDB_V6 or 0;
 * addr: 16 bytes (IPv4 in the first 4). */
int kdp_vtep_stats_read(struct kdp *k, uint32_t vni, uint32_t flags, const uint8_t *addr,
			struct vxdp_vtep_stats *sum);

/* 1 when `prog_fd`'s program is on ifindex's ingress (tcx or cls_bpf, as
 * kdp_attach_kind() says), 0 when not, -ENODEV when the device is gone. */
int kdp_prog_attached(struct kdp *k, uint32_t ifindex, int prog_fd);

#endif
