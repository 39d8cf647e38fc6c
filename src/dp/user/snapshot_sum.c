/* The sum of many workers' snapshots: each worker copies its own counters
 * (VXD_REQ_SNAPSHOT), and dpif_user_snapshot() adds them up here into what
 * stats, diagnose and metrics read, keeping each worker's own figures in
 * snap->workers[] (worker.h).  Runs on the control thread, over copies. */
#include <string.h>

#include "dp/user/worker_internal.h"

/* Structs made of uint64_t counters only. */
#define SUM_U64(dst, src)                                                          \
	do {                                                                       \
		_Static_assert(sizeof(*(dst)) % sizeof(uint64_t) == 0, "u64 only"); \
		uint64_t *d_ = (uint64_t *)(dst);                                  \
		const uint64_t *s_ = (const uint64_t *)(src);                      \
		for (size_t k_ = 0; k_ < sizeof(*(dst)) / sizeof(uint64_t); k_++)  \
			d_[k_] += s_[k_];                                          \
	} while (0)

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* The remotes each lane heard ICMP errors about, by address. */
static void merge_icmp_remotes(struct vxlan_sock_stats *d, const struct vxlan_sock_stats *s)
{
	for (unsigned i = 0; i < s->n_icmp_remotes && i < VXLAN_ICMP_REMOTES; i++) {
		const struct vxlan_icmp_remote *r = &s->icmp_remotes[i];
		unsigned k = 0;
		while (k < d->n_icmp_remotes && memcmp(&d->icmp_remotes[k].addr, &r->addr, sizeof(r->addr)))
			k++;
		if (k == d->n_icmp_remotes) {
			if (k == VXLAN_ICMP_REMOTES)
				continue;
			d->icmp_remotes[d->n_icmp_remotes++] = *r;
			continue;
		}
		d->icmp_remotes[k].port_unreach += r->port_unreach;
		d->icmp_remotes[k].other += r->other;
		if (r->last_errno)
			d->icmp_remotes[k].last_errno = r->last_errno;
	}
}

static void merge_sock(struct vxlan_sock_stats *d, const struct vxlan_sock_stats *s)
{
#define MERGE_SOCK_COUNTER(f, text, what) d->f += s->f;
	VXLAN_SOCK_COUNTERS(MERGE_SOCK_COUNTER)
#undef MERGE_SOCK_COUNTER
	d->rx_zero_csum_counted = d->rx_zero_csum_counted && s->rx_zero_csum_counted;
	merge_icmp_remotes(d, s);
	d->last_rx_errno = s->last_rx_errno ? s->last_rx_errno : d->last_rx_errno;
	d->last_tx_errno = s->last_tx_errno ? s->last_tx_errno : d->last_tx_errno;
	/* The knobs are the group's: on only if every lane has them on. */
	d->udp_gro_on = d->udp_gro_on && s->udp_gro_on;
	d->udp_segment_on = d->udp_segment_on && s->udp_segment_on;
}

static void merge_port(struct vxd_port_snap *d, const struct vxd_port_snap *s)
{
	if (!s->present)
		return;
	if (!d->present) {
		*d = *s;
		return;
	}
	/* A lost device is seen by the worker that reads it. */
	d->lost_ns = max_u64(d->lost_ns, s->lost_ns);
	d->lost_events = max_u64(d->lost_events, s->lost_events);
	SUM_U64(&d->stats, &s->stats);
	d->tap.rx_gso_frames += s->tap.rx_gso_frames;
	d->tap.rx_partial_csum += s->tap.rx_partial_csum;
	d->tap.tx_gso_frames += s->tap.tx_gso_frames;
	d->tap.tx_errors += s->tap.tx_errors;
	d->tap.last_tx_errno = s->tap.last_tx_errno ? s->tap.last_tx_errno : d->tap.last_tx_errno;
	d->afp.rx_gso_frames += s->afp.rx_gso_frames;
	d->afp.rx_partial_csum += s->afp.rx_partial_csum;
	d->afp.tx_gso_frames += s->afp.tx_gso_frames;
	d->afp.rx_truncated += s->afp.rx_truncated;
	d->afp.tx_errors += s->afp.tx_errors;
	d->afp.last_tx_errno = s->afp.last_tx_errno ? s->afp.last_tx_errno : d->afp.last_tx_errno;
	d->vx.tx_gso_frames += s->vx.tx_gso_frames;
	d->vx.tx_gso_segments += s->vx.tx_gso_segments;
	d->vx.tx_plain_frames += s->vx.tx_plain_frames;
	merge_sock(&d->sock, &s->sock);
}

