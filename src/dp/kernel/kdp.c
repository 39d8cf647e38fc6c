#include "dp/kernel/kdp.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <net/if.h>
#include <dirent.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dp/kernel/kdp_link.h"
#include "port/rtnl.h"
#include "vxdp.skel.h"

/* Not in Debian 12's uapi headers (6.1); the kernel (6.8+) has them. */
enum { KDP_BPF_TCX_INGRESS = 46, KDP_BPF_TCX_EGRESS = 47 };
/* cls_bpf handle and priority of our filters, to find and remove only them. */
enum { KDP_TC_HANDLE = 0x7678, KDP_TC_PRIO = 1 };
#define KDP_BPFFS "/sys/fs/bpf"

struct kdp_att {
	uint32_t ifindex;
	int link_fd;            /* tcx link, or -1 for cls_bpf */
	bool egress;            /* the egress hook (vxdp_port_egress), else ingress */
};

struct kdp {
	struct vxdp *skel;
	char tun_name[IF_NAMESIZE];
	uint32_t tun_ifindex;
	bool tun_created;
	char keep_dir[PATH_MAX];  /* "": nothing kept (kdp.h, "Kept state") */
	char bpffs[PATH_MAX];
	bool adopted;             /* the maps were a previous run's */
	enum kdp_attach attach;
	bool force_cls_bpf;
	struct kdp_att atts[VXDP_MAX_PORTS + 1];
	unsigned n_atts;
	struct ring_buffer *rb;
	kdp_upcall_fn *up_fn;
	void *up_aux;
	uint32_t upcall_rate, upcall_burst; /* kdp_upcall_limit_set's */
};

static void why_set(char *why, unsigned len, const char *fmt, ...)
{
	if (!why || !len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

uint64_t kdp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* tcx through a raw BPF_LINK_CREATE: the link's fd owns the attachment. */
static int attach_tcx(int prog_fd, uint32_t ifindex, bool egress)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = (uint32_t)prog_fd;
	a.link_create.target_ifindex = ifindex;
	a.link_create.attach_type = egress ? KDP_BPF_TCX_EGRESS : KDP_BPF_TCX_INGRESS;
	long fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : (int)fd;
}

static int attach_cls(int prog_fd, uint32_t ifindex, bool egress)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex,
			    .attach_point = egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	int err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST)
		return err;
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, o, .handle = KDP_TC_HANDLE, .priority = KDP_TC_PRIO,
			    .prog_fd = prog_fd, .flags = BPF_TC_F_REPLACE);
	return bpf_tc_attach(&hook, &o);
}

static void detach_cls(uint32_t ifindex, bool egress)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex,
			    .attach_point = egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, o, .handle = KDP_TC_HANDLE, .priority = KDP_TC_PRIO);
	bpf_tc_detach(&hook, &o);
}

static void link_pin_path(const struct kdp *k, uint32_t ifindex, bool egress, char *path, size_t len)
{
	snprintf(path, len, "%s/%slink-%u", k->keep_dir, egress ? "e" : "", ifindex);
}

/* A kept tcx link of `ifindex`, switched to this run's program: the
 * device never runs without one (BPF_LINK_UPDATE swaps it in place). */
static int adopt_tcx(struct kdp *k, int prog_fd, uint32_t ifindex, bool egress)
{
	char path[PATH_MAX + 32];
	link_pin_path(k, ifindex, egress, path, sizeof(path));
	int fd = bpf_obj_get(path);
	if (fd < 0)
		return -ENOENT;
	if (bpf_link_update(fd, prog_fd, NULL) < 0) {
		int err = -errno;
		close(fd);
		unlink(path); /* a link we cannot use: drop it, attach anew */
		return err;
	}
	return fd;
}

