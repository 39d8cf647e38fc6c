/* forward: see forward.h for the rules.  Each drop leaves through
 * fwd_drop() so that it is counted once, under its own reason. */
#include "switch/forward.h"

#include <string.h>

void fwd_init(struct fwd_switch *sw, struct fdb *fdb, const struct vni_table *vnis)
{
	memset(sw, 0, sizeof(*sw));
	sw->fdb = fdb;
	sw->vnis = vnis;
}

static enum fwd_action fwd_drop(struct fwd_switch *sw, struct fwd_result *res,
				enum drop_reason reason)
{
	res->action = FWD_DROP;
	res->reason = reason;
	res->n_outputs = 0;
	sw->stats.dropped++;
	sw->stats.drops[reason]++;
	return FWD_DROP;
}

static enum fwd_action fwd_unicast(struct fwd_switch *sw, const struct vni *vni,
				   const struct fdb_dst *ingress, const struct fdb_dst *dst,
				   struct fwd_result *res)
{
	if (fdb_dst_equal(dst, ingress))
		return fwd_drop(sw, res, DROP_LOOP_TO_INGRESS);
	/* A static entry may outlive the port's membership: never let it
	 * carry a frame into another tenant's port. */
	if (dst->type == FDB_DST_PORT && !vni_has_port(vni, dst->port))
		return fwd_drop(sw, res, DROP_PORT_NOT_IN_VNI);
	if (ingress->type == FDB_DST_VTEP && dst->type == FDB_DST_VTEP)
		return fwd_drop(sw, res, DROP_SPLIT_HORIZON);

	res->action = FWD_UNICAST;
	res->reason = DROP_NONE;
	res->n_outputs = 1;
	res->outputs[0] = *dst;
	sw->stats.unicast++;
	return FWD_UNICAST;
}

static enum fwd_action fwd_flood(struct fwd_switch *sw, const struct vni *vni,
				 const struct fdb_dst *ingress, struct fwd_result *res)
{
	uint16_t n = 0;

	for (uint16_t i = 0; i < vni->n_ports; i++) {
		if (ingress->type == FDB_DST_PORT && vni->ports[i] == ingress->port)
			continue;
		res->outputs[n++] = fdb_dst_port(vni->ports[i]);
	}
	/* Split horizon: VTEPs form a full mesh, each replicates to all the
	 * others itself, so a frame from one VTEP goes to local ports only. */
	uint16_t n_local = n;
	if (ingress->type == FDB_DST_PORT)
		for (uint16_t i = 0; i < vni->n_vteps; i++)
			res->outputs[n++] = vni->vteps[i];
	/* From a VTEP with no local port to flood to: the VNI is configured
	 * here but no VM is in it (yet; a start adds ports one by one), the
	 * frame had nowhere to go, and the sender's flood list is not wrong. */
	if (n == 0)
		return fwd_drop(sw, res, ingress->type == FDB_DST_PORT ? DROP_FDB_DST_UNKNOWN : DROP_NO_LOCAL_PORT);

	res->action = FWD_FLOOD;
	res->reason = DROP_NONE;
	res->n_outputs = n;
	sw->stats.flooded++;
	sw->stats.flood_copies += n;
	sw->stats.replicated += n - n_local;
	return FWD_FLOOD;
}

enum fwd_action fwd_frame(struct fwd_switch *sw, const struct fdb_dst *ingress, uint32_t vni,
			  const uint8_t dst_mac[6], const uint8_t src_mac[6], uint64_t now_ns,
			  struct fwd_result *res)
{
	sw->stats.frames++;

	const struct vni *v = sw->vnis ? vni_lookup(sw->vnis, vni) : NULL;
	if (!v)
		return fwd_drop(sw, res, DROP_VXLAN_UNKNOWN_VNI);
	if (ingress->type == FDB_DST_PORT && !vni_has_port(v, ingress->port))
		return fwd_drop(sw, res, DROP_PORT_NOT_IN_VNI);
	if (ingress->type != FDB_DST_PORT && ingress->type != FDB_DST_VTEP)
		return fwd_drop(sw, res, DROP_PORT_NOT_IN_VNI);
	if (!fdb_mac_is_learnable(src_mac)) {
		/* Let the fdb count it too: its counter is the learning view. */
		(void)fdb_learn(sw->fdb, vni, src_mac, ingress, now_ns);
		return fwd_drop(sw, res, DROP_INVALID_SRC_MAC);
	}

	/* A full table or a static conflict refuses the entry, not the frame.
	 * On an EVPN VNI a datagram does not take a MAC from a local port
	 * (struct vni's evpn). */
	struct fdb_dst was;
	if (!(v->evpn && ingress->type == FDB_DST_VTEP && fdb_lookup(sw->fdb, vni, src_mac, now_ns, &was) &&
	      was.type == FDB_DST_PORT))
		(void)fdb_learn(sw->fdb, vni, src_mac, ingress, now_ns);
	else
		sw->stats.evpn_local_kept++;

	struct fdb_dst dst;
	sw->stats.fdb_lookups++;
	if (fdb_lookup(sw->fdb, vni, dst_mac, now_ns, &dst)) {
		sw->stats.fdb_hits++;
		return fwd_unicast(sw, v, ingress, &dst, res);
	}
	if (!(dst_mac[0] & 0x01))
		sw->stats.unknown_unicast++;
	return fwd_flood(sw, v, ingress, res);
}
