/* The keys of the kernel's decision cache, vxswitchd's side: the
 * program's key (struct vxdp_rkey) from flow_extract()'s, and which bits
 * of it decide at each hook (megaflows; the contract is
 * dp/kernel/bpf/vxdp_rules_abi.h, "Megaflows").
 *
 * What?
 *   kr_rkey_from_flow() is the key the program must have made of a frame
 *   flow_extract() made `f` of; kr_rkey_covers() says whether it holds
 *   every match field of f (one added to flow_key later and set keeps the
 *   flow on the slow path rather than sharing a decision it should not).
 *
 *   One mask per map `rmasks` key: a VM port's ingress or egress (its
 *   ifindex, | VXDP_RKEY_EGRESS), or the vxlan device's ingress or egress
 *   for one VNI (the VNI's vxlan ports' masks ORed: the device's frames of
 *   a VNI share a key).  A mask is what the hook's rules read
 *   (flower_table_hook_mask) plus the port's identity (ifindex, the
 *   tunnel's VNI and addresses): a decision installed under the masked key
 *   is the verdict of every frame equal to it under the mask.
 *
 * The order that keeps every frame on a right decision
 *   kr_masks_begin, kr_masks_add per hook, kr_masks_write with the new
 *   generation, then the caller bumps rgen[0], then kr_masks_retire.  A
 *   frame that reads the old generation meets a mask of the new one and
 *   looks its whole key up (a miss, an upcall); one that reads the new
 *   one meets the mask the new entries are installed under.
 *
 * Who calls?  control/kdp_rules.c, on the control thread only. */
#ifndef VX_CONTROL_KDP_RULES_KEY_H
#define VX_CONTROL_KDP_RULES_KEY_H

#include <stdbool.h>
#include <stdint.h>

#include "dp/kernel/kdp_rules.h"
#include "parse/flow.h"

void kr_rkey_from_flow(const struct flow_key *f, uint32_t ifindex, struct vxdp_rkey *k);
bool kr_rkey_covers(const struct flow_key *f, const struct vxdp_rkey *k);

struct kr_mask {
	struct vxdp_rmask_key key;
	struct vxdp_rkey mask;
};

struct kr_masks {
	unsigned n, n_old;
	struct kr_mask cur[VXDP_RMASKS], old[VXDP_RMASKS];
	uint64_t write_errors;     /* masks the map refused: those hooks look whole keys up */
};

/* A new set: the current one becomes the old one. */
void kr_masks_begin(struct kr_masks *m);
/* ORs mask into the new set's entry for key (made if new; dropped, and
 * counted as a write error, past VXDP_RMASKS). */
void kr_masks_add(struct kr_masks *m, const struct vxdp_rmask_key *key, const struct vxdp_rkey *mask);
/* Writes the new set into the kernel under generation gen. */
void kr_masks_write(struct kr_masks *m, struct kdp_rules *r, uint64_t gen);
/* Deletes from the kernel the old set's keys the new one lacks. */
void kr_masks_retire(struct kr_masks *m, struct kdp_rules *r);
/* k under its hook's mask of the current set (tun_hook: a hook of the
 * vxlan device, whose masks are per VNI); k unchanged without one
 * (its decision is then installed for the whole key, which the program
 * looks up when it has no mask either). */
void kr_masks_apply(const struct kr_masks *m, struct vxdp_rkey *k, bool tun_hook);

#endif
