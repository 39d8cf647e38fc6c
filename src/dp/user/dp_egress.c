/* Egress rules on the packet path: dp_output() (dp_output.c) hands each frame
 * about to leave by a port with egress rules here, one copy per output
 * (a flooded frame's copies each), after L2 switching or an ingress rule's
 * mirred chose the port and before a vxlan port encapsulates it, as the
 * kernel runs a device's clsact egress hook on each skb sent through it.
 *
 * The frame is classified at the port's egress hook (switch/flower_hook.h)
 * with the key parsed where it came in: key->in_port is its ingress port,
 * which `indev` matches; a vlan push/pop/modify of a rule before (ingress,
 * or an egress rule of the port that mirred it here) is in the key too
 * (dp_key_vlan()).  The verdict comes from the worker's egress flow
 * cache (not the ingress one: this runs inside an ingress verdict's
 * actions, which must not be moved under them), is copied (a nested egress
 * lookup may reuse the cache entry), counted per rule as on ingress (fast
 * path = a cache hit), then its actions run in order:
 *   drop             dropped, counted as rule_drop on the egress port;
 *   pass             sent on to the port;
 *   mirred redirect  to another port instead (tc: stolen), mirror: a copy
 *                    there too; the frame then runs the target's egress
 *                    rules, as the kernel's mirred does (dev_queue_xmit),
 *                    at most DP_EGRESS_NEST_MAX deep, the kernel's
 *                    MIRRED_NEST_LIMIT, beyond which it is dropped
 *                    (rule_drop on the port whose rule sent it): a loop of
 *                    egress mirreds ends there;
 *   tunnel_key set   on a vxlan port's own egress (no mirred after it):
 *                    this copy goes to the key's remote with its VNI, UDP
 *                    port and checksum instead of the one switching chose;
 *                    before a mirred to a vxlan port: that mirred's key, as
 *                    on ingress; unset forgets it;
 *   vlan push/pop/modify  edit the frame's outer tag (the frame's own linear
 *                    part: a flood copy's edit is its own);
 *   goto chain       on to the rules the classifier followed.
 * A list that ends without a final action sends the frame on.
 *
 * Worker thread only. */
#include <string.h>

#include "dp/user/worker_internal.h"
#include "port/vxlan.h"
#include "switch/flower_hook.h"

void dp_key_vlan(struct flow_key *k, const struct flower_action *a)
{
	switch (a->type) {
	case FLOWER_ACT_VLAN_PUSH:
		if (k->n_vlans) { /* the old outer tag becomes the second; a third is not kept */
			if (k->n_vlans == 2)
				k->dl_type = k->vlan_tpid[1];
			k->vlan_tpid[1] = k->vlan_tpid[0];
			k->vlan_tci[1] = k->vlan_tci[0];
		}
		k->vlan_tpid[0] = a->vlan_tpid;
		k->vlan_tci[0] = a->vlan_tci;
		k->n_vlans = k->n_vlans ? 2 : 1;
		return;
	case FLOWER_ACT_VLAN_POP:
		if (!k->n_vlans)
			return;
		k->vlan_tpid[0] = k->vlan_tpid[1];
		k->vlan_tci[0] = k->vlan_tci[1];
		k->vlan_tpid[1] = 0;
		k->vlan_tci[1] = 0;
		k->n_vlans--;
		return;
	default: /* modify, as pkt_vlan_modify() */
		if (!k->n_vlans)
			return;
		k->vlan_tci[0] = (uint16_t)((k->vlan_tci[0] & ~0x0fffu) | (a->vlan_tci & 0x0fffu));
		if (a->set_prio)
			k->vlan_tci[0] = (uint16_t)((k->vlan_tci[0] & 0x1fffu) | (a->vlan_tci & 0xe000u));
		return;
	}
}

static void dp_egress_drop(struct vxd_worker *w, struct pkt *pkt, uint16_t port)
{
	dp_count_drop(w, port, DROP_RULE_DROP);
	pkt_free(pkt);
}

/* mirred from an egress rule: the frame (redirect) or a copy (mirror) to
 * port `id`, through dp_output() and so through id's own egress rules, one
 * level deeper, with this level's scratch outputs. */
void dp_egress_mirred(struct vxd_worker *w, struct pkt *pkt, const struct flow_key *key, uint16_t id,
		      const struct flower_action *tun, bool copy)
{
	struct pkt *out = copy ? pkt_clone(w->pool, pkt) : pkt;
	if (!out) {
		dp_count_drop(w, id, DROP_NO_BUFFER);
		return;
	}
	struct fwd_result *res = &w->egress_res[w->egress_nest];
	dp_rule_tunnel_key(w, out, id, tun);
	dp_rule_outputs(w, id, tun, res);
	w->egress_nest++;
	dp_output(w, out, key, res);
	w->egress_nest--;
}

/* tunnel_key set in force at the end of a vxlan port's own egress list:
 * this copy's remote, VNI, UDP port and checksum. */
static void dp_egress_tunnel(const struct vxd_worker *w, struct pkt *pkt, struct fdb_dst *dst,
			     const struct flower_action *tun)
{
	if (!tun || dst->type != FDB_DST_VTEP)
		return;
	dst->family = tun->tun_family;
	memcpy(dst->addr, tun->tun_dst, sizeof(dst->addr));
	dp_rule_tunnel_key(w, pkt, dst->port, tun);
}

bool dp_egress(struct vxd_worker *w, struct pkt *pkt, const struct flow_key *key, struct fdb_dst *dst)
{
	const struct flower_table *ft = w->view->flower;
	if (!ft || !key)
		return false;
	if (w->egress_nest >= DP_EGRESS_NEST_MAX) {
		dp_egress_drop(w, pkt, dst->port); /* a loop of egress mirreds */
		return true;
	}
	bool fast;
	struct flower_verdict v = *flow_cache_classify_hook(w->fcache_egress, ft,
							    (uint16_t)(dst->port | FLOWER_HOOK_EGRESS), key, &fast);
	if (v.end == FLOWER_END_NO_MATCH)
		return false;
	flower_counters_add(w->fcounters, &v, (uint32_t)pkt_len(pkt), fast, w->now_ns);
	if (v.end == FLOWER_END_LOOP) {
		dp_egress_drop(w, pkt, dst->port);
		return true;
	}
	struct flow_key edited; /* the key once a vlan action edited the frame */
	const struct dp_act_site egress = { .egress = true, .drop_port = dst->port, .edit = &edited };
	const struct flower_action *tun;
	if (dp_run_actions(w, pkt, &key, &v, &egress, &tun))
		return true;
	dp_egress_tunnel(w, pkt, dst, tun);
	return false;
}
