/* The kernel datapath's maps (kdp.h): ports, VNIs and their VTEPs, the
 * FDB, the counters.  Each call is one or a few bpf(2) map operations,
 * each atomic for its entry.  Control thread only. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dp/kernel/kdp_internal.h"
#include "dp/kernel/bpf/vxdp_diag_abi.h"
#include "dp/kernel/bpf/vxdp_rules_abi.h"
#include "dp/kernel/kdp_percpu.h"

int kdp_port_add(struct kdp *k, uint32_t ifindex, const struct kdp_port_opts *o)
{
	struct vxdp_port p = {
		.vni = o->vni,
		.flags = o->flags,
		.upcall_rate = o->upcall_rate ? o->upcall_rate : k->upcall_rate,
		.upcall_burst = o->upcall_burst ? o->upcall_burst : k->upcall_burst,
		.tokens_stamp_ns = kdp_now_ns(),
	};
	p.tokens = p.upcall_burst;
	int err = kdp_slot_keep_or_take(k, ifindex, &p.slot);
	if (err < 0)
		return err;
	if (bpf_map_update_elem(bpf_map__fd(k->skel->maps.ports), &ifindex, &p, BPF_ANY) < 0) {
		err = -errno;
		goto undo;
	}
	if (o->attach && (err = kdp_attach_prog(k, kdp_port_prog_fd(k), ifindex)) < 0)
		goto undo;
	return 0;
undo:
	bpf_map_delete_elem(bpf_map__fd(k->skel->maps.ports), &ifindex);
	k->slot_used[p.slot] = false;
	return err;
}

static bool slot_valid(uint32_t slot)
{
	return slot != VXDP_COUNTERS_NOPORT && slot < VXDP_COUNTER_SLOTS;
}

int kdp_slot_keep_or_take(struct kdp *k, uint32_t ifindex, uint32_t *slot)
{
	struct vxdp_port kept;
	if (bpf_map_lookup_elem(bpf_map__fd(k->skel->maps.ports), &ifindex, &kept) == 0 &&
	    slot_valid(kept.slot)) {
		/* Its counters go on only if adopted: otherwise they are of a
		 * port this run replaced. */
		k->slot_used[kept.slot] = true;
		*slot = kept.slot;
		return k->adopted ? 0 : kdp_counters_zero(k, kept.slot);
	}
	return kdp_slot_take(k, slot);
}

int kdp_slot_take(struct kdp *k, uint32_t *slot)
{
	for (uint32_t i = 0; i < VXDP_COUNTER_SLOTS; i++) {
		uint32_t s = (k->slot_next + i) % VXDP_COUNTER_SLOTS;
		if (s == VXDP_COUNTERS_NOPORT || k->slot_used[s])
			continue;
		int err = kdp_counters_zero(k, s);
		if (err < 0)
			return err;
		k->slot_used[s] = true;
		k->slot_next = s + 1;
		*slot = s;
		return 0;
	}
	return -ENOSPC;
}

static int slot_adopt_one(struct kdp *k, int fd, uint32_t ifindex, void *aux)
{
	(void)aux;
	struct vxdp_port p;
	if (bpf_map_lookup_elem(fd, &ifindex, &p) == 0 && slot_valid(p.slot))
		k->slot_used[p.slot] = true;
	return 0;
}

/* fn on each key of a map keyed by a u32 (ports: ifindex; vnis: VNI), key
 * by key: the sum of what fn returned, fn's first negative return, or
 * -errno. */
typedef int u32_key_fn(struct kdp *k, int fd, uint32_t key, void *aux);

static int each_u32_key(struct kdp *k, int fd, u32_key_fn *fn, void *aux)
{
	uint32_t key, next;
	void *prev = NULL;
	int n = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		int r = fn(k, fd, next, aux);
		if (r < 0)
			return r;
		n += r;
		key = next;
		prev = &key;
	}
	return errno == ENOENT ? n : -errno;
}

struct port_walk {
	kdp_port_fn *fn;
	void *aux;
};

static int port_one(struct kdp *k, int fd, uint32_t ifindex, void *aux)
{
	const struct port_walk *w = aux;
	struct vxdp_port p;
	if (ifindex == k->tun_ifindex || bpf_map_lookup_elem(fd, &ifindex, &p) < 0)
		return 0;
	w->fn(w->aux, ifindex, &p);
	return 1;
}

int kdp_slots_adopt(struct kdp *k)
{
	memset(k->slot_used, 0, sizeof(k->slot_used));
	int n = each_u32_key(k, bpf_map__fd(k->skel->maps.ports), slot_adopt_one, NULL);
	return n < 0 ? n : 0;
}

