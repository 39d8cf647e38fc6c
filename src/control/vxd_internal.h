/* The control side of vxswitchd (struct vxd), shared by vxd.c (life cycle
 * and the control loop), view.c (publishing), ports.c (port add/del),
 * control.c (commands), stats_print.c and diagnose.c.  All of it runs on the
 * control thread; what the worker reads is reached only through a published
 * struct vxd_view, what it writes only through requests (worker.h).
 * Not an API: only src/daemon/ includes it. */
#ifndef VX_CONTROL_VXD_INTERNAL_H
#define VX_CONTROL_VXD_INTERNAL_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl/ctl_cmd.h"
#include "dp/capture.h"
#include "control/placement.h"
#include "dp/dpif.h"
#include "control/vxd.h"
#include "dp/user/worker.h"
#include "util/qsbr.h"

_Static_assert((int)VXD_PLACEMENT_MAX == (int)VXD_MAX_WORKERS, "a placement per worker");

struct ctl_server;
struct kdp_ctl;
struct flower_rule;
struct flower_table;
struct metrics_http;
struct vxd_evpn;

/* What woke the control loop (epoll data). */
enum vxd_ctl_src { VXD_CTL_SRC = 1, VXD_WAKE_SRC = 2, VXD_METRICS_SRC = 3, VXD_KDP_SRC = 4, VXD_EVPN_SRC = 5,
		   VXD_EVPN_TIMER_SRC = 6,
		   VXD_LINK_SRC = 16 /* + watch index */ };

/* `diagnose` judges recent traffic: every counter at the start of the
 * window (diag_prev; diag_cur becomes it at the next rotation, every
 * VXD_DIAG_WINDOW_NS; every `set` restarts both), so a knob change shows
 * at once and the window spans 5 to 10 s. */
#define VXD_DIAG_WINDOW_NS (5ull * 1000000000ull)

/* links.c: the state of each port's device as netlink reports it.  A tap's
 * device is the tap; a vxlan port's is the underlay link holding its local
 * address.  Watches (rtnl.h) are per namespace, shared by its ports. */
enum { VXD_MAX_WATCHES = 32 };
struct vxd_link_watch {
	int fd;                     /* -1: free slot */
	char netns[CTL_NETNS_SIZE]; /* "" = the daemon's own */
};
struct vxd_link_state {
	int watch;                  /* index in vxd->watches; -1: not watched */
	int ifindex;                /* 0: unknown (a vxlan port's local address is on no link) */
	char dev[16];
	uint64_t down_ns;           /* down since (vxd_now_ns); 0: up */
	uint64_t down_events;       /* times it went down */
	bool csum_unfinished;       /* a vxlan port's underlay is a veth with tx checksum
	                             * offload: our datagrams reach the peer with their UDP
	                             * checksum unfinished (port/ethtool.h) */
	uint64_t reattaches;        /* a tap: times it came back by itself */
	const char *reattached_by;  /* the last time: "link event" or "periodic check" */
};

/* kdp_slowpath.c: a VNI whose taps are joined to the kernel datapath. */
enum { VXD_MAX_SLOWLINKS = 64 };
struct vxd_slowlink {
	bool used;
	uint32_t vni;
	uint16_t kid;   /* the kernel end's port id (FDB entries behind it) */
};

/* devports.c: a port a datapath serves itself (dpif port_add): its
 * `port add` as given, the id the datapath gave it. */
enum { VXD_MAX_DEVPORTS = 256 };
struct vxd_devport {
	bool used;
	uint16_t id;
	struct ctl_port_add cfg;
};

struct vxd {
	struct vxd_options opts;
	volatile sig_atomic_t stop;
	int wake_fd;                 /* eventfd: vxd_stop() wakes the control loop */
	int epfd;                    /* the control loop's: control socket, wake_fd */
	struct ctl_server *ctl;
	struct metrics_http *metrics; /* --metrics; NULL: none */

	/* The switch as the control thread has it; every change is made
	 * here, then published as a new view. */
	struct port *ports[VXD_MAX_PORTS];
	struct vxlan_sock *socks[VXD_MAX_SOCKS]; /* one reference each */
	uint32_t knobs[CTL_KNOB_COUNT];
	uint32_t knob_defaults[CTL_KNOB_COUNT];
	/* The running configuration (config.c): each port's `port add` as it
	 * was given, the static FDB entries installed through us. */
	struct ctl_port_add port_cfg[VXD_MAX_PORTS];
	struct ctl_fdb *statics;
	size_t n_statics, cap_statics;
	struct flower_table *flower; /* filters.c: the rules; NULL = none yet */
	struct flower_counters *fcounters; /* filters.c: show -s scratch (sized by the table) */
	volatile sig_atomic_t reload_pending; /* SIGHUP */

