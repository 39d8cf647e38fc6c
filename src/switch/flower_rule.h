/* flower_rule: one flower rule as the datapath sees it, compiled from the
 * rule as written, struct flower_spec (switch/flower_spec.h).
 *
 * What?
 *   A rule sits on one port's ingress or egress (flower_hook.h), in one chain, at (pref, handle); it
 *   has a match over struct flow_key (classifier.h's struct cls_match) and
 *   a list of actions whose port names are resolved to port ids.  It keeps
 *   the struct flower_spec it came from, with pref and handle filled in, so
 *   `filter show` prints back exactly the canonical line of what was added.
 *
 * How tc's keys map onto struct flow_key
 *   protocol P        the outermost ethertype as on the wire: for P other
 *                     than 802.1Q/802.1ad, dl_type == P on an *untagged*
 *                     frame (n_vlans == 0); for 802.1Q/802.1ad, the first
 *                     tag's TPID.  This is tc without VLAN acceleration,
 *                     where a tagged frame's skb->protocol is 802.1Q.
 *   vlan_id/prio      the first tag's TCI (VID bits, PCP bits).
 *   vlan_ethtype E    the type after the first tag: dl_type == E on a
 *                     single-tagged frame, or the second TPID when E is
 *                     itself 802.1Q/802.1ad.
 *   src/dst_mac       dl_src/dl_dst under the mask.
 *   ip_proto          nw_proto.  src_ip/dst_ip: nw_src/nw_dst (IPv4 in the
 *                     first 4 bytes).  ip_tos, ip_ttl: nw_tos, nw_ttl.
 *   src/dst_port      tp_src/tp_dst; one port is an exact mask, a range is
 *                     a CLS_*_RANGE predicate (the classifier's linear stage).
 *   tcp_flags         tcp_flags (12 bits, NS included), masked.
 *   type/code         tp_src/tp_dst, which hold ICMP type/code.
 *   ip_flags          nw_frag: frag = FLOW_FRAG_ANY, firstfrag = ANY without
 *                     LATER; nofirstfrag alone is CLS_NOT_FIRSTFRAG.
 *   enc_key_id        tun_vni, on tunnelled frames only (tun_family bit 2,
 *                     set for both 4 and 6).
 *   enc_src/dst_ip    tun_src/tun_dst under the mask, tun_family exact.
 *   enc_dst_port      tun_dst_port, tunnelled frames only.
 *   mpls lse depth D  mpls_lse[D - 1] under the mask of the fields given,
 *                     and bit D - 1 of mpls_used: the frame has an entry at
 *                     that depth (cls_flower's used_lses); mpls_label/tc/
 *                     bos/ttl are the same at depth 1 (flower_match_mpls.c).
 *   enc_tos/enc_ttl   tun_tos/tun_ttl under the mask, tunnelled frames only:
 *                     the outer header's, as the vxlan port read it
 *                     (IP_RECVTOS/IP_RECVTTL, IPV6_RECVTCLASS/HOPLIMIT) or
 *                     as flow_extract decapsulated it.
 *   arp_sip/arp_tip   nw_src/nw_dst (ARP spa/tpa), arp_op the low byte of
 *                     the opcode in nw_proto (the kernel's key_arp.op),
 *                     arp_sha/arp_tha arp_sha/arp_tha.
 * MPLS and enc_tos/enc_ttl needed new flow_key fields (parse/flow.h).
 *
 * Actions, in order (tc semantics):
 *   mirred redirect   send to the port, stop (tc: stolen).
 *   mirred mirror     send a copy to the port, go on (tc: pipe).
 *   drop              stop, drop.
 *   pass              stop, continue to L2 switching.
 *   goto chain N      stop this list, classify in chain N of the same port;
 *                     no match there means L2 switching (tc: unspecified).
 *   tunnel_key set    attach tunnel metadata (VNI, outer addresses, UDP
 *                     port, checksum) for a following redirect/mirror to a
 *                     vxlan port; unset removes the metadata of the frame.
 *   vlan push/pop/modify   edit the frame's outer tag.
 *   continue          stop this list; classification goes on in the same
 *                     chain among the rules of a later pref (the kernel:
 *                     the action returns TC_ACT_UNSPEC and tcf_classify()
 *                     tries the next filter, which is the next pref; the
 *                     other handles of the same pref are one flower
 *                     instance, which gave its one match).  No later match:
 *                     L2 switching.
 *   pipe              nothing; the list goes on.
 *   A list that ends without a stopping action continues to L2 switching
 *   (tc: pipe at the end of the list is pass).
 *
 * Pure functions, no I/O, no globals. */
