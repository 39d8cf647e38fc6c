#include "dp/kernel/kdp_capture.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dp/kernel/kdp.h"
#include "dp/kernel/kdp_cbpf.h"

struct kdp_cap_reader {
	struct perf_buffer *pb;
	kdp_cap_fn *fn;
	void *aux;
	uint64_t lost;
};

/* The section holding vxdp_cap_on alone: a whole-value write touches
 * nothing else. */
#define KDP_CAP_FLAG_MAP ".data.vxcap"

static int cap_count_keys(int fd)
{
	struct vxdp_cap_key key, next;
	void *prev = NULL;
	int n = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		n++;
		key = next;
		prev = &key;
	}
	return n;
}

int kdp_cap_set(struct kdp *k, const struct vxdp_cap_key *key, uint32_t dirs, const struct vxdp_cbpf_insn *filter,
		size_t n_insns)
{
	int fd = kdp_map_fd(k, "cap_ports"), ffd = kdp_map_fd(k, KDP_CAP_FLAG_MAP);
	if (fd < 0 || ffd < 0)
		return fd < 0 ? fd : ffd;
	int err;
	if (dirs && n_insns && (err = kdp_cbpf_check(filter, n_insns, NULL, 0)) < 0)
		return err;
	struct vxdp_cap_state st = { 0 };
	if (dirs) {
		/* Keep the counts of a key already on (another session). */
		bpf_map_lookup_elem(fd, key, &st);
		st.dirs = dirs;
		st.n_insns = (uint32_t)n_insns;
		memset(st.insns, 0, sizeof(st.insns));
		if (n_insns)
			memcpy(st.insns, filter, n_insns * sizeof(*filter));
		if (bpf_map_update_elem(fd, key, &st, BPF_ANY) < 0)
			return -errno;
	} else if (bpf_map_delete_elem(fd, key) < 0 && errno != ENOENT) {
		return -errno;
	}
	uint32_t zero = 0, on = (uint32_t)cap_count_keys(fd);
	return bpf_map_update_elem(ffd, &zero, &on, BPF_ANY) < 0 ? -errno : 0;
}

int kdp_cap_clear(struct kdp *k)
{
	int fd = kdp_map_fd(k, "cap_ports"), ffd = kdp_map_fd(k, KDP_CAP_FLAG_MAP);
	if (fd < 0 || ffd < 0)
		return fd < 0 ? fd : ffd;
	struct vxdp_cap_key key;
	while (bpf_map_get_next_key(fd, NULL, &key) == 0)
		if (bpf_map_delete_elem(fd, &key) < 0)
			return -errno;
	uint32_t zero = 0;
	return bpf_map_update_elem(ffd, &zero, &zero, BPF_ANY) < 0 ? -errno : 0;
}

int kdp_cap_state(struct kdp *k, const struct vxdp_cap_key *key, struct vxdp_cap_state *st)
{
	int fd = kdp_map_fd(k, "cap_ports");
	if (fd < 0)
		return fd;
	return bpf_map_lookup_elem(fd, key, st) < 0 ? -errno : 0;
}

int kdp_cap_totals(struct kdp *k, uint32_t *prefiltered, uint64_t *filtered)
{
	int fd = kdp_map_fd(k, "cap_ports");
	*prefiltered = 0;
	*filtered = 0;
	if (fd < 0)
		return fd;
	struct vxdp_cap_key key, next;
	struct vxdp_cap_state st;
	void *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (bpf_map_lookup_elem(fd, &next, &st) == 0) {
			*prefiltered += st.n_insns != 0;
			*filtered += st.filtered;
		}
		key = next;
		prev = &key;
	}
	return 0;
}

int kdp_cap_on(struct kdp *k, uint32_t *on)
{
	int ffd = kdp_map_fd(k, KDP_CAP_FLAG_MAP);
	uint32_t zero = 0;
	if (ffd < 0)
		return ffd;
	return bpf_map_lookup_elem(ffd, &zero, on) < 0 ? -errno : 0;
}

static void cap_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct kdp_cap_reader *r = ctx;
	(void)cpu;
	/* A perf sample is 4-byte aligned (after its u32 size): the header
	 * is copied out, its u64 fields would be misaligned in place. */
	struct vxdp_cap_meta m;
	if (size < sizeof(m)) {
		r->lost++;
		return;
	}
	memcpy(&m, data, sizeof(m));
	if (m.caplen > size - sizeof(m)) {
		r->lost++;
		return;
	}
	r->fn(r->aux, &m, (const uint8_t *)data + sizeof(m));
}

static void cap_lost(void *ctx, int cpu, __u64 cnt)
{
	struct kdp_cap_reader *r = ctx;
	(void)cpu;
	r->lost += cnt;
}

int kdp_cap_reader_open(struct kdp *k, unsigned pages_per_cpu, kdp_cap_fn *fn, void *aux,
			struct kdp_cap_reader **out)
{
	int fd = kdp_map_fd(k, "cap_ring");
	if (fd < 0)
		return fd;
	struct kdp_cap_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fn = fn;
	r->aux = aux;
	r->pb = perf_buffer__new(fd, pages_per_cpu ? pages_per_cpu : 1024, cap_sample, cap_lost, r, NULL);
	if (!r->pb) {
		int err = -errno;
		free(r);
		return err ? err : -EINVAL;
	}
	*out = r;
	return 0;
}

void kdp_cap_reader_close(struct kdp_cap_reader *r)
{
	if (!r)
		return;
	perf_buffer__free(r->pb);
	free(r);
}

int kdp_cap_reader_fd(const struct kdp_cap_reader *r)
{
	return perf_buffer__epoll_fd(r->pb);
}

int kdp_cap_reader_poll(struct kdp_cap_reader *r, int timeout_ms)
{
	int n = timeout_ms ? perf_buffer__poll(r->pb, timeout_ms) : perf_buffer__consume(r->pb);
	return n;
}

uint64_t kdp_cap_reader_lost(const struct kdp_cap_reader *r)
{
	return r->lost;
}
