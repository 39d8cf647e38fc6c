/* fdb: see fdb.h for the contract.
 *
 * Layout: one array of entries (learned and static share it; each kind is
 * capped separately, and the array holds max_learned + max_static so the
 * free list never runs dry before a cap is reached), a bucket array of
 * 32-bit entry indices chaining through entry.next, and a second, smaller
 * chained table counting learned entries per VNI for the per-VNI cap.  A
 * VNI has a count record only while it has learned entries, so there are
 * never more records than max_learned. */
#include "switch/fdb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/failpoint.h"

#define FDB_NIL UINT32_MAX

enum fdb_entry_flags {
	FDB_ENTRY_STATIC = 1 << 0,
};

struct fdb_entry {
	uint32_t next;       /* bucket chain, or free list */
	uint32_t vni;
	uint8_t mac[6];
	uint8_t flags;       /* FDB_ENTRY_* */
	uint8_t pad;
	struct fdb_dst dst;
	uint64_t updated_ns; /* last frame (learned) or when added (static) */
};

/* 48 bytes: four entries per pair of cache lines; a lookup that hits its
 * bucket's first entry touches one bucket word and one entry. */
_Static_assert(sizeof(struct fdb_entry) == 48, "fdb_entry stays compact");

struct fdb_vni_count {
	uint32_t next; /* chain, or free list */
	uint32_t vni;
	uint32_t count;
};

struct fdb {
	struct fdb_config config;

	struct fdb_entry *entries;
	uint32_t n_entries;   /* size of `entries` */
	uint32_t *buckets;
	uint32_t bucket_mask;
	uint32_t free_head;

	struct fdb_vni_count *vni_counts;
	uint32_t *vni_buckets;
	uint32_t vni_bucket_mask;
	uint32_t vni_free_head;

	uint32_t n_learned;
	uint32_t n_static;
	struct fdb_stats stats;
	struct fdb_port_stats ports[FDB_PORT_LIMIT]; /* learned behind each local port */
};

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

static bool fdb_dst_is_valid(const struct fdb_dst *dst)
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

/* splitmix64's finalizer: every input bit flips about half the output bits.
 * Not cryptographic; the secret seed only keeps an attacker from computing
 * colliding MACs offline. */
static uint64_t fdb_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static uint32_t fdb_hash(const struct fdb *fdb, uint32_t vni, const uint8_t mac[6])
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

static struct fdb_vni_count *fdb_vni_count_find(const struct fdb *fdb, uint32_t vni)
{
	uint32_t i = fdb->vni_buckets[fdb_vni_hash(fdb, vni) & fdb->vni_bucket_mask];
	for (; i != FDB_NIL; i = fdb->vni_counts[i].next)
		if (fdb->vni_counts[i].vni == vni)
			return &fdb->vni_counts[i];
	return NULL;
}

static uint32_t fdb_vni_learned(const struct fdb *fdb, uint32_t vni)
{
	const struct fdb_vni_count *c = fdb_vni_count_find(fdb, vni);
	return c ? c->count : 0;
}

/* Called only for a new learned entry, after the global cap check: there
 * are fewer than max_learned learned entries, hence a free record. */
static void fdb_vni_count_inc(struct fdb *fdb, uint32_t vni)
{
	struct fdb_vni_count *c = fdb_vni_count_find(fdb, vni);
	if (!c) {
		uint32_t i = fdb->vni_free_head;
		uint32_t *bucket = &fdb->vni_buckets[fdb_vni_hash(fdb, vni) & fdb->vni_bucket_mask];
		c = &fdb->vni_counts[i];
		fdb->vni_free_head = c->next;
		c->vni = vni;
		c->count = 0;
		c->next = *bucket;
		*bucket = i;
	}
	c->count++;
}

