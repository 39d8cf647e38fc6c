/* The kernel datapath: vxswitch's eBPF programs (bpf/vxdp.bpf.c) on tc
 * ingress of VM-facing netdevs and of one collect_md vxlan device, with
 * vxswitchd as their control plane and slow path.
 *
 * What it builds:
 *   - the programs and their maps, loaded from the skeleton compiled into
 *     vxswitchd (no file is read at run time);
 *   - one collect_md ("external") vxlan device, `tun_name` (default
 *     "vxdp0"), UDP port `dstport`, learning off.  One device serves both
 *     address families: a collect_md vxlan device opens an IPv4 and an
 *     IPv6 socket (vxlan_sock_add), and the kernel allows one such device
 *     per (netns, port); the tunnel key's family picks the socket;
 *   - an attachment of vxdp_tun_ingress to it and of vxdp_port_ingress to
 *     each port: tcx (a raw BPF_LINK_CREATE, attach type BPF_TCX_INGRESS:
 *     libbpf 1.1.2 has no tcx API), else cls_bpf on a clsact qdisc
 *     (libbpf's bpf_tc_*), which kdp_attach_kind() reports.
 * Everything lives as long as the struct kdp: tcx links and maps are
 * file descriptors, the cls_bpf filters and the vxlan device are removed
 * by kdp_close() (and by kdp_open() when a previous run left them) --
 * unless the state is kept.
 *
 * Kept state (`keep`, vxswitchd --keep-datapath): the maps and the tcx
 * links are pinned in bpffs, in BPFFS/vxswitch/NETNS-TUN (BPFFS:
 * /sys/fs/bpf unless said; NETNS: the inode of the daemon's network
 * namespace, so daemons in two namespaces keep apart; bpffs is mounted
 * there if it is not).  Note that `ip netns exec` gives its command a
 * /sys of its own, where a bpffs mounted dies with the command: a
 * daemon started that way needs a BPFFS mounted outside /sys.  Then
 * kdp_close() closes its fds and leaves the pins, the device and every
 * attachment: the programs go on switching with the maps as they were,
 * after a clean exit or a SIGKILL alike.  The next kdp_open() with keep
 * adopts it: libbpf reuses the pinned maps (same layout: the same build,
 * or any build that did not change vxdp_abi.h; otherwise the kept state
 * is removed and the open starts afresh), the device is reused, and each
 * kept link is switched to the new program with BPF_LINK_UPDATE when its
 * port is added again (kdp_port_add keeps that port's counters), so no
 * frame ever meets a device without a program.  What the caller does not
 * add again it removes (kdp_port_each, kdp_vni_each, kdp_port_del).
 * kdp_kept_remove() removes kept state (an open without keep does not:
 * the caller decides).  cls_bpf filters outlive the process anyway; they
 * are replaced in place.
 *
 * Who calls it: the control thread of vxswitchd (and the unit tests);
 * one thread, no locking inside.  Map updates are single bpf(2) calls,
 * each atomic for its entry, so the programs see an entry either whole
 * before or whole after.  Nothing here blocks except kdp_upcall_poll()
 * for its timeout (0: never); the netlink calls of kdp_open/close wait
 * for the kernel's ack.
 *
 * Learning: the programs send an upcall event (struct vxdp_upcall) when a
 * source MAC is new or moved, bounded by each port's token bucket and the
 * ring's size (both counted: upcall_drops).  kdp_upcall_poll() hands the
 * events to a callback, which decides (caps, static entries) and calls
 * kdp_fdb_add().  The programs write an entry's last_used_ns at most once
 * a second; kdp_fdb_dump() returns it and the caller ages the entry by
 * comparing with kdp_now_ns() (the same clock, CLOCK_MONOTONIC).
 *
 * Implemented by kdp.c (the loader: programs, the vxlan device,
 * attachments, kept state) and kdp_maps.c (ports, VNIs, FDB, counters),
 * which share struct kdp through kdp_internal.h; per-CPU values are read
 * and reset by kdp_percpu.h's, as the rules' and the diagnosis' are.
 *
 * Functions return 0 or a negative errno. */
