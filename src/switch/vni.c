/* vni: see vni.h.  The table is an array of struct vni kept sorted by VNI;
 * modifiers shift elements (control path, at most VNI_TABLE_MAX), lookups
 * binary-search. */
#include "switch/vni.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/failpoint.h"

struct vni_table {
	uint32_t n_vnis;
	uint32_t capacity;
	struct vni *vnis; /* sorted by vni, ascending */
};

int vni_table_create(struct vni_table **out)
{
	*out = calloc(1, sizeof(struct vni_table));
	return *out ? 0 : -ENOMEM;
}

int vni_table_clone(const struct vni_table *src, struct vni_table **out)
{
	*out = NULL;
	/* The control path's one allocation per change: failing it must leave
	 * the published table in use and the command refused. */
	if (failpoint_hit("vni_table_clone"))
		return -ENOMEM;
	struct vni_table *clone;
	int err = vni_table_create(&clone);
	if (err < 0)
		return err;
	if (src->n_vnis > 0) {
		clone->vnis = malloc(src->n_vnis * sizeof(*clone->vnis));
		if (!clone->vnis) {
			free(clone);
			return -ENOMEM;
		}
		memcpy(clone->vnis, src->vnis, src->n_vnis * sizeof(*clone->vnis));
		clone->n_vnis = clone->capacity = src->n_vnis;
	}
	*out = clone;
	return 0;
}

void vni_table_destroy(struct vni_table *table)
{
	if (!table)
		return;
	free(table->vnis);
	free(table);
}

/* Index of the first element with vni >= `vni`. */
static uint32_t vni_lower_bound(const struct vni_table *table, uint32_t vni)
{
	uint32_t lo = 0, hi = table->n_vnis;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (table->vnis[mid].vni < vni)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct vni *vni_lookup(const struct vni_table *table, uint32_t vni)
{
	uint32_t i = vni_lower_bound(table, vni);
	return i < table->n_vnis && table->vnis[i].vni == vni ? &table->vnis[i] : NULL;
}

/* Same, writable: for the modifiers on an unpublished table. */
static struct vni *vni_find_mut(struct vni_table *table, uint32_t vni)
{
	return (struct vni *)vni_lookup(table, vni);
}

int vni_add(struct vni_table *table, uint32_t vni)
{
	if (vni > FDB_VNI_MAX)
		return -EINVAL;
	uint32_t i = vni_lower_bound(table, vni);
	if (i < table->n_vnis && table->vnis[i].vni == vni)
		return -EEXIST;
	if (table->n_vnis >= VNI_TABLE_MAX)
		return -ENOSPC;
	if (table->n_vnis == table->capacity) {
		uint32_t capacity = table->capacity ? table->capacity * 2 : 8;
		if (capacity > VNI_TABLE_MAX)
			capacity = VNI_TABLE_MAX;
		struct vni *vnis = realloc(table->vnis, capacity * sizeof(*vnis));
		if (!vnis)
			return -ENOMEM;
		table->vnis = vnis;
		table->capacity = capacity;
	}
	memmove(&table->vnis[i + 1], &table->vnis[i], (table->n_vnis - i) * sizeof(*table->vnis));
	memset(&table->vnis[i], 0, sizeof(table->vnis[i]));
	table->vnis[i].vni = vni;
	table->n_vnis++;
	return 0;
}

int vni_del(struct vni_table *table, uint32_t vni)
{
	uint32_t i = vni_lower_bound(table, vni);
	if (i >= table->n_vnis || table->vnis[i].vni != vni)
		return -ENOENT;
	memmove(&table->vnis[i], &table->vnis[i + 1],
		(table->n_vnis - i - 1) * sizeof(*table->vnis));
	table->n_vnis--;
	return 0;
}

bool vni_has_port(const struct vni *vni, uint16_t port)
{
	for (uint16_t i = 0; i < vni->n_ports; i++)
		if (vni->ports[i] == port)
			return true;
	return false;
}

static int vni_vtep_index(const struct vni *vni, const struct fdb_dst *vtep)
{
	for (uint16_t i = 0; i < vni->n_vteps; i++)
		if (fdb_dst_equal(&vni->vteps[i], vtep))
			return i;
	return -1;
}

bool vni_has_vtep(const struct vni *vni, const struct fdb_dst *vtep)
{
	return vni_vtep_index(vni, vtep) >= 0;
}

int vni_add_port(struct vni_table *table, uint32_t vni, uint16_t port)
{
	struct vni *v = vni_find_mut(table, vni);
	if (!v)
		return -ENOENT;
	if (vni_has_port(v, port))
		return -EEXIST;
	if (v->n_ports >= VNI_MAX_PORTS)
		return -ENOSPC;
	v->ports[v->n_ports++] = port;
	return 0;
}

int vni_del_port(struct vni_table *table, uint32_t vni, uint16_t port)
{
	struct vni *v = vni_find_mut(table, vni);
	if (!v)
		return -ENOENT;
	for (uint16_t i = 0; i < v->n_ports; i++) {
		if (v->ports[i] == port) {
			memmove(&v->ports[i], &v->ports[i + 1], (v->n_ports - i - 1) * sizeof(v->ports[0]));
			v->n_ports--;
			return 0;
		}
	}
	return -ENOENT;
}

int vni_add_vtep(struct vni_table *table, uint32_t vni, const struct fdb_dst *vtep)
{
	if (vtep->type != FDB_DST_VTEP || (vtep->family != 4 && vtep->family != 6))
		return -EINVAL;
	struct vni *v = vni_find_mut(table, vni);
	if (!v)
		return -ENOENT;
	if (vni_has_vtep(v, vtep))
		return -EEXIST;
	if (v->n_vteps >= VNI_MAX_VTEPS)
		return -ENOSPC;
	v->vteps[v->n_vteps++] = *vtep;
	return 0;
}

int vni_del_vtep(struct vni_table *table, uint32_t vni, const struct fdb_dst *vtep)
{
	struct vni *v = vni_find_mut(table, vni);
	if (!v)
		return -ENOENT;
	int i = vni_vtep_index(v, vtep);
	if (i < 0)
		return -ENOENT;
	memmove(&v->vteps[i], &v->vteps[i + 1], (v->n_vteps - i - 1) * sizeof(v->vteps[0]));
	v->n_vteps--;
	return 0;
}

int vni_set_evpn(struct vni_table *table, uint32_t vni, bool evpn)
{
	struct vni *v = vni_find_mut(table, vni);
	if (!v)
		return -ENOENT;
	v->evpn = evpn;
	return 0;
}

uint32_t vni_table_count(const struct vni_table *table)
{
	return table->n_vnis;
}

const struct vni *vni_table_at(const struct vni_table *table, uint32_t i)
{
	return i < table->n_vnis ? &table->vnis[i] : NULL;
}

struct vni_table *vni_table_publish(struct vni_table_ref *ref, struct vni_table *table)
{
	/* Release: a worker that sees the pointer sees the finished table. */
	return atomic_exchange_explicit(&ref->current, table, memory_order_acq_rel);
}

const struct vni_table *vni_table_current(struct vni_table_ref *ref)
{
	return atomic_load_explicit(&ref->current, memory_order_acquire);
}
