/* Flower rules on the kernel datapath, the kernel side's plumbing: the
 * maps of bpf/vxdp_rules_abi.h (read that header first: the design, the
 * re-injection path and why no frame is lost), the perf buffer the
 * programs send missed frames on, and the re-injection veth.
 *
 * What it builds at kdp_rules_open(): a veth pair `vxdpr0` <-> `vxdpr1` in
 * vxswitchd's namespace (MTU 65535, up; a left-over pair of a killed run
 * is removed first), vxdp_rules_reinject attached to vxdpr1's ingress, an
 * AF_PACKET socket on vxdpr0 (PACKET_VNET_HDR, so a GSO frame goes back
 * as one GSO frame and a frame whose checksum the VM left to offload gets
 * it completed), and the perf buffer of map `rupcalls`.  kdp_rules_close()
 * removes them.
 *
 * Who calls it: the control thread (control/kdp_rules.c) and the unit
 * tests; one thread.  Nothing blocks but the netlink of open/close and
 * kdp_rules_reinject's send (a veth: the far end's program runs in that
 * send's softirq).  Functions return 0 or a negative errno. */
#ifndef VXSWITCH_DP_KERNEL_KDP_RULES_H
#define VXSWITCH_DP_KERNEL_KDP_RULES_H

#include <stdbool.h>
#include <stdint.h>

#include "dp/kernel/bpf/vxdp_rules_abi.h"
#include "dp/kernel/kdp.h"

struct kdp_rules;

int kdp_rules_open(struct kdp *k, struct kdp_rules **out, char *why, unsigned why_len);
void kdp_rules_close(struct kdp_rules *r);

/* Readable (an epoll fd) when missed frames wait. */
int kdp_rules_fd(const struct kdp_rules *r);

/* A missed frame: the program's header and the first u->cap_len bytes
 * (the skb's data: a VLAN tag in skb metadata is not in them, it is in
 * u->vlan_*). */
typedef void kdp_rupcall_fn(void *aux, const struct vxdp_rupcall *u, const uint8_t *bytes);
/* Hands waiting frames to fn; returns how many, or -errno. */
int kdp_rules_poll(struct kdp_rules *r, kdp_rupcall_fn *fn, void *aux);
/* Frames the perf buffer lost (it was full). */
uint64_t kdp_rules_lost(const struct kdp_rules *r);

/* rgen[0]. */
int kdp_rules_gen_set(struct kdp_rules *r, uint64_t gen);
/* The generation in the map (kept from a previous run: kdp.h). */
int kdp_rules_gen_get(struct kdp_rules *r, uint64_t *gen);
/* Installs key -> v; *old (may be NULL) gets the value it replaced and
 * *had whether there was one.  -E2BIG when the map is full. */
int kdp_rules_flow_put(struct kdp_rules *r, const struct vxdp_rkey *key, const struct vxdp_rval *v,
		       struct vxdp_rval *old, bool *had);
int kdp_rules_flow_del(struct kdp_rules *r, const struct vxdp_rkey *key);
/* A hook's mask (vxdp_rules_abi.h, megaflows): set, or gone. */
int kdp_rules_mask_set(struct kdp_rules *r, const struct vxdp_rmask_key *key, const struct vxdp_rmask *m);
int kdp_rules_mask_del(struct kdp_rules *r, const struct vxdp_rmask_key *key);
/* A counter slot, zeroed / summed over the CPUs. */
int kdp_rules_count_zero(struct kdp_rules *r, uint32_t slot);
int kdp_rules_count_read(struct kdp_rules *r, uint32_t slot, struct vxdp_rcount *sum);
/* The rules path counters of a port, summed over the CPUs (zero when the
 * port never had a frame on it). */
int kdp_rules_stats_read(struct kdp_rules *r, uint32_t ifindex, struct vxdp_rstats *sum);
int kdp_rules_stats_del(struct kdp_rules *r, uint32_t ifindex);
/* Map rvnis: frames of `vni` take the rules path at the vxlan device's
 * ingress (hooks & VXDP_RVNI_INGRESS), its egress (VXDP_RVNI_EGRESS), or
 * neither (0); kdp_rules_vni_clear() empties it (a kept run's). */
int kdp_rules_vni_set(struct kdp_rules *r, uint32_t vni, uint8_t hooks);
void kdp_rules_vni_clear(struct kdp_rules *r);

/* Sends frame[0..len) back through the re-injection veth with decision
 * (ifindex, act[0..n)).  The rest is the virtio_net_hdr the frame goes
 * with (linux/virtio_net.h): a checksum to complete (csum_start/offset),
 * a GSO frame (gso_type VIRTIO_NET_HDR_GSO_*, gso_size, hdr_len). */
struct kdp_reinject {
	uint32_t ifindex;
	uint32_t vni;               /* a vxlan device's frame: its VNI (the L2 switching after) */
	struct vxdp_rorigin origin; /* where it came in, for the egress hooks it meets */
	uint32_t n;
	const struct vxdp_ract *act;
	bool needs_csum;
	uint16_t csum_start, csum_offset;
	uint8_t gso_type;
	uint16_t gso_size, hdr_len;
};
int kdp_rules_reinject(struct kdp_rules *r, const struct kdp_reinject *d, const uint8_t *frame, uint32_t len);

#endif