	struct qsbr qsbr;
	struct vxd_view *_Atomic view;  /* published; the worker's reading */
	uint64_t view_version;
	/* workers.c: the datapath (its FDB is its own), where its workers run. */
	struct dpif *dp;                 /* the datapath (dp/dpif.h) */
	unsigned n_workers;              /* its threads (placement.n_workers once started) */
	struct vxd_placement placement;
	struct ctl_workers workers_asked; /* --workers/--cpus or the config's line; n 0: neither */
	uint32_t fdb_capacity;           /* the FDB's learned entries over all VNIs (`fdb-max` refusals say it) */
	bool fdb_capacity_kernel;        /* ... of the kernel datapath's FDB map, the last refusal's */

	struct vxd_snapshot *snap;   /* scratch for stats and diagnose */
	struct vxd_snapshot *diag_prev, *diag_cur;
	uint64_t diag_cur_ns;
	uint64_t start_ns;
	uint64_t last_reattach_ns;
	/* A lost tap's device came back (link event) but could not be
	 * attached yet (its maker still held it): retried every
	 * VXD_REATTACH_RETRY_MS until then. */
	uint64_t reattach_retry_until_ns;
	struct vxd_link_watch watches[VXD_MAX_WATCHES];
	struct vxd_link_state links[VXD_MAX_PORTS];

	/* capture.c: running captures, and the worker's doorbell flag */
	struct vxd_cap_session *captures[VXD_CAPTURE_MAX];
	atomic_bool capture_want_wake;

	/* --datapath kernel: the eBPF datapath, which serves its ports itself
	 * (NULL: none); why it is not in use when it was asked for. */
	struct dpif *kdp;
	char kdp_why[512];
	struct vxd_slowlink slow[VXD_MAX_SLOWLINKS]; /* kdp_slowpath.c: taps beside it */
	struct vxd_devport devports[VXD_MAX_DEVPORTS]; /* devports.c */

	struct vxd_evpn *evpn; /* evpn.c: NULL until the first `evpn` port */
};

/* view.c: the current view (control thread: always valid, it owns it). */
const struct vxd_view *vxd_view(const struct vxd *vxd);
/* Publishes a view of vxd's ports, sockets and knobs with `vnis` as its
 * VNI table (taken over on success; NULL: a copy of the current one), then
 * waits for the worker to stop reading the old one and frees it.  On
 * failure (-ENOMEM) nothing changed and `vnis` is still the caller's. */
int vxd_publish(struct vxd *vxd, struct vni_table *vnis);
void vxd_view_free(struct vxd_view *view);

/* ports.c */
int vxd_port_add(struct vxd *vxd, const struct ctl_port_add *pa, struct ctl_print *out, struct ctl_err *err);
/* Removes port `id`: from the view, epoll, the VNI table and the FDB, then
 * destroys it.  Refused (nothing changed, the port keeps working) when the
 * new VNI table cannot be built. */
int vxd_port_remove(struct vxd *vxd, uint16_t id, struct ctl_err *err);
struct port *vxd_port_by_name(const struct vxd *vxd, const char *name);
/* Reattaches taps whose device went away and is there again (once a
 * second: a safety net for lost link events; and while a retry is due). */
unsigned vxd_reattach_lost(struct vxd *vxd, const char *why); /* -> taps still lost */
/* Reattaches port `id` if its tap is lost and a device of its name is
 * there; `why` goes in the log.  1: reattached; 0: nothing to do (not
 * lost, no free device); -1: tried and failed (the port stays lost). */
int vxd_reattach_port(struct vxd *vxd, uint16_t id, const char *why);
enum { VXD_REATTACH_RETRY_MS = 20, VXD_REATTACH_RETRY_FOR_MS = 3000 };
/* The vxlan port of `vni`, if any (the first one). */
struct port *vxd_vxlan_of_vni(const struct vxd *vxd, uint32_t vni);

