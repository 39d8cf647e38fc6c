/* Capture on the kernel datapath, behind dpif's capture_start and
 * capture_stop (contract: dp/capture.h, control/kdp_ports.h).
 *
 * The programs copy the frames of a (port, direction) key into a perf
 * ring (dp/kernel/kdp_capture.h); this file is the rest of the datapath
 * for captures, as a worker is for the userspace datapath's: its reader
 * lives while a capture runs, its fd in kdp_ctl_fd()'s epoll set, and
 * kdp_ctl_tick() hands each copy through each capture's filter into the
 * capture's ring, then rings the control thread's doorbell as a worker
 * does.  Who owns what is as on the userspace datapath: the caller fills
 * struct vxd_capture before capture_start and frees it after
 * capture_stop.
 *
 * A key is (the port's device, 0), or for a vxlan port (the collect_md
 * device, its VNI), the copy telling the VTEP apart.  The captures of one
 * key share its copies: the programs copy the directions any of them
 * wants, and run a capture's filter before the copy (bpf/vxdp_cbpf.h)
 * only when it is the key's one capture; the key's counts of copies the
 * ring had no room for and of frames its filter skipped are a capture's
 * from what they were at its start.  Outer captures are not the kernel
 * datapath's (the kernel's vxlan device builds the outer headers after
 * the programs): capture_start refuses them, -EOPNOTSUPP, with the
 * reason.  Timestamps are the programs' (bpf_ktime_get_ns: CLOCK_MONOTONIC,
 * kdp_now_ns). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "control/kdp_ports_internal.h"
#include "dp/kernel/kdp_capture.h"
#include "dp/kernel/kdp_cbpf.h"
#include "util/vlog.h"

/* pcap's instructions are the programs' (dp/kernel/bpf/vxdp_capture_abi.h). */
_Static_assert(sizeof(struct bpf_insn) == sizeof(struct vxdp_cbpf_insn), "classic BPF's instruction");
_Static_assert(offsetof(struct bpf_insn, k) == offsetof(struct vxdp_cbpf_insn, k), "classic BPF's k");

/* The key of port p's copies. */
static void kcap_key(const struct kdp_ctl *kc, const struct kc_port *p, struct vxdp_cap_key *key)
{
	bool vxlan = p->spec.type == DPIF_PORT_VXLAN;
	*key = (struct vxdp_cap_key){ .ifindex = vxlan ? kdp_tun_ifindex(kc->k) : p->ifindex,
				      .vni = vxlan ? p->spec.vni : 0 };
}

/* What the programs copy for `key` now: the directions its captures
 * want; the filter of its one capture, when it has one the check
 * passes. */
static int kcap_sync(struct kdp_ctl *kc, const struct vxdp_cap_key *key)
{
	uint32_t dirs = 0;
	unsigned n = 0;
	const struct vxd_capture *one = NULL;
	for (unsigned i = 0; i < VXD_CAPTURE_MAX; i++) {
		const struct vxd_capture *c = kc->caps[i].cap;
		if (c && !memcmp(&kc->caps[i].key, key, sizeof(*key))) {
			dirs |= c->dirs;
			one = c;
			n++;
		}
	}
	const struct vxdp_cbpf_insn *filter = NULL;
	size_t n_insns = 0;
	if (n == 1 && one->insns) {
		const struct vxdp_cbpf_insn *insns = (const struct vxdp_cbpf_insn *)one->insns;
		char why[64];
		if (kdp_cbpf_check(insns, one->n_insns, why, sizeof(why)) == 0) {
			filter = insns;
			n_insns = one->n_insns;
		} else {
			VLOG_INFO("capture", "the filter runs in vxswitchd, not the kernel: %s", why);
		}
	}
	return kdp_cap_set(kc->k, key, dirs, filter, n_insns);
}

/* Is copy m capture c's?  Its key, a direction it wants; a vxlan port's:
 * from or to a VTEP the port names now (configured, or from EVPN). */
static bool kcap_wants(struct kdp_ctl *kc, const struct kc_capture *c, const struct vxdp_cap_meta *m)
{
	if (!(c->cap->dirs & m->dir) || c->key.ifindex != m->ifindex || c->key.vni != m->vni)
		return false;
	if (!c->cap->vxlan)
		return true;
	const struct kc_port *p = kc_by_id(kc, c->cap->port_id);
	const char *port = kdp_ctl_vtep_port(kc, m->vni, m->v6, m->remote);
	return p && port && !strcmp(port, p->spec.name);
}

/* One copy into the ring of every capture it belongs to, through its
 * filter (again: a pre-filter may keep more than it). */
static void kcap_frame(void *aux, const struct vxdp_cap_meta *m, const uint8_t *frame)
{
	struct kdp_ctl *kc = aux;
	for (unsigned i = 0; i < VXD_CAPTURE_MAX; i++) {
		struct vxd_capture *cap = kc->caps[i].cap;
		if (!cap || !kcap_wants(kc, &kc->caps[i], m))
			continue;
		if (cap->insns && !bpf_filter(cap->insns, frame, m->len, m->caplen))
			continue;
		struct dp_capture_rec *rec = rec_ring_reserve(&cap->ring, sizeof(*rec) + m->caplen);
		if (!rec) {
			atomic_fetch_add(&cap->dropped, 1);
			continue;
		}
		*rec = (struct dp_capture_rec){
			.ts_ns = (uint64_t)((int64_t)m->ts_ns + cap->realtime_offset_ns),
			.caplen = m->caplen,
			.len = m->len,
			.dir = m->dir,
		};
		memcpy(rec + 1, frame, m->caplen);
		rec_ring_commit(&cap->ring, sizeof(*rec) + m->caplen);
		atomic_fetch_add(&cap->captured, 1);
		kc->caps[i].added = true;
	}
}

