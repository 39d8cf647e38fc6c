/* fdb: destinations, hashing, per-VNI learned counts and construction
 * (fdb_internal.h has the layout; fdb.h the contract). */
#include "switch/fdb_internal.h"

#include <errno.h>
#include <stdlib.h>

#include "util/failpoint.h"
#include "util/hash.h"

/* ---- destinations and MACs ------------------------------------------------ */

struct fdb_dst fdb_dst_port(uint16_t port)
{
	struct fdb_dst dst;
	memset(&dst, 0, sizeof(dst));
	dst.type = FDB_DST_PORT;
	dst.port = port;
	return dst;
}

struct fdb_dst fdb_dst_vtep(uint16_t vxlan_port, uint8_t family, const uint8_t addr[16])
{
	struct fdb_dst dst;
	memset(&dst, 0, sizeof(dst));
	if (family != 4 && family != 6)
		return dst;
	dst.type = FDB_DST_VTEP;
	dst.family = family;
	dst.port = vxlan_port;
	/* Only the bytes of the family: stray bytes after an IPv4 address
	 * would make one VTEP look like two. */
	memcpy(dst.addr, addr, family == 4 ? 4 : 16);
	return dst;
}

struct fdb_dst fdb_dst_vtep4(uint16_t vxlan_port, const uint8_t addr[4])
{
	uint8_t full[16] = { 0 };
	memcpy(full, addr, 4);
	return fdb_dst_vtep(vxlan_port, 4, full);
}

struct fdb_dst fdb_dst_vtep6(uint16_t vxlan_port, const uint8_t addr[16])
{
	return fdb_dst_vtep(vxlan_port, 6, addr);
}

