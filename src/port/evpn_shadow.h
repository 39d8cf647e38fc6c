/* evpn_shadow: the kernel devices FRR's zebra drives for one EVPN VNI of
 * ours, and the netlink sockets that read and write their FDB.
 *
 * Why kernel devices at all.
 *   zebra (FRR 8.4) learns a VNI only from a kernel vxlan device that is up
 *   and a bridge port, announces it with that device's `local` address as
 *   the VTEP, installs what BGP learned as neighbour entries on it, and
 *   advertises the MACs it finds in the bridge's FDB on the bridge's other
 *   ports (../shared/reference/evpn-frr.md).  So per EVPN VNI vxswitchd
 *   keeps, in its own network namespace:
 *     vxeb<VNI>  a bridge: STP off, multicast snooping off, no addresses
 *                (addrgenmode none), up;
 *     vxev<VNI>  a vxlan: id VNI, local = the port's VTEP address, dstport
 *                EVPN_SHADOW_UDP_PORT (never ours: the kernel binds it),
 *                nolearning, a port of vxeb with learning and every kind
 *                of flooding off, up;
 *     vxep<VNI>  one end of a veth (vxeq<VNI> the other; this kernel has
 *                no `dummy` link type), a port of vxeb with learning and
 *                flooding off, up: our local MACs hang on it as
 *                extern_learn entries.
 *   Nothing has an address and no port floods, so the bridge sends
 *   nothing: the devices are a mailbox between zebra and us, never a
 *   datapath.  Every device carries the alias EVPN_SHADOW_ALIAS, which is
 *   how vxswitchd recognises its own leftovers (evpn_shadow_reap).
 *
 * Threads: control thread only (blocking netlink requests with acks, in
 * the caller's namespace).  Errors: 0 or a negative errno. */
#ifndef VX_PORT_EVPN_SHADOW_H
#define VX_PORT_EVPN_SHADOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EVPN_SHADOW_UDP_PORT 47890
#define EVPN_SHADOW_ALIAS "vxswitchd evpn shadow"

struct evpn_shadow {
	uint32_t vni;
	char br[16], vx[16], port[16], peer[16];
	int br_ifindex, vx_ifindex, port_ifindex;
};

/* The device names of `vni` (no I/O). */
void evpn_shadow_names(uint32_t vni, struct evpn_shadow *out);

/* Creates the devices of `vni` (deleting leftovers of the same names
 * first) with vxlan local `local` (IPv4, network order).  On failure what
 * was made is deleted again. */
int evpn_shadow_create(uint32_t vni, const uint8_t local[4], struct evpn_shadow *out);

/* Deletes the devices (those that exist). */
void evpn_shadow_destroy(const struct evpn_shadow *s);

/* Why zebra would not see the VNI (zebra 8.4 takes a vxlan device only
 * when it is up and a bridge port), read from the devices as they are
 * now: someone may have changed them by hand. */
enum evpn_shadow_fault {
	EVPN_SHADOW_OK = 0,
	EVPN_SHADOW_VX_MISSING,   /* the shadow vxlan is gone */
	EVPN_SHADOW_VX_DOWN,      /* ... is administratively down */
	EVPN_SHADOW_VX_NOT_PORT,  /* ... is not a port of the shadow bridge */
	EVPN_SHADOW_BR_MISSING,   /* the shadow bridge is gone */
	EVPN_SHADOW_BR_DOWN,      /* ... is down */
};
/* "vxlan_missing", ...; "ok" for EVPN_SHADOW_OK. */
const char *evpn_shadow_fault_name(enum evpn_shadow_fault f);
enum evpn_shadow_fault evpn_shadow_check(const struct evpn_shadow *s);

/* Deletes every link of the namespace whose alias is EVPN_SHADOW_ALIAS:
 * what a vxswitchd that died left.  Returns how many, or -errno. */
int evpn_shadow_reap(void);

/* ---- the FDB of the shadow devices --------------------------------------- */

/* A non-blocking NETLINK_ROUTE socket subscribed to RTNLGRP_NEIGH, with a
 * large receive buffer (the kernel still drops on overflow and says so
 * once: ENOBUFS, then dump again).  The failpoint "evpn_small_rcvbuf"
 * (util/failpoint.h) gives it the kernel's smallest buffer instead, so a
 * test overflows it for real. */
int evpn_nl_watch_open(void);

/* Reads one datagram into buf: its length, 0 when nothing is pending,
 * -ENOBUFS when messages were lost, another -errno. */
int evpn_nl_watch_read(int fd, void *buf, size_t size);

/* Dumps every AF_BRIDGE FDB entry of the namespace, calling `fn` with each
 * datagram of the reply (evpn_neigh_parse_all reads them). */
typedef void evpn_nl_chunk_fn(void *aux, const void *buf, size_t len);
int evpn_nl_dump(evpn_nl_chunk_fn *fn, void *aux);

/* The one entry of `mac` in the FDB of device `ifindex` itself (the
 * vxlan device's, with its NDA_DST), to `fn` as a dump's datagram would
 * be: what a single MAC costs, where a dump reads every entry of the
 * namespace.  -ENOENT when it has none. */
int evpn_nl_get(int ifindex, const uint8_t mac[6], evpn_nl_chunk_fn *fn, void *aux);

/* Adds (extern_learn) or deletes our entry of `mac` on port_ifindex.
 * A delete of an entry that is not there is 0. */
int evpn_nl_local(bool add, int port_ifindex, const uint8_t mac[6]);

#endif
