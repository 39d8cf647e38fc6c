/* placement: how many workers, and on which CPUs.
 *
 * What.  vxswitchd starts N workers (worker.h).  Where there is more than
 * one NUMA node, the ones near the underlay NIC are the ones to use: its
 * interrupts, its DMA and the socket buffers the kernel fills for us live
 * there, and a worker on the other node pays the interconnect for every
 * byte (seed 003: 8.7 Gbit/s on the NIC's node, 7.5 on the other).
 *
 * Rules, in order:
 *   - `--cpus LIST` (or the config's): worker i is pinned to the i-th CPU
 *     of LIST (round robin when there are more workers than CPUs); the
 *     CPUs must be allowed to the process (sched_getaffinity), else the
 *     start is refused.  N defaults to the length of LIST.
 *   - otherwise, when the underlay device has a NUMA node
 *     (SYSFS/class/net/DEV/device/numa_node >= 0) and that node's CPUs
 *     (SYSFS/devices/system/node/nodeK/cpulist) include allowed ones: one
 *     worker per allowed CPU of the node, each pinned to its CPU.
 *   - otherwise (no device known, a virtual device such as a veth without
 *     numa_node, or one node only and no device information): one worker
 *     per allowed CPU, not pinned: the scheduler places them.
 *   `--workers N` fixes N in every case; more workers than CPUs is
 *   allowed (they share).  N is at most VXD_MAX_WORKERS.
 * The device is `--underlay DEV`, or the link that holds the local
 * address of the first vxlan port in the config file.
 *
 * SYSFS is "/sys", or $VXSWITCH_SYSFS: tests build a fake tree with two
 * nodes to check the rules on a one-node machine.
 *
 * Pure but for reading files under the root: no thread, no state. */
#ifndef VX_CONTROL_PLACEMENT_H
#define VX_CONTROL_PLACEMENT_H

#include <net/if.h>
#include <sched.h>
#include <stddef.h>

enum { VXD_PLACEMENT_MAX = 16 }; /* = VXD_MAX_WORKERS */

struct vxd_placement_request {
	unsigned workers;          /* 0: by the rules */
	const char *cpus;          /* NULL: not given */
	const char *dev;           /* the underlay device; NULL: unknown */
	const char *sysfs_root;    /* NULL: $VXSWITCH_SYSFS or "/sys" */
	const cpu_set_t *allowed;  /* NULL: sched_getaffinity(0) */
};

struct vxd_placement {
	unsigned n_workers;
	int cpu[VXD_PLACEMENT_MAX];  /* pinned to; -1: not pinned */
	int node[VXD_PLACEMENT_MAX]; /* that CPU's node; -1: unknown or not pinned */
	int dev_node;                /* the underlay device's; -1: unknown */
	char dev[IF_NAMESIZE];       /* "" : none known */
	char how[192];               /* one line for stats and the log */
};

/* 0 with *out filled, or -EINVAL with err naming the word ("--cpus 9: CPU
 * 9 is not allowed to vxswitchd (allowed: 0-1)"). */
int vxd_place(const struct vxd_placement_request *req, struct vxd_placement *out, char *err, size_t err_size);

/* "0-3,6" -> set; -EINVAL on anything else (empty, a bad range, CPU >=
 * CPU_SETSIZE). */
int vxd_cpulist_parse(const char *s, cpu_set_t *out);
/* The set as a list ("0-3,6"); returns buf. */
char *vxd_cpulist_format(const cpu_set_t *set, char *buf, size_t size);
/* The NUMA node of `cpu` under root (-1: unknown). */
int vxd_cpu_node(const char *sysfs_root, int cpu);

#endif
