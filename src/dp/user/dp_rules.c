/* Flower rules on the packet path: dp_switch() (datapath.c) hands a frame
 * here when its ingress port has rules, ahead of L2 switching.
 *
 * The verdict comes from the worker's flow cache (switch/flow_cache.h),
 * which classifies on a miss; it is counted per rule into the worker's
 * struct flower_counters (fast path = a cache hit, slow path = the
 * classifier), then its rules' actions run in order:
 *   mirred redirect  the frame goes to the port, nothing else (tc: stolen);
 *   mirred mirror    a copy goes to the port, the list goes on;
 *   drop             dropped, counted as rule_drop on the ingress port
 *                    (so is a goto chain loop past FLOWER_MAX_HOPS rules);
 *   pass             on to L2 switching;
 *   goto chain       on to the next rule of the verdict (classify followed
 *                    the goto); none matched there: L2 switching.
 *   continue         the same: the next rule of the verdict is the best
 *                    match of a later pref (classify looked it up); none:
 *                    L2 switching.
 *   pipe             nothing, on to the next action.
 *   tunnel_key set   the tunnel key of the following mirreds to a vxlan
 *                    port, as OVS's flow-based tunnels: the remote VTEP,
 *                    and the VNI, outer UDP destination port (without
 *                    dst_port: the port's) and checksum (csum / nocsum;
 *                    neither: the port's udpcsum) go with the frame
 *                    (pkt.h tunnel.tx_key) for the port to write
 *                    (port/vxlan_tx.c); the port sends from its own
 *                    address, so filters.c refused another src_ip at
 *                    add.  unset forgets it.
 *   vlan push/pop/modify  edit the frame's outer tag in place (pkt_vlan.h),
 *                    for what follows (mirred, or L2 switching); pop and
 *                    modify leave an untagged frame as it is.
 * A list that ends without one of these goes on to L2 switching.
 *
 * To a vxlan port, mirred sends to the tunnel_key's remote with its key,
 * or without one a copy to each of the port's remotes (what a kernel vxlan
 * device does with a frame its FDB has no entry for: its default
 * destinations), with the port's VNI.  A target port that is
 * gone or down drops the frame, counted as for L2 switching.
 *
 * Worker thread only; the table is read from the view, never written. */
#include <string.h>
#include <sys/types.h>

#include "dp/user/worker_internal.h"
#include "packet/pkt_vlan.h"
#include "port/vxlan.h"

/* res: the outputs of a mirred to port `id` (none when it is gone); tun:
 * the tunnel_key set in force, or NULL. */
void dp_rule_outputs(const struct vxd_worker *w, uint16_t id, const struct flower_action *tun,
		     struct fwd_result *res)
{
	const struct port *port = id < VXD_MAX_PORTS ? w->view->ports[id] : NULL;
	res->action = FWD_UNICAST;
	res->reason = DROP_NONE;
	res->n_outputs = 0;
	if (!port) {
		res->action = FWD_DROP;
		res->reason = DROP_FDB_DST_UNKNOWN;
		return;
	}
	if (!port_is_vxlan(port)) {
		res->outputs[res->n_outputs++] = fdb_dst_port(id);
		return;
	}
	if (tun) {
		res->outputs[res->n_outputs++] = fdb_dst_vtep(id, tun->tun_family, tun->tun_dst);
		return;
	}
	const struct vxlan_options *o = vxlan_port_options(port);
	for (unsigned i = 0; i < o->n_remotes && res->n_outputs < FWD_MAX_OUTPUTS; i++)
		res->outputs[res->n_outputs++] = fdb_dst_vtep(id, o->remotes[i].family, o->remotes[i].bytes);
}

/* The tunnel_key's VNI, UDP port and checksum on a frame going to vxlan
 * port `id` (the copy or the redirected frame only: what goes on to L2
 * switching keeps none). */
void dp_rule_tunnel_key(const struct vxd_worker *w, struct pkt *out, uint16_t id,
			const struct flower_action *tun)
{
	const struct port *port = id < VXD_MAX_PORTS ? w->view->ports[id] : NULL;
	if (!tun || !port || !port_is_vxlan(port))
		return;
	out->tunnel.vni = tun->tun_vni;
	out->tunnel.dst_port = tun->tun_dst_port; /* 0: the port's */
	out->tunnel.tx_key = (uint8_t)(PKT_TUN_TX_KEY | tun->tun_csum);
}

