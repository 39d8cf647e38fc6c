/* fdb: lookups, learning and changes; see fdb.h for the contract and
 * fdb_internal.h for the layout and how readers and writers meet. */
#include "switch/fdb_internal.h"

#include <errno.h>

/* ---- entries -------------------------------------------------------------- */

static bool fdb_entry_is_static(const struct fdb_entry *e)
{
	return e->flags & FDB_ENTRY_STATIC;
}

static bool fdb_entry_is_evpn(const struct fdb_entry *e)
{
	return e->flags & FDB_ENTRY_EVPN;
}

/* A static entry that learning from `dst` must not touch: any but an EVPN
 * one seen from a local port (the MAC moved here). */
static bool fdb_entry_pins(const struct fdb_entry *e, const struct fdb_dst *dst)
{
	return fdb_entry_is_static(e) && !(fdb_entry_is_evpn(e) && dst->type == FDB_DST_PORT);
}

static uint64_t fdb_entry_age(const struct fdb_entry *e, uint64_t now_ns)
{
	/* A caller's clock never runs backwards, but a test may warp it:
	 * treat "before the last update" as age 0 rather than as huge. */
	return now_ns > e->updated_ns ? now_ns - e->updated_ns : 0;
}

static bool fdb_entry_is_expired(const struct fdb *fdb, const struct fdb_entry *e, uint64_t now_ns)
{
	uint64_t ageing = atomic_load_explicit(&fdb->ageing_ns, memory_order_relaxed);
	return !fdb_entry_is_static(e) && ageing != FDB_AGEING_NEVER && fdb_entry_age(e, now_ns) >= ageing;
}

static bool fdb_entry_is(const struct fdb_entry *e, uint32_t vni, const uint8_t mac[6])
{
	return e->vni == vni && memcmp(e->mac, mac, 6) == 0;
}

static uint32_t fdb_bucket_of(const struct fdb *fdb, uint32_t vni, const uint8_t mac[6])
{
	return fdb_hash(fdb, vni, mac) & fdb->bucket_mask;
}

/* Bucket b held: the entry for (vni, mac), its index and its predecessor
 * in the chain (FDB_NIL: it is the head); FDB_NIL if absent. */
static uint32_t fdb_find_locked(const struct fdb *fdb, uint32_t b, uint32_t vni, const uint8_t mac[6],
				uint32_t *prev, struct fdb_entry *out)
{
	*prev = FDB_NIL;
	for (uint32_t i = fdb_head(fdb, b); i != FDB_NIL; i = out->next) {
		fdb_get(fdb, i, out);
		if (fdb_entry_is(out, vni, mac))
			return i;
		*prev = i;
	}
	return FDB_NIL;
}

enum { FDB_READ_TRIES = 8 };

/* Reader side, no lock: 1 with the entry's index and a consistent copy, 0
 * if absent, -1 when writers kept changing the bucket (then: take it). */
static int fdb_find_lockless(const struct fdb *fdb, uint32_t b, uint32_t vni, const uint8_t mac[6], uint32_t *idx,
			     struct fdb_entry *out)
{
	const struct fdb_bucket *bk = &fdb->buckets[b];
	for (unsigned t = 0; t < FDB_READ_TRIES; t++) {
		uint32_t s = atomic_load_explicit(&bk->seq, memory_order_acquire);
		if (s & 1)
			continue;
		int found = 0;
		uint32_t steps = 0;
		for (uint32_t i = fdb_head(fdb, b); i != FDB_NIL && steps++ <= fdb->n_entries; i = out->next) {
			fdb_get(fdb, i, out);
			if (fdb_entry_is(out, vni, mac)) {
				*idx = i;
				found = 1;
				break;
			}
		}
		if (atomic_load_explicit(&bk->seq, memory_order_relaxed) == s)
			return found;
	}
	return -1;
}

/* ---- counts and caps -------------------------------------------------------------- */

static _Atomic uint32_t *fdb_port_learned(struct fdb *fdb, const struct fdb_dst *dst)
{
	return dst->type == FDB_DST_PORT && dst->port < FDB_PORT_LIMIT ? &fdb->ports[dst->port].learned : NULL;
}

static void fdb_port_count(struct fdb *fdb, const struct fdb_dst *dst, int delta)
{
	_Atomic uint32_t *c = fdb_port_learned(fdb, dst);
	if (c && delta > 0)
		atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
	else if (c)
		atomic_fetch_sub_explicit(c, 1, memory_order_relaxed);
}