#ifndef VX_SWITCH_FLOWER_RULE_H
#define VX_SWITCH_FLOWER_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "switch/classifier.h"
#include "switch/flower_spec.h"

struct flower_action {
	uint8_t type;            /* enum flower_act_type */
	uint8_t tun_csum;        /* tunnel_key set: PKT_TUN_TX_CSUM (csum),
	                          * PKT_TUN_TX_NOCSUM (nocsum), 0: the port's */
	bool set_prio;           /* vlan push/modify: priority given (modify keeps it otherwise) */
	uint8_t tun_family;      /* tunnel_key set: 4 or 6 */
	uint16_t port;           /* mirred: the target port's id */
	uint16_t vlan_tci;       /* vlan push/modify: VID | PCP << 13 */
	uint16_t vlan_tpid;      /* vlan push */
	uint16_t tun_dst_port;   /* tunnel_key set; 0 (no dst_port): the port's */
	uint32_t chain;          /* goto */
	uint32_t tun_vni;        /* tunnel_key set */
	uint8_t tun_src[16], tun_dst[16]; /* IPv4 in the first 4 bytes */
};

struct flower_rule {
	/* Identity: unique (port, chain, pref, handle) in a table.  port is
	 * the hook (switch/flower_hook.h): the port id for its ingress, | 0x8000
	 * for its egress. */
	uint16_t port;
	uint32_t chain, pref, handle;
	/* Counters: `slot` indexes a worker's counter array, `uid` tells the
	 * worker whether the slot's counts are this rule's (flower_table.h). */
	uint32_t slot;
	uint64_t uid;
	uint64_t installed_ns;
	struct cls_match match;
	uint32_t n_actions;
	struct flower_action actions[FLOWER_MAX_ACTIONS];
	struct flower_spec spec; /* as added, pref and handle filled in */
	uint32_t refs;           /* tables holding it: control thread only */
	uint32_t key_hash;       /* flower_match_hash(&spec.match), for the
	                          * batch's duplicate index (flower_index.h):
	                          * control thread only */
};

/* The match of a rule; never fails for a spec that keeps
 * flower_spec.h's invariants (-EINVAL otherwise). */
int flower_match_compile(const struct flower_match *cm, struct cls_match *out);

/* The MPLS, ARP and enc_tos/enc_ttl parts of flower_match_compile()
 * (flower_match_mpls.c). */
void flower_match_compile_mpls(const struct flower_match *cm, struct cls_match *out);
void flower_match_compile_arp_enc(const struct flower_match *cm, struct cls_match *out);

/* Resolves a port name to its id: 0 or -ENOENT.  Given by the daemon. */
typedef int flower_port_resolver(void *aux, const char *name, uint16_t *id);

/* The actions of f, port names resolved.  -ENOENT with err naming the
 * missing port, -EINVAL for a spec that breaks flower_spec.h's invariants. */
int flower_actions_compile(const struct flower_spec *f, flower_port_resolver *resolve, void *aux,
			   struct flower_action *out, char *err, size_t err_size);

/* Whether the action ends the list (redirect, drop, pass, goto, continue). */
bool flower_action_is_final(uint8_t type);

#endif /* VX_SWITCH_FLOWER_RULE_H */
