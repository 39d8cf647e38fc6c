/* The kernel datapath's struct kdp, shared by the files of dp/kernel/
 * that implement kdp.h: kdp.c (the loader: programs, the vxlan device,
 * attachments, kept state) and kdp_maps.c (the ports, VNIs, FDB and
 * counters maps).  Nothing outside dp/kernel/ includes it. */
#ifndef VXSWITCH_DP_KERNEL_KDP_INTERNAL_H
#define VXSWITCH_DP_KERNEL_KDP_INTERNAL_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "dp/kernel/kdp.h"
#include "vxdp.skel.h"

struct kdp_att {
	uint32_t ifindex;
	int link_fd;            /* tcx link, or -1 for cls_bpf */
	bool egress;            /* the egress hook (vxdp_port_egress), else ingress */
};

struct kdp {
	struct vxdp *skel;
	char tun_name[IF_NAMESIZE];
	uint32_t tun_ifindex;
	bool tun_created;
	char keep_dir[PATH_MAX];  /* "": nothing kept (kdp.h, "Kept state") */
	char bpffs[PATH_MAX];
	bool adopted;             /* the maps were a previous run's */
	enum kdp_attach attach;
	bool force_cls_bpf;
	struct kdp_att atts[VXDP_MAX_PORTS + 1];
	unsigned n_atts;
	struct ring_buffer *rb;
	kdp_upcall_fn *up_fn;
	void *up_aux;
	uint32_t upcall_rate, upcall_burst; /* kdp_upcall_limit_set's */
};

/* The per-CPU counters of key (a port's ifindex) set to zero. */
int kdp_counters_zero(struct kdp *k, uint32_t key);

#endif
