/* dpif: the one interface through which the control thread drives a
 * datapath, whichever it is.
 *
 * The idea is Open vSwitch's lib/dpif-provider.h: a table of operations,
 * one implementation per datapath, so the control side (ports, config and
 * reload, filters, capture sessions, stats) is written once.  The
 * implementations:
 *   - "user" (dp/user/dpif_user.c): N worker threads that read tap fds and
 *     underlay sockets themselves; what they read is published as a view
 *     (dp/user/worker.h), what they write is changed by requests they
 *     execute between two batches.
 *   - "kernel" (control/kdp_dpif.c): eBPF programs on the ports'
 *     devices (docs/DESIGN.md, "Two datapaths"): its life cycle (open,
 *     close, fd/run, startup_done), ports (port_add, port_flood_vteps),
 *     FDB, rules, captures and counters (its ports' through port_stats
 *     and port_vteps: "Counters" below; snapshot is NULL, it has no
 *     threads of its own).
 * Both run at once when taps sit beside the kernel datapath's ports: the
 * control thread then holds both (its list of datapaths, user first) and
 * gives each operation to every datapath that implements it, or to the
 * one that serves the port in question.
 *
 * What goes through here and what does not
 * ========================================
 * Through here: the datapath's life cycle, a port's attach and detach
 * (and a socket's, for the userspace datapath's shared underlay sockets),
 * the knobs that need the datapath to rebuild something (GRO limits) or
 * that only it holds (upcall limits),
 * the FDB (the datapath's own: see "The FDB" below), what a datapath
 * refuses of a rule and when a new rule table takes effect ("Rules"
 * below), counter snapshots, capture start and stop.
 * Not through here, by design: the published view (struct vxd_view: ports,
 * VNIs, rule tables, knobs), which the control thread builds and swaps in
 * with one atomic store (control/view.c) into the slot the datapath was
 * opened with, and which the datapath reads at its own pace: the control
 * side publishes tables, the datapath reads them, nothing calls back.
 * An operation a class leaves NULL is not called: for the rule
 * operations that means "nothing to do" (the userspace datapath's workers
 * read the rule table from the view); for the port operations, that the
 * class serves the other kind of port (below); for the counter
 * operations, that its ports are not of that kind (snapshot: a datapath
 * without worker threads; port_stats and the rest: one that serves no
 * device of its own).
 *
 * Contract
 * ========
 * - Every operation is called from the control thread only, one at a time.
 * - Operations may block until the datapath has done what they ask (the
 *   userspace datapath: until every worker has executed the request,
 *   between two of its batches, so at most one batch's time); none waits
 *   for traffic.  None is called from a signal handler.
 * - Errors: 0 or a negative errno.  An operation that fails has changed
 *   nothing: port_attach detaches from every part of the datapath that it
 *   had reached before it returns an error.
 * - Two kinds of port.  A port whose I/O the control thread opened (a
 *   tap, an AF_PACKET socket, a vxlan port's underlay socket: struct
 *   port, port/) is attached (port_attach ... port_detach, below).  A
 *   port that is a network device the datapath serves itself (the kernel
 *   datapath's: its programs on the device) is added from a
 *   datapath-neutral description (struct dpif_port_spec, port_add ...
 *   port_del).  A class implements the kind it serves.
 * - Order of an attached port's life (control/ports.c):
 *     port_attach (the datapath sets up its per-port state; the port is
 *     not yet published, no frame of it is read) -> the view with the port
 *     is published -> port_watch (frames of it are read from now on) ...
 *     port_unwatch -> the view without it is published -> port_detach
 *     (its queued frames are flushed, its state freed).
 * - What is copied and what is shared: the datapath holds the struct port
 *   pointers it is given until port_detach returns, and a capture until
 *   capture_stop returns; snapshots are copied into the caller's struct.
 *
 * The FDB
 * =======
 * The datapath owns it (made at open from dpif_config.fdb): its threads
 * learn into it and age it.  The control thread adds and deletes what an
 * operator (`fdb add/del/flush`, a port's removal) and BGP EVPN say,
 * reads it (`fdb show`, EVPN's checks) and sets its limits.  Semantics,
 * errors and types are switch/fdb.h's; "now" is the datapath's clock.
 * These operations do not wait for the datapath's threads: the table
 * takes changes beside lock-free lookups (switch/fdb.h, "Concurrency").
 *
 * Rules
 * =====
 * The control thread owns the rule table (switch/flower_table.h) and
 * publishes it in the view.  Around that, three operations:
 *   - rule_check, before a change is applied: what this datapath cannot
 *     honour of a rule on one of its ports is refused, with the reason,
 *     rather than taken and ignored; a rule on another datapath's port is
 *     not its business (0).
 *   - rules_changed, after the view with table t is published: from its
 *     return no frame is handled by a decision an older table made (the
 *     kernel datapath moves its generation on; a datapath that reads the
 *     table from the view needs nothing and leaves it NULL).  The
 *     datapath may keep t until the next call.
 *   - rule_counters: each rule's counts, fast path and slow path apart,
 *     added into the caller's struct, slot by slot; the caller zeroes it
 *     and sizes it to the table's slots, and sums every datapath's there
 *     (a rule on a kernel port counts in the kernel datapath only, so the
 *     sum is the rule's). */