/* Reserves a place behind dst for one more learned MAC: false (and
 * counted) when the port's cap is reached. */
static bool fdb_port_reserve(struct fdb *fdb, const struct fdb_dst *dst)
{
	_Atomic uint32_t *c = fdb_port_learned(fdb, dst);
	if (!c)
		return true;
	struct fdb_port_count *pc = &fdb->ports[dst->port];
	uint32_t max = atomic_load_explicit(&pc->max, memory_order_relaxed);
	uint32_t had = atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
	if (!max || had < max)
		return true;
	atomic_fetch_sub_explicit(c, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&pc->refused, 1, memory_order_relaxed);
	return false;
}

/* Reserves the table's and the VNI's places for one more learned entry:
 * false (counted refused_full) when either is full. */
static bool fdb_learned_reserve(struct fdb *fdb, uint32_t vni)
{
	if (atomic_fetch_add_explicit(&fdb->n_learned, 1, memory_order_relaxed) >= fdb->config.max_learned) {
		atomic_fetch_sub_explicit(&fdb->n_learned, 1, memory_order_relaxed);
		fdb_count(&fdb->stats.refused_full, 1);
		return false;
	}
	uint32_t cap = atomic_load_explicit(&fdb->max_per_vni, memory_order_relaxed);
	_Atomic uint32_t *vc = fdb_vni_count(fdb, vni, true);
	if (!vc || (cap && atomic_fetch_add_explicit(vc, 1, memory_order_relaxed) >= cap)) {
		if (vc)
			atomic_fetch_sub_explicit(vc, 1, memory_order_relaxed);
		atomic_fetch_sub_explicit(&fdb->n_learned, 1, memory_order_relaxed);
		fdb_count(&fdb->stats.refused_full, 1);
		return false;
	}
	if (!cap)
		atomic_fetch_add_explicit(vc, 1, memory_order_relaxed);
	return true;
}

/* A learned entry of vni leaves the table (or becomes static). */
static void fdb_learned_release(struct fdb *fdb, uint32_t vni, const struct fdb_dst *dst)
{
	atomic_fetch_sub_explicit(&fdb->n_learned, 1, memory_order_relaxed);
	_Atomic uint32_t *vc = fdb_vni_count(fdb, vni, false);
	if (vc)
		atomic_fetch_sub_explicit(vc, 1, memory_order_relaxed);
	fdb_port_count(fdb, dst, -1);
}

int fdb_set_port_max(struct fdb *fdb, uint16_t port, uint32_t max)
{
	if (port >= FDB_PORT_LIMIT)
		return -ERANGE;
	atomic_store(&fdb->ports[port].max, max);
	return 0;
}

void fdb_get_port_stats(const struct fdb *fdb, uint16_t port, struct fdb_port_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (port >= FDB_PORT_LIMIT)
		return;
	const struct fdb_port_count *pc = &fdb->ports[port];
	out->learned = atomic_load(&pc->learned);
	out->max = atomic_load(&pc->max);
	out->refused = atomic_load(&pc->refused);
}

void fdb_port_forget(struct fdb *fdb, uint16_t port)
{
	if (port >= FDB_PORT_LIMIT)
		return;
	atomic_store(&fdb->ports[port].max, 0);
	atomic_store(&fdb->ports[port].refused, 0);
}

/* Static and EVPN entries: each kind its own count and cap (fdb.h). */
static _Atomic uint32_t *fdb_kind_count(struct fdb *fdb, uint8_t flags)
{
	return (flags & FDB_ENTRY_EVPN) ? &fdb->n_evpn : &fdb->n_static;
}

/* Control side (fdb->lock held, so no other reservation races it): a
 * place for one more entry of the kind, or -ENOSPC (EVPN: counted). */
static int fdb_kind_reserve(struct fdb *fdb, uint8_t flags)
{
	uint32_t max = (flags & FDB_ENTRY_EVPN) ? fdb->config.max_evpn : fdb->config.max_static;
	_Atomic uint32_t *c = fdb_kind_count(fdb, flags);
	if (atomic_load(c) >= max) {
		if (flags & FDB_ENTRY_EVPN)
			fdb_count(&fdb->stats.evpn_refused, 1);
		return -ENOSPC;
	}
	atomic_fetch_add(c, 1);
	return 0;
}

/* ---- changes (bucket b held) ------------------------------------------------------- */

