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
	/* Which counters slots a ports entry holds (struct vxdp_port.slot;
	 * 0 is VXDP_COUNTERS_NOPORT's), rebuilt from the ports map when
	 * the maps are adopted; slot_next: where the search for a free one
	 * starts, so a slot just freed is taken last (a frame in flight may
	 * still count to it). */
	bool slot_used[VXDP_COUNTER_SLOTS];
	uint32_t slot_next;
};

/* A free counters slot, zeroed and marked used; -ENOSPC if none. */
int kdp_slot_take(struct kdp *k, uint32_t *slot);
/* The slot the ports entry of `ifindex` holds, if it has one (a port
 * re-added, or an entry of adopted maps): marked used, its counters
 * zeroed unless the maps were adopted; else kdp_slot_take. */
int kdp_slot_keep_or_take(struct kdp *k, uint32_t ifindex, uint32_t *slot);
/* The slots the ports map's entries hold, marked used (adoption). */
int kdp_slots_adopt(struct kdp *k);
/* The per-CPU counters of `slot` set to zero. */
int kdp_counters_zero(struct kdp *k, uint32_t slot);

#endif