/* mirred: the frame (redirect, consumed) or a copy of it (mirror). */
static void dp_rule_mirred(struct vxd_worker *w, struct pkt *pkt, const struct flow_key *key, uint16_t id,
			   const struct flower_action *tun, bool copy)
{
	struct pkt *out = copy ? pkt_clone(w->pool, pkt) : pkt;
	if (!out) {
		dp_count_drop(w, id, DROP_NO_BUFFER);
		return;
	}
	dp_rule_tunnel_key(w, out, id, tun);
	dp_rule_outputs(w, id, tun, &w->rule_res);
	dp_output(w, out, key, &w->rule_res);
}

/* vlan push/pop/modify (pkt_vlan.h).  pop and modify of an untagged frame
 * change nothing (the kernel's vlan action does the same for pop).  False
 * when the frame was dropped: no headroom for a tag. */
bool dp_rule_vlan(struct vxd_worker *w, struct pkt *pkt, const struct flower_action *a)
{
	switch (a->type) {
	case FLOWER_ACT_VLAN_PUSH:
		if (pkt_vlan_push(pkt, a->vlan_tpid, a->vlan_tci) == 0)
			return true;
		dp_count_drop(w, pkt->in_port, DROP_NO_BUFFER);
		pkt_free(pkt);
		return false;
	case FLOWER_ACT_VLAN_POP:
		pkt_vlan_pop(pkt);
		return true;
	default:
		pkt_vlan_modify(pkt, a->vlan_tci & 0x0fff, (uint8_t)(a->vlan_tci >> 13), a->set_prio);
		return true;
	}
}

bool dp_run_actions(struct vxd_worker *w, struct pkt *pkt, const struct flow_key **keyp,
		    const struct flower_verdict *v, const struct dp_act_site *site,
		    const struct flower_action **tunp)
{
	const struct flow_key *key = *keyp;
	const struct flower_action *tun = NULL;
	for (unsigned r = 0; r < v->n_rules; r++) {
		const struct flower_rule *rule = v->rules[r];
		for (uint32_t i = 0; i < rule->n_actions; i++) {
			const struct flower_action *a = &rule->actions[i];
			switch (a->type) {
			case FLOWER_ACT_REDIRECT:
			case FLOWER_ACT_MIRROR: {
				bool copy = a->type == FLOWER_ACT_MIRROR;
				if (site->egress)
					dp_egress_mirred(w, pkt, key, a->port, tun, copy);
				else
					dp_rule_mirred(w, pkt, key, a->port, tun, copy);
				if (!copy)
					return true;
				break;
			}
			case FLOWER_ACT_TUNNEL_SET:
				tun = a;
				break;
			case FLOWER_ACT_TUNNEL_UNSET:
				tun = NULL;
				break;
			case FLOWER_ACT_VLAN_PUSH:
			case FLOWER_ACT_VLAN_POP:
			case FLOWER_ACT_VLAN_MODIFY:
				if (!dp_rule_vlan(w, pkt, a))
					return true;
				if (key != site->edit) { /* what later rules, egress and L2 see */
					*site->edit = *key;
					key = *keyp = site->edit;
				}
				dp_key_vlan(site->edit, a);
				break;
			case FLOWER_ACT_DROP:
				dp_count_drop(w, site->drop_port, DROP_RULE_DROP);
				pkt_free(pkt);
				return true;
			case FLOWER_ACT_PASS:
				*tunp = tun;
				return false;
			default: /* goto, continue: the next rule of the verdict; pipe */
				break;
			}
		}
	}
	*tunp = tun;
	return false;
}

bool dp_rules(struct vxd_worker *w, const struct flower_table *ft, struct pkt *pkt,
	      const struct flow_key **key)
{
	bool fast;
	const struct flower_verdict *v = flow_cache_classify(w->fcache, ft, *key, &fast);
	if (v->end == FLOWER_END_NO_MATCH)
		return false;
	flower_counters_add(w->fcounters, v, (uint32_t)pkt_len(pkt), fast, w->now_ns);
	if (v->end == FLOWER_END_LOOP) {
		dp_count_drop(w, pkt->in_port, DROP_RULE_DROP);
		pkt_free(pkt);
		return true;
	}
	const struct dp_act_site ingress = { .drop_port = pkt->in_port, .edit = &w->rule_key };
	const struct flower_action *tun; /* a tunnel_key set with no mirred after it does nothing here */
	return dp_run_actions(w, pkt, key, v, &ingress, &tun);
}