int kdp_port_each(struct kdp *k, kdp_port_fn *fn, void *aux)
{
	struct port_walk w = { fn, aux };
	return each_u32_key(k, bpf_map__fd(k->skel->maps.ports), port_one, &w);
}

/* The program writes the tokens in place: one it takes between this read
 * and the write is given back, no more. */
static int port_limit_one(struct kdp *k, int fd, uint32_t ifindex, void *aux)
{
	(void)aux;
	struct vxdp_port p;
	if (bpf_map_lookup_elem(fd, &ifindex, &p) < 0)
		return 0;
	p.upcall_rate = k->upcall_rate;
	p.upcall_burst = k->upcall_burst;
	p.tokens = p.tokens > p.upcall_burst ? p.upcall_burst : p.tokens;
	return bpf_map_update_elem(fd, &ifindex, &p, BPF_EXIST) < 0 ? -errno : 0;
}

int kdp_upcall_limit_set(struct kdp *k, uint32_t rate, uint32_t burst)
{
	k->upcall_rate = rate;
	k->upcall_burst = burst;
	int n = each_u32_key(k, bpf_map__fd(k->skel->maps.ports), port_limit_one, NULL);
	return n < 0 ? n : 0;
}

struct vni_walk {
	kdp_vni_fn *fn;
	void *aux;
};

static int vni_one(struct kdp *k, int fd, uint32_t vni, void *aux)
{
	(void)k, (void)fd;
	const struct vni_walk *w = aux;
	w->fn(w->aux, vni);
	return 1;
}

int kdp_vni_each(struct kdp *k, kdp_vni_fn *fn, void *aux)
{
	struct vni_walk w = { fn, aux };
	return each_u32_key(k, bpf_map__fd(k->skel->maps.vnis), vni_one, &w);
}

int kdp_port_del(struct kdp *k, uint32_t ifindex)
{
	kdp_detach(k, ifindex);
	int fd = bpf_map__fd(k->skel->maps.ports);
	struct vxdp_port p;
	bool had = bpf_map_lookup_elem(fd, &ifindex, &p) == 0;
	int err = bpf_map_delete_elem(fd, &ifindex) < 0 ? -errno : 0;
	if (had && !err && slot_valid(p.slot))
		k->slot_used[p.slot] = false;
	return err;
}

static bool is_vtep(const struct vxdp_flood_ent *e)
{
	return e->flags & VXDP_FDB_REMOTE;
}

static struct vxdp_vtep_key vtep_key(uint32_t vni, const struct vxdp_flood_ent *e)
{
	struct vxdp_vtep_key key = { .vni = vni, .flags = e->flags & VXDP_FDB_V6 };
	memcpy(key.addr, e->remote, 16);
	return key;
}

/* Whether the remote of `e` is one of list[0..n). */
static bool vtep_listed(const struct vxdp_flood_ent *list, unsigned n, const struct vxdp_flood_ent *e)
{
	for (unsigned i = 0; i < n && i < VXDP_FLOOD_MAX; i++)
		if (is_vtep(&list[i]) && (list[i].flags & VXDP_FDB_V6) == (e->flags & VXDP_FDB_V6) &&
		    memcmp(list[i].remote, e->remote, 16) == 0)
			return true;
	return false;
}

/* The entries of map `vteps` in `vni` whose remote is in `from` and not in
 * `keep`, deleted (their counters with them). */
static void vteps_drop(struct kdp *k, uint32_t vni, const struct vxdp_flood_ent *from, unsigned n_from,
		       const struct vxdp_flood_ent *keep, unsigned n_keep)
{
	int fd = bpf_map__fd(k->skel->maps.vteps);
	for (unsigned i = 0; i < n_from && i < VXDP_FLOOD_MAX; i++) {
		if (!is_vtep(&from[i]) || vtep_listed(keep, n_keep, &from[i]))
			continue;
		struct vxdp_vtep_key key = vtep_key(vni, &from[i]);
		bpf_map_delete_elem(fd, &key);
	}
}

/* The remotes of a VNI's flood list `now` admitted to map `vteps`: each
 * one not there yet added, zeroed (one that is keeps its entry and its
 * counters, so its frames are never refused while its VNI changes).  On
 * failure the ones it added (not in `was`) are taken out again. */
