#include "dp/kernel/kdp_rules.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dp/kernel/kdp_link.h"
#include "dp/kernel/kdp_percpu.h"
#include "port/rtnl.h"

#define KDP_REINJ_TX "vxdpr0"
#define KDP_REINJ_RX "vxdpr1"

enum { KDP_PERF_PAGES = 1024 }; /* per CPU: 4 MiB, a token bucket's burst of 64 KB frames */

struct kdp_rules {
	struct kdp *k;
	int fd_flows, fd_gen, fd_counts, fd_slots, fd_stats, fd_vnis, fd_masks;
	struct perf_buffer *pb;
	kdp_rupcall_fn *fn;
	void *aux;
	uint64_t lost;
	unsigned n_polled;          /* frames handed to fn by this poll */
	int sock;
	uint32_t rx_ifindex;
	bool made_veth;
	uint32_t seq;               /* of the next re-injected frame */
};

static void why_set(char *why, unsigned len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void why_set(char *why, unsigned len, const char *fmt, ...)
{
	if (!why || !len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	(void)cpu;
	struct kdp_rules *r = ctx;
	/* A perf sample is 4-byte aligned (after its u32 size): the header
	 * is copied out, its u64 fields would be misaligned in place. */
	struct vxdp_rupcall u;
	if (size < sizeof(u) || !r->fn)
		return;
	memcpy(&u, data, sizeof(u));
	if (u.cap_len > size - sizeof(u))
		return;
	r->n_polled++;
	r->fn(r->aux, &u, (const uint8_t *)data + sizeof(u));
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	(void)cpu;
	struct kdp_rules *r = ctx;
	r->lost += cnt;
}

/* The veth pair, its program, the socket. */
static int open_reinject(struct kdp_rules *r, char *why, unsigned why_len)
{
	rtnl_link_delete(-1, KDP_REINJ_TX); /* a killed run's */
	int idx = kdp_link_veth_create(KDP_REINJ_TX, KDP_REINJ_RX, -1, 65535);
	if (idx < 0) {
		why_set(why, why_len, "cannot make the re-injection veth %s: %s", KDP_REINJ_TX, strerror(-idx));
		return idx;
	}
	r->made_veth = true;
	r->rx_ifindex = if_nametoindex(KDP_REINJ_RX);
	int prog = kdp_prog_fd(r->k, "vxdp_rules_reinject");
	int err = r->rx_ifindex ? kdp_attach_prog(r->k, prog, r->rx_ifindex) : -ENODEV;
	if (err < 0) {
		why_set(why, why_len, "cannot attach the re-injection program to %s: %s", KDP_REINJ_RX,
			strerror(-err));
		return err;
	}
	r->sock = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (r->sock < 0)
		goto sock_err;
	int one = 1;
	if (setsockopt(r->sock, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) < 0)
		goto sock_err;
	setsockopt(r->sock, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = (int)if_nametoindex(KDP_REINJ_TX) };
	if (bind(r->sock, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		goto sock_err;
	return 0;
sock_err:
	err = -errno;
	why_set(why, why_len, "cannot open the re-injection socket on %s: %s", KDP_REINJ_TX, strerror(-err));
	return err;
}

int kdp_rules_open(struct kdp *k, struct kdp_rules **out, char *why, unsigned why_len)
{
	struct kdp_rules *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->k = k;
	r->sock = -1;
	r->fd_flows = kdp_map_fd(k, "rflows");
	r->fd_gen = kdp_map_fd(k, "rgen");
	r->fd_counts = kdp_map_fd(k, "rcounts");
	r->fd_slots = kdp_map_fd(k, "rslots");
	r->fd_stats = kdp_map_fd(k, "rstats");
	r->fd_vnis = kdp_map_fd(k, "rvnis");
	r->fd_masks = kdp_map_fd(k, "rmasks");
	int fd_up = kdp_map_fd(k, "rupcalls"), err;
	if (r->fd_flows < 0 || r->fd_gen < 0 || r->fd_counts < 0 || r->fd_slots < 0 ||
	    r->fd_stats < 0 || r->fd_vnis < 0 || r->fd_masks < 0 || fd_up < 0) {
		why_set(why, why_len, "the programs have no rules maps");
		err = -ENOENT;
		goto fail;
	}
	r->pb = perf_buffer__new(fd_up, KDP_PERF_PAGES, on_sample, on_lost, r, NULL);
	if (!r->pb) {
		err = -errno;
		why_set(why, why_len, "cannot map the rules upcall buffers: %s", strerror(-err));
		goto fail;
	}
	if ((err = open_reinject(r, why, why_len)) < 0)
		goto fail;
	*out = r;
	return 0;
fail:
	kdp_rules_close(r);
	return err < 0 ? err : -EINVAL;
}

void kdp_rules_close(struct kdp_rules *r)
{
	if (!r)
		return;
	if (r->sock >= 0)
		close(r->sock);
	if (r->rx_ifindex)
		kdp_detach(r->k, r->rx_ifindex);
	if (r->made_veth)
		rtnl_link_delete(-1, KDP_REINJ_TX);
	perf_buffer__free(r->pb);
	free(r);
}

int kdp_rules_fd(const struct kdp_rules *r)
{
	return perf_buffer__epoll_fd(r->pb);
}

int kdp_rules_poll(struct kdp_rules *r, kdp_rupcall_fn *fn, void *aux)
{
	r->fn = fn;
	r->aux = aux;
	r->n_polled = 0;
	int err = perf_buffer__consume(r->pb);
	r->fn = NULL;
	return err < 0 ? err : (int)r->n_polled;
}

uint64_t kdp_rules_lost(const struct kdp_rules *r)
{
	return r->lost;
}

int kdp_rules_gen_get(struct kdp_rules *r, uint64_t *gen)
{
	uint32_t zero = 0;
	return bpf_map_lookup_elem(r->fd_gen, &zero, gen) < 0 ? -errno : 0;
}

int kdp_rules_gen_set(struct kdp_rules *r, uint64_t gen)
{
	uint32_t zero = 0;
	return bpf_map_update_elem(r->fd_gen, &zero, &gen, BPF_ANY) < 0 ? -errno : 0;
}

int kdp_rules_flow_put(struct kdp_rules *r, const struct vxdp_rkey *key, const struct vxdp_rval *v,
		       struct vxdp_rval *old, bool *had)
{
	struct vxdp_rval o;
	bool h = bpf_map_lookup_elem(r->fd_flows, key, &o) == 0;
	if (had)
		*had = h;
	if (h && old)
		*old = o;
	if (bpf_map_update_elem(r->fd_flows, key, v, BPF_ANY) < 0)
		return -errno;
	return 0;
}

int kdp_rules_mask_set(struct kdp_rules *r, const struct vxdp_rmask_key *key, const struct vxdp_rmask *m)
{
	return bpf_map_update_elem(r->fd_masks, key, m, BPF_ANY) < 0 ? -errno : 0;
}

int kdp_rules_mask_del(struct kdp_rules *r, const struct vxdp_rmask_key *key)
{
	return bpf_map_delete_elem(r->fd_masks, key) < 0 ? -errno : 0;
}

int kdp_rules_flow_del(struct kdp_rules *r, const struct vxdp_rkey *key)
{
	return bpf_map_delete_elem(r->fd_flows, key) < 0 ? -errno : 0;
}

int kdp_rules_count_zero(struct kdp_rules *r, uint32_t slot)
{
	return kdp_percpu_zero(r->fd_counts, &slot, sizeof(struct vxdp_rcount));
}

int kdp_rules_count_read(struct kdp_rules *r, uint32_t slot, struct vxdp_rcount *sum)
{
	return kdp_percpu_sum(r->fd_counts, &slot, (uint64_t *)sum, sizeof(*sum) / sizeof(uint64_t));
}

int kdp_rules_stats_read(struct kdp_rules *r, uint32_t ifindex, struct vxdp_rstats *sum)
{
	int err = kdp_percpu_sum(r->fd_stats, &ifindex, (uint64_t *)sum, sizeof(*sum) / sizeof(uint64_t));
	if (err == -ENOENT) {
		memset(sum, 0, sizeof(*sum));
		return 0;
	}
	return err;
}

int kdp_rules_stats_del(struct kdp_rules *r, uint32_t ifindex)
{
	return bpf_map_delete_elem(r->fd_stats, &ifindex) < 0 ? -errno : 0;
}

int kdp_rules_vni_set(struct kdp_rules *r, uint32_t vni, uint8_t hooks)
{
	bool in = hooks & VXDP_RVNI_INGRESS;
	int err = in ? 0 : kdp_vni_rules_in(r->k, vni, false);
	if (err < 0)
		return err;
	if (hooks && bpf_map_update_elem(r->fd_vnis, &vni, &hooks, BPF_ANY) < 0)
		return -errno;
	if (!hooks && bpf_map_delete_elem(r->fd_vnis, &vni) < 0 && errno != ENOENT)
		return -errno;
	return in ? kdp_vni_rules_in(r->k, vni, true) : 0;
}

void kdp_rules_vni_clear(struct kdp_rules *r)
{
	uint32_t key, next;
	while (bpf_map_get_next_key(r->fd_vnis, NULL, &next) == 0) {
		key = next;
		if (bpf_map_delete_elem(r->fd_vnis, &key) < 0)
			break;
	}
}

int kdp_rules_reinject(struct kdp_rules *r, const struct kdp_reinject *d, const uint8_t *frame, uint32_t len)
{
	if (d->n > VXDP_RACT_MAX)
		return -E2BIG;
	uint32_t seq = ++r->seq & 0xffffff;
	uint32_t idx = seq % VXDP_RSLOTS;
	struct vxdp_rslot sl = { .seq = seq, .ifindex = d->ifindex, .n = d->n, .vni = d->vni, .origin = d->origin };
	memcpy(sl.act, d->act, d->n * sizeof(*d->act));
	if (bpf_map_update_elem(r->fd_slots, &idx, &sl, BPF_ANY) < 0)
		return -errno;
	uint32_t mark = seq << 8 | idx;
	if (setsockopt(r->sock, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)) < 0)
		return -errno;
	struct virtio_net_hdr vh = { 0 };
	if (d->needs_csum) {
		vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		vh.csum_start = d->csum_start;
		vh.csum_offset = d->csum_offset;
	}
	if (d->gso_type) {
		vh.gso_type = d->gso_type;
		vh.gso_size = d->gso_size;
		vh.hdr_len = d->hdr_len;
	}
	struct iovec iov[2] = { { &vh, sizeof(vh) }, { (void *)frame, len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	return sendmsg(r->sock, &mh, 0) < 0 ? -errno : 0;
}