/* workers.c */
/* Creates the FDB and opens the datapath with the workers of
 * vxd->placement. */
int vxd_workers_start(struct vxd *vxd);
void vxd_workers_stop(struct vxd *vxd);
/* A frame port's fds / a socket's lanes into (out of) the workers' poll
 * sets: each worker the fd of its lane, where it reads one. */
int vxd_watch_port(struct vxd *vxd, struct port *port);
void vxd_unwatch_port(struct vxd *vxd, struct port *port);
int vxd_watch_sock(struct vxd *vxd, unsigned slot, struct vxlan_sock *sock);
void vxd_unwatch_sock(struct vxd *vxd, struct vxlan_sock *sock);
/* `workers N [cpus LIST]`: 0 when it says what runs, else refused (the
 * workers are set at start-up). */
int vxd_workers_check(const struct vxd *vxd, const struct ctl_workers *w, struct ctl_err *err);

/* snapshot.c: the userspace datapath's counters into vxd->snap (each
 * worker's own figures in snap->workers[]). */
const struct vxd_snapshot *vxd_snapshot(struct vxd *vxd);
/* Each rule's counts, summed over every datapath that runs, into fc
 * (zeroed first; sized by the caller to the table's slots).  0 or
 * -errno. */
int vxd_rule_counters(struct vxd *vxd, struct flower_counters *fc);

/* vxd.c: the datapaths that run, the userspace one first (dp/dpif.h):
 * their number, written to out. */
enum { VXD_MAX_DPIFS = 2 };
unsigned vxd_dpifs(struct vxd *vxd, struct dpif *out[VXD_MAX_DPIFS]);
/* devports.c: ports a datapath serves itself (dp/dpif.h, "Two kinds of
 * port").  vxd_devport_dpif: the datapath that takes them (NULL: none
 * runs; the userspace datapath opens such ports itself, ports.c).  add:
 * the same line again is 0, another for that name -EEXIST.  del: refused
 * (-EBUSY, said) while rules name the port.  vxd_devports: their lines
 * (show config, reload). */
struct dpif *vxd_devport_dpif(struct vxd *vxd);
int vxd_devport_add(struct vxd *vxd, const struct ctl_port_add *pa, struct ctl_err *err);
int vxd_devport_del(struct vxd *vxd, const char *name, struct ctl_err *err);
const struct vxd_devport *vxd_devport_by_name(const struct vxd *vxd, const char *name);
/* A port the devport datapath serves, by name: a devport or a slow-path
 * link's kernel end (which no config line names); its datapath, id, VNI
 * and whether it is a vxlan port.  What fdb add, capture and diagnose
 * accept of such ports. */
struct vxd_dp_port {
	struct dpif *dp;
	uint16_t id;
	uint32_t vni;
	bool vxlan;
};
bool vxd_devport_find(struct vxd *vxd, const char *name, struct vxd_dp_port *out);
/* The name of port `id` of datapath dp (what FDB entries, rule counters
 * and captures name): a port the control thread opened (the userspace
 * datapath's), a devport, or a slow-path link's kernel end; "?" when
 * none is. */
const char *vxd_port_name(const struct vxd *vxd, const struct dpif *dp, uint16_t id, char buf[CTL_NAME_SIZE]);
unsigned vxd_devports(const struct vxd *vxd, const struct ctl_port_add **cfgs, unsigned max);

/* The datapath whose FDB is the switch's (`fdb add/del/flush/show`,
 * EVPN): the kernel one when it runs (a tap beside it is learned behind
 * its VNI's slow-path link), else the userspace one. */
struct dpif *vxd_fdb_dpif(const struct vxd *vxd);