#ifndef VXSWITCH_DP_KERNEL_KDP_H
#define VXSWITCH_DP_KERNEL_KDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/kernel/bpf/vxdp_abi.h"

struct kdp;

struct kdp_opts {
	uint16_t dstport;           /* UDP port of the vxlan device (0: 4789) */
	const char *tun_name;       /* NULL: "vxdp0" */
	bool no_tun;                /* tests: no vxlan device */
	bool record;                /* tests: set the programs' rodata vxdp_record */
	bool force_cls_bpf;         /* tests: skip tcx */
	bool keep;                  /* pin, and adopt what a previous run pinned */
	const char *bpffs;          /* where to pin (NULL: /sys/fs/bpf) */
};

enum kdp_attach { KDP_ATTACH_TCX = 1, KDP_ATTACH_CLS_BPF = 2 };

/* Loads the programs and creates and attaches the vxlan device.  On
 * failure nothing is left behind and `why` (if not NULL) says which step
 * failed, for the log line of the fallback to the userspace datapath. */
int kdp_open(const struct kdp_opts *opts, struct kdp **out, char *why, unsigned why_len);
void kdp_close(struct kdp *k);
/* Whether kdp_open adopted a previous run's kept maps. */
bool kdp_adopted(const struct kdp *k);
/* The kept state's directory for device `tun_name` (NULL: vxdp0) in the
 * caller's namespace, under bpffs (NULL: /sys/fs/bpf). */
int kdp_keep_dir(const char *bpffs, const char *tun_name, char *dir, size_t len);
bool kdp_kept_exists(const char *bpffs, const char *tun_name);
/* Unpins everything kept for `tun_name` (the links detach with their
 * pins) and deletes the device.  Devices the ports map marks
 * VXDP_PORT_OURS are the caller's to delete first. */
void kdp_kept_remove(const char *bpffs, const char *tun_name);

int kdp_port_prog_fd(const struct kdp *k);
int kdp_tun_prog_fd(const struct kdp *k);
uint32_t kdp_tun_ifindex(const struct kdp *k);
enum kdp_attach kdp_attach_kind(const struct kdp *k);
/* Maps by name ("ports", "fdb", "vnis", "cfg", "counters", "decision",
 * "test_tunkey"), for the tests. */
int kdp_map_fd(const struct kdp *k, const char *name);

/* A VM-facing netdev in VNI `vni`: its map entries (port, counters) and
 * the program on its ingress (`attach` false: map entries only, for
 * tests that feed frames by BPF_PROG_TEST_RUN).  `flags`: VXDP_PORT_VETH
 * when its peer is the VM's end (then deliveries use redirect_peer). */
struct kdp_port_opts {
	uint32_t vni;
	uint32_t flags;
	uint32_t upcall_rate;       /* per second (0: kdp_upcall_limit_set's, at first the default) */
	uint32_t upcall_burst;      /* (0: the same) */
	bool attach;
};
/* Each port's upcall token bucket (vxdp_abi.h, struct vxdp_port): what a
 * port (a VM's; the vxlan device's, for every remote VTEP together) may
 * send up, learning and rule misses alike.  The `upcall-rate` and
 * `upcall-burst` knobs set every port's, the vxlan device's and those of
 * ports added after; a port's saved tokens are cut to the new burst. */
enum { KDP_UPCALL_RATE_DEFAULT = 1000, KDP_UPCALL_BURST_DEFAULT = 100 };
int kdp_upcall_limit_set(struct kdp *k, uint32_t rate, uint32_t burst);
int kdp_port_add(struct kdp *k, uint32_t ifindex, const struct kdp_port_opts *o);
int kdp_port_del(struct kdp *k, uint32_t ifindex);
/* Every port entry but the vxlan device's (kept ports to adopt or
 * remove); returns how many or -errno. */
