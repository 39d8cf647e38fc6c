/* flower_table: batches into immutable tables, chains, counters (see
 * flower_table.h). */
#include "switch/flower_table.h"
#include "switch/flower_hook.h"
#include "switch/flower_index.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rules of one (port, chain): rules[first .. first + n - 1]. */
struct flower_chain {
	uint16_t port;
	uint32_t chain;
	uint32_t first, n;
	struct cls *cls;
};

struct flower_table {
	uint32_t holders;             /* flower_table_hold() + 1 */
	uint64_t version;
	uint64_t next_uid;
	uint32_t n_rules;
	uint32_t n_slots;             /* counter slots: 1 + the highest slot */
	uint32_t n_chains;
	struct flower_rule **rules;   /* by (port, chain, pref, handle) */
	struct flower_chain *chains;  /* by (port, chain) */
};

/* ---- the working set of a batch ---------------------------------------- */

/* A place (port, chain, pref, handle) compared on its first `depth` fields. */
struct place {
	uint16_t port;
	uint32_t chain, pref, handle;
};

/* The live rules of a batch are the sorted `rules` (the old table's, then
 * merged) plus the unsorted `pending` (added since the last merge), less
 * the ones taken out since: a rule is live iff the place index holds it.
 * Commands that name a place exactly (flower.json's batches: add, replace,
 * del with pref and handle) only touch the indexes and `pending`, O(1);
 * so do an automatic pref (each chain's lowest pref is kept, `lowest`)
 * and an automatic handle (the place index probed from 1: O(rules of the
 * pref)).  Those that need the order (a del
 * of a whole pref, chain or port, the lowest pref of a chain whose lowest
 * rule left) merge first (flush(), O(rules)). */
struct work {
	struct flower_rule **rules;   /* in place order */
	size_t n, cap;
	struct flower_rule **pending; /* added, not merged yet */
	size_t n_pending, cap_pending;
	bool dirty;                   /* pending or taken-out rules to merge */
	struct fidx place, key, pref;
	struct chain_lowest *lowest;  /* per (port, chain) seen by an automatic pref */
	struct place next_handle;     /* the last automatic handle's place, + 1 (while valid) */
	bool next_handle_valid;       /* every handle below it taken, none taken out since */
	size_t n_lowest, cap_lowest;
	struct flower_rule **created; /* allocated by this batch */
	size_t n_created, cap_created;
	uint64_t next_uid;
	struct flower_error *err;
	size_t op;
};

static int fail(struct work *w, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct work *w, int ret, const char *fmt, ...)
{
	if (w->err) {
		va_list ap;
		va_start(ap, fmt);
		w->err->op = w->op;
		vsnprintf(w->err->msg, sizeof(w->err->msg), fmt, ap);
		va_end(ap);
	}
	return ret;
}

static bool same_chain(const struct flower_rule *r, uint16_t port, uint32_t chain)
{
	return r->port == port && r->chain == chain;
}

/* A chain's lowest pref among the live rules, while `known`. */
struct chain_lowest {
	uint16_t port;
	uint32_t chain;
	uint32_t pref; /* 0: the chain is empty */
	bool known;
};

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

static int place_cmp(const struct flower_rule *r, const struct place *p, int depth)
{
	int c = cmp_u32(r->port, p->port);
	if (!c && depth > 1)
		c = cmp_u32(r->chain, p->chain);
	if (!c && depth > 2)
		c = cmp_u32(r->pref, p->pref);
	if (!c && depth > 3)
		c = cmp_u32(r->handle, p->handle);
	return c;
}

static int rule_cmp(const void *a, const void *b)
{
	const struct flower_rule *x = *(struct flower_rule *const *)a, *y = *(struct flower_rule *const *)b;
	struct place p = { .port = y->port, .chain = y->chain, .pref = y->pref, .handle = y->handle };
	return place_cmp(x, &p, 4);
}

/* The sorted set (after flush()): the first index whose rule compares >= p
 * (upper: > p) on `depth` fields, by binary search. */
