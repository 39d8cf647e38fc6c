/* fuzz_evpn_neigh: what a netlink neighbour socket may hand vxswitchd on
 * its EVPN shadow devices, as any bytes.
 *
 * Input: one byte choosing which ifindexes are ours (bit 0: ifindex 10 is a
 * shadow vxlan of VNI 99, bit 1: ifindex 11 a shadow port), then a datagram
 * of netlink messages.  evpn_neigh_parse_all must walk it without reading
 * past it, and every entry it classifies must keep the module's promises:
 *   - a REMOTE_MAC is a unicast, non-zero MAC on a vxlan device of ours,
 *     with NTF_SELF and a non-zero IPv4 VTEP;
 *   - a FLOOD entry has the zero MAC and a non-zero IPv4 VTEP;
 *   - a LOCAL entry is on our port, unicast, not permanent;
 *   - a BRIDGE_REMOTE is the bridge's entry (no NTF_SELF) of a unicast,
 *     non-zero MAC on a vxlan device of ours;
 *   - an IGNORED one names a reason.
 * Each message is also parsed alone, with the datagram's length as its
 * bound, which must agree with the walk. */
#include <linux/neighbour.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "port/evpn_neigh.h"

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond))                                                \
			__builtin_trap();                                   \
	} while (0)

static enum evpn_dev_role lookup(void *aux, int ifindex, uint32_t *vni)
{
	uint8_t mask = *(const uint8_t *)aux;
	*vni = 99;
	if (ifindex == 10 && (mask & 1))
		return EVPN_DEV_VXLAN;
	if (ifindex == 11 && (mask & 2))
		return EVPN_DEV_PORT;
	return EVPN_DEV_NONE;
}

static void check(void *aux, const struct evpn_neigh *n)
{
	(void)aux;
	static const uint8_t zero[6];
	switch (n->kind) {
	case EVPN_NEIGH_REMOTE_MAC:
		CHECK(n->ifindex == 10 && n->vni == 99 && (n->flags & NTF_SELF));
		CHECK(!(n->mac[0] & 1) && memcmp(n->mac, zero, 6));
		CHECK(memcmp(n->vtep, zero, 4));
		break;
	case EVPN_NEIGH_FLOOD:
		CHECK(n->ifindex == 10 && !memcmp(n->mac, zero, 6) && memcmp(n->vtep, zero, 4));
		break;
	case EVPN_NEIGH_LOCAL:
		CHECK(n->ifindex == 11 && !(n->mac[0] & 1) && !(n->state & NUD_PERMANENT));
		break;
	case EVPN_NEIGH_BRIDGE_REMOTE:
		CHECK(n->ifindex == 10 && n->vni == 99 && !(n->flags & NTF_SELF));
		CHECK(!(n->mac[0] & 1) && memcmp(n->mac, zero, 6));
		break;
	case EVPN_NEIGH_IGNORED:
		CHECK(n->why > EVPN_IGN_NONE && n->why < EVPN_IGN_COUNT);
		CHECK(evpn_ignore_name(n->why)[0] != '?');
		break;
	default:
		CHECK(0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t mask = data[0];
	/* A copy of its own size, so ASan sees any read past the datagram. */
	size_t len = size - 1;
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		abort();
	memcpy(buf, data + 1, len);
	int n = evpn_neigh_parse_all(buf, len, lookup, &mask, check, NULL);
	CHECK(n >= 0);
	struct evpn_neigh one;
	evpn_neigh_parse(buf, len, lookup, &mask, &one);
	check(NULL, &one);
	free(buf);
	return 0;
}