#ifndef VX_DP_DPIF_H
#define VX_DP_DPIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "switch/fdb.h"

/* A port the datapath serves itself (port_add), in no command's words:
 * what a `port add` line, a config file or a test asks for. */
enum dpif_port_type {
	DPIF_PORT_NETDEV = 1,   /* an existing link in the datapath's namespace: dev */
	DPIF_PORT_VETH,         /* a veth pair the datapath makes: `name` here, its peer `name` in netns */
	DPIF_PORT_VXLAN,        /* a VNI's remote VTEPs: no device of its own */
};
enum dpif_df { DPIF_DF_SET = 0, DPIF_DF_UNSET, DPIF_DF_INHERIT };
enum { DPIF_NAME_SIZE = 16, DPIF_NETNS_SIZE = 64, DPIF_MAX_REMOTES = 16 };
struct dpif_ip {
	uint16_t family;        /* AF_INET or AF_INET6 */
	uint8_t bytes[16];
};
struct dpif_port_spec {
	char name[DPIF_NAME_SIZE];
	enum dpif_port_type type;
	uint32_t vni;
	uint32_t mtu;           /* 0: not asked (a datapath that cannot set one refuses any other) */
	uint32_t max_macs;      /* MACs learned behind it (0: no cap of its own) */
	char netns[DPIF_NETNS_SIZE]; /* VETH: the peer's; NETDEV: "" unless asked otherwise */
	char dev[DPIF_NAME_SIZE];    /* NETDEV: the link */
	/* VXLAN: local and every remote share one family */
	struct dpif_ip local;
	struct dpif_ip remotes[DPIF_MAX_REMOTES];
	unsigned n_remotes;
	uint16_t dstport;
	uint16_t srcport_min, srcport_max; /* 0-0: not asked */
	bool udpcsum;
	enum dpif_df df;        /* IPv4 only */
	bool evpn;              /* remotes and MACs from BGP EVPN too */
};

/* ---- Counters of the ports a datapath serves itself ----------------------
 * (port_dump, port_stats, port_vteps, dp_stats, show, fdb_vni_macs): what
 * `stats`, `port show`, `diagnose` and the metrics endpoint read of such
 * ports (report/stats_dp.c, report/metrics_dp.c, report/diagnose_dp.c),
 * in no datapath's own layout.  Each datapath names its own drop reasons
 * (drop_names) and program (program); what is its alone (a device of its
 * own, its rule cache's listing, capture state) it prints itself through
 * show.  The userspace datapath's ports are attached ports, read from its
 * worker snapshot (snapshot), and it leaves these NULL.  Called on the
 * control thread for each `stats`, `port show`, `diagnose` and scrape;
 * they copy the counters out (a few system calls a port: map reads, the
 * device's MTU) and wait for nothing; the strings they point to (type,
 * program, drop_names) live as long as the datapath. */
/* A port's learning-upcall counters, X(field, "text", "help"), for the
 * printers: `stats` (text " TEXT N", JSON key the field) and --metrics
 * (vxswitch_kdp_port_FIELD_total, HELP).  A datapath's counters of the
 * same name fill them; a counter of this kind is added here, one line. */
#define DPIF_UPCALL_COUNTERS(X) \
	X(upcalls, "upcalls", "Learning upcalls the port's frames sent to vxswitchd.") \
	X(upcall_drops, "upcall drops", "Learning upcalls dropped: the port's rate limit or a full ring.")