static size_t bound(const struct work *w, const struct place *p, int depth, bool upper)
{
	size_t lo = 0, hi = w->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = place_cmp(w->rules[mid], p, depth);
		if (c < 0 || (upper && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool live(const struct work *w, const struct flower_rule *r)
{
	struct fidx_key k = fidx_key_of(r);
	const struct fidx_entry *e = fidx_find(&w->place, &k);
	return e && e->r == r;
}

/* Merges `pending` into `rules` and drops the rules taken out: `rules`
 * is then exactly the live set, in place order. */
static int flush(struct work *w)
{
	if (!w->dirty)
		return 0;
	if (w->n_pending) /* qsort's base may not be NULL, even for none */
		qsort(w->pending, w->n_pending, sizeof(*w->pending), rule_cmp);
	size_t cap = w->n + w->n_pending + 1;
	struct flower_rule **out = malloc(cap * sizeof(*out));
	if (!out)
		return fail(w, -ENOMEM, "out of memory");
	size_t i = 0, j = 0, k = 0;
	while (i < w->n || j < w->n_pending) {
		struct flower_rule *r;
		if (j == w->n_pending || (i < w->n && rule_cmp(&w->rules[i], &w->pending[j]) < 0))
			r = w->rules[i++];
		else
			r = w->pending[j++];
		if (live(w, r))
			out[k++] = r;
	}
	free(w->rules);
	w->rules = out;
	w->n = k;
	w->cap = cap;
	w->n_pending = 0;
	w->dirty = false;
	return 0;
}

static int append(struct flower_rule ***arr, size_t *n, size_t *cap, struct flower_rule *r)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct flower_rule **a = realloc(*arr, c * sizeof(*a));
		if (!a)
			return -ENOMEM;
		*arr = a;
		*cap = c;
	}
	(*arr)[(*n)++] = r;
	return 0;
}

static int index_rule(struct work *w, struct flower_rule *r)
{
	if (fidx_insert(&w->place, r) || fidx_insert(&w->key, r) || fidx_insert(&w->pref, r))
		return fail(w, -ENOMEM, "out of memory");
	return 0;
}

static struct chain_lowest *lowest_of(struct work *w, uint16_t port, uint32_t chain)
{
	for (size_t i = 0; i < w->n_lowest; i++)
		if (w->lowest[i].port == port && w->lowest[i].chain == chain)
			return &w->lowest[i];
	return NULL;
}

/* r joins the live set (it was not live). */
static int add_live(struct work *w, struct flower_rule *r)
{
	struct chain_lowest *l = lowest_of(w, r->port, r->chain);
	if (l && l->known && (!l->pref || r->pref < l->pref))
		l->pref = r->pref;
	if (append(&w->pending, &w->n_pending, &w->cap_pending, r))
		return fail(w, -ENOMEM, "out of memory");
	w->dirty = true;
	return index_rule(w, r);
}

/* r, live, leaves the live set. */
static void remove_live(struct work *w, const struct flower_rule *r)
{
	struct chain_lowest *l = lowest_of(w, r->port, r->chain);
	if (l && l->pref == r->pref)
		l->known = false; /* the pref may still hold others: found again by flush() */
	w->next_handle_valid = false;
	fidx_remove(&w->place, r);
	fidx_remove(&w->key, r);
	fidx_remove(&w->pref, r);
	w->dirty = true;
}

/* The old table's rules, already in place order, and their indexes. */
static int work_init(struct work *w, const struct flower_table *old, size_t n_ops)
{
	size_t n = old ? old->n_rules : 0, expect = n + n_ops;
	if (fidx_init(&w->place, FIDX_PLACE, expect) || fidx_init(&w->key, FIDX_KEY, expect) ||
	    fidx_init(&w->pref, FIDX_PREF, 64) || !(w->rules = malloc((n + 1) * sizeof(*w->rules))))
		return fail(w, -ENOMEM, "out of memory");
	w->cap = n + 1;
	for (size_t i = 0; i < n; i++) {
		w->rules[w->n++] = old->rules[i];
		if (index_rule(w, old->rules[i]))
			return -ENOMEM;
	}
	return 0;
}

static void work_fini(struct work *w)
{
	fidx_free(&w->place);
	fidx_free(&w->key);
	fidx_free(&w->pref);
	free(w->pending);
	free(w->rules);
	free(w->lowest);
}

/* tc's automatic pref: one below the lowest pref of the chain, 49152 in an
 * empty one; 0 if none is left (*pref).  The chain's lowest pref is found
 * by flush() and a search the first time, then kept (add_live,
 * remove_live). */
static int auto_pref(struct work *w, uint16_t port, uint32_t chain, uint32_t *pref)
{
	struct chain_lowest *l = lowest_of(w, port, chain);
	if (!l) {
		if (w->n_lowest == w->cap_lowest) {
			size_t cap = w->cap_lowest ? 2 * w->cap_lowest : 16;
			struct chain_lowest *a = realloc(w->lowest, cap * sizeof(*a));
			if (!a)
				return fail(w, -ENOMEM, "out of memory");
			w->lowest = a;
			w->cap_lowest = cap;
		}
		l = &w->lowest[w->n_lowest++];
		*l = (struct chain_lowest){ .port = port, .chain = chain };
	}
	if (!l->known) {
		int ret = flush(w);
		if (ret)
			return ret;
		struct place p = { .port = port, .chain = chain };
		size_t i = bound(w, &p, 2, false);
		l->pref = i < w->n && same_chain(w->rules[i], port, chain) ? w->rules[i]->pref : 0;
		l->known = true;
	}
	*pref = l->pref ? l->pref - 1 : FLOWER_AUTO_PREF;
	return 0;
}

/* Refuses a taken handle, a key the pref already has, or another protocol
 * at the pref; picks the lowest free handle from 1 when none is given. */
static int check_place(struct work *w, const struct flower_spec *f, uint16_t port, uint32_t pref,
		       uint32_t key_hash, uint32_t *handle)
{
	struct fidx_key k = { .port = port, .chain = f->chain, .pref = pref, .handle = f->handle,
			      .match = &f->match, .key_hash = key_hash };
	const struct fidx_entry *e = fidx_find(&w->pref, &k);
	bool pref_empty = !e;
	if (e && e->r->spec.match.protocol != f->match.protocol)
		return fail(w, -EINVAL, "pref %u of dev %s already holds rules of another "
			    "protocol (tc: one protocol per pref)", pref, f->dev);
	if ((f->given & FLOWER_SF_HANDLE) && fidx_find(&w->place, &k))
		return fail(w, -EEXIST, "dev %s chain %u pref %u handle %u: Filter already "
			    "exists (duplicate handle)", f->dev, f->chain, pref, f->handle);
	/* Then, as the kernel does after the handle: flower keeps one filter
	 * per (mask, masked key) in a pref (cls_flower's
	 * fl_ht_insert_unique(): EEXIST).  The parser stores a match
	 * canonically (masked, unused fields zero): equal keys are equal bytes. */
	if ((e = fidx_find(&w->key, &k)))
		return fail(w, -EEXIST, "dev %s chain %u pref %u: Filter already exists: "
			    "handle %u has the same key (tc: RTNETLINK answers: File exists)",
			    f->dev, f->chain, pref, e->r->handle);
	if (f->given & FLOWER_SF_HANDLE) {
		*handle = f->handle;
		return 0;
	}
	/* The lowest free handle (flower's idr from 1): the place index probed
	 * from 1 up, without merging the batch; from the last automatic
	 * handle's successor when it was in this pref and no rule left since,
	 * so that a run of adds to one pref is not quadratic. */
	struct place *nh = &w->next_handle;
	bool resume = w->next_handle_valid && nh->port == port && nh->chain == f->chain && nh->pref == pref;
	for (k.handle = resume ? nh->handle : 1; !pref_empty && fidx_find(&w->place, &k); k.handle++)
		;
	*handle = k.handle;
	*nh = (struct place){ .port = port, .chain = f->chain, .pref = pref, .handle = k.handle + 1 };
	w->next_handle_valid = true;
	return 0;
}

static int new_rule(struct work *w, struct flower_rule **out)
{
	struct flower_rule *r = calloc(1, sizeof(*r));
	if (!r || append(&w->created, &w->n_created, &w->cap_created, r)) {
		free(r);
		return fail(w, -ENOMEM, "out of memory");
	}
	*out = r;
	return 0;
}

static int op_add(struct work *w, const struct flower_spec *f, flower_port_resolver *resolve,
		  void *aux, uint64_t now_ns)
{
	uint16_t port; /* the hook: the port's ingress or egress (flower_hook.h) */
	int ret;
	if (flower_hook_resolve(f, resolve, aux, &port))
		return fail(w, -ENOENT, "dev \"%s\": no such port", f->dev);
	uint32_t pref = f->pref;
	if (!(f->given & FLOWER_SF_PREF) && (ret = auto_pref(w, port, f->chain, &pref)))
		return ret;
	if (!pref)
		return fail(w, -EINVAL, "dev %s chain %u: no automatic pref left below 1, give one",
			    f->dev, f->chain);
	uint32_t handle = 0, key_hash = flower_match_hash(&f->match);
	ret = check_place(w, f, port, pref, key_hash, &handle);
	struct flower_rule *r = NULL;
	if (ret || (ret = new_rule(w, &r)))
		return ret;
	char msg[FLOWER_ERR_SIZE];
	ret = flower_actions_compile(f, resolve, aux, r->actions, msg, sizeof(msg));
	if (ret)
		return fail(w, ret, "%s", msg);
	r->n_actions = f->n_actions;
	flower_match_compile(&f->match, &r->match);
	ret = flower_indev_compile(&f->match, resolve, aux, &r->match, msg, sizeof(msg));
	if (ret)
		return fail(w, ret, "%s", msg);
	r->port = port;
	r->chain = f->chain;
	r->pref = pref;
	r->handle = handle;
	r->uid = w->next_uid++;
	r->installed_ns = now_ns;
	r->key_hash = key_hash;
	r->spec = *f;
	r->spec.pref = pref;
	r->spec.handle = handle;
	r->spec.given |= FLOWER_SF_PREF | FLOWER_SF_HANDLE;
	return add_live(w, r);
}

/* tc's selector: the pref's protocol must be the one given. */
static int check_del_protocol(struct work *w, const struct flower_spec *f, const struct flower_rule *r)
{
	if ((f->match.given & FLOWER_FM_PROTOCOL) && r->spec.match.protocol != f->match.protocol)
		return fail(w, -EINVAL, "dev %s chain %u pref %u: Filter with specified "
			    "priority/protocol not found (the pref holds another protocol)",
			    f->dev, f->chain, f->pref);
	return 0;
}

static int op_del(struct work *w, const struct flower_spec *f, flower_port_resolver *resolve,
		  void *aux)
{
	struct place p = { .chain = f->chain, .pref = f->pref, .handle = f->handle };
	if (flower_hook_resolve(f, resolve, aux, &p.port))
		return fail(w, -ENOENT, "dev \"%s\": no such port", f->dev);
	int depth = (f->given & FLOWER_SF_HANDLE) ? 4 : (f->given & FLOWER_SF_PREF) ? 3 : 2, ret;
	if (depth == 4) { /* one rule, by the index */
		struct fidx_key k = { .port = p.port, .chain = p.chain, .pref = p.pref, .handle = p.handle };
		const struct fidx_entry *e = fidx_find(&w->place, &k);
		if (!e)
			return fail(w, -ENOENT, "dev %s chain %u: no such filter", f->dev, f->chain);
		if ((ret = check_del_protocol(w, f, e->r)))
			return ret;
		remove_live(w, e->r);
		return 0;
	}
	if ((ret = flush(w)))
		return ret;
	size_t lo = bound(w, &p, depth, false), hi = bound(w, &p, depth, true);
	if (lo == hi)
		return fail(w, -ENOENT, "dev %s chain %u: no such filter", f->dev, f->chain);
	if ((ret = check_del_protocol(w, f, w->rules[lo])))
		return ret;
	for (size_t i = lo; i < hi; i++)
		remove_live(w, w->rules[i]);
	return 0;
}

/* tc's replace (create if missing) and change (must exist): the rule at
 * (port, chain, pref, handle) leaves the working set and the new one is
 * added in its place, in the same batch, so the published table has one or
 * the other.  Without pref and handle, replace is an add. */
static int op_replace(struct work *w, const struct flower_spec *f, bool change,
		      flower_port_resolver *resolve, void *aux, uint64_t now_ns)
{
	bool named = (f->given & FLOWER_SF_PREF) && (f->given & FLOWER_SF_HANDLE);
	struct fidx_key k = { .chain = f->chain, .pref = f->pref, .handle = f->handle };
	if (flower_hook_resolve(f, resolve, aux, &k.port))
		return fail(w, -ENOENT, "dev \"%s\": no such port", f->dev);
	const struct fidx_entry *e = named ? fidx_find(&w->place, &k) : NULL;
	if (!e && change)
		return fail(w, -ENOENT, "dev %s chain %u pref %u handle %u: no such filter to "
			    "change (tc: use replace, or add, to create one)", f->dev, f->chain,
			    f->pref, f->handle);
	if (e)
		remove_live(w, e->r);
	return op_add(w, f, resolve, aux, now_ns);
}

/* ---- building the table ---------------------------------------------------- */


/* New rules get the lowest slots no surviving rule uses, so slots stay
 * below the number of rules (plus the old table's holes).  Sets n_slots. */
static int assign_slots(struct flower_table *t, const struct flower_table *old, const struct work *w)
{
	static const uint32_t UNSET = UINT32_MAX;
	size_t size = (old && old->n_slots > t->n_rules ? old->n_slots : t->n_rules) + 1;
	uint8_t *used = calloc(size, 1);
	if (!used)
		return -ENOMEM;
	for (size_t i = 0; i < w->n_created; i++)
		w->created[i]->slot = UNSET;
	for (size_t i = 0; i < t->n_rules; i++)
		if (t->rules[i]->slot != UNSET)
			used[t->rules[i]->slot] = 1;
	uint32_t next = 0, top = 0;
	for (size_t i = 0; i < t->n_rules; i++) {
		struct flower_rule *r = t->rules[i];
		if (r->slot == UNSET) {
			while (used[next])
				next++;
			r->slot = next++;
		}
		top = r->slot + 1 > top ? r->slot + 1 : top;
	}
	t->n_slots = top;
	free(used);
	return 0;
}

static void destroy_chains(struct flower_table *t)
{
	for (uint32_t i = 0; t->chains && i < t->n_chains; i++)
		cls_destroy(t->chains[i].cls);
	free(t->chains);
}

/* The first chain of `port` at or after `chain`, by binary search. */
static const struct flower_chain *chain_at_or_after(const struct flower_table *t, uint16_t port,
						    uint32_t chain)
{
	uint32_t lo = 0, hi = t->n_chains;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct flower_chain *c = &t->chains[mid];
		if (c->port < port || (c->port == port && c->chain < chain))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n_chains && t->chains[lo].port == port ? &t->chains[lo] : NULL;
}

/* old's classifier of (port, chain), or NULL. */
static const struct cls *old_chain_cls(const struct flower_table *old, uint16_t port, uint32_t chain)
{
	const struct flower_chain *c = old ? chain_at_or_after(old, port, chain) : NULL;
	return c && c->chain == chain ? c->cls : NULL;
}

/* One classifier per (port, chain), each built next to old's: subtables
 * whose rules did not change are shared (classifier.h), so a change of a
 * few rules hashes only their masks' subtables again.  Ranks are (pref,
 * handle), which an insertion does not move. */
static int build_chains(struct flower_table *t, const struct flower_table *old)
{
	struct cls_rule *cr = malloc((t->n_rules ? t->n_rules : 1) * sizeof(*cr));
	t->chains = calloc(t->n_rules ? t->n_rules : 1, sizeof(*t->chains));
	if (!cr || !t->chains) {
		free(cr);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->n_rules;) {
		const struct flower_rule *r = t->rules[i];
		struct flower_chain *c = &t->chains[t->n_chains++];
		c->port = r->port;
		c->chain = r->chain;
		c->first = i;
		for (; i < t->n_rules && same_chain(t->rules[i], r->port, r->chain); i++) {
			cr[c->n].match = &t->rules[i]->match;
			cr[c->n].rank = (uint64_t)t->rules[i]->pref << 32 | t->rules[i]->handle;
			cr[c->n].data = t->rules[i];
			c->n++;
		}
		int ret = cls_build_from(old_chain_cls(old, c->port, c->chain), cr, c->n, &c->cls);
		if (ret) {
			free(cr);
			return ret;
		}
	}
	free(cr);
	return 0;
}

static int make_table(const struct flower_table *old, struct work *w, struct flower_table **out)
{
	if (w->n > FLOWER_MAX_TABLE_RULES) {
		w->op = 0;
		return fail(w, -ENOSPC, "too many rules: at most %d in one switch", FLOWER_MAX_TABLE_RULES);
	}
	struct flower_table *t = calloc(1, sizeof(*t));
	if (!t)
		return fail(w, -ENOMEM, "out of memory");
	t->holders = 1;
	t->version = (old ? old->version : 0) + 1;
	t->next_uid = w->next_uid;
	t->n_rules = (uint32_t)w->n;
	t->rules = w->rules;
	w->rules = NULL;
	/* In place order: flush() merged the batch. */
	if (assign_slots(t, old, w) || build_chains(t, old)) {
		/* Nothing holds a reference yet: the caller frees this batch's
		 * rules, the old table keeps its own. */
		destroy_chains(t);
		free(t->rules);
		free(t);
		return fail(w, -ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < t->n_rules; i++)
		t->rules[i]->refs++;
	*out = t;
	return 0;
}

int flower_table_apply(const struct flower_table *old, const struct flower_op *ops, size_t n,
		       flower_port_resolver *resolve, void *aux, uint64_t now_ns,
		       struct flower_table **out, struct flower_error *err)
{
	struct work w = { .err = err, .next_uid = old ? old->next_uid : 1 };
	*out = NULL;
	int ret = work_init(&w, old, n);
	for (size_t i = 0; i < n && !ret; i++) {
		w.op = i;
		const struct flower_spec *f = ops[i].spec;
		if (ops[i].kind == FLOWER_OP_ADD)
			ret = op_add(&w, f, resolve, aux, now_ns);
		else if (ops[i].kind == FLOWER_OP_DEL)
			ret = op_del(&w, f, resolve, aux);
		else if (ops[i].kind == FLOWER_OP_REPLACE || ops[i].kind == FLOWER_OP_CHANGE)
			ret = op_replace(&w, f, ops[i].kind == FLOWER_OP_CHANGE, resolve, aux, now_ns);
		else
			ret = fail(&w, -EINVAL, "only filter add, replace, change and del change the table");
	}
	if (!ret)
		ret = flush(&w);
	if (!ret)
		ret = make_table(old, &w, out);
	/* Rules of this batch that no table holds: refused batch, or added
	 * and deleted within it. */
	for (size_t i = 0; i < w.n_created; i++)
		if (!w.created[i]->refs)
			free(w.created[i]);
	free(w.created);
	work_fini(&w);
	return ret;
}

void flower_table_hold(struct flower_table *t)
{
	t->holders++;
}

void flower_table_destroy(struct flower_table *t)
{
	if (!t || --t->holders)
		return;
	destroy_chains(t);
	for (uint32_t i = 0; i < t->n_rules; i++)
		if (--t->rules[i]->refs == 0)
			free(t->rules[i]);
	free(t->rules);
	free(t);
}

uint64_t flower_table_version(const struct flower_table *t)
{
	return t->version;
}

size_t flower_table_n_rules(const struct flower_table *t)
{
	return t->n_rules;
}

const struct flower_rule *flower_table_rule(const struct flower_table *t, size_t i)
{
	return i < t->n_rules ? t->rules[i] : NULL;
}

void flower_table_stats(const struct flower_table *t, uint32_t *n_subtables, uint32_t *n_linear)
{
	*n_subtables = *n_linear = 0;
	for (uint32_t i = 0; i < t->n_chains; i++) {
		struct cls_stats s;
		cls_get_stats(t->chains[i].cls, &s);
		*n_subtables += s.n_subtables;
		*n_linear += s.n_linear;
	}
}

uint32_t flower_table_shared_subtables(const struct flower_table *t)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < t->n_chains; i++) {
		struct cls_stats s;
		cls_get_stats(t->chains[i].cls, &s);
		n += s.n_shared;
	}
	return n;
}