/* The copies waiting, into the rings; the doorbell for each capture that
 * got records, when the control thread asked for it (dp/capture.h). */
void kc_capture_poll(struct kdp_ctl *kc)
{
	if (!kc->cap_reader)
		return;
	kdp_cap_reader_poll(kc->cap_reader, 0);
	for (unsigned i = 0; i < VXD_CAPTURE_MAX; i++) {
		struct vxd_capture *cap = kc->caps[i].cap;
		if (!cap || !kc->caps[i].added)
			continue;
		kc->caps[i].added = false;
		if (cap->want_wake && atomic_exchange(cap->want_wake, false)) {
			uint64_t one = 1;
			if (write(cap->wake_fd, &one, sizeof(one)) < 0) {
				/* already signalled */
			}
		}
	}
}

static int kcap_reader_open(struct kdp_ctl *kc)
{
	/* No capture runs: keys a killed run left in a kept map go. */
	kdp_cap_clear(kc->k);
	int err = kdp_cap_reader_open(kc->k, 0, kcap_frame, kc, &kc->cap_reader);
	if (err < 0)
		return err;
	struct epoll_event ev = { .events = EPOLLIN };
	if (epoll_ctl(kc->epfd, EPOLL_CTL_ADD, kdp_cap_reader_fd(kc->cap_reader), &ev) < 0) {
		err = -errno;
		kdp_cap_reader_close(kc->cap_reader);
		kc->cap_reader = NULL;
	}
	return err;
}

static void kcap_reader_close(struct kdp_ctl *kc)
{
	epoll_ctl(kc->epfd, EPOLL_CTL_DEL, kdp_cap_reader_fd(kc->cap_reader), NULL);
	kdp_cap_reader_close(kc->cap_reader);
	kc->cap_reader = NULL;
}

static unsigned kcap_count(const struct kdp_ctl *kc)
{
	unsigned n = 0;
	for (unsigned i = 0; i < VXD_CAPTURE_MAX; i++)
		n += kc->caps[i].cap != NULL;
	return n;
}

int kd_capture_start(struct dpif *dp, struct vxd_capture *cap, char *why, size_t why_len)
{
	struct kdp_ctl *kc = kc_of(dp);
	const struct kc_port *p = kc_by_id(kc, cap->port_id);
	if (!p) {
		snprintf(why, why_len, "port id %u: not a port of the kernel datapath", cap->port_id);
		return -ENOENT;
	}
	if (cap->outer) {
		snprintf(why, why_len,
			 "port %s: outer: on the kernel datapath the outer headers are made by the kernel's vxlan device "
			 "after the program runs, so vxswitchd never sees them; capture inner frames here, the "
			 "datagrams on the underlay (tcpdump -i DEV udp port %u)%s",
			 p->spec.name, p->spec.dstport, p->spec.type == DPIF_PORT_VXLAN ? "" : " (and outer is for vxlan ports)");
		return -EOPNOTSUPP;
	}
	struct vxdp_cap_key key;
	kcap_key(kc, p, &key);
	cap->realtime_offset_ns = vxd_capture_realtime_offset(kdp_now_ns());
	unsigned slot = 0;
	while (slot < VXD_CAPTURE_MAX && kc->caps[slot].cap)
		slot++;
	if (slot == VXD_CAPTURE_MAX)
		return -EBUSY;
	int err;
	if (!kc->cap_reader && (err = kcap_reader_open(kc)) < 0)
		return err;
	struct vxdp_cap_state st;
	if (kdp_cap_state(kc->k, &key, &st) < 0)
		memset(&st, 0, sizeof(st));
	kc->caps[slot] = (struct kc_capture){ .cap = cap, .key = key, .dropped_base = st.dropped,
					      .filtered_base = st.filtered };
	err = kcap_sync(kc, &key);
	if (err < 0) {
		kc->caps[slot].cap = NULL;
		if (!kcap_count(kc))
			kcap_reader_close(kc);
	}
	return err;
}

void kd_capture_stop(struct dpif *dp, struct vxd_capture *cap)
{
	struct kdp_ctl *kc = kc_of(dp);
	unsigned slot = 0;
	while (slot < VXD_CAPTURE_MAX && kc->caps[slot].cap != cap)
		slot++;
	if (slot == VXD_CAPTURE_MAX)
		return;
	kc_capture_poll(kc); /* copies already made are cap's too */
	struct vxdp_cap_key key = kc->caps[slot].key;
	struct vxdp_cap_state st;
	if (kdp_cap_state(kc->k, &key, &st) == 0) {
		atomic_fetch_add(&cap->dropped, st.dropped - kc->caps[slot].dropped_base);
		atomic_store(&cap->prefiltered, st.filtered - kc->caps[slot].filtered_base);
	}
	kc->caps[slot].cap = NULL;
	kcap_sync(kc, &key);
	if (!kcap_count(kc))
		kcap_reader_close(kc);
}

void kc_capture_close(struct kdp_ctl *kc)
{
	for (unsigned i = 0; i < VXD_CAPTURE_MAX; i++)
		if (kc->caps[i].cap)
			kd_capture_stop(&kc->up, kc->caps[i].cap);
}

bool kdp_ctl_capture_reading(const struct kdp_ctl *kc)
{
	return kc->cap_reader != NULL;
}