static struct vxd_vtep_stats *find_vtep(struct vxd_snapshot *d, const struct vxd_vtep_stats *v)
{
	for (unsigned i = 0; i < d->n_vteps; i++) {
		struct vxd_vtep_stats *t = &d->vteps[i];
		if (t->port == v->port && t->family == v->family && !memcmp(t->addr, v->addr, 16))
			return t;
	}
	return NULL;
}

/* One VTEP as two workers saw it: sent by one, answered to the other,
 * maybe.  What is unanswered is what was sent after the last datagram
 * any worker had from it. */
static void merge_vteps(struct vxd_snapshot *d, const struct vxd_snapshot *s)
{
	for (unsigned i = 0; i < s->n_vteps; i++) {
		const struct vxd_vtep_stats *v = &s->vteps[i];
		struct vxd_vtep_stats *t = find_vtep(d, v);
		if (!t) {
			if (d->n_vteps == VXD_MAX_VTEPS) {
				d->vteps_untracked += v->tx_frames + v->rx_datagrams;
				continue;
			}
			d->vteps[d->n_vteps++] = *v;
			continue;
		}
		t->tx_frames += v->tx_frames;
		t->rx_datagrams += v->rx_datagrams;
		t->first_ns = !t->first_ns || (v->first_ns && v->first_ns < t->first_ns) ? v->first_ns : t->first_ns;
		t->last_tx_ns = max_u64(t->last_tx_ns, v->last_tx_ns);
		uint64_t last_rx = max_u64(t->last_rx_ns, v->last_rx_ns);
		uint64_t since = 0, unanswered = 0;
		const struct vxd_vtep_stats *both[2] = { t, v };
		for (unsigned k = 0; k < 2; k++) {
			if (both[k]->unanswered_ns && both[k]->unanswered_ns > last_rx) {
				since += both[k]->tx_since_rx;
				if (!unanswered || both[k]->unanswered_ns < unanswered)
					unanswered = both[k]->unanswered_ns;
			}
		}
		t->last_rx_ns = last_rx;
		t->tx_since_rx = since;
		t->unanswered_ns = unanswered;
	}
}

static void merge_pool(struct pkt_pool_stats *d, const struct pkt_pool_stats *s)
{
	d->allocs += s->allocs;
	d->alloc_failures += s->alloc_failures;
	d->in_use += s->in_use;
	d->in_use_max += s->in_use_max;
}

/* Adds worker snapshot s to d (d zeroed before the first). */
void vxd_snapshot_add(struct vxd_snapshot *d, const struct vxd_snapshot *s)
{
	d->taken_ns = max_u64(d->taken_ns, s->taken_ns);
	for (unsigned i = 0; i < VXD_MAX_PORTS; i++)
		merge_port(&d->ports[i], &s->ports[i]);
	for (unsigned i = 0; i < DROP_REASON_COUNT; i++)
		d->drops[i] += s->drops[i];
	SUM_U64(&d->rx_csum, &s->rx_csum);
	d->whole_big_tcp_marked += s->whole_big_tcp_marked;
	d->gro_pool_low_flushes += s->gro_pool_low_flushes;
	d->loops += s->loops;
	d->requests += s->requests;
	gro_stats_add(&d->gro, &s->gro);
	SUM_U64(&d->fwd, &s->fwd);
	merge_pool(&d->pool, &s->pool);
	d->pool_size += s->pool_size;
	d->cpu_user_us += s->cpu_user_us;
	d->cpu_sys_us += s->cpu_sys_us;
	d->cpu_run_ns += s->cpu_run_ns;
	d->cpu_wait_ns += s->cpu_wait_ns;
	/* Every worker holds the same captures: the most any holds. */
	d->capture.port_caps = (uint32_t)max_u64(d->capture.port_caps, s->capture.port_caps);
	d->capture.ports_tapped = (uint32_t)max_u64(d->capture.ports_tapped, s->capture.ports_tapped);
	d->capture.sock_caps = (uint32_t)max_u64(d->capture.sock_caps, s->capture.sock_caps);
	d->capture.gro_caps = (uint32_t)max_u64(d->capture.gro_caps, s->capture.gro_caps);
	merge_vteps(d, s);
	d->vteps_untracked += s->vteps_untracked;
	SUM_U64(&d->flow_cache, &s->flow_cache);
	if (d->n_workers < VXD_MAX_WORKERS && s->n_workers)
		d->workers[d->n_workers++] = s->workers[0];
}
