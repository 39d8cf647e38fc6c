/* Capture on the kernel datapath, the control thread's side: the perf
 * ring reader (dp/kernel/kdp_capture.h) lives while at least one kernel
 * capture runs; its fd sits in the control epoll (VXD_KCAP_SRC), and the
 * control loop's turn (vxd_capture_drain) hands the copies to capture.c,
 * which filters them into each session's ring and streams them as it
 * does the userspace datapath's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "control/kdp_ports.h"
#include "control/vxd_internal.h"
#include "dp/kernel/kdp.h"
#include "dp/kernel/kdp_capture.h"
#include "util/vlog.h"

struct vxd_kcap {
	struct kdp_cap_reader *r;
	unsigned n_keys;
};

static void kcap_frame(void *aux, const struct vxdp_cap_meta *m, const uint8_t *frame)
{
	vxd_capture_kernel_frame(aux, m, frame);
}

static int kcap_open(struct vxd *vxd)
{
	struct vxd_kcap *kc = calloc(1, sizeof(*kc));
	if (!kc)
		return -ENOMEM;
	/* No capture runs: keys a killed run left in a kept map go. */
	kdp_cap_clear(kdp_ctl_kdp(vxd->kdp));
	int err = kdp_cap_reader_open(kdp_ctl_kdp(vxd->kdp), 0, kcap_frame, vxd, &kc->r);
	if (err < 0) {
		free(kc);
		return err;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = VXD_KCAP_SRC };
	if (epoll_ctl(vxd->epfd, EPOLL_CTL_ADD, kdp_cap_reader_fd(kc->r), &ev) < 0) {
		err = -errno;
		kdp_cap_reader_close(kc->r);
		free(kc);
		return err;
	}
	vxd->kcap = kc;
	return 0;
}

static void kcap_close(struct vxd *vxd)
{
	struct vxd_kcap *kc = vxd->kcap;
	if (!kc)
		return;
	kdp_cap_reader_poll(kc->r, 0); /* what is there goes out first */
	epoll_ctl(vxd->epfd, EPOLL_CTL_DEL, kdp_cap_reader_fd(kc->r), NULL);
	kdp_cap_reader_close(kc->r);
	free(kc);
	vxd->kcap = NULL;
}

int vxd_kcap_set(struct vxd *vxd, const struct vxdp_cap_key *key, uint32_t dirs, const struct vxdp_cbpf_insn *filter,
		 size_t n_insns)
{
	if (!vxd->kdp)
		return -EOPNOTSUPP;
	struct kdp *k = kdp_ctl_kdp(vxd->kdp);
	int err;
	if (dirs && !vxd->kcap && (err = kcap_open(vxd)) < 0)
		return err;
	struct vxdp_cap_state st;
	bool had = kdp_cap_state(k, key, &st) == 0;
	err = kdp_cap_set(k, key, dirs, filter, n_insns);
	if (err < 0) {
		if (vxd->kcap && !vxd->kcap->n_keys)
			kcap_close(vxd);
		return err;
	}
	if (dirs && !had)
		vxd->kcap->n_keys++;
	else if (!dirs && had && vxd->kcap && vxd->kcap->n_keys)
		vxd->kcap->n_keys--;
	if (vxd->kcap && !vxd->kcap->n_keys)
		kcap_close(vxd);
	return 0;
}

void vxd_kcap_state(struct vxd *vxd, const struct vxdp_cap_key *key, struct vxdp_cap_state *st)
{
	if (!vxd->kdp || kdp_cap_state(kdp_ctl_kdp(vxd->kdp), key, st) < 0)
		memset(st, 0, sizeof(*st));
}

void vxd_kcap_poll(struct vxd *vxd)
{
	if (vxd->kcap)
		kdp_cap_reader_poll(vxd->kcap->r, 0);
}