/* Takes a free entry (the caller reserved its place, so there is one:
 * false only if that accounting were wrong) and puts it at the head of b. */
static bool fdb_insert(struct fdb *fdb, uint32_t b, uint32_t vni, const uint8_t mac[6], const struct fdb_dst *dst,
		       uint8_t flags, uint64_t now_ns)
{
	uint32_t i = fdb_free_pop(fdb);
	if (i == FDB_NIL)
		return false;
	struct fdb_entry e = { .vni = vni, .flags = flags, .dst = *dst, .updated_ns = now_ns };
	memcpy(e.mac, mac, 6);
	e.next = fdb_head(fdb, b);
	fdb_put(fdb, i, &e);
	fdb_set_head(fdb, b, i);
	return true;
}

/* Unlinks entry i (a copy: e; predecessor prev, FDB_NIL: the head), gives
 * back its counts and its slot. */
static void fdb_unlink(struct fdb *fdb, uint32_t b, uint32_t prev, uint32_t i, const struct fdb_entry *e)
{
	if (prev == FDB_NIL)
		fdb_set_head(fdb, b, e->next);
	else
		fdb_set_next(fdb, prev, e->next);
	if (fdb_entry_is_static(e))
		atomic_fetch_sub_explicit(fdb_kind_count(fdb, e->flags), 1, memory_order_relaxed);
	else
		fdb_learned_release(fdb, e->vni, &e->dst);
	fdb_free_push(fdb, i);
}

/* ---- data path ------------------------------------------------------------ */

/* A learned entry that exists (e, index i) seen again behind dst. */
static int fdb_learn_existing(struct fdb *fdb, uint32_t i, struct fdb_entry *e, const struct fdb_dst *dst,
			      uint64_t now_ns)
{
	bool expired = fdb_entry_is_expired(fdb, e, now_ns);
	if (!fdb_dst_equal(&e->dst, dst)) {
		if (!fdb_port_reserve(fdb, dst))
			return -ENOSPC; /* stays where it was, or expires there */
		fdb_port_count(fdb, &e->dst, -1);
		if (!expired)
			fdb_count(&fdb->stats.moved, 1);
		e->dst = *dst;
	}
	if (expired) {
		/* Aged out but not swept yet: account it as the ageing and
		 * the fresh learning it stands for. */
		fdb_count(&fdb->stats.aged, 1);
		fdb_count(&fdb->stats.learned, 1);
	}
	e->updated_ns = now_ns;
	fdb_put(fdb, i, e);
	return 0;
}

/* An EVPN entry (e, index i) whose MAC a local port sent from: it becomes
 * a learned entry behind that port, counted as a move. */
static int fdb_learn_takeover(struct fdb *fdb, uint32_t i, struct fdb_entry *e, const struct fdb_dst *dst,
			      uint64_t now_ns)
{
	if (!fdb_learned_reserve(fdb, e->vni))
		return -ENOSPC;
	if (!fdb_port_reserve(fdb, dst)) {
		fdb_learned_release(fdb, e->vni, &(struct fdb_dst){ .type = FDB_DST_NONE });
		return -ENOSPC;
	}
	atomic_fetch_sub_explicit(&fdb->n_evpn, 1, memory_order_relaxed);
	e->flags = 0;
	e->dst = *dst;
	e->updated_ns = now_ns;
	fdb_put(fdb, i, e);
	fdb_count(&fdb->stats.moved, 1);
	return 0;
}

static int fdb_learn_locked(struct fdb *fdb, uint32_t b, uint32_t vni, const uint8_t mac[6],
			    const struct fdb_dst *dst, uint64_t now_ns)
{
	struct fdb_entry e;
	uint32_t prev;
	uint32_t i = fdb_find_locked(fdb, b, vni, mac, &prev, &e);
	if (i != FDB_NIL) {
		if (fdb_entry_pins(&e, dst)) {
			if (fdb_dst_equal(&e.dst, dst))
				return 0;
			fdb_count(&fdb->stats.static_conflicts, 1);
			return -EEXIST;
		}
		if (fdb_entry_is_static(&e))
			return fdb_learn_takeover(fdb, i, &e, dst, now_ns);
		return fdb_learn_existing(fdb, i, &e, dst, now_ns);
	}
	if (!fdb_learned_reserve(fdb, vni))
		return -ENOSPC;
	if (!fdb_port_reserve(fdb, dst)) {
		fdb_learned_release(fdb, vni, &(struct fdb_dst){ .type = FDB_DST_NONE });
		return -ENOSPC;
	}
	if (!fdb_insert(fdb, b, vni, mac, dst, 0, now_ns)) {
		fdb_learned_release(fdb, vni, dst);
		fdb_count(&fdb->stats.refused_full, 1);
		return -ENOSPC;
	}
	fdb_count(&fdb->stats.learned, 1);
	return 0;
}