static int vteps_admit(struct kdp *k, uint32_t vni, const struct vxdp_flood_ent *was, unsigned n_was,
		       const struct vxdp_flood_ent *now, unsigned n_now)
{
	int fd = bpf_map__fd(k->skel->maps.vteps);
	for (unsigned i = 0; i < n_now && i < VXDP_FLOOD_MAX; i++) {
		if (!is_vtep(&now[i]))
			continue;
		struct vxdp_vtep_key key = vtep_key(vni, &now[i]);
		int err = kdp_percpu_make(fd, &key, sizeof(struct vxdp_vtep_stats));
		if (err < 0) {
			vteps_drop(k, vni, now, i, was, n_was);
			return err;
		}
	}
	return 0;
}

/* Whether a vxlan port of `vni` has ingress rules (map rvnis). */
static bool vni_has_ingress_rules(struct kdp *k, uint32_t vni)
{
	uint8_t hooks = 0;
	return bpf_map_lookup_elem(bpf_map__fd(k->skel->maps.rvnis), &vni, &hooks) == 0 &&
	       (hooks & VXDP_RVNI_INGRESS);
}

int kdp_vni_set(struct kdp *k, uint32_t vni, const struct kdp_vni_outer *outer,
		const struct vxdp_flood_ent *flood, unsigned n_flood)
{
	static const struct kdp_vni_outer defaults;
	const struct kdp_vni_outer *o = outer ? outer : &defaults;
	if (n_flood > VXDP_FLOOD_MAX)
		return -E2BIG;
	if (o->sport_max < o->sport_min || o->sport_max > VXDP_SPORT_TOP || (o->sport_max && !o->sport_min))
		return -ERANGE;
	struct vxdp_vni old, v = { .ttl = o->ttl, .tos = o->tos, .flags = o->flags & ~VXDP_VNI_RULES_IN,
				   .n_flood = n_flood, .sport_min = o->sport_min, .sport_max = o->sport_max };
	if (vni_has_ingress_rules(k, vni))
		v.flags |= VXDP_VNI_RULES_IN;
	/* The default range written into the entry, so that a datagram does
	 * not look `cfg` up too (set_src_port does only for a VNI no port has). */
	struct vxdp_cfg c;
	uint32_t zero = 0;
	if (!v.sport_min && bpf_map_lookup_elem(bpf_map__fd(k->skel->maps.cfg), &zero, &c) == 0) {
		v.sport_min = c.sport_min;
		v.sport_max = c.sport_max;
	}
	if (n_flood)
		memcpy(v.flood, flood, n_flood * sizeof(*flood));
	int fd = bpf_map__fd(k->skel->maps.vnis);
	bool had = bpf_map_lookup_elem(fd, &vni, &old) == 0;
	/* Admitted before the flood list names them; refused after it no
	 * longer does. */
	int err = vteps_admit(k, vni, had ? old.flood : NULL, had ? old.n_flood : 0, v.flood, n_flood);
	if (err < 0)
		return err;
	if (bpf_map_update_elem(fd, &vni, &v, BPF_ANY) < 0) {
		err = -errno;
		vteps_drop(k, vni, v.flood, n_flood, had ? old.flood : NULL, had ? old.n_flood : 0);
		return err;
	}
	if (had)
		vteps_drop(k, vni, old.flood, old.n_flood, v.flood, n_flood);
	return 0;
}

int kdp_vni_rules_in(struct kdp *k, uint32_t vni, bool on)
{
	int fd = bpf_map__fd(k->skel->maps.vnis);
	struct vxdp_vni v;
	if (bpf_map_lookup_elem(fd, &vni, &v) < 0)
		return errno == ENOENT ? 0 : -errno; /* kdp_vni_set will read rvnis */
	uint16_t flags = on ? (v.flags | VXDP_VNI_RULES_IN) : (v.flags & ~VXDP_VNI_RULES_IN);
	if (flags == v.flags)
		return 0;
	v.flags = flags;
	return bpf_map_update_elem(fd, &vni, &v, BPF_EXIST) < 0 && errno != ENOENT ? -errno : 0;
}

int kdp_vni_del(struct kdp *k, uint32_t vni)
{
	struct vxdp_vni old;
	int fd = bpf_map__fd(k->skel->maps.vnis);
	bool had = bpf_map_lookup_elem(fd, &vni, &old) == 0;
	int err = bpf_map_delete_elem(fd, &vni) < 0 ? -errno : 0;
	if (had)
		vteps_drop(k, vni, old.flood, old.n_flood, NULL, 0);
	return err;
}

