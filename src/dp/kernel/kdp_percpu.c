#include "dp/kernel/kdp_percpu.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void *percpu_alloc(size_t value_size, int *ncpu)
{
	*ncpu = libbpf_num_possible_cpus();
	if (*ncpu <= 0) {
		errno = *ncpu ? -*ncpu : EINVAL;
		return NULL;
	}
	return calloc((size_t)*ncpu, value_size);
}

static int percpu_put_zero(int fd, const void *key, size_t value_size, uint64_t flags)
{
	int ncpu;
	void *zero = percpu_alloc(value_size, &ncpu);
	if (!zero)
		return -errno;
	int err = bpf_map_update_elem(fd, key, zero, flags) < 0 ? -errno : 0;
	free(zero);
	return err;
}

int kdp_percpu_zero(int fd, const void *key, size_t value_size)
{
	return percpu_put_zero(fd, key, value_size, BPF_ANY);
}

int kdp_percpu_make(int fd, const void *key, size_t value_size)
{
	int err = percpu_put_zero(fd, key, value_size, BPF_NOEXIST);
	return err == -EEXIST ? 0 : err;
}

int kdp_percpu_read(int fd, const void *key, size_t value_size, void **per, int *ncpu)
{
	*per = percpu_alloc(value_size, ncpu);
	if (!*per)
		return -errno;
	if (bpf_map_lookup_elem(fd, key, *per) == 0)
		return 0;
	int err = -errno;
	free(*per);
	*per = NULL;
	return err;
}

int kdp_percpu_sum(int fd, const void *key, uint64_t *sum, size_t n)
{
	uint64_t *per;
	int ncpu;
	memset(sum, 0, n * sizeof(uint64_t));
	int err = kdp_percpu_read(fd, key, n * sizeof(uint64_t), (void **)&per, &ncpu);
	if (err < 0)
		return err;
	for (int c = 0; c < ncpu; c++)
		for (size_t i = 0; i < n; i++)
			sum[i] += per[(size_t)c * n + i];
	free(per);
	return 0;
}