/* control.c */
int vxd_refuse(struct ctl_err *err, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* `fdb-ageing SECONDS` as the FDB takes it: 0 is never. */
static inline uint64_t vxd_fdb_ageing_ns(uint32_t seconds)
{
	return seconds ? (uint64_t)seconds * 1000000000ull : UINT64_MAX / 2;
}
/* The clock the workers read (tests warp it). */
static inline uint64_t vxd_clock(const struct vxd *vxd)
{
	return vxd->opts.clock ? vxd->opts.clock() : vxd_now_ns();
}
/* Rotates the diagnose window (restart: both ends start now). */
void vxd_diag_snapshot(struct vxd *vxd, bool restart);

/* stats_print.c */
int vxd_stats(struct vxd *vxd, const struct ctl_port_ref *ref, struct ctl_print *p, struct ctl_err *err);
void vxd_port_show(struct vxd *vxd, struct ctl_print *out);
/* vni: one VNI or FDB_VNI_ANY */
int vxd_fdb_show(struct vxd *vxd, uint32_t vni, struct ctl_print *out, struct ctl_err *err);
void vxd_print_ctl_stats(struct ctl_print *p, const struct vxd *vxd); /* stats_ctl.c: the control socket's counters */
/* stats_workers.c: the "workers" object (placement, per-worker figures). */
void vxd_print_workers(struct ctl_print *p, const struct vxd *vxd, const struct vxd_snapshot *snap);

/* config.c: re-reads `path` and applies the difference (see config.c). */
int vxd_reload(struct vxd *vxd, const char *path, struct ctl_print *out, struct ctl_err *err);
void vxd_show_config(const struct vxd *vxd, struct ctl_print *out);
int vxd_save(struct vxd *vxd, const char *path, struct ctl_print *out, struct ctl_err *err);
int vxd_statics_remember(struct vxd *vxd, const struct ctl_fdb *f);
void vxd_statics_forget(struct vxd *vxd, uint32_t vni, const uint8_t mac[6]);

/* filters.c: flower rules (filter add|del|show). */
/* filters_show.c: filter show|get, streamed to a client that takes it. */
/* A port's flower port id: the userspace datapath's, else the kernel
 * datapath's (aux: the vxd); -ENOENT when there is none. */
int vxd_filter_resolve(void *aux, const char *name, uint16_t *id);
int vxd_filter_show(struct vxd *vxd, const struct ctl_flower *f, struct ctl_print *out, struct ctl_err *err);
int vxd_filter(struct vxd *vxd, const struct ctl_flower *f, struct ctl_print *out, struct ctl_err *err);
/* ops[0..n-1] (filter add/del) as one change, onto the current rules or
 * (from_empty) onto none; published whole or refused with nothing changed. */
int vxd_filters_apply(struct vxd *vxd, bool from_empty, const struct ctl_flower *ops, size_t n,
		      struct ctl_err *err);
int vxd_filters_clear(struct vxd *vxd, struct ctl_err *err);
/* vxctl -batch: every line of the file as one batch, refused whole with
 * "FILE:LINE: ..." naming the first line that fails. */
int vxd_filter_batch(struct vxd *vxd, const struct ctl_batch *b, struct ctl_print *out, struct ctl_err *err);
/* -EBUSY naming the rules when some rule sits on port id or sends to it. */
int vxd_filters_port_in_use(const struct vxd *vxd, uint16_t id, const char *name, struct ctl_err *err);
bool vxd_filter_names_port(const struct flower_rule *r, uint16_t id);
size_t vxd_filters_n(const struct vxd *vxd);
const struct flower_spec *vxd_filter_spec(const struct vxd *vxd, size_t i); /* as added, pref/handle filled */

/* links.c */
/* Starts following the device of port `id` (just added, port_cfg set):
 * its watch, its ifindex, its state now.  Failures only cost the state
 * (logged): the port works without it. */
void vxd_links_port_added(struct vxd *vxd, uint16_t id);
void vxd_links_port_removed(struct vxd *vxd, uint16_t id);
/* Events on watch `w` (VXD_LINK_SRC + w in the control epoll). */
void vxd_links_input(struct vxd *vxd, unsigned w);
void vxd_links_close(struct vxd *vxd);
/* "link down" / "underlay u1 down", or NULL when the port's device is up. */
const char *vxd_link_down_why(const struct vxd *vxd, uint16_t id, char *buf, size_t size);
/* metrics.c: serves what is ready on the metrics endpoint, if any. */
void vxd_metrics_run(struct vxd *vxd);
/* capture.c */
struct vxd_cap_session;
/* `capture`: the reply becomes a stream (ctl_server.h); refused with one
 * line (no such port, outer on a tap, bad FILTER, too many captures). */
int vxd_capture_start(struct vxd *vxd, const struct ctl_capture *c, struct ctl_err *err);
/* From the control loop, every turn: ring -> stream; -c reached: end. */
void vxd_capture_drain(struct vxd *vxd);
/* Before a port leaves datapath dp (ports.c: detached; devports.c:
 * port_del): its captures end ("port removed"). */
void vxd_capture_port_removed(struct vxd *vxd, const struct dpif *dp, uint16_t port_id);
void vxd_capture_end_all(struct vxd *vxd, const char *why);
/* kdp_slowpath.c: taps beside the kernel datapath, through a slow-path
 * link per VNI.  _execute: true when it handled cmd (result in *ret);
 * _prune: links of VNIs without a tap go (after port del, reload);
 * _close: every link goes (shutdown); vxd_port_internal: user port id
 * is a link's end (no config line); _print: what port show adds. */
bool vxd_slowpath_execute(struct vxd *vxd, const struct ctl_cmd *cmd, struct ctl_print *out, struct ctl_err *err,
			  int *ret);
void vxd_slowpath_prune(struct vxd *vxd);
void vxd_slowpath_close(struct vxd *vxd);
bool vxd_port_internal(const struct vxd *vxd, uint16_t id);
/* The kernel end of a link whose kernel port id is kid: its name; and
 * the one named `name`: its kernel port id and VNI. */
bool vxd_slowpath_kernel_end(const struct vxd *vxd, uint16_t kid, char name[16]);
bool vxd_slowpath_kernel_end_named(const struct vxd *vxd, const char *name, uint16_t *kid, uint32_t *vni);
void vxd_slowpath_print(struct ctl_print *p, const struct vxd *vxd, const struct port *port);
/* stats_print.c: the userspace datapath's ports' stats (all, or `only`)
 * into an open array: for `stats` on the kernel datapath. */
void vxd_user_ports_stats(struct ctl_print *p, struct vxd *vxd, const char *only);
/* stats_print.c: a port's rx/tx line ("    rx N frames N bytes  tx ...",
 * keys rx_frames ... tx_avg_frame, lost_events JSON only), the same on
 * both datapaths (stats_dp.c prints a devport's with it, kdp_stats.c the
 * vxlan device's). */
void vxd_print_rxtx(struct ctl_print *p, uint64_t rx_frames, uint64_t rx_bytes, uint64_t tx_frames,
		    uint64_t tx_bytes, uint64_t lost_events);

/* stats_dp.c: `stats` (vxd_stats hands over when a datapath serves
 * ports itself, dp: vxd_devport_dpif) and `port show`'s lines of its
 * ports, from its dpif counters. */
int vxd_devport_stats(struct vxd *vxd, struct dpif *dp, const struct ctl_port_ref *ref, struct ctl_print *p,
		      struct ctl_err *err);
void vxd_devport_show(struct vxd *vxd, struct dpif *dp, struct ctl_print *out);
/* diagnose_dp.c: the findings on the ports datapath dp serves itself,
 * appended to r (diagnose.c). */
struct diag_input;
struct diag_report;
void vxd_devport_diag(struct dpif *dp, const struct diag_input *in, struct diag_report *r);
/* metrics_dp.c: the ports datapath dp serves itself as metrics_text
 * ports (up to room of them into ports, *n_ports said; snapshots made
 * from their dpif counters, held by what it returns, which the caller
 * gives to vxd_devport_metrics_free after the write), and their own
 * families, written after metrics_text_write; each port and each vxlan
 * port's remote VTEPs read once, by the read.  NULL: out of memory. */
struct metrics_port;
struct vxd_devport_metrics;
struct vxd_devport_metrics *vxd_devport_metrics_read(struct dpif *dp, struct metrics_port *ports, size_t room,
						     size_t *n_ports);
void vxd_devport_metrics_write(const struct vxd_devport_metrics *m, FILE *out);
void vxd_devport_metrics_free(struct vxd_devport_metrics *m);

/* evpn.c (the rest: control/evpn.h) */
/* Deletes shadow devices left by a vxswitchd that died (at start-up). */
void vxd_evpn_reap(void);
/* The control loop's events: VXD_EVPN_SRC (netlink) or VXD_EVPN_TIMER_SRC. */
void vxd_evpn_input(struct vxd *vxd, uint32_t src);
/* Closes everything (at exit, before the workers stop). */
void vxd_evpn_close(struct vxd *vxd);

/* diagnose.c */
/* diagnose.c: 0 no finding, 1 findings (CTL_DONE_FINDINGS), or a refusal. */
int vxd_diagnose(struct vxd *vxd, const struct ctl_port_ref *ref, struct ctl_print *p, struct ctl_err *err);

#endif