static int attach(struct kdp *k, int prog_fd, uint32_t ifindex, bool egress)
{
	if (k->n_atts >= sizeof(k->atts) / sizeof(k->atts[0]))
		return -ENOSPC;
	int fd = -1, err;
	if (k->keep_dir[0] && !k->force_cls_bpf && (fd = adopt_tcx(k, prog_fd, ifindex, egress)) >= 0) {
		k->attach = KDP_ATTACH_TCX;
		k->atts[k->n_atts++] = (struct kdp_att){ .ifindex = ifindex, .link_fd = fd, .egress = egress };
		return 0;
	}
	fd = -1;
	if (!k->force_cls_bpf && k->attach != KDP_ATTACH_CLS_BPF) {
		fd = attach_tcx(prog_fd, ifindex, egress);
		if (fd >= 0)
			k->attach = KDP_ATTACH_TCX;
		else if (k->attach == KDP_ATTACH_TCX)
			return fd;  /* tcx works here: this device refuses */
	}
	if (fd < 0) {
		err = attach_cls(prog_fd, ifindex, egress);
		if (err < 0)
			return err;
		k->attach = KDP_ATTACH_CLS_BPF;
	}
	if (fd >= 0 && k->keep_dir[0]) {
		char path[PATH_MAX + 32];
		link_pin_path(k, ifindex, egress, path, sizeof(path));
		if (bpf_obj_pin(fd, path) < 0) {
			err = -errno;
			close(fd);
			return err;
		}
	}
	k->atts[k->n_atts++] = (struct kdp_att){ .ifindex = ifindex, .link_fd = fd, .egress = egress };
	return 0;
}

/* Takes the program off one hook of `ifindex` (a kept link's pin goes
 * first, else the link would outlive its fd). */
static void detach_hook(struct kdp *k, uint32_t ifindex, bool egress)
{
	char path[PATH_MAX + 32];
	for (unsigned i = 0; i < k->n_atts; i++) {
		if (k->atts[i].ifindex != ifindex || k->atts[i].egress != egress)
			continue;
		if (k->atts[i].link_fd >= 0) {
			if (k->keep_dir[0]) {
				link_pin_path(k, ifindex, egress, path, sizeof(path));
				unlink(path);
			}
			close(k->atts[i].link_fd);
		} else {
			detach_cls(ifindex, egress);
		}
		k->atts[i] = k->atts[--k->n_atts];
		return;
	}
	if (k->keep_dir[0]) {
		/* A kept port this run did not adopt. */
		link_pin_path(k, ifindex, egress, path, sizeof(path));
		if (unlink(path) < 0)
			detach_cls(ifindex, egress);
	}
}

/* Takes the programs off `ifindex`. */
static void detach(struct kdp *k, uint32_t ifindex)
{
	detach_hook(k, ifindex, false);
	detach_hook(k, ifindex, true);
}

static int ring_cb(void *ctx, void *data, size_t len)
{
	struct kdp *k = ctx;
	if (len >= sizeof(struct vxdp_upcall) && k->up_fn)
		k->up_fn(k->up_aux, data);
	return 0;
}

static int counters_zero(struct kdp *k, uint32_t key)
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	struct vxdp_counters *z = calloc((size_t)ncpu, sizeof(*z));
	if (!z)
		return -ENOMEM;
	int err = bpf_map_update_elem(bpf_map__fd(k->skel->maps.counters), &key, z, BPF_ANY);
	free(z);
	return err < 0 ? -errno : 0;
}

/* The namespace's ip_local_port_range (the kernel's vxlan default
 * source ports), within what the device can give (vxdp_abi.h). */
static void local_port_range(uint16_t *min, uint16_t *max)
{
	unsigned lo = 32768, hi = 60999; /* the kernel's default */
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	if (f) {
		unsigned a, b;
		if (fscanf(f, "%u %u", &a, &b) == 2 && a >= 1 && a <= b && b <= 65535)
			lo = a, hi = b;
		fclose(f);
	}
	*max = (uint16_t)(hi > VXDP_SPORT_TOP ? VXDP_SPORT_TOP : hi);
	*min = (uint16_t)(lo > *max ? *max : lo);
}