static void fdb_vni_count_dec(struct fdb *fdb, uint32_t vni)
{
	uint32_t *link = &fdb->vni_buckets[fdb_vni_hash(fdb, vni) & fdb->vni_bucket_mask];
	while (*link != FDB_NIL) {
		uint32_t i = *link;
		struct fdb_vni_count *c = &fdb->vni_counts[i];
		if (c->vni == vni) {
			if (--c->count == 0) {
				*link = c->next;
				c->next = fdb->vni_free_head;
				fdb->vni_free_head = i;
			}
			return;
		}
		link = &c->next;
	}
}

uint32_t fdb_count_vni(const struct fdb *fdb, uint32_t vni)
{
	return fdb_vni_learned(fdb, vni);
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
	if (!out->ageing_ns)
		out->ageing_ns = FDB_DEFAULT_AGEING_NS;
	if (out->max_learned > FDB_MAX_ENTRIES || out->max_static > FDB_MAX_ENTRIES ||
	    out->max_learned + out->max_static > FDB_MAX_ENTRIES)
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
	fdb->n_entries = fdb->config.max_learned + fdb->config.max_static;
	fdb->entries = calloc(fdb->n_entries, sizeof(*fdb->entries));
	/* Load factor <= 1 when full. */
	uint32_t n_buckets = fdb_pow2_at_least(fdb->n_entries);
	fdb->buckets = malloc(n_buckets * sizeof(*fdb->buckets));
	fdb->bucket_mask = n_buckets - 1;
	fdb->vni_counts = calloc(fdb->config.max_learned, sizeof(*fdb->vni_counts));
	uint32_t n_vni_buckets = fdb_pow2_at_least(fdb->config.max_learned < 4096 ?
							   fdb->config.max_learned : 4096);
	fdb->vni_buckets = malloc(n_vni_buckets * sizeof(*fdb->vni_buckets));
	fdb->vni_bucket_mask = n_vni_buckets - 1;
	if (!fdb->entries || !fdb->buckets || !fdb->vni_counts || !fdb->vni_buckets)
		return -ENOMEM;

	for (uint32_t i = 0; i < n_buckets; i++)
		fdb->buckets[i] = FDB_NIL;
	for (uint32_t i = 0; i < fdb->n_entries; i++)
		fdb->entries[i].next = i + 1 < fdb->n_entries ? i + 1 : FDB_NIL;
	fdb->free_head = 0;
	for (uint32_t i = 0; i < n_vni_buckets; i++)
		fdb->vni_buckets[i] = FDB_NIL;
	for (uint32_t i = 0; i < fdb->config.max_learned; i++)
		fdb->vni_counts[i].next = i + 1 < fdb->config.max_learned ? i + 1 : FDB_NIL;
	fdb->vni_free_head = 0;
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
	free(fdb->vni_buckets);
	free(fdb->vni_counts);
	free(fdb->buckets);
	free(fdb->entries);
	free(fdb);
}

/* ---- entries -------------------------------------------------------------- */

static bool fdb_entry_is_static(const struct fdb_entry *e)
{
	return e->flags & FDB_ENTRY_STATIC;
}

static uint64_t fdb_entry_age(const struct fdb_entry *e, uint64_t now_ns)
{
	/* A caller's clock never runs backwards, but a test may warp it:
	 * treat "before the last update" as age 0 rather than as huge. */
	return now_ns > e->updated_ns ? now_ns - e->updated_ns : 0;
}

static bool fdb_entry_is_expired(const struct fdb *fdb, const struct fdb_entry *e, uint64_t now_ns)
{
	return !fdb_entry_is_static(e) && fdb->config.ageing_ns != FDB_AGEING_NEVER &&
	       fdb_entry_age(e, now_ns) >= fdb->config.ageing_ns;
}

/* Returns the link (bucket slot or predecessor's next) that points at the
 * entry for (vni, mac), or NULL. */