enum {
	DPIF_HIST_BUCKETS = 6,          /* = PORT_HIST_BUCKETS, the same edges (port/port.h) */
	DPIF_MAX_DROP_REASONS = 32,
};
struct dpif_port_stats {
	/* Who it is */
	char name[DPIF_NAME_SIZE];
	const char *type;               /* `port show`'s: afpacket, veth, vxlan, slowpath */
	uint32_t vni;
	bool vxlan;                     /* remote VTEPs, no device of its own (port_vteps) */
	bool internal;                  /* a link between datapaths, no VM behind it */
	char dev[DPIF_NAME_SIZE];       /* its device ("": none) */
	uint32_t ifindex;               /* 0: none */
	const char *program;            /* what serves it on the device (diagnose names it) */
	int attached;                   /* 1 on the device; 0 detached from outside; -ENODEV the
					 * device is gone; another -errno: unknown */
	uint32_t n_macs, max_macs;      /* learned behind it; its cap (0: none) */
	/* Its device's MTU (0: unknown); a vxlan port's: the underlay
	 * device's that holds its local address, its family (AF_INET,
	 * AF_INET6) and UDP port */
	uint32_t mtu;
	uint16_t underlay_family, dst_port;
	/* What its device handed over (rx) and what it delivered to it (tx;
	 * by size: what the VM receives, a GSO frame counted whole) */
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t tx_hist_frames[DPIF_HIST_BUCKETS], tx_hist_bytes[DPIF_HIST_BUCKETS];
	uint64_t flooded;               /* frames of it replicated */
	/* Drops of its frames by reason: drops[r] named drop_names[r], r <
	 * n_drop_reasons; not_lost: bit r set when reason r is no loss (the
	 * original of a frame flooded as copies). */
	const char *const *drop_names;
	unsigned n_drop_reasons;
	uint32_t not_lost;
	uint64_t drops[DPIF_MAX_DROP_REASONS];
	/* Learning upcalls (DPIF_UPCALL_COUNTERS), and the drops by reason
	 * (rate: its token bucket was empty; ring: the queue to vxswitchd
	 * was full). */
#define DPIF_UPCALL_FIELD(f, text, help) uint64_t f;
	DPIF_UPCALL_COUNTERS(DPIF_UPCALL_FIELD)
#undef DPIF_UPCALL_FIELD
	uint64_t upcall_drops_rate, upcall_drops_ring;
	/* Its rule path (rules on the port): lookups of the datapath's
	 * decision cache that hit, missed, or found a decision of an older
	 * table. */
	bool rule_path;
	uint64_t rule_hits, rule_misses, rule_stale;
};
/* One remote VTEP of a vxlan port: inner frames to it (flood copies
 * included) and from it; the datapath's clock's now minus the last of
 * each (UINT64_MAX: never). */
struct dpif_vtep_stats {
	struct dpif_ip remote;
	bool evpn;                      /* BGP EVPN's (port_flood_vteps), not the port's spec */
	uint64_t tx_frames, tx_bytes, rx_frames, rx_bytes;
	uint64_t rx_age_ns, tx_age_ns;
};
/* The datapath as a whole. */
struct dpif_dp_stats {
	uint64_t now_ns;                /* its clock when these were read */
	const char *attach;             /* how its programs sit on devices ("tcx", "cls_bpf") */
	/* The device it sends to remote VTEPs and receives from them */
	char dev[DPIF_NAME_SIZE];
	const char *dev_program;
	int dev_attached;               /* as dpif_port_stats.attached */
	struct dpif_port_stats dev_stats;
	/* Its decision cache of rules: live entries, capacity, refused as full */
	bool rule_cache;
	uint64_t rule_cache_entries, rule_cache_max, rule_cache_full;
};
/* What only a datapath says (show): it prints into the caller's open
 * object or array. */
enum dpif_show_part {
	DPIF_SHOW_STATS_PORT,           /* in a port's `stats` object, after the shared counters */
	DPIF_SHOW_STATS_TAIL,           /* `stats`, after the ports and VNIs: its own objects */
	DPIF_SHOW_PORT_LINE,            /* a port's `port show` line, after its name, type, vni */
};
enum { DPIF_MAX_VTEPS = 80 };

struct ctl_print;
struct dpif;
struct flower_counters;
struct flower_spec;
struct flower_table;
struct port;
struct qsbr;
struct vxd_capture;
struct vxd_snapshot;
struct vxd_view;
struct vxlan_sock;

/* Who put an FDB entry there (fdb_add, fdb_del). */
enum dpif_fdb_kind {
	DPIF_FDB_STATIC,   /* an operator: `fdb add` (a static entry), `fdb del` (the entry, whatever it is) */
	DPIF_FDB_EVPN,     /* BGP EVPN: a remote MAC it told us of; del removes only such an entry */
};

/* What a datapath is opened with.  Pointers are the caller's and outlive
 * the datapath. */
