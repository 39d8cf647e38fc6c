/* vni_map: VNI -> port id, for the socket demux.
 *
 * Why: a vxlan socket serves up to VNI_MAX_PORTS VNIs, and the daemon found
 * the port of each received datagram by scanning its VNIs linearly: up to
 * 64 compares per datagram, on the hottest path of the receive side.  This
 * is the same answer in one or two probes of an open-addressing table.
 *
 * Design.
 *   Linear probing over a power-of-two array of (vni, port id) slots, at
 *   most half full, so an unsuccessful lookup ends at an empty slot after
 *   about two probes.  The hash is a multiplicative (Fibonacci) hash of the
 *   24-bit VNI taking the top bits: VNIs are often consecutive, and this
 *   spreads them evenly.  One allocation holds the header and the slots; a
 *   map of 64 VNIs is 1 KB, 16 cache lines.
 *
 * Thread-safety: build, then publish.
 *   A map never changes after vni_map_build() returns, so any number of
 *   threads may call vni_map_lookup() on it with no lock.  To change the
 *   VNIs of a socket the control thread builds a new map and publishes the
 *   pointer with a release store (the reader loads it with acquire); the old
 *   map is destroyed only after every reader has passed a quiescent point
 *   (util/qsbr.h), exactly like a vni_table.
 *
 * Errors: 0 or a negative errno. */
#ifndef VX_SWITCH_VNI_MAP_H
#define VX_SWITCH_VNI_MAP_H

#include <stdint.h>

enum vni_map_limits {
	/* Keys are 24-bit VNIs (FDB_VNI_MAX); anything above is refused at
	 * build and never found. */
	VNI_MAP_VNI_MAX = 0xffffff,
	/* Entries of one map: every VNI of the switch (VNI_TABLE_MAX) fits. */
	VNI_MAP_MAX = 4096,
};

struct vni_map;

/* Builds a map of `n` entries, vnis[i] -> port_ids[i].  Returns 0 with the
 * map in *out, or with *out = NULL: -EINVAL for a VNI above VNI_MAP_VNI_MAX
 * or n > VNI_MAP_MAX, -EEXIST for a VNI given twice, -ENOMEM.  n = 0 builds
 * an empty map (every lookup -1); the arrays may then be NULL. */
int vni_map_build(const uint32_t *vnis, const uint16_t *port_ids, unsigned n, struct vni_map **out);

/* The port id of `vni`, or -1 if absent.  Any thread, no lock. */
int vni_map_lookup(const struct vni_map *m, uint32_t vni);

/* Entries in the map. */
unsigned vni_map_count(const struct vni_map *m);

/* vni_map_destroy(NULL) is a no-op. */
void vni_map_destroy(struct vni_map *m);

#endif
