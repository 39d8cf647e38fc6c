/* evpn_neigh: what zebra writes on our shadow devices, read from netlink
 * bytes; and the bytes we write there for our own local MACs.
 *
 * Why.
 *   FRR's zebra (8.4) drives an EVPN VNI only through kernel devices: it
 *   installs remote MACs and flood lists as AF_BRIDGE neighbour entries on
 *   a vxlan device, and advertises local MACs it reads from the bridge
 *   FDB.  vxswitch keeps per EVPN VNI a silent shadow bridge + vxlan + veth
 *   port (port/evpn_shadow.h) for zebra to drive, and mirrors what it sees
 *   there into its own FDB and flood lists (control/evpn.c).  This module
 *   is the pure half of that: message bytes in, one classified entry out;
 *   and the encoder of our own RTM_NEWNEIGH/RTM_DELNEIGH.  No fd, no
 *   globals: the unit tests and fuzz/fuzz_evpn_neigh.c feed it bytes.
 *
 * Classification (facts from FRR 8.4.4 zebra/rt_netlink.c and the
 * kernel's vxlan_fdb_info()/fdb_fill_info(), docs/reference via
 * ../shared/reference/evpn-frr.md):
 *   - on a shadow vxlan device, with NTF_SELF (the vxlan driver's copy,
 *     the one that carries NDA_DST):
 *       all-zero MAC + IPv4 NDA_DST            -> FLOOD (vni, vtep)
 *       unicast MAC + IPv4 NDA_DST + NTF_EXT_LEARNED or NTF_STICKY
 *                                              -> REMOTE_MAC (vni, mac, vtep)
 *   - on a shadow vxlan device, without NTF_SELF (the bridge's entry),
 *     of a unicast MAC                         -> BRIDGE_REMOTE (vni, mac)
 *     Every remote MAC zebra installs has one, so it is mostly a copy of
 *     a REMOTE_MAC; it matters for a MAC we advertise: zebra moving it to
 *     a remote VTEP whose vxlan entry it had left in place (from before
 *     the MAC moved here) changes only the bridge's entry, from our port
 *     to the vxlan, and this is the one notification of that move.
 *   - on a shadow veth port, the bridge's entry (no NTF_SELF) of a unicast
 *     MAC that is not permanent                -> LOCAL (vni, mac): ours
 *   - anything else is IGNORED with a reason (evpn_ignore_name()): the
 *     bridge's copy of a flood entry or group MAC, an EVPN multihoming
 *     entry (NDA_NH_ID: a nexthop group, no single VTEP), an IPv6 NDA_DST
 *     (FRR 8.4's EVPN is IPv4 only), an entry for another VNI (NDA_VNI) or
 *     UDP port (NDA_PORT), a device we do not own, a missing or short
 *     attribute, a truncated message.
 *   RTM_DELNEIGH classifies the same way, with `deleted` set; its flags are
 *   the stored entry's, so the same rules hold.
 *
 * Devices are named by the caller: `lookup` says whether an ifindex is one
 * of our shadow vxlan devices or ports, and of which VNI. */
#ifndef VX_PORT_EVPN_NEIGH_H
#define VX_PORT_EVPN_NEIGH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum evpn_neigh_kind {
	EVPN_NEIGH_IGNORED = 0,
	EVPN_NEIGH_REMOTE_MAC, /* a MAC behind a remote VTEP (type-2 route) */
	EVPN_NEIGH_FLOOD,      /* the VTEP gets a copy of BUM traffic (type-3 route) */
	EVPN_NEIGH_LOCAL,      /* an entry on our shadow port: one we advertise */
	EVPN_NEIGH_BRIDGE_REMOTE, /* the bridge's entry of a MAC on the shadow vxlan (no VTEP) */
};

