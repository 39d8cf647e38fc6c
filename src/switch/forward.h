/* forward: the L2 forwarding decision for one frame.
 *
 * Given where a frame came from (a local port, or a remote VTEP through a
 * vxlan port), its VNI and its MACs, fwd_frame() learns the source and
 * returns the list of outputs.  It does no I/O and touches no packet: the
 * caller (the daemon's pipeline) sends copies, encapsulating for VTEP
 * outputs.
 *
 * Rules, in order:
 *  1. The VNI must exist (DROP_VXLAN_UNKNOWN_VNI) and a local ingress port
 *     must be a member of it (DROP_PORT_NOT_IN_VNI): strict VNI isolation,
 *     nothing is learned from a refused frame.
 *  2. An invalid source MAC (multicast, broadcast, zero) drops the frame
 *     (DROP_INVALID_SRC_MAC) and is never learned, as the Linux bridge does.
 *     Otherwise the source is learned (a full table only refuses the entry;
 *     the frame is still forwarded).
 *  3. Known unicast destination -> that one output, FWD_UNICAST, unless
 *       - it is the ingress itself: DROP_LOOP_TO_INGRESS;
 *       - it is a local port no longer in the VNI: DROP_PORT_NOT_IN_VNI;
 *       - the frame came from a VTEP and the destination is another VTEP:
 *         DROP_SPLIT_HORIZON (the overlay is a full mesh; never relay
 *         between VTEPs, as the kernel vxlan/bridge do not).
 *  4. Unknown unicast, broadcast, multicast -> FWD_FLOOD to the VNI's local
 *     ports except the ingress port, plus (only when the frame came from a
 *     local port) one copy per remote VTEP of the VNI: split horizon, a
 *     frame from a VTEP is never replicated to VTEPs.  An empty flood set
 *     is DROP_FDB_DST_UNKNOWN.
 *
 * Thread-safety: struct fwd_switch is per worker; it uses the fdb under the
 * fdb's contract (one owner thread) and a published, immutable vni_table. */
#ifndef VX_SWITCH_FORWARD_H
#define VX_SWITCH_FORWARD_H

#include <stdint.h>

#include "packet/drop_reason.h"
#include "switch/fdb.h"
#include "switch/vni.h"

enum fwd_limits {
	FWD_MAX_OUTPUTS = VNI_MAX_PORTS + VNI_MAX_VTEPS,
};

enum fwd_action {
	FWD_DROP = 0,
	FWD_UNICAST = 1,
	FWD_FLOOD = 2,
};

struct fwd_result {
	enum fwd_action action;
	enum drop_reason reason;  /* DROP_NONE unless action == FWD_DROP */
	uint16_t n_outputs;       /* 0 for FWD_DROP */
	struct fdb_dst outputs[FWD_MAX_OUTPUTS]; /* local ports first, then VTEPs */
};

struct fwd_stats {
	uint64_t frames;
	uint64_t unicast;        /* known unicast forwarded (fdb hit) */
	uint64_t flooded;        /* frames flooded: unknown unicast + bum */
	uint64_t unknown_unicast;/* of which unicast with no fdb entry */
	uint64_t flood_copies;   /* outputs produced by floods */
	uint64_t replicated;     /* of which copies to remote VTEPs */
	uint64_t dropped;
	uint64_t drops[DROP_REASON_COUNT]; /* per reason */
	uint64_t fdb_lookups, fdb_hits;    /* destination MACs looked up, found */
	uint64_t evpn_local_kept; /* from a VTEP, source MAC on a local port of an EVPN VNI: not moved */
};

struct fwd_switch {
	struct fdb *fdb;
	const struct vni_table *vnis; /* reload from vni_table_current() per batch */
	struct fwd_stats stats;
};

void fwd_init(struct fwd_switch *sw, struct fdb *fdb, const struct vni_table *vnis);

/* Decides where the frame goes; fills *res and returns res->action.
 * `ingress` is fdb_dst_port(tap port) for a frame from a local port, or
 * fdb_dst_vtep(vxlan port, pkt->tunnel.family, pkt->tunnel.src) for a
 * decapsulated frame; `vni` is the frame's VNI (the tap's VNI, or the one in
 * the VXLAN header). */
enum fwd_action fwd_frame(struct fwd_switch *sw, const struct fdb_dst *ingress, uint32_t vni,
			  const uint8_t dst_mac[6], const uint8_t src_mac[6], uint64_t now_ns,
			  struct fwd_result *res);

#endif
