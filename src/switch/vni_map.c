/* vni_map: see vni_map.h.  An empty slot holds VNI_MAP_EMPTY, a value no
 * 24-bit VNI can take, so a probe needs no separate "used" flag. */
#include "switch/vni_map.h"

#include <errno.h>
#include <stdlib.h>

#define VNI_MAP_EMPTY UINT32_MAX

struct vni_map_slot {
	uint32_t vni;
	uint16_t port_id;
	uint16_t pad;
};

struct vni_map {
	uint32_t mask;  /* slots - 1 */
	uint32_t shift; /* 32 - log2(slots): the hash keeps the top bits */
	uint32_t n;
	struct vni_map_slot slots[];
};

static inline uint32_t vni_map_home(const struct vni_map *m, uint32_t vni)
{
	/* 2^32 / golden ratio: consecutive VNIs land far apart. */
	return (uint32_t)(vni * 0x9e3779b1u) >> m->shift;
}

/* At least 2 * n slots (load <= 1/2), at least 8, a power of two. */
static uint32_t vni_map_slots_for(unsigned n)
{
	uint32_t slots = 8;
	while (slots < 2 * n)
		slots <<= 1;
	return slots;
}

static int vni_map_insert(struct vni_map *m, uint32_t vni, uint16_t port_id)
{
	for (uint32_t i = vni_map_home(m, vni);; i = (i + 1) & m->mask) {
		struct vni_map_slot *s = &m->slots[i];
		if (s->vni == vni)
			return -EEXIST;
		if (s->vni == VNI_MAP_EMPTY) {
			s->vni = vni;
			s->port_id = port_id;
			m->n++;
			return 0;
		}
	}
}

int vni_map_build(const uint32_t *vnis, const uint16_t *port_ids, unsigned n, struct vni_map **out)
{
	*out = NULL;
	if (n > VNI_MAP_MAX)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (vnis[i] > VNI_MAP_VNI_MAX)
			return -EINVAL;
	uint32_t slots = vni_map_slots_for(n);
	struct vni_map *m = malloc(sizeof(*m) + slots * sizeof(m->slots[0]));
	if (!m)
		return -ENOMEM;
	m->mask = slots - 1;
	m->shift = 32 - (uint32_t)__builtin_ctz(slots);
	m->n = 0;
	for (uint32_t i = 0; i < slots; i++)
		m->slots[i] = (struct vni_map_slot){ VNI_MAP_EMPTY, 0, 0 };
	for (unsigned i = 0; i < n; i++) {
		if (vni_map_insert(m, vnis[i], port_ids[i]) < 0) {
			free(m);
			return -EEXIST;
		}
	}
	*out = m;
	return 0;
}

int vni_map_lookup(const struct vni_map *m, uint32_t vni)
{
	/* VNI_MAP_EMPTY is above VNI_MAP_VNI_MAX: it must not match a slot. */
	if (vni > VNI_MAP_VNI_MAX)
		return -1;
	for (uint32_t i = vni_map_home(m, vni);; i = (i + 1) & m->mask) {
		const struct vni_map_slot *s = &m->slots[i];
		if (s->vni == vni)
			return s->port_id;
		if (s->vni == VNI_MAP_EMPTY)
			return -1;
	}
}

unsigned vni_map_count(const struct vni_map *m)
{
	return m->n;
}

void vni_map_destroy(struct vni_map *m)
{
	free(m);
}