static struct vxdp_fdb_key fdb_key(uint32_t vni, const uint8_t mac[6])
{
	struct vxdp_fdb_key key;
	memset(&key, 0, sizeof(key));
	key.vni = vni;
	memcpy(key.mac, mac, 6);
	return key;
}

int kdp_fdb_add(struct kdp *k, uint32_t vni, const uint8_t mac[6], const struct vxdp_fdb_val *v)
{
	struct vxdp_fdb_key key = fdb_key(vni, mac);
	return bpf_map_update_elem(bpf_map__fd(k->skel->maps.fdb), &key, v, BPF_ANY) < 0 ? -errno : 0;
}

int kdp_fdb_del(struct kdp *k, uint32_t vni, const uint8_t mac[6])
{
	struct vxdp_fdb_key key = fdb_key(vni, mac);
	return bpf_map_delete_elem(bpf_map__fd(k->skel->maps.fdb), &key) < 0 ? -errno : 0;
}

int kdp_fdb_get(struct kdp *k, uint32_t vni, const uint8_t mac[6], struct vxdp_fdb_val *v)
{
	struct vxdp_fdb_key key = fdb_key(vni, mac);
	return bpf_map_lookup_elem(bpf_map__fd(k->skel->maps.fdb), &key, v) < 0 ? -errno : 0;
}

/* Key by key: two syscalls an entry, for a kernel without batch lookups
 * of hash maps. */
static int fdb_dump_each(int fd, kdp_fdb_fn *fn, void *aux)
{
	int n = 0;
	struct vxdp_fdb_key key, next;
	struct vxdp_fdb_val v;
	void *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (bpf_map_lookup_elem(fd, &next, &v) == 0) {
			fn(aux, &next, &v);
			n++;
		}
		key = next;
		prev = &key;
	}
	return errno == ENOENT ? n : -errno;
}

/* 256 entries a syscall: the control thread walks the whole FDB for
 * ageing once a second and, with EVPN, for its local MACs every tick. */
int kdp_fdb_dump(struct kdp *k, kdp_fdb_fn *fn, void *aux)
{
	enum { BATCH = 256 };
	int fd = bpf_map__fd(k->skel->maps.fdb), n = 0;
	struct vxdp_fdb_key keys[BATCH];
	struct vxdp_fdb_val vals[BATCH];
	uint32_t token = 0; /* the hash map's bucket to go on from */
	for (void *in = NULL;; in = &token) {
		uint32_t count = BATCH;
		int err = bpf_map_lookup_batch(fd, in, &token, keys, vals, &count, NULL);
		if (err < 0 && !in && n == 0 && count == 0 && (err == -EINVAL || err == -EOPNOTSUPP || err == -ENOTSUP))
			return fdb_dump_each(fd, fn, aux);
		for (uint32_t i = 0; i < count; i++)
			fn(aux, &keys[i], &vals[i]);
		n += (int)count;
		if (err == -ENOENT)
			return n;
		if (err < 0)
			return err;
	}
}

int kdp_counters_zero(struct kdp *k, uint32_t slot)
{
	return kdp_percpu_zero(bpf_map__fd(k->skel->maps.counters), &slot, sizeof(struct vxdp_counters));
}

_Static_assert(sizeof(struct vxdp_counters) % sizeof(uint64_t) == 0, "struct vxdp_counters: 64-bit counters");

int kdp_counters_read(struct kdp *k, uint32_t ifindex, struct vxdp_counters *sum)
{
	uint32_t slot = VXDP_COUNTERS_NOPORT;
	if (ifindex != VXDP_COUNTERS_NOPORT) {
		struct vxdp_port p;
		if (bpf_map_lookup_elem(bpf_map__fd(k->skel->maps.ports), &ifindex, &p) < 0)
			return -errno;
		slot = p.slot;
	}
	return kdp_percpu_sum(bpf_map__fd(k->skel->maps.counters), &slot, (uint64_t *)sum,
			      sizeof(*sum) / sizeof(uint64_t));
}

int kdp_port_flags(struct kdp *k, uint32_t ifindex, uint32_t bits, bool on)
{
	int fd = bpf_map__fd(k->skel->maps.ports);
	struct vxdp_port p;
	if (bpf_map_lookup_elem(fd, &ifindex, &p) < 0)
		return -errno;
	uint32_t flags = on ? p.flags | bits : p.flags & ~bits;
	if (flags == p.flags)
		return 0;
	p.flags = flags;
	return bpf_map_update_elem(fd, &ifindex, &p, BPF_EXIST) < 0 ? -errno : 0;
}