/* ---- classify ---------------------------------------------------------------- */

bool flower_table_port_has_rules(const struct flower_table *t, uint16_t port)
{
	return chain_at_or_after(t, port, 0) != NULL;
}

void flower_table_classify(const struct flower_table *t, const struct flow_key *key,
			   struct flower_verdict *v)
{
	flower_table_classify_hook(t, key->in_port, key, v);
}

void flower_table_classify_hook(const struct flower_table *t, uint16_t hook, const struct flow_key *key,
				struct flower_verdict *v)
{
	uint32_t chain = 0;
	uint64_t after = 0; /* continue: the first rank of the next pref */
	v->n_rules = 0;
	v->end = FLOWER_END_NO_MATCH;
	for (;;) {
		const struct flower_chain *c = chain_at_or_after(t, hook, chain);
		if (!c || c->chain != chain)
			return;
		const struct flower_rule *r = cls_lookup_after(c->cls, key, after, NULL);
		if (!r)
			return;
		if (v->n_rules == FLOWER_MAX_HOPS) {
			v->end = FLOWER_END_LOOP;
			return;
		}
		v->rules[v->n_rules++] = r;
		v->end = FLOWER_END_MATCHED;
		const struct flower_action *last = &r->actions[r->n_actions - 1];
		if (last->type == FLOWER_ACT_CONTINUE) {
			after = ((uint64_t)r->pref + 1) << 32; /* ranks are pref << 32 | handle */
			continue;
		}
		if (last->type != FLOWER_ACT_GOTO)
			return;
		chain = last->chain;
		after = 0;
	}
}