int fdb_learn(struct fdb *fdb, uint32_t vni, const uint8_t mac[6],
	      const struct fdb_dst *dst, uint64_t now_ns)
{
	if (!fdb_mac_is_learnable(mac)) {
		fdb_count(&fdb->stats.invalid_src, 1);
		return -EINVAL;
	}
	if (vni > FDB_VNI_MAX || !fdb_dst_is_valid(dst))
		return -EINVAL;

	/* Without taking the bucket for what almost every frame is: a MAC
	 * seen again where it was, or refused by a static entry or a full
	 * table. */
	uint32_t b = fdb_bucket_of(fdb, vni, mac);
	struct fdb_entry e;
	uint32_t i;
	int found = fdb_find_lockless(fdb, b, vni, mac, &i, &e);
	if (found == 1 && fdb_entry_pins(&e, dst)) {
		if (fdb_dst_equal(&e.dst, dst))
			return 0;
		fdb_count(&fdb->stats.static_conflicts, 1);
		return -EEXIST;
	}
	if (found == 1 && fdb_dst_equal(&e.dst, dst) && !fdb_entry_is_expired(fdb, &e, now_ns)) {
		if (e.updated_ns != now_ns)
			fdb_touch(fdb, i, now_ns);
		return 0;
	}
	if (found == 0 && atomic_load_explicit(&fdb->n_learned, memory_order_relaxed) >= fdb->config.max_learned) {
		fdb_count(&fdb->stats.refused_full, 1);
		return -ENOSPC;
	}
	fdb_bucket_lock(fdb, b);
	int ret = fdb_learn_locked(fdb, b, vni, mac, dst, now_ns);
	fdb_bucket_unlock(fdb, b);
	return ret;
}

bool fdb_lookup(const struct fdb *fdb, uint32_t vni, const uint8_t mac[6], uint64_t now_ns,
		struct fdb_dst *dst)
{
	if (mac[0] & 0x01)
		return false;
	uint32_t b = fdb_bucket_of(fdb, vni, mac);
	struct fdb_entry e;
	uint32_t i;
	int found = fdb_find_lockless(fdb, b, vni, mac, &i, &e);
	if (found < 0) {
		/* Writers kept the bucket busy: read it holding it. */
		struct fdb *w = (struct fdb *)fdb;
		uint32_t prev;
		fdb_bucket_lock(w, b);
		found = fdb_find_locked(fdb, b, vni, mac, &prev, &e) != FDB_NIL;
		fdb_bucket_unlock(w, b);
	}
	if (!found || fdb_entry_is_expired(fdb, &e, now_ns))
		return false;
	*dst = e.dst;
	return true;
}

/* ---- control: fdb->lock orders them among themselves, each change holds
 * its bucket ------------------------------------------------------------------ */

static int fdb_add_static_locked(struct fdb *fdb, uint32_t b, uint32_t vni, const uint8_t mac[6],
				 const struct fdb_dst *dst, uint64_t now_ns, uint8_t flags)
{
	struct fdb_entry e;
	uint32_t prev;
	uint32_t i = fdb_find_locked(fdb, b, vni, mac, &prev, &e);
	if (i != FDB_NIL && fdb_entry_is_static(&e)) {
		if ((flags & FDB_ENTRY_EVPN) && !fdb_entry_is_evpn(&e))
			return -EEXIST; /* the operator's entry wins */
		if ((flags ^ e.flags) & FDB_ENTRY_EVPN) {
			/* The operator's entry over an EVPN one: it changes kind. */
			if (fdb_kind_reserve(fdb, flags) < 0)
				return -ENOSPC;
			atomic_fetch_sub(fdb_kind_count(fdb, e.flags), 1);
		}
		e.flags = flags;
		e.dst = *dst;
		e.updated_ns = now_ns;
		fdb_put(fdb, i, &e);
		return 0;
	}
	if (fdb_kind_reserve(fdb, flags) < 0)
		return -ENOSPC;
	if (i != FDB_NIL) {
		/* Convert in place: it leaves the learned accounting. */
		fdb_learned_release(fdb, vni, &e.dst);
		e.flags = flags;
		e.dst = *dst;
		e.updated_ns = now_ns;
		fdb_put(fdb, i, &e);
		return 0;
	}
	if (!fdb_insert(fdb, b, vni, mac, dst, flags, now_ns)) {
		atomic_fetch_sub(fdb_kind_count(fdb, flags), 1);
		return -ENOSPC;
	}
	return 0;
}