enum evpn_ignore {
	EVPN_IGN_NONE = 0,
	EVPN_IGN_TRUNCATED,     /* a header or attribute runs past the message */
	EVPN_IGN_NOT_NEIGH,     /* not RTM_NEWNEIGH / RTM_DELNEIGH */
	EVPN_IGN_NOT_BRIDGE,    /* ndm_family is not AF_BRIDGE */
	EVPN_IGN_FOREIGN_DEV,   /* a device that is none of our shadows */
	EVPN_IGN_NO_LLADDR,     /* NDA_LLADDR missing or not 6 bytes */
	EVPN_IGN_MULTIHOMING,   /* NDA_NH_ID: EVPN-MH nexthop group */
	EVPN_IGN_NO_DST,        /* no NDA_DST */
	EVPN_IGN_IPV6_DST,      /* NDA_DST is IPv6 */
	EVPN_IGN_BAD_DST,       /* NDA_DST neither 4 nor 16 bytes, or 0.0.0.0 */
	EVPN_IGN_BRIDGE_COPY,   /* the bridge's notification of a flood entry or group MAC */
	EVPN_IGN_MULTICAST_MAC, /* a group MAC */
	EVPN_IGN_NOT_EXTERN,    /* a remote MAC nobody learned externally (static by hand) */
	EVPN_IGN_OTHER_VNI,     /* NDA_VNI differs from the device's */
	EVPN_IGN_OTHER_PORT,    /* NDA_PORT: a VTEP on another UDP port */
	EVPN_IGN_PERMANENT,     /* on our port: the kernel's own (local/permanent) entry */
	EVPN_IGN_COUNT
};

/* What a shadow device is, for the caller's lookup. */
enum evpn_dev_role {
	EVPN_DEV_NONE = 0,
	EVPN_DEV_VXLAN, /* the shadow vxlan: zebra's remote MACs and flood list */
	EVPN_DEV_PORT,  /* the shadow veth port: our local MACs */
};

/* ifindex -> (role, vni).  Returns EVPN_DEV_NONE for a device not ours. */
typedef enum evpn_dev_role evpn_dev_lookup_fn(void *aux, int ifindex, uint32_t *vni);

struct evpn_neigh {
	enum evpn_neigh_kind kind;
	enum evpn_ignore why;   /* kind IGNORED: the reason */
	bool deleted;           /* RTM_DELNEIGH */
	int ifindex;
	uint32_t vni;           /* of the device (when ours) */
	uint8_t mac[6];
	uint8_t vtep[4];        /* REMOTE_MAC, FLOOD: IPv4, network order */
	uint16_t state;         /* ndm_state */
	uint8_t flags;          /* ndm_flags */
};

const char *evpn_ignore_name(enum evpn_ignore why);

/* Classifies one netlink message (header included) of `len` bytes. */
void evpn_neigh_parse(const void *msg, size_t len, evpn_dev_lookup_fn *lookup, void *aux,
		      struct evpn_neigh *out);

typedef void evpn_neigh_fn(void *aux, const struct evpn_neigh *n);

/* Walks every message of one datagram (or dump part) and calls `fn` for
 * each neighbour message, classified (ignored ones included, so that the
 * caller counts them).  Other message types (NLMSG_DONE, errors, links)
 * are skipped.  Returns the number of neighbour messages; a truncated tail
 * ends the walk. */
int evpn_neigh_parse_all(const void *buf, size_t len, evpn_dev_lookup_fn *lookup, void *aux,
			 evpn_neigh_fn *fn, void *fn_aux);

/* Encodes the request that puts (add) or takes away (!add) our entry for
 * `mac` on the shadow port `port_ifindex`: AF_BRIDGE, NTF_MASTER |
 * NTF_EXT_LEARNED (the bridge keeps it without ageing it and zebra
 * advertises it: a permanent entry it would ignore), NUD_REACHABLE,
 * NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK.  Returns the length written, or
 * 0 when `size` is too small (64 bytes are enough). */
size_t evpn_neigh_encode_local(void *buf, size_t size, bool add, int port_ifindex, const uint8_t mac[6],
			       uint32_t seq);

/* Encodes an RTM_GETNEIGH dump request of every AF_BRIDGE entry.  Returns
 * the length, or 0 when `size` is too small (32 bytes are enough). */
size_t evpn_neigh_encode_dump(void *buf, size_t size, uint32_t seq);

#endif