bool fdb_dst_equal(const struct fdb_dst *a, const struct fdb_dst *b)
{
	return a->type == b->type && a->family == b->family && a->port == b->port &&
	       memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

bool fdb_dst_is_valid(const struct fdb_dst *dst)
{
	if (dst->type == FDB_DST_PORT)
		return dst->family == 0;
	if (dst->type == FDB_DST_VTEP)
		return dst->family == 4 || dst->family == 6;
	return false;
}

bool fdb_mac_is_learnable(const uint8_t mac[6])
{
	if (mac[0] & 0x01) /* I/G bit: multicast, including broadcast */
		return false;
	return (mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) != 0;
}

/* ---- hashing -------------------------------------------------------------- */

/* util/hash.h's splitmix64 finaliser.  Not cryptographic; the secret seed
 * only keeps an attacker from computing colliding MACs offline. */
static inline uint64_t fdb_mix64(uint64_t x)
{
	return hash_mix64(x);
}

uint32_t fdb_hash(const struct fdb *fdb, uint32_t vni, const uint8_t mac[6])
{
	uint64_t m = (uint64_t)mac[0] << 40 | (uint64_t)mac[1] << 32 | (uint64_t)mac[2] << 24 |
		     (uint64_t)mac[3] << 16 | (uint64_t)mac[4] << 8 | mac[5];
	uint64_t h = fdb_mix64(m ^ fdb->config.hash_seed);
	return (uint32_t)fdb_mix64(h ^ vni);
}

static uint32_t fdb_vni_hash(const struct fdb *fdb, uint32_t vni)
{
	return (uint32_t)fdb_mix64(vni ^ fdb->config.hash_seed);
}

static uint32_t fdb_pow2_at_least(uint32_t n)
{
	uint32_t p = 1;
	while (p < n)
		p <<= 1;
	return p;
}

/* ---- per-VNI learned counts ---------------------------------------------- */

_Atomic uint32_t *fdb_vni_count(struct fdb *fdb, uint32_t vni, bool claim)
{
	uint32_t want = vni + 1;
	uint32_t h = fdb_vni_hash(fdb, vni);
	for (uint32_t k = 0; k < FDB_VNI_SLOTS; k++) {
		struct fdb_vni_slot *sl = &fdb->vni_slots[(h + k) & (FDB_VNI_SLOTS - 1)];
		uint32_t have = atomic_load_explicit(&sl->vni_plus1, memory_order_acquire);
		if (have == want)
			return &sl->count;
		if (have != 0)
			continue;
		if (!claim)
			return NULL;
		uint32_t zero = 0;
		if (atomic_compare_exchange_strong_explicit(&sl->vni_plus1, &zero, want, memory_order_acq_rel,
							    memory_order_acquire) || zero == want)
			return &sl->count;
	}
	return NULL;
}

static uint64_t fdb_free_word(uint64_t tag, uint32_t i)
{
	return tag << 32 | i;
}

uint32_t fdb_free_pop(struct fdb *fdb)
{
	uint64_t head = atomic_load_explicit(&fdb->free_head, memory_order_acquire);
	for (;;) {
		uint32_t i = (uint32_t)head;
		if (i == FDB_NIL)
			return FDB_NIL;
		uint64_t next = fdb_free_word((head >> 32) + 1, fdb_next(fdb, i));
		if (atomic_compare_exchange_weak_explicit(&fdb->free_head, &head, next, memory_order_acq_rel,
							  memory_order_acquire))
			return i;
	}
}

void fdb_free_push(struct fdb *fdb, uint32_t i)
{
	uint64_t head = atomic_load_explicit(&fdb->free_head, memory_order_acquire);
	for (;;) {
		fdb_set_next(fdb, i, (uint32_t)head);
		uint64_t mine = fdb_free_word((head >> 32) + 1, i);
		if (atomic_compare_exchange_weak_explicit(&fdb->free_head, &head, mine, memory_order_acq_rel,
							  memory_order_acquire))
			return;
	}
}

uint32_t fdb_count_vni(const struct fdb *fdb, uint32_t vni)
{
	_Atomic uint32_t *c = fdb_vni_count((struct fdb *)fdb, vni, false);
	return c ? atomic_load(c) : 0;
}

/* ---- construction --------------------------------------------------------- */

/* The config with defaults filled in, or -EINVAL if its sizes are too big. */
static int fdb_config_resolve(const struct fdb_config *in, struct fdb_config *out)
{
	*out = *in;
	if (!out->max_learned)
		out->max_learned = FDB_DEFAULT_MAX_LEARNED;
	if (!out->max_static)
		out->max_static = FDB_DEFAULT_MAX_STATIC;
	if (!out->max_evpn)
		out->max_evpn = FDB_DEFAULT_MAX_EVPN;
	if (!out->ageing_ns)
		out->ageing_ns = FDB_DEFAULT_AGEING_NS;
	if (out->max_learned > FDB_MAX_ENTRIES || out->max_static > FDB_MAX_ENTRIES ||
	    out->max_evpn > FDB_MAX_ENTRIES ||
	    (uint64_t)out->max_learned + out->max_static + out->max_evpn > FDB_MAX_ENTRIES)
		return -EINVAL;
	return 0;
}

/* Every array of a table whose config is set; -ENOMEM leaves them to
 * fdb_destroy(). */
static int fdb_alloc_arrays(struct fdb *fdb)
{
	/* All memory of the table is here: the one allocation worth failing
	 * in a test (the daemon's start-up error path). */
	if (failpoint_hit("fdb_create"))
		return -ENOMEM;
	fdb->n_entries = fdb->config.max_learned + fdb->config.max_static + fdb->config.max_evpn;
	fdb->entries = calloc(fdb->n_entries, sizeof(*fdb->entries));
	/* Load factor <= 1 when full. */
	uint32_t n_buckets = fdb_pow2_at_least(fdb->n_entries);
	fdb->buckets = calloc(n_buckets, sizeof(*fdb->buckets));
	fdb->bucket_mask = n_buckets - 1;
	if (!fdb->entries || !fdb->buckets)
		return -ENOMEM;

	for (uint32_t i = 0; i < n_buckets; i++)
		fdb_set_head(fdb, i, FDB_NIL);
	for (uint32_t i = 0; i < fdb->n_entries; i++)
		fdb_set_next(fdb, i, i + 1 < fdb->n_entries ? i + 1 : FDB_NIL);
	atomic_init(&fdb->free_head, 0);
	return 0;
}

int fdb_create(const struct fdb_config *config, struct fdb **out)
{
	*out = NULL;
	struct fdb_config resolved;
	int err = fdb_config_resolve(config, &resolved);
	if (err < 0)
		return err;
	struct fdb *fdb = calloc(1, sizeof(*fdb));
	if (!fdb)
		return -ENOMEM;
	fdb->config = resolved;
	atomic_init(&fdb->ageing_ns, resolved.ageing_ns);
	atomic_init(&fdb->max_per_vni, resolved.max_learned_per_vni);
	pthread_mutex_init(&fdb->lock, NULL);
	err = fdb_alloc_arrays(fdb);
	if (err < 0) {
		fdb_destroy(fdb);
		return err;
	}
	*out = fdb;
	return 0;
}

void fdb_destroy(struct fdb *fdb)
{
	if (!fdb)
		return;
	free(fdb->buckets);
	free(fdb->entries);
	pthread_mutex_destroy(&fdb->lock);
	free(fdb);
}