static int open_tun(struct kdp *k, const struct kdp_opts *o, char *why, unsigned why_len)
{
	int idx = k->adopted ? (int)if_nametoindex(k->tun_name) : 0;
	if (idx <= 0) {
		/* A device of ours a killed run left behind. */
		rtnl_link_delete(-1, k->tun_name);
		idx = kdp_link_vxlan_create(k->tun_name, o->dstport ? o->dstport : 4789);
	}
	if (idx < 0) {
		why_set(why, why_len, "cannot create the collect_md vxlan device %s: %s", k->tun_name,
			strerror(-idx));
		return idx;
	}
	k->tun_created = true;
	k->tun_ifindex = (uint32_t)idx;
	struct vxdp_cfg c = { .tun4_ifindex = (uint32_t)idx, .tun6_ifindex = (uint32_t)idx,
			      .dstport = o->dstport ? o->dstport : 4789 };
	local_port_range(&c.sport_min, &c.sport_max);
	uint32_t zero = 0;
	int err = bpf_map_update_elem(bpf_map__fd(k->skel->maps.cfg), &zero, &c, BPF_ANY);
	if (err < 0)
		return -errno;
	struct vxdp_port tp = { .upcall_rate = k->upcall_rate, .upcall_burst = k->upcall_burst,
				.tokens = k->upcall_burst };
	if (bpf_map_update_elem(bpf_map__fd(k->skel->maps.ports), &k->tun_ifindex, &tp, BPF_ANY) < 0)
		return -errno;
	if (!k->adopted && (err = counters_zero(k, k->tun_ifindex)) < 0)
		return err;
	err = attach(k, bpf_program__fd(k->skel->progs.vxdp_tun_ingress), k->tun_ifindex, false);
	if (err < 0)
		why_set(why, why_len, "cannot attach to %s (tcx nor cls_bpf): %s", k->tun_name,
			strerror(-err));
	return err;
}

/* ---- kept state ------------------------------------------------------------ */