static uint32_t *fdb_find_link(struct fdb *fdb, uint32_t vni, const uint8_t mac[6])
{
	uint32_t *link = &fdb->buckets[fdb_hash(fdb, vni, mac) & fdb->bucket_mask];
	while (*link != FDB_NIL) {
		struct fdb_entry *e = &fdb->entries[*link];
		if (e->vni == vni && memcmp(e->mac, mac, 6) == 0)
			return link;
		link = &e->next;
	}
	return NULL;
}

static struct fdb_entry *fdb_find(struct fdb *fdb, uint32_t vni, const uint8_t mac[6])
{
	uint32_t *link = fdb_find_link(fdb, vni, mac);
	return link ? &fdb->entries[*link] : NULL;
}

/* ---- per-port learned counts ------------------------------------------------ */

static struct fdb_port_stats *fdb_port_of(struct fdb *fdb, const struct fdb_dst *dst)
{
	return dst->type == FDB_DST_PORT && dst->port < FDB_PORT_LIMIT ? &fdb->ports[dst->port] : NULL;
}

static void fdb_port_count(struct fdb *fdb, const struct fdb_dst *dst, int delta)
{
	struct fdb_port_stats *ps = fdb_port_of(fdb, dst);
	if (ps)
		ps->learned = (uint32_t)((int64_t)ps->learned + delta);
}

/* True (and counted) when one more learned MAC behind `dst` is over its cap. */
static bool fdb_port_full(struct fdb *fdb, const struct fdb_dst *dst)
{
	struct fdb_port_stats *ps = fdb_port_of(fdb, dst);
	if (!ps || !ps->max || ps->learned < ps->max)
		return false;
	ps->refused++;
	return true;
}

int fdb_set_port_max(struct fdb *fdb, uint16_t port, uint32_t max)
{
	if (port >= FDB_PORT_LIMIT)
		return -ERANGE;
	fdb->ports[port].max = max;
	return 0;
}

void fdb_get_port_stats(const struct fdb *fdb, uint16_t port, struct fdb_port_stats *out)
{
	static const struct fdb_port_stats none;
	*out = port < FDB_PORT_LIMIT ? fdb->ports[port] : none;
}

void fdb_port_forget(struct fdb *fdb, uint16_t port)
{
	if (port < FDB_PORT_LIMIT) {
		fdb->ports[port].max = 0;
		fdb->ports[port].refused = 0;
	}
}

/* Takes an entry off the free list and puts it at the head of its bucket.
 * The caller has checked the per-kind cap, so the free list is not empty. */
static struct fdb_entry *fdb_insert(struct fdb *fdb, uint32_t vni, const uint8_t mac[6],
				    const struct fdb_dst *dst, uint8_t flags, uint64_t now_ns)
{
	uint32_t i = fdb->free_head;
	struct fdb_entry *e = &fdb->entries[i];
	uint32_t *bucket = &fdb->buckets[fdb_hash(fdb, vni, mac) & fdb->bucket_mask];

	fdb->free_head = e->next;
	e->vni = vni;
	memcpy(e->mac, mac, 6);
	e->flags = flags;
	e->pad = 0;
	e->dst = *dst;
	e->updated_ns = now_ns;
	e->next = *bucket;
	*bucket = i;
	if (flags & FDB_ENTRY_STATIC) {
		fdb->n_static++;
	} else {
		fdb->n_learned++;
		fdb_vni_count_inc(fdb, vni);
		fdb_port_count(fdb, dst, +1);
	}
	return e;
}

static void fdb_unlink(struct fdb *fdb, uint32_t *link)
{
	uint32_t i = *link;
	struct fdb_entry *e = &fdb->entries[i];

	*link = e->next;
	if (fdb_entry_is_static(e)) {
		fdb->n_static--;
	} else {
		fdb->n_learned--;
		fdb_vni_count_dec(fdb, e->vni);
		fdb_port_count(fdb, &e->dst, -1);
	}
	e->next = fdb->free_head;
	fdb->free_head = i;
}

/* ---- data path ------------------------------------------------------------ */

