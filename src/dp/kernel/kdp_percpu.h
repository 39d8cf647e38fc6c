/* Per-CPU map values from userspace.  libbpf hands a per-CPU map's value
 * as one copy per possible CPU (libbpf_num_possible_cpus(), which may be
 * more than the CPUs online), laid end to end; the programs count into
 * their CPU's copy without atomics, and vxswitchd adds them up when it
 * reads.  Every function returns 0 or a negative errno (-ENOENT: no such
 * key). */
#ifndef VXSWITCH_DP_KERNEL_KDP_PERCPU_H
#define VXSWITCH_DP_KERNEL_KDP_PERCPU_H

#include <stddef.h>
#include <stdint.h>

/* key's value set to zero on every CPU (made if absent). */
int kdp_percpu_zero(int fd, const void *key, size_t value_size);
/* key made, zero on every CPU, unless it is there (its value goes on). */
int kdp_percpu_make(int fd, const void *key, size_t value_size);
/* key's value, n 64-bit counters, summed over the CPUs into sum[n]. */
int kdp_percpu_sum(int fd, const void *key, uint64_t *sum, size_t n);
/* key's copies themselves, for a value that is not all sums (a last-seen
 * time is a maximum): *per holds *ncpu of value_size bytes, the caller
 * frees it (also on error: NULL then). */
int kdp_percpu_read(int fd, const void *key, size_t value_size, void **per, int *ncpu);

#endif