/* bpffs at /sys/fs/bpf, mounted if it is not (as systemd would have). */
static int bpffs_ready(const char *bpffs)
{
	struct statfs st;
	if (statfs(bpffs, &st) == 0 && st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", bpffs, "bpf", 0, "mode=0700") < 0)
		return -errno;
	return 0;
}

int kdp_keep_dir(const char *bpffs, const char *tun_name, char *dir, size_t len)
{
	struct stat ns;
	if (stat("/proc/self/ns/net", &ns) < 0)
		return -errno;
	int n = snprintf(dir, len, "%s/vxswitch/%lu-%s", bpffs ? bpffs : KDP_BPFFS, (unsigned long)ns.st_ino,
			 tun_name ? tun_name : "vxdp0");
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Every pin in `dir` (maps, links: a link whose pin goes and whose fd no
 * one holds is detached), then the directory. */
static void kept_unpin_all(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[PATH_MAX + 300];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* Pins of links whose device is gone (a device someone deleted, the
 * rules' re-injection veth that each start makes anew): the kernel
 * detached them with the device, the pin holds nothing. */
static void kept_unpin_orphan_links(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		unsigned ifindex;
		char name[IF_NAMESIZE];
		if ((sscanf(e->d_name, "link-%u", &ifindex) != 1 && sscanf(e->d_name, "elink-%u", &ifindex) != 1) ||
		    if_indextoname(ifindex, name))
			continue;
		char path[PATH_MAX + 300];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

bool kdp_kept_exists(const char *bpffs, const char *tun_name)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	if (kdp_keep_dir(bpffs, tun_name, dir, sizeof(dir)) < 0)
		return false;
	snprintf(path, sizeof(path), "%s/ports", dir);
	return access(path, F_OK) == 0;
}

void kdp_kept_remove(const char *bpffs, const char *tun_name)
{
	char dir[PATH_MAX];
	if (kdp_keep_dir(bpffs, tun_name, dir, sizeof(dir)) == 0)
		kept_unpin_all(dir);
	rtnl_link_delete(-1, tun_name ? tun_name : "vxdp0");
}

/* Pins the skeleton's own maps (not .rodata/.bss) in k->keep_dir: libbpf
 * reuses a pinned map of the same layout at load, or pins the new one. */
static int keep_prepare(struct kdp *k, char *why, unsigned why_len)
{
	int err = bpffs_ready(k->bpffs);
	if (err == 0) {
		char parent[PATH_MAX + 16];
		snprintf(parent, sizeof(parent), "%s/vxswitch", k->bpffs);
		if ((mkdir(parent, 0700) < 0 && errno != EEXIST) || (mkdir(k->keep_dir, 0700) < 0 && errno != EEXIST))
			err = -errno;
	}
	if (err < 0) {
		why_set(why, why_len, "cannot keep state in %s: %s", k->keep_dir, strerror(-err));
		return err;
	}
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/ports", k->keep_dir);
	k->adopted = access(path, F_OK) == 0;
	if (k->adopted)
		kept_unpin_orphan_links(k->keep_dir);
	struct bpf_map *m;
	bpf_object__for_each_map(m, k->skel->obj) {
		if (bpf_map__is_internal(m))
			continue;
		char mp[PATH_MAX + 64];
		snprintf(mp, sizeof(mp), "%s/%s", k->keep_dir, bpf_map__name(m));
		if ((err = bpf_map__set_pin_path(m, mp)) < 0)
			return err;
	}
	return 0;
}

/* ---- open and close -------------------------------------------------------- */

static int load(struct kdp *k, const struct kdp_opts *o, char *why, unsigned why_len)
{
	k->skel = vxdp__open();
	if (!k->skel) {
		int err = -errno;
		why_set(why, why_len, "cannot open the BPF programs: %s", strerror(-err));
		return err;
	}
	k->skel->rodata->vxdp_record = o->record ? 1 : 0;
	int err = k->keep_dir[0] ? keep_prepare(k, why, why_len) : 0;
	if (err == 0 && (err = vxdp__load(k->skel)) != 0)
		why_set(why, why_len, "the kernel refused the BPF programs: %s", strerror(-err));
	return err;
}

int kdp_open(const struct kdp_opts *o, struct kdp **out, char *why, unsigned why_len)
{
	struct kdp *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->force_cls_bpf = o->force_cls_bpf;
	k->upcall_rate = KDP_UPCALL_RATE_DEFAULT;
	k->upcall_burst = KDP_UPCALL_BURST_DEFAULT;
	snprintf(k->tun_name, sizeof(k->tun_name), "%s", o->tun_name ? o->tun_name : "vxdp0");
	int err;
	snprintf(k->bpffs, sizeof(k->bpffs), "%s", o->bpffs ? o->bpffs : KDP_BPFFS);
	if (o->keep && (err = kdp_keep_dir(k->bpffs, k->tun_name, k->keep_dir, sizeof(k->keep_dir))) < 0) {
		why_set(why, why_len, "no directory for the kept state: %s", strerror(-err));
		goto fail;
	}
	err = load(k, o, why, why_len);
	if (err && k->adopted) {
		/* Maps of another layout (an upgrade): what they held cannot
		 * be read by these programs, so start afresh. */
		vxdp__destroy(k->skel);
		kdp_kept_remove(k->bpffs, k->tun_name);
		k->adopted = false;
		err = load(k, o, why, why_len);
	}
	if (err)
		goto fail;
	if (!k->adopted && (err = counters_zero(k, VXDP_COUNTERS_NOPORT)) < 0)
		goto fail;
	k->rb = ring_buffer__new(bpf_map__fd(k->skel->maps.upcalls), ring_cb, k, NULL);
	if (!k->rb) {
		err = -errno;
		why_set(why, why_len, "cannot map the upcall ring: %s", strerror(-err));
		goto fail;
	}
	if (!o->no_tun && (err = open_tun(k, o, why, why_len)) < 0)
		goto fail;
	*out = k;
	return 0;
fail:
	kdp_close(k);
	return err < 0 ? err : -EINVAL;
}

bool kdp_adopted(const struct kdp *k) { return k->adopted; }

void kdp_close(struct kdp *k)
{
	if (!k)
		return;
	if (k->keep_dir[0]) {
		/* Kept: the pins hold links and maps, the device stays. */
		for (unsigned i = 0; i < k->n_atts; i++)
			if (k->atts[i].link_fd >= 0)
				close(k->atts[i].link_fd);
		k->n_atts = 0;
	} else {
		while (k->n_atts)
			detach(k, k->atts[k->n_atts - 1].ifindex);
		if (k->tun_created)
			rtnl_link_delete(-1, k->tun_name);
	}
	ring_buffer__free(k->rb);
	vxdp__destroy(k->skel);
	free(k);
}

int kdp_port_prog_fd(const struct kdp *k) { return bpf_program__fd(k->skel->progs.vxdp_port_ingress); }
int kdp_tun_prog_fd(const struct kdp *k) { return bpf_program__fd(k->skel->progs.vxdp_tun_ingress); }
uint32_t kdp_tun_ifindex(const struct kdp *k) { return k->tun_ifindex; }
enum kdp_attach kdp_attach_kind(const struct kdp *k) { return k->attach; }

int kdp_map_fd(const struct kdp *k, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(k->skel->obj, name);
	return m ? bpf_map__fd(m) : -ENOENT;
}

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
	struct vxdp_port kept;
	bool had = k->adopted && bpf_map_lookup_elem(bpf_map__fd(k->skel->maps.ports), &ifindex, &kept) == 0;
	int err = had ? 0 : counters_zero(k, ifindex);
	if (err < 0)
		return err;
	if (bpf_map_update_elem(bpf_map__fd(k->skel->maps.ports), &ifindex, &p, BPF_ANY) < 0) {
		err = -errno;
		goto undo;
	}
	if (o->attach && (err = attach(k, kdp_port_prog_fd(k), ifindex, false)) < 0)
		goto undo;
	return 0;
undo:
	bpf_map_delete_elem(bpf_map__fd(k->skel->maps.ports), &ifindex);
	bpf_map_delete_elem(bpf_map__fd(k->skel->maps.counters), &ifindex);
	return err;
}

int kdp_port_each(struct kdp *k, kdp_port_fn *fn, void *aux)
{
	int fd = bpf_map__fd(k->skel->maps.ports), n = 0;
	uint32_t key, next;
	struct vxdp_port p;
	void *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (bpf_map_lookup_elem(fd, &next, &p) == 0 && next != k->tun_ifindex) {
			fn(aux, next, &p);
			n++;
		}
		key = next;
		prev = &key;
	}
	return errno == ENOENT ? n : -errno;
}

int kdp_upcall_limit_set(struct kdp *k, uint32_t rate, uint32_t burst)
{
	int fd = bpf_map__fd(k->skel->maps.ports);
	uint32_t key, next;
	struct vxdp_port p;
	void *prev = NULL;
	k->upcall_rate = rate;
	k->upcall_burst = burst;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		/* The program writes the tokens in place: one it takes
		 * between this read and the write is given back, no more. */
		if (bpf_map_lookup_elem(fd, &next, &p) == 0) {
			p.upcall_rate = rate;
			p.upcall_burst = burst;
			p.tokens = p.tokens > burst ? burst : p.tokens;
			if (bpf_map_update_elem(fd, &next, &p, BPF_EXIST) < 0)
				return -errno;
		}
		key = next;
		prev = &key;
	}
	return errno == ENOENT ? 0 : -errno;
}

int kdp_vni_each(struct kdp *k, kdp_vni_fn *fn, void *aux)
{
	int fd = bpf_map__fd(k->skel->maps.vnis), n = 0;
	uint32_t key, next;
	void *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		fn(aux, next);
		n++;
		key = next;
		prev = &key;
	}
	return errno == ENOENT ? n : -errno;
}