int fdb_learn(struct fdb *fdb, uint32_t vni, const uint8_t mac[6],
	      const struct fdb_dst *dst, uint64_t now_ns)
{
	if (!fdb_mac_is_learnable(mac)) {
		fdb->stats.invalid_src++;
		return -EINVAL;
	}
	if (vni > FDB_VNI_MAX || !fdb_dst_is_valid(dst))
		return -EINVAL;

	struct fdb_entry *e = fdb_find(fdb, vni, mac);
	if (e) {
		if (fdb_entry_is_static(e)) {
			if (fdb_dst_equal(&e->dst, dst))
				return 0;
			fdb->stats.static_conflicts++;
			return -EEXIST;
		}
		bool expired = fdb_entry_is_expired(fdb, e, now_ns);
		if (!fdb_dst_equal(&e->dst, dst)) {
			if (fdb_port_full(fdb, dst))
				return -ENOSPC; /* stays where it was, or expires there */
			fdb_port_count(fdb, &e->dst, -1);
			fdb_port_count(fdb, dst, +1);
			if (!expired)
				fdb->stats.moved++;
			e->dst = *dst;
		}
		if (expired) {
			/* Aged out but not swept yet: account it as the
			 * ageing and the fresh learning it stands for. */
			fdb->stats.aged++;
			fdb->stats.learned++;
		}
		e->updated_ns = now_ns;
		return 0;
	}

	if (fdb->n_learned >= fdb->config.max_learned ||
	    (fdb->config.max_learned_per_vni &&
	     fdb_vni_learned(fdb, vni) >= fdb->config.max_learned_per_vni)) {
		fdb->stats.refused_full++;
		return -ENOSPC;
	}
	if (fdb_port_full(fdb, dst))
		return -ENOSPC;
	fdb_insert(fdb, vni, mac, dst, 0, now_ns);
	fdb->stats.learned++;
	return 0;
}

bool fdb_lookup(struct fdb *fdb, uint32_t vni, const uint8_t mac[6], uint64_t now_ns,
		struct fdb_dst *dst)
{
	fdb->stats.lookups++;
	if (mac[0] & 0x01)
		return false;
	const struct fdb_entry *e = fdb_find(fdb, vni, mac);
	if (!e || fdb_entry_is_expired(fdb, e, now_ns))
		return false;
	fdb->stats.hits++;
	*dst = e->dst;
	return true;
}

/* ---- control -------------------------------------------------------------- */

int fdb_add_static(struct fdb *fdb, uint32_t vni, const uint8_t mac[6],
		   const struct fdb_dst *dst, uint64_t now_ns)
{
	if (!fdb_mac_is_learnable(mac) || vni > FDB_VNI_MAX || !fdb_dst_is_valid(dst))
		return -EINVAL;

	struct fdb_entry *e = fdb_find(fdb, vni, mac);
	if (e && fdb_entry_is_static(e)) {
		e->dst = *dst;
		e->updated_ns = now_ns;
		return 0;
	}
	if (fdb->n_static >= fdb->config.max_static)
		return -ENOSPC;
	if (e) {
		/* Convert in place: it leaves the learned accounting. */
		fdb->n_learned--;
		fdb_vni_count_dec(fdb, vni);
		fdb_port_count(fdb, &e->dst, -1);
		fdb->n_static++;
		e->flags |= FDB_ENTRY_STATIC;
		e->dst = *dst;
		e->updated_ns = now_ns;
		return 0;
	}
	fdb_insert(fdb, vni, mac, dst, FDB_ENTRY_STATIC, now_ns);
	return 0;
}

int fdb_del(struct fdb *fdb, uint32_t vni, const uint8_t mac[6])
{
	uint32_t *link = fdb_find_link(fdb, vni, mac);
	if (!link)
		return -ENOENT;
	fdb_unlink(fdb, link);
	return 0;
}