typedef void kdp_port_fn(void *aux, uint32_t ifindex, const struct vxdp_port *p);
int kdp_port_each(struct kdp *k, kdp_port_fn *fn, void *aux);
typedef void kdp_vni_fn(void *aux, uint32_t vni);
int kdp_vni_each(struct kdp *k, kdp_vni_fn *fn, void *aux);

/* Sets (on) or clears bits of the port's vxdp_port.flags. */
int kdp_port_flags(struct kdp *k, uint32_t ifindex, uint32_t bits, bool on);
/* The port's egress rules hook (bpf/vxdp_rules_abi.h): on attaches
 * vxdp_port_egress to its device's egress (kept state: pinned as
 * elink-IFINDEX) and sets VXDP_PORT_ERULES; off clears the flag and takes
 * the program off.  0 or -errno. */
int kdp_port_egress(struct kdp *k, uint32_t ifindex, bool on);
/* vxdp_tun_egress on the vxlan device's egress (a vxlan port's egress
 * rules; which VNIs: map rvnis), or off.  0 or -errno. */
int kdp_tun_egress(struct kdp *k, bool on);

/* A VNI's outer headers, as its vxlan ports' options set them. */
struct kdp_vni_outer {
	uint8_t ttl, tos;            /* 0, 0: TTL 64, TOS 0 */
	uint16_t flags;              /* VXDP_VNI_* */
	uint16_t sport_min, sport_max; /* srcport (0, 0: the default range) */
};

/* A VNI, its outer headers (NULL: the defaults) and its flood list
 * (replaces the whole entry); its remotes are also the only VTEPs
 * vxdp_tun_ingress takes frames of that VNI from. */
int kdp_vni_set(struct kdp *k, uint32_t vni, const struct kdp_vni_outer *outer,
		const struct vxdp_flood_ent *flood, unsigned n_flood);
int kdp_vni_del(struct kdp *k, uint32_t vni);
/* The VNI entry's VXDP_VNI_RULES_IN set or cleared, for kdp_rules.c (set
 * after map rvnis gains the VNI, cleared before it loses it); nothing to
 * do for a VNI with no entry yet (kdp_vni_set reads rvnis). */
int kdp_vni_rules_in(struct kdp *k, uint32_t vni, bool on);

int kdp_fdb_add(struct kdp *k, uint32_t vni, const uint8_t mac[6], const struct vxdp_fdb_val *v);
int kdp_fdb_del(struct kdp *k, uint32_t vni, const uint8_t mac[6]);
int kdp_fdb_get(struct kdp *k, uint32_t vni, const uint8_t mac[6], struct vxdp_fdb_val *v);
typedef void kdp_fdb_fn(void *aux, const struct vxdp_fdb_key *key, const struct vxdp_fdb_val *v);
/* Calls fn for every entry; returns how many or -errno. */
int kdp_fdb_dump(struct kdp *k, kdp_fdb_fn *fn, void *aux);

/* The port's counters summed over CPUs (key VXDP_COUNTERS_NOPORT:
 * frames from devices without a port). */
int kdp_counters_read(struct kdp *k, uint32_t ifindex, struct vxdp_counters *sum);

typedef void kdp_upcall_fn(void *aux, const struct vxdp_upcall *u);
/* An fd that turns readable when upcalls wait (for the control loop's
 * epoll). */
int kdp_upcall_fd(struct kdp *k);
/* Hands waiting upcalls to fn, waiting up to timeout_ms for the first;
 * returns how many. */
int kdp_upcall_poll(struct kdp *k, int timeout_ms, kdp_upcall_fn *fn, void *aux);

/* Program `name` of the skeleton (vxdp_rules_reinject...), and an
 * attachment of a program to ifindex's ingress, the same way the ports'
 * are (removed by kdp_detach or kdp_close). */
int kdp_prog_fd(const struct kdp *k, const char *name);
int kdp_attach_prog(struct kdp *k, int prog_fd, uint32_t ifindex);
void kdp_detach(struct kdp *k, uint32_t ifindex);

/* The programs' clock (bpf_ktime_get_ns: CLOCK_MONOTONIC). */
uint64_t kdp_now_ns(void);

#endif