struct dpif_config {
	struct qsbr *qsbr;                 /* grace periods for the published view */
	struct vxd_view *_Atomic *view;    /* the control thread's publication slot */
	struct fdb_config fdb;             /* the FDB's sizes and seed */
	uint32_t pool_size;                /* packet buffers per worker */
	unsigned n_workers;                /* threads (userspace datapath) */
	const int *cpu;                    /* n_workers CPUs to pin to (-1: not pinned) */
	const int *node;                   /* their NUMA nodes, for stats (-1: unknown) */
	uint64_t (*clock)(void);           /* NULL: CLOCK_MONOTONIC (tests warp it) */
	/* A datapath whose state can outlive the process (the kernel
	 * datapath's programs and pinned maps): keep leaves it forwarding at
	 * close and adopts what a kept run left at open; pin_dir is where it
	 * is pinned (NULL: the datapath's default). */
	bool keep;
	const char *pin_dir;
};

struct dpif_class {
	const char *name;                  /* "user", "kernel" */

	/* 0, or a negative errno with the reason, one line, in why (which
	 * may be NULL). */
	int (*open)(const struct dpif_config *cfg, struct dpif **out, char *why, size_t why_len);
	/* Stops the datapath and frees it; ports must have been detached
	 * (attached ports; ports it serves itself go with it, or stay
	 * forwarding with keep). */
	void (*close)(struct dpif *dp);
	/* Work the datapath gives the control thread (upcalls, ageing): fd
	 * (NULL: none) is readable when some waits, and the control loop
	 * polls it; run (NULL: none) does it, called every turn of the loop
	 * (at least once a second), never blocking on traffic. */
	int (*fd)(struct dpif *dp);
	void (*run)(struct dpif *dp);
	/* The start-up configuration is applied: of what open adopted, what
	 * no port_add claimed goes (NULL: nothing is adopted). */
	void (*startup_done)(struct dpif *dp);

	/* A port's life (see "Order" above).  new_sock: a vxlan port that
	 * brought a new underlay socket; sock_goes: one whose socket leaves
	 * with it (the buffers kept for that socket go back). */
	int (*port_attach)(struct dpif *dp, uint16_t id, struct port *port, bool new_sock);
	void (*port_detach)(struct dpif *dp, uint16_t id, bool sock_goes);
	int (*port_watch)(struct dpif *dp, struct port *port);
	void (*port_unwatch)(struct dpif *dp, struct port *port);
	/* netlink says the port's device is gone: stop using it at once. */
	void (*port_lost)(struct dpif *dp, uint16_t id);

	/* A port the datapath serves itself (see "Two kinds of port"):
	 * port_add makes it serve spec (0, *id its port id, which rules and
	 * FDB entries name; or a negative errno with the reason, one line,
	 * in why, nothing changed); the same spec again is 0 and changes
	 * nothing.  port_del: it no longer serves it, its FDB
	 * entries and anything it made for it go (-ENOENT: no such port). */
	int (*port_add)(struct dpif *dp, const struct dpif_port_spec *spec, uint16_t *id, char *why,
			size_t why_len);
	int (*port_del)(struct dpif *dp, uint16_t id);
	/* The remote VTEPs vxlan port `id` (one it serves itself) floods to
	 * besides its spec's remotes: BGP EVPN's, replacing the set before;
	 * its VNI's flood list and accepted senders follow.  -E2BIG past what
	 * the datapath floods to (the set before stays), -ENOENT: no such
	 * vxlan port.  (The userspace datapath reads them from the published
	 * VNI table: NULL.) */
	int (*port_flood_vteps)(struct dpif *dp, uint16_t id, const struct dpif_ip *vteps, unsigned n);

	/* A shared underlay socket in publication slot `slot`. */
	int (*sock_watch)(struct dpif *dp, unsigned slot, struct vxlan_sock *sock);
	void (*sock_unwatch)(struct dpif *dp, struct vxlan_sock *sock);
	/* Before the socket is closed: buffers the datapath keeps go back. */
	void (*sock_release)(struct dpif *dp, struct vxlan_sock *sock);

	/* `set gro-max-size` / `gro-hold-us`: the GRO tables are rebuilt. */
	int (*gro_config)(struct dpif *dp, uint32_t max_size, uint64_t hold_ns);

	/* `set upcall-rate` / `upcall-burst`: every port's upcall token
	 * bucket now and for the ports added later (rate per second, burst).
	 * NULL in a datapath that reads every frame itself (no upcalls). */
	int (*upcall_limit)(struct dpif *dp, uint32_t rate, uint32_t burst);

