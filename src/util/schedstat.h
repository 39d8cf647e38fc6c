/* The scheduler's account of the calling thread (/proc/thread-self/
 * schedstat): time on a CPU, and time runnable but waiting for one.  The
 * second is what CPU use alone cannot show: a thread held back by a CPU
 * quota (cgroup cpu.cfs_quota_us / cpu.max) or by other tasks on its
 * cores runs little, yet is never idle: running + waiting is its demand. */
#ifndef VX_UTIL_SCHEDSTAT_H
#define VX_UTIL_SCHEDSTAT_H

#include <stdint.h>

/* 0, or -errno (then both are 0: no schedstat in this kernel). */
int schedstat_self(uint64_t *run_ns, uint64_t *wait_ns);

#endif