int kdp_port_del(struct kdp *k, uint32_t ifindex)
{
	detach(k, ifindex);
	int err = bpf_map_delete_elem(bpf_map__fd(k->skel->maps.ports), &ifindex);
	bpf_map_delete_elem(bpf_map__fd(k->skel->maps.counters), &ifindex);
	return err < 0 ? -errno : 0;
}

/* The `vteps` entries of the remotes in a VNI's flood list: added, or
 * removed (add false). */
static int vteps_update(struct kdp *k, uint32_t vni, const struct vxdp_flood_ent *fl, unsigned n, bool add)
{
	int fd = bpf_map__fd(k->skel->maps.vteps);
	uint8_t one = 1;
	for (unsigned i = 0; i < n && i < VXDP_FLOOD_MAX; i++) {
		if (!(fl[i].flags & VXDP_FDB_REMOTE))
			continue;
		struct vxdp_vtep_key key = { .vni = vni, .flags = fl[i].flags & VXDP_FDB_V6 };
		memcpy(key.addr, fl[i].remote, 16);
		if (add && bpf_map_update_elem(fd, &key, &one, BPF_ANY) < 0)
			return -errno;
		if (!add)
			bpf_map_delete_elem(fd, &key);
	}
	return 0;
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
	struct vxdp_vni old, v = { .ttl = o->ttl, .tos = o->tos, .flags = o->flags, .n_flood = n_flood,
				   .sport_min = o->sport_min, .sport_max = o->sport_max };
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
	if (bpf_map_lookup_elem(fd, &vni, &old) == 0)
		vteps_update(k, vni, old.flood, old.n_flood, false);
	int err = vteps_update(k, vni, v.flood, n_flood, true);
	if (err == 0 && bpf_map_update_elem(fd, &vni, &v, BPF_ANY) < 0)
		err = -errno;
	return err;
}