static int fdb_add_flags(struct fdb *fdb, uint32_t vni, const uint8_t mac[6],
			 const struct fdb_dst *dst, uint64_t now_ns, uint8_t flags)
{
	if (!fdb_mac_is_learnable(mac) || vni > FDB_VNI_MAX || !fdb_dst_is_valid(dst))
		return -EINVAL;
	uint32_t b = fdb_bucket_of(fdb, vni, mac);
	pthread_mutex_lock(&fdb->lock);
	fdb_bucket_lock(fdb, b);
	int ret = fdb_add_static_locked(fdb, b, vni, mac, dst, now_ns, flags);
	fdb_bucket_unlock(fdb, b);
	pthread_mutex_unlock(&fdb->lock);
	return ret;
}

int fdb_add_static(struct fdb *fdb, uint32_t vni, const uint8_t mac[6],
		   const struct fdb_dst *dst, uint64_t now_ns)
{
	return fdb_add_flags(fdb, vni, mac, dst, now_ns, FDB_ENTRY_STATIC);
}

int fdb_add_evpn(struct fdb *fdb, uint32_t vni, const uint8_t mac[6],
		 const struct fdb_dst *dst, uint64_t now_ns)
{
	return fdb_add_flags(fdb, vni, mac, dst, now_ns, FDB_ENTRY_STATIC | FDB_ENTRY_EVPN);
}

int fdb_del_evpn(struct fdb *fdb, uint32_t vni, const uint8_t mac[6])
{
	struct fdb_entry e;
	uint32_t prev, b = fdb_bucket_of(fdb, vni, mac);
	pthread_mutex_lock(&fdb->lock);
	fdb_bucket_lock(fdb, b);
	uint32_t i = fdb_find_locked(fdb, b, vni, mac, &prev, &e);
	int ret = -ENOENT;
	if (i != FDB_NIL && fdb_entry_is_evpn(&e)) {
		fdb_unlink(fdb, b, prev, i, &e);
		ret = 0;
	}
	fdb_bucket_unlock(fdb, b);
	pthread_mutex_unlock(&fdb->lock);
	return ret;
}

