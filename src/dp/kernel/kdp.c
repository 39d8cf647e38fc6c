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

#include "dp/kernel/kdp_internal.h"
#include "dp/kernel/kdp_link.h"
#include "port/rtnl.h"
#include "vxdp.skel.h"

/* Not in Debian 12's uapi headers (6.1); the kernel (6.8+) has them. */
enum { KDP_BPF_TCX_INGRESS = 46, KDP_BPF_TCX_EGRESS = 47 };
/* cls_bpf handle and priority of our filters, to find and remove only them. */
enum { KDP_TC_HANDLE = 0x7678, KDP_TC_PRIO = 1 };
#define KDP_BPFFS "/sys/fs/bpf"


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
	struct vxdp_port tp = { .upcall_rate = k->upcall_rate, .upcall_burst = k->upcall_burst,
				.tokens = k->upcall_burst };
	int err = kdp_slot_keep_or_take(k, k->tun_ifindex, &tp.slot);
	if (err < 0)
		return err;
	c.tun_slot = tp.slot;
	uint32_t zero = 0;
	if (bpf_map_update_elem(bpf_map__fd(k->skel->maps.cfg), &zero, &c, BPF_ANY) < 0 ||
	    bpf_map_update_elem(bpf_map__fd(k->skel->maps.ports), &k->tun_ifindex, &tp, BPF_ANY) < 0)
		return -errno;
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
	if (!k->adopted && (err = kdp_counters_zero(k, VXDP_COUNTERS_NOPORT)) < 0)
		goto fail;
	if (k->adopted && (err = kdp_slots_adopt(k)) < 0) {
		why_set(why, why_len, "cannot read the kept ports map: %s", strerror(-err));
		goto fail;
	}
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
