/* The kernel's decision cache keys and their masks (kdp_rules_key.h). */
#include "control/kdp_rules_key.h"

#include <string.h>

/* The fields the program's key shares with flow_key's match part, once:
 * S for a scalar (assigned, so a narrower or wider type converts), A for
 * an array (copied whole; the two sides are the same size). */
#define KR_RKEY_FIELDS(S, A) \
	S(tun_vni) S(tun_family) S(tun_tos) S(tun_ttl) S(tun_dst_port) A(tun_src) A(tun_dst) \
	A(dl_dst) A(dl_src) S(dl_type) S(n_vlans) A(vlan_tci) A(vlan_tpid) \
	S(nw_family) S(nw_proto) S(nw_tos) S(nw_ttl) S(nw_frag) S(ipv6_label) A(nw_src) A(nw_dst) \
	A(arp_sha) A(arp_tha) S(tp_src) S(tp_dst) S(tcp_flags) A(mpls_lse) S(mpls_used)

#define KR_SIZES_AGREE(x) _Static_assert(sizeof(((struct vxdp_rkey *)0)->x) == \
					 sizeof(((struct flow_key *)0)->x), #x " differs in size");
#define KR_NONE(x)
KR_RKEY_FIELDS(KR_NONE, KR_SIZES_AGREE)

/* The program's key as flow_extract's key says it should be. */
void kr_rkey_from_flow(const struct flow_key *f, uint32_t ifindex, struct vxdp_rkey *k)
{
	memset(k, 0, sizeof(*k));
	k->ifindex = ifindex;
#define KR_TO_RKEY_S(x) k->x = f->x;
#define KR_TO_RKEY_A(x) memcpy(k->x, f->x, sizeof(k->x));
	KR_RKEY_FIELDS(KR_TO_RKEY_S, KR_TO_RKEY_A)
}

/* Whether the rkey carries every match field of f: f rebuilt from k (in_port
 * and the outer UDP source port, which k leaves out, taken from f) must
 * equal f.
 * A flow_key field the rkey does not hold (one added later) and that is
 * not zero keeps the flow on the slow path instead of caching a decision
 * that frames differing only there would share. */
bool kr_rkey_covers(const struct flow_key *f, const struct vxdp_rkey *k)
{
	struct flow_key b;
	memset(&b, 0, sizeof(b));
	b.in_port = f->in_port;
	b.tun_src_port = f->tun_src_port;
#define KR_TO_FLOW_S(x) b.x = (__typeof__(b.x))k->x;
#define KR_TO_FLOW_A(x) memcpy(b.x, k->x, sizeof(b.x));
	KR_RKEY_FIELDS(KR_TO_FLOW_S, KR_TO_FLOW_A)
	return !memcmp(&b, f, FLOW_KEY_MATCH_SIZE);
}

/* The index of key's mask in set[0..n-1], or -1. */
static int kr_mask_index(const struct kr_mask *set, unsigned n, const struct vxdp_rmask_key *key)
{
	for (unsigned i = 0; i < n; i++)
		if (set[i].key.ifindex == key->ifindex && set[i].key.vni == key->vni)
			return (int)i;
	return -1;
}

void kr_masks_begin(struct kr_masks *m)
{
	memcpy(m->old, m->cur, m->n * sizeof(m->cur[0]));
	m->n_old = m->n;
	m->n = 0;
}

void kr_masks_add(struct kr_masks *m, const struct vxdp_rmask_key *key, const struct vxdp_rkey *mask)
{
	int i = kr_mask_index(m->cur, m->n, key);
	struct kr_mask *e = i < 0 ? NULL : &m->cur[i];
	if (!e) {
		if (m->n == VXDP_RMASKS) {
			m->write_errors++;
			return;
		}
		e = &m->cur[m->n++];
		memset(e, 0, sizeof(*e));
		e->key = *key;
	}
	uint8_t *d = (uint8_t *)&e->mask;
	const uint8_t *s = (const uint8_t *)mask;
	for (size_t b = 0; b < sizeof(*mask); b++)
		d[b] |= s[b];
}

void kr_masks_write(struct kr_masks *m, struct kdp_rules *r, uint64_t gen)
{
	for (unsigned i = 0; i < m->n; i++) {
		struct vxdp_rmask v = { .gen = gen, .mask = m->cur[i].mask };
		if (kdp_rules_mask_set(r, &m->cur[i].key, &v) < 0)
			m->write_errors++;
	}
}

void kr_masks_retire(struct kr_masks *m, struct kdp_rules *r)
{
	for (unsigned i = 0; i < m->n_old; i++)
		if (kr_mask_index(m->cur, m->n, &m->old[i].key) < 0)
			kdp_rules_mask_del(r, &m->old[i].key);
	m->n_old = 0;
}

void kr_masks_apply(const struct kr_masks *m, struct vxdp_rkey *k, bool tun_hook)
{
	struct vxdp_rmask_key key = { .ifindex = k->ifindex, .vni = tun_hook ? k->tun_vni : 0 };
	int i = kr_mask_index(m->cur, m->n, &key);
	if (i < 0)
		return;
	uint8_t *d = (uint8_t *)k;
	const uint8_t *s = (const uint8_t *)&m->cur[i].mask;
	for (size_t b = 0; b < sizeof(*k); b++)
		d[b] &= s[b];
}