/* ---- counters ------------------------------------------------------------------ */

uint32_t flower_table_n_slots(const struct flower_table *t)
{
	return t ? t->n_slots : 0;
}

int flower_counters_reserve(struct flower_counters *c, size_t n)
{
	if (n <= c->n)
		return 0;
	size_t cap = c->n ? c->n : 1024;
	while (cap < n)
		cap *= 2;
	struct flower_rule_counters *s = realloc(c->slot, cap * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(s + c->n, 0, (cap - c->n) * sizeof(*s));
	c->slot = s;
	c->n = cap;
	return 0;
}

void flower_counters_fini(struct flower_counters *c)
{
	free(c->slot);
	*c = (struct flower_counters){ 0 };
}

void flower_counters_copy(struct flower_counters *dst, const struct flower_counters *src)
{
	size_t n = src->n < dst->n ? src->n : dst->n;
	if (n)
		memcpy(dst->slot, src->slot, n * sizeof(*dst->slot));
	if (dst->n > n)
		memset(dst->slot + n, 0, (dst->n - n) * sizeof(*dst->slot));
}

void flower_counters_add(struct flower_counters *c, const struct flower_verdict *v,
			 uint32_t bytes, bool fast, uint64_t now_ns)
{
	for (uint32_t i = 0; i < v->n_rules; i++) {
		const struct flower_rule *r = v->rules[i];
		if (r->slot >= c->n)
			continue; /* the array could not grow (flower_counters_reserve) */
		struct flower_rule_counters *s = &c->slot[r->slot];
		if (s->uid != r->uid)
			*s = (struct flower_rule_counters){ .uid = r->uid };
		if (fast) {
			s->fast_packets++;
			s->fast_bytes += bytes;
		} else {
			s->slow_packets++;
			s->slow_bytes += bytes;
		}
		s->last_used_ns = now_ns;
	}
}

void flower_counters_get(const struct flower_counters *c, const struct flower_rule *r,
			 struct flower_rule_counters *out)
{
	const struct flower_rule_counters *s = r->slot < c->n ? &c->slot[r->slot] : NULL;
	if (s && s->uid == r->uid)
		*out = *s;
	else
		*out = (struct flower_rule_counters){ .uid = r->uid };
}

void flower_counters_merge(struct flower_counters *dst, const struct flower_counters *src)
{
	size_t n = src->n < dst->n ? src->n : dst->n;
	for (size_t i = 0; i < n; i++) {
		struct flower_rule_counters *d = &dst->slot[i];
		const struct flower_rule_counters *s = &src->slot[i];
		if (s->uid == 0 || s->uid < d->uid)
			continue; /* nothing there, or a rule since deleted */
		if (s->uid > d->uid) {
			*d = *s;
			continue;
		}
		d->fast_packets += s->fast_packets;
		d->fast_bytes += s->fast_bytes;
		d->slow_packets += s->slow_packets;
		d->slow_bytes += s->slow_bytes;
		if (s->last_used_ns > d->last_used_ns)
			d->last_used_ns = s->last_used_ns;
	}
}
