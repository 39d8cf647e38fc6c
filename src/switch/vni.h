/* vni: the VNI table of the L2 switch: which VNIs exist and, for each, its
 * flood set (the local ports in the VNI and the remote VTEPs that get a
 * head-end replicated copy of every broadcast, multicast and unknown-unicast
 * frame, like the kernel vxlan's all-zero-MAC fdb entries).
 *
 * Design.
 *   A vni_table is a sorted array of struct vni (binary search by VNI), each
 *   with fixed arrays of ports and VTEPs, so a lookup touches no pointers
 *   and cloning is one copy.
 *
 * Thread-safety: read-copy-publish.
 *   The control thread never modifies a table that workers may read.  It
 *   clones the current table (vni_table_clone), modifies the clone with the
 *   modifiers below, and publishes it with vni_table_publish(); workers pick
 *   it up with vni_table_current() (one acquire load, typically once per
 *   receive batch) and never take a lock.  A published table is immutable,
 *   so any number of threads may call the lookup functions on it
 *   concurrently.  The table returned by vni_table_publish() (the old one)
 *   may still be in use: destroy it only after every worker has finished the
 *   batch during which it could have loaded it (the daemon's quiescent
 *   point).  Modifiers: single thread, on an unpublished table only.
 *
 * Errors: 0 or a negative errno; predicates return bool. */
#ifndef VX_SWITCH_VNI_H
#define VX_SWITCH_VNI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "switch/fdb.h"

enum vni_limits {
	VNI_MAX_PORTS = 64,   /* local ports per VNI */
	VNI_MAX_VTEPS = 128,  /* remote VTEPs per VNI (head-end replication) */
	VNI_TABLE_MAX = 4096, /* VNIs per switch */
};

struct vni {
	uint32_t vni;
	uint16_t n_ports;
	uint16_t n_vteps;
	/* Remote MACs come from BGP EVPN (control/evpn.h): a datagram from a
	 * VTEP does not move a MAC learned on a local port.  Only zebra moves
	 * a local MAC away, with a route of a higher sequence number, so the
	 * move reaches zebra and its duplicate-address detection (RFC 7432
	 * section 15); learning from a flooded copy would withdraw the MAC
	 * instead (docs/EVPN.md, "MAC flaps"). */
	bool evpn;
	uint16_t ports[VNI_MAX_PORTS];          /* in insertion order */
	struct fdb_dst vteps[VNI_MAX_VTEPS];    /* type FDB_DST_VTEP */
};

struct vni_table;

/* Constructors/destructor: control thread.  Return 0 with the new table in
 * *out, or -ENOMEM with *out = NULL.  vni_table_clone() copies `src` (which
 * may be published: it is only read) into a table that is not; it also
 * fails with -ENOMEM when the failpoint "vni_table_clone" hits
 * (util/failpoint.h), so tests can check that a refused change leaves the
 * published table in place.  vni_table_destroy(NULL) is a no-op. */
int vni_table_create(struct vni_table **out);
int vni_table_clone(const struct vni_table *src, struct vni_table **out);
void vni_table_destroy(struct vni_table *table);

/* Modifiers: only on a table not yet published.
 *   vni_add:       -EINVAL (vni > FDB_VNI_MAX), -EEXIST, -ENOSPC.
 *   vni_del:       -ENOENT.
 *   vni_add_port:  -ENOENT (no such VNI), -EEXIST, -ENOSPC.
 *   vni_del_port:  -ENOENT.
 *   vni_add_vtep:  -EINVAL (not a VTEP dst), -ENOENT, -EEXIST, -ENOSPC.
 *   vni_del_vtep:  -ENOENT.
 *   vni_set_evpn:  -ENOENT.
 * After vni_del / vni_del_port / vni_del_vtep the caller also flushes the
 * matching fdb entries (fdb_flush with that vni / dst): forwarding refuses
 * to send to a port outside the VNI anyway, but the entries would linger. */
int vni_add(struct vni_table *table, uint32_t vni);
int vni_del(struct vni_table *table, uint32_t vni);
int vni_add_port(struct vni_table *table, uint32_t vni, uint16_t port);
int vni_del_port(struct vni_table *table, uint32_t vni, uint16_t port);
int vni_add_vtep(struct vni_table *table, uint32_t vni, const struct fdb_dst *vtep);
int vni_del_vtep(struct vni_table *table, uint32_t vni, const struct fdb_dst *vtep);
int vni_set_evpn(struct vni_table *table, uint32_t vni, bool evpn);

/* Lookups: any thread, on a published (immutable) table. */
const struct vni *vni_lookup(const struct vni_table *table, uint32_t vni);
bool vni_has_port(const struct vni *vni, uint16_t port);
bool vni_has_vtep(const struct vni *vni, const struct fdb_dst *vtep);
uint32_t vni_table_count(const struct vni_table *table);
/* The i-th VNI in ascending VNI order (for `vxctl vni show`); NULL past the end. */
const struct vni *vni_table_at(const struct vni_table *table, uint32_t i);

/* Publication point shared by the control thread and the workers. */
struct vni_table_ref {
	_Atomic(struct vni_table *) current;
};

/* Returns the previously published table (to destroy after a grace period). */
struct vni_table *vni_table_publish(struct vni_table_ref *ref, struct vni_table *table);
const struct vni_table *vni_table_current(struct vni_table_ref *ref);

#endif