	/* The FDB (see "The FDB" above).  fdb_add/fdb_del: an operator's
	 * static entry (fdb_add_static, fdb_del) or an EVPN one (fdb_add_evpn,
	 * fdb_del_evpn).  fdb_set_vni_max: -ERANGE above the table's learned
	 * capacity, which *capacity says. */
	int (*fdb_add)(struct dpif *dp, enum dpif_fdb_kind kind, uint32_t vni, const uint8_t mac[6],
		       const struct fdb_dst *dst);
	int (*fdb_del)(struct dpif *dp, enum dpif_fdb_kind kind, uint32_t vni, const uint8_t mac[6]);
	bool (*fdb_lookup)(struct dpif *dp, uint32_t vni, const uint8_t mac[6], struct fdb_dst *dst);
	size_t (*fdb_flush)(struct dpif *dp, const struct fdb_flush_filter *filter);
	int (*fdb_dump)(struct dpif *dp, uint32_t vni, fdb_dump_cb *cb, void *ctx);
	void (*fdb_set_ageing)(struct dpif *dp, uint64_t ageing_ns);
	int (*fdb_set_vni_max)(struct dpif *dp, uint32_t max, uint32_t *capacity);
	/* A port's `max-macs` (0: none); port_forget when it is gone (its
	 * entries go with fdb_flush). */
	int (*fdb_set_port_max)(struct dpif *dp, uint16_t port, uint32_t max);
	void (*fdb_port_forget)(struct dpif *dp, uint16_t port);

	/* Rules (see "Rules" above).  rule_check: 0, or a negative errno
	 * with the reason, one line, in why. */
	int (*rule_check)(struct dpif *dp, const struct flower_spec *rule, char *why, size_t why_len);
	void (*rules_changed)(struct dpif *dp, const struct flower_table *t);
	int (*rule_counters)(struct dpif *dp, struct flower_counters *fc);

	/* Every counter, summed over the datapath's threads into *out (which
	 * is zeroed first; each thread's own figures in out->workers[]), and
	 * the FDB's (out->fdb, and each present port's). */
	int (*snapshot)(struct dpif *dp, struct vxd_snapshot *out);

	/* Capture (dp/capture.h): the datapath starts copying the frames of
	 * cap->port_id into cap's ring (and sets cap->realtime_offset_ns
	 * from its clock); after capture_stop it no longer touches cap.  A
	 * capture it cannot take (a port it does not serve, headers it never
	 * sees): a negative errno with the reason, one line, in why. */
	int (*capture_start)(struct dpif *dp, struct vxd_capture *cap, char *why, size_t why_len);
	void (*capture_stop)(struct dpif *dp, struct vxd_capture *cap);

	/* Counters of the ports it serves itself (see "Counters" above).
	 * port_dump: from *cursor 0, the next port's id (0), or -ENOENT
	 * past the last.  port_stats: port id's (-ENOENT: no such port).
	 * port_vteps: a vxlan port's remote VTEPs, at most max (their
	 * number, or -ENOENT).  dp_stats: its own.  fdb_vni_macs: MACs
	 * learned in vni, and the cap on them (*cap).  show: see enum
	 * dpif_show_part (id and st: the port and its counters as
	 * port_stats read them for the report, for the port parts, so what
	 * the datapath adds is of the same read; NULL for the others).
	 * A class with port_stats has port_dump, port_vteps and dp_stats
	 * too (dpif_has_port_counters); show and fdb_vni_macs may be NULL. */
	int (*port_dump)(struct dpif *dp, unsigned *cursor, uint16_t *id);
	int (*port_stats)(struct dpif *dp, uint16_t id, struct dpif_port_stats *out);
	int (*port_vteps)(struct dpif *dp, uint16_t id, struct dpif_vtep_stats *out, unsigned max);
	int (*dp_stats)(struct dpif *dp, struct dpif_dp_stats *out);
	uint32_t (*fdb_vni_macs)(struct dpif *dp, uint32_t vni, uint32_t *cap);
	void (*show)(struct dpif *dp, enum dpif_show_part part, uint16_t id, const struct dpif_port_stats *st,
		     struct ctl_print *p);

	/* Threads that read a port's queues: a multi-queue tap or a socket's
	 * reuseport group gets this many (1: single-queue). */
	unsigned (*n_lanes)(const struct dpif *dp);
};

/* Every open datapath starts with this. */
struct dpif {
	const struct dpif_class *class;
};

/* Whether dp's ports can be reported from its counters (see "Counters"). */
static inline bool dpif_has_port_counters(const struct dpif *dp)
{
	return dp && dp->class->port_stats && dp->class->port_dump && dp->class->port_vteps && dp->class->dp_stats;
}

#endif /* VX_DP_DPIF_H */