static bool fdb_flush_matches(const struct fdb_entry *e, const struct fdb_flush_filter *filter,
			      unsigned kinds)
{
	unsigned kind = fdb_entry_is_static(e) ? FDB_FLUSH_STATIC : FDB_FLUSH_LEARNED;
	if (!(kinds & kind))
		return false;
	if (filter->vni != FDB_VNI_ANY && e->vni != filter->vni)
		return false;
	const struct fdb_dst *dst = filter->dst;
	if (!dst)
		return true;
	if (dst->type == FDB_DST_VTEP && dst->family == 0)
		return e->dst.type == FDB_DST_VTEP && e->dst.port == dst->port;
	return fdb_dst_equal(&e->dst, dst);
}

size_t fdb_flush(struct fdb *fdb, const struct fdb_flush_filter *filter)
{
	unsigned kinds = filter->kinds ? filter->kinds : FDB_FLUSH_LEARNED;
	size_t removed = 0;

	for (uint32_t b = 0; b <= fdb->bucket_mask; b++) {
		uint32_t *link = &fdb->buckets[b];
		while (*link != FDB_NIL) {
			if (fdb_flush_matches(&fdb->entries[*link], filter, kinds)) {
				fdb_unlink(fdb, link);
				removed++;
			} else {
				link = &fdb->entries[*link].next;
			}
		}
	}
	return removed;
}

size_t fdb_age(struct fdb *fdb, uint64_t now_ns)
{
	size_t removed = 0;

	for (uint32_t b = 0; b <= fdb->bucket_mask; b++) {
		uint32_t *link = &fdb->buckets[b];
		while (*link != FDB_NIL) {
			if (fdb_entry_is_expired(fdb, &fdb->entries[*link], now_ns)) {
				fdb_unlink(fdb, link);
				removed++;
			} else {
				link = &fdb->entries[*link].next;
			}
		}
	}
	fdb->stats.aged += removed;
	return removed;
}

void fdb_set_ageing(struct fdb *fdb, uint64_t ageing_ns)
{
	fdb->config.ageing_ns = ageing_ns ? ageing_ns : FDB_DEFAULT_AGEING_NS;
}

int fdb_set_max_learned_per_vni(struct fdb *fdb, uint32_t max)
{
	if (max > fdb->config.max_learned)
		return -ERANGE;
	fdb->config.max_learned_per_vni = max;
	return 0;
}

uint32_t fdb_get_max_learned_per_vni(const struct fdb *fdb)
{
	return fdb->config.max_learned_per_vni;
}

uint32_t fdb_get_max_learned(const struct fdb *fdb)
{
	return fdb->config.max_learned;
}

uint64_t fdb_get_ageing(const struct fdb *fdb)
{
	return fdb->config.ageing_ns;
}

int fdb_dump(const struct fdb *fdb, uint32_t vni, uint64_t now_ns, fdb_dump_cb *cb, void *ctx)
{
	for (uint32_t b = 0; b <= fdb->bucket_mask; b++) {
		for (uint32_t i = fdb->buckets[b]; i != FDB_NIL; i = fdb->entries[i].next) {
			const struct fdb_entry *e = &fdb->entries[i];
			if (vni != FDB_VNI_ANY && e->vni != vni)
				continue;
			if (fdb_entry_is_expired(fdb, e, now_ns))
				continue;
			struct fdb_entry_info info = {
				.vni = e->vni,
				.is_static = fdb_entry_is_static(e),
				.dst = e->dst,
				.age_ns = fdb_entry_age(e, now_ns),
			};
			memcpy(info.mac, e->mac, 6);
			int err = cb(&info, ctx);
			if (err)
				return err;
		}
	}
	return 0;
}

void fdb_get_stats(const struct fdb *fdb, struct fdb_stats *stats)
{
	*stats = fdb->stats;
	stats->n_learned = fdb->n_learned;
	stats->n_static = fdb->n_static;
}
