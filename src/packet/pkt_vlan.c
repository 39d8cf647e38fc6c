/* pkt_vlan: push, pop and modify a frame's outer VLAN tag (pkt_vlan.h). */
#include <errno.h>
#include <string.h>

#include "packet/bytes.h"
#include "packet/pkt_vlan.h"

enum { MACS_LEN = 12, TPID_8021Q = 0x8100, TPID_8021AD = 0x88a8, VID_MASK = 0x0fff, PCP_SHIFT = 13 };

bool pkt_vlan_tagged(const struct pkt *pkt)
{
	if (pkt->size < MACS_LEN + PKT_VLAN_TAG_LEN)
		return false;
	uint16_t type = load_be16(pkt->data + MACS_LEN);
	return type == TPID_8021Q || type == TPID_8021AD;
}

/* The offload metadata counts from the frame start: it moves with the
 * bytes after the MACs. */
static void pkt_vlan_shift_ol(struct pkt *pkt, int delta)
{
	if (pkt->ol.flags & PKT_OL_NEEDS_CSUM)
		pkt->ol.csum_start = (uint16_t)(pkt->ol.csum_start + delta);
	if (pkt->ol.hdr_len)
		pkt->ol.hdr_len = (uint16_t)(pkt->ol.hdr_len + delta);
}

int pkt_vlan_push(struct pkt *pkt, uint16_t tpid, uint16_t tci)
{
	if (pkt->size < MACS_LEN + 2)
		return -EINVAL;
	uint16_t l2 = pkt->l2_ofs;
	if (!pkt_push(pkt, PKT_VLAN_TAG_LEN))
		return -ENOSPC;
	memmove(pkt->data, pkt->data + PKT_VLAN_TAG_LEN, MACS_LEN);
	store_be16(pkt->data + MACS_LEN, tpid);
	store_be16(pkt->data + MACS_LEN + 2, tci);
	pkt->l2_ofs = l2; /* the header starts where it did */
	pkt_vlan_shift_ol(pkt, PKT_VLAN_TAG_LEN);
	return 0;
}

int pkt_vlan_pop(struct pkt *pkt)
{
	if (!pkt_vlan_tagged(pkt))
		return -ENOENT;
	uint16_t l2 = pkt->l2_ofs;
	memmove(pkt->data + PKT_VLAN_TAG_LEN, pkt->data, MACS_LEN);
	pkt_pull(pkt, PKT_VLAN_TAG_LEN);
	pkt->l2_ofs = l2;
	pkt_vlan_shift_ol(pkt, -PKT_VLAN_TAG_LEN);
	return 0;
}

int pkt_vlan_modify(struct pkt *pkt, uint16_t vid, uint8_t pcp, bool set_pcp)
{
	if (!pkt_vlan_tagged(pkt))
		return -ENOENT;
	uint8_t *tci = pkt->data + MACS_LEN + 2;
	uint16_t v = (uint16_t)((load_be16(tci) & ~VID_MASK) | (vid & VID_MASK));
	if (set_pcp)
		v = (uint16_t)((v & ~(7u << PCP_SHIFT)) | (uint16_t)(pcp & 7) << PCP_SHIFT);
	store_be16(tci, v);
	return 0;
}