int kdp_vni_del(struct kdp *k, uint32_t vni)
{
	struct vxdp_vni old;
	int fd = bpf_map__fd(k->skel->maps.vnis);
	if (bpf_map_lookup_elem(fd, &vni, &old) == 0)
		vteps_update(k, vni, old.flood, old.n_flood, false);
	return bpf_map_delete_elem(fd, &vni) < 0 ? -errno : 0;
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

int kdp_counters_read(struct kdp *k, uint32_t ifindex, struct vxdp_counters *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	struct vxdp_counters *per = calloc((size_t)ncpu, sizeof(*per));
	if (!per)
		return -ENOMEM;
	int err = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(k->skel->maps.counters), &ifindex, per) < 0) {
		err = -errno;
		goto out;
	}
	memset(sum, 0, sizeof(*sum));
	uint64_t *s = (uint64_t *)sum;
	for (int c = 0; c < ncpu; c++) {
		const uint64_t *p = (const uint64_t *)&per[c];
		for (size_t i = 0; i < sizeof(*sum) / sizeof(uint64_t); i++)
			s[i] += p[i];
	}
out:
	free(per);
	return err;
}

int kdp_upcall_fd(struct kdp *k)
{
	return ring_buffer__epoll_fd(k->rb);
}

int kdp_upcall_poll(struct kdp *k, int timeout_ms, kdp_upcall_fn *fn, void *aux)
{
	k->up_fn = fn;
	k->up_aux = aux;
	int n = timeout_ms ? ring_buffer__poll(k->rb, timeout_ms) : ring_buffer__consume(k->rb);
	k->up_fn = NULL;
	return n;
}

int kdp_prog_fd(const struct kdp *k, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(k->skel->obj, name);
	return p ? bpf_program__fd(p) : -ENOENT;
}

int kdp_attach_prog(struct kdp *k, int prog_fd, uint32_t ifindex)
{
	return attach(k, prog_fd, ifindex, false);
}

/* prog_fd on (or off) ifindex's egress hook, once. */
static int egress_hook(struct kdp *k, uint32_t ifindex, int prog_fd, bool on)
{
	bool have = false;
	for (unsigned i = 0; i < k->n_atts && !have; i++)
		have = k->atts[i].ifindex == ifindex && k->atts[i].egress;
	if (on && !have)
		return attach(k, prog_fd, ifindex, true);
	if (!on && have)
		detach_hook(k, ifindex, true);
	return 0;
}

int kdp_port_egress(struct kdp *k, uint32_t ifindex, bool on)
{
	int prog = bpf_program__fd(k->skel->progs.vxdp_port_egress), err;
	if (on) /* the program first: from the flag on, frames come by its hook */
		return (err = egress_hook(k, ifindex, prog, true)) < 0 ? err
		       : kdp_port_flags(k, ifindex, VXDP_PORT_ERULES, true);
	err = kdp_port_flags(k, ifindex, VXDP_PORT_ERULES, false);
	egress_hook(k, ifindex, prog, false);
	return err;
}

int kdp_tun_egress(struct kdp *k, bool on)
{
	return egress_hook(k, k->tun_ifindex, bpf_program__fd(k->skel->progs.vxdp_tun_egress), on);
}

void kdp_detach(struct kdp *k, uint32_t ifindex)
{
	detach(k, ifindex);
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