int fdb_del(struct fdb *fdb, uint32_t vni, const uint8_t mac[6])
{
	struct fdb_entry e;
	uint32_t prev, b = fdb_bucket_of(fdb, vni, mac);
	pthread_mutex_lock(&fdb->lock);
	fdb_bucket_lock(fdb, b);
	uint32_t i = fdb_find_locked(fdb, b, vni, mac, &prev, &e);
	if (i != FDB_NIL)
		fdb_unlink(fdb, b, prev, i, &e);
	fdb_bucket_unlock(fdb, b);
	pthread_mutex_unlock(&fdb->lock);
	return i != FDB_NIL ? 0 : -ENOENT;
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

/* Removes every entry `doomed` says so of, bucket by bucket. */
typedef bool fdb_doomed_fn(const struct fdb *fdb, const struct fdb_entry *e, const void *aux);

static size_t fdb_sweep(struct fdb *fdb, fdb_doomed_fn *doomed, const void *aux)
{
	size_t removed = 0;
	pthread_mutex_lock(&fdb->lock);
	for (uint32_t b = 0; b <= fdb->bucket_mask; b++) {
		if (fdb_head(fdb, b) == FDB_NIL)
			continue;
		fdb_bucket_lock(fdb, b);
		uint32_t prev = FDB_NIL;
		uint32_t i = fdb_head(fdb, b);
		while (i != FDB_NIL) {
			struct fdb_entry e;
			fdb_get(fdb, i, &e);
			if (doomed(fdb, &e, aux)) {
				fdb_unlink(fdb, b, prev, i, &e);
				removed++;
			} else {
				prev = i;
			}
			i = e.next;
		}
		fdb_bucket_unlock(fdb, b);
	}
	pthread_mutex_unlock(&fdb->lock);
	return removed;
}

struct fdb_flush_aux {
	const struct fdb_flush_filter *filter;
	unsigned kinds;
};

static bool fdb_flush_doomed(const struct fdb *fdb, const struct fdb_entry *e, const void *aux)
{
	(void)fdb;
	const struct fdb_flush_aux *a = aux;
	return fdb_flush_matches(e, a->filter, a->kinds);
}

size_t fdb_flush(struct fdb *fdb, const struct fdb_flush_filter *filter)
{
	struct fdb_flush_aux aux = { filter, filter->kinds ? filter->kinds : FDB_FLUSH_LEARNED };
	return fdb_sweep(fdb, fdb_flush_doomed, &aux);
}

static bool fdb_age_doomed(const struct fdb *fdb, const struct fdb_entry *e, const void *aux)
{
	return fdb_entry_is_expired(fdb, e, *(const uint64_t *)aux);
}

size_t fdb_age(struct fdb *fdb, uint64_t now_ns)
{
	size_t removed = fdb_sweep(fdb, fdb_age_doomed, &now_ns);
	fdb_count(&fdb->stats.aged, removed);
	return removed;
}

void fdb_set_ageing(struct fdb *fdb, uint64_t ageing_ns)
{
	atomic_store(&fdb->ageing_ns, ageing_ns ? ageing_ns : FDB_DEFAULT_AGEING_NS);
}

int fdb_set_max_learned_per_vni(struct fdb *fdb, uint32_t max)
{
	if (max > fdb->config.max_learned)
		return -ERANGE;
	atomic_store(&fdb->max_per_vni, max);
	return 0;
}

uint32_t fdb_get_max_learned_per_vni(const struct fdb *fdb)
{
	return atomic_load(&fdb->max_per_vni);
}

uint32_t fdb_get_max_learned(const struct fdb *fdb)
{
	return fdb->config.max_learned;
}

uint64_t fdb_get_ageing(const struct fdb *fdb)
{
	return atomic_load(&fdb->ageing_ns);
}

/* Bucket b's live entries of vni into cb; its return value. */
static int fdb_dump_bucket(struct fdb *fdb, uint32_t b, uint32_t vni, uint64_t now_ns, fdb_dump_cb *cb, void *ctx)
{
	struct fdb_entry e;
	for (uint32_t i = fdb_head(fdb, b); i != FDB_NIL; i = e.next) {
		fdb_get(fdb, i, &e);
		if ((vni != FDB_VNI_ANY && e.vni != vni) || fdb_entry_is_expired(fdb, &e, now_ns))
			continue;
		struct fdb_entry_info info = {
			.vni = e.vni,
			.is_static = fdb_entry_is_static(&e),
			.evpn = fdb_entry_is_evpn(&e),
			.dst = e.dst,
			.age_ns = fdb_entry_age(&e, now_ns),
		};
		memcpy(info.mac, e.mac, 6);
		int err = cb(&info, ctx);
		if (err)
			return err;
	}
	return 0;
}

int fdb_dump(const struct fdb *fdb, uint32_t vni, uint64_t now_ns, fdb_dump_cb *cb, void *ctx)
{
	struct fdb *w = (struct fdb *)fdb; /* the locks only */
	int err = 0;
	pthread_mutex_lock(&w->lock);
	for (uint32_t b = 0; b <= fdb->bucket_mask && !err; b++) {
		if (fdb_head(fdb, b) == FDB_NIL)
			continue;
		/* The callback runs with the bucket held: it must not call
		 * into the fdb (fdb.h). */
		fdb_bucket_lock(w, b);
		err = fdb_dump_bucket(w, b, vni, now_ns, cb, ctx);
		fdb_bucket_unlock(w, b);
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

void fdb_get_stats(const struct fdb *fdb, struct fdb_stats *stats)
{
	struct fdb *w = (struct fdb *)fdb;
	memset(stats, 0, sizeof(*stats));
	stats->learned = atomic_load(&w->stats.learned);
	stats->moved = atomic_load(&w->stats.moved);
	stats->refused_full = atomic_load(&w->stats.refused_full);
	stats->aged = atomic_load(&w->stats.aged);
	stats->invalid_src = atomic_load(&w->stats.invalid_src);
	stats->static_conflicts = atomic_load(&w->stats.static_conflicts);
	stats->n_learned = atomic_load(&w->n_learned);
	stats->n_static = atomic_load(&w->n_static);
	stats->n_evpn = atomic_load(&w->n_evpn);
	stats->evpn_refused = atomic_load(&w->stats.evpn_refused);
}
