/* The datapath workers: threads that own the packet path, and what the
 * control thread may ask of them.
 *
 * Who owns what
 * =============
 * There are N workers (vxswitchd --workers, 1..VXD_MAX_WORKERS), worker i
 * driving lane i of every port (port.h, "Queues"): queue i of a
 * multi-queue tap, socket i of a vxlan socket's reuseport group (vxlan.h,
 * "Lanes"), and the single-queue ports port_lane_reads() gives it.  The
 * kernel steers a flow to one queue or socket in each direction, so one
 * worker handles a flow start to finish, in order, with no lock.
 * Each worker owns, and alone reads and writes:
 *   - its packet pool, GRO table, output queues, forwarding scratch, flow
 *     cache and per-rule counters;
 *   - one struct port_io per port (counters, a vxlan port's send scratch);
 *   - its lane of each vxlan socket (receive buffers, backlog, counters);
 *   - the counters that belong to no port (drops, rx-csum verdicts...);
 *   - its epoll set (the control thread adds and removes fds in it, which
 *     epoll allows from any thread, and never touches anything else).
 * Shared by all: the FDB (switch/fdb.h: lock-free lookups, learning from
 * any worker; the control thread changes it directly), and the published
 * view.  Counters are per worker and summed when read (snapshot.c).
 * The control thread owns the ports, the sockets and the published view
 * (struct vxd_view): an immutable version of the port table, the VNI table,
 * the socket demux maps and the knobs.  A new version is published with one
 * atomic store; the old one is freed after a grace period (util/qsbr.h).
 *
 * How a change reaches the worker
 * ===============================
 *   - What the worker only reads (ports, VNIs, knobs): published.  The
 *     worker loads the view once per loop turn, after epoll_wait returns,
 *     and never keeps it across its quiescent point at the end of the turn.
 *   - What the worker writes (FDB, GRO table, port io, counters): a request
 *     (struct vxd_req) that the worker executes between two batches; the
 *     caller blocks until it is done and gets the result.  Reading counters
 *     is a request too (VXD_REQ_SNAPSHOT copies them out), so no counter is
 *     ever read while it is written.
 * The worker never calls into the control side: it executes a fixed set of
 * requests it implements itself (worker_req.c).
 *
 * Event sources are registered by (kind, index) in the epoll data, never by
 * pointer, so an event that arrives for a port being removed finds nothing
 * in the current view and is ignored.
 *
 * Thread-safety: every function here is for the control thread, except
 * where said. */
#ifndef VX_DP_USER_WORKER_H
#define VX_DP_USER_WORKER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "offload/gro.h"
#include "packet/pkt.h"
#include "port/port.h"
#include "port/afpacket.h"
#include "port/tap.h"
#include "port/vxlan.h"
#include "switch/fdb.h"
#include "switch/flow_cache.h"
#include "switch/flower_table.h"
#include "switch/forward.h"
#include "switch/vni.h"
#include "switch/vni_map.h"
#include "util/qsbr.h"

enum vxd_limits {
	VXD_MAX_PORTS = 256,     /* port ids 1..255; 0 is never used */
	VXD_MAX_SOCKS = 32,      /* distinct (local IP, UDP port) sockets */
	VXD_SOCK_MAX_VNIS = 64,  /* vxlan ports (VNIs) sharing one socket */
	VXD_POOL_DEFAULT = 4096, /* pkts of PKT_BUF_SIZE; virtual memory is
				    touched only as far as frames are written */
	VXD_FDB_SIZE_DEFAULT = 65536, /* learned MACs over all VNIs (each VNI: fdb-max) */
	VXD_MAX_VTEPS = 128,     /* remote VTEPs whose traffic is counted (vxd_vtep_stats) */
	VXD_MAX_WORKERS = 16,    /* a worker per tap queue and per socket lane */
};
_Static_assert((int)VXD_MAX_WORKERS == (int)PORT_MAX_QUEUES && (int)VXD_MAX_WORKERS == (int)VXLAN_MAX_LANES,
	       "worker i drives queue i of every tap and lane i of every socket");

/* One shared underlay socket in a view: the socket and its VNI -> vxlan
 * port map. */
struct vxd_view_sock {
	struct vxlan_sock *sock;
	struct vni_map *demux;
};

/* The knobs the packet loop reads itself (the others reach the ports as
 * port settings: tap TSO, UDP_GRO, UDP_SEGMENT, GSO): a plain struct the
 * control thread fills from its `set` table (view.c), so the datapath
 * needs nothing of the command language. */
struct vxd_dp_knobs {
	bool gro;          /* merge inner TCP on receive */
	bool rx_csum;      /* check inner checksums the kernel did not vouch for */
	uint32_t poll_us;  /* busy-poll this long after a batch before sleeping */
};

/* A published version of what the worker reads.  Immutable once published;
 * built and freed only by the control thread (view.c). */
struct vxd_view {
	uint64_t version;
	struct port *ports[VXD_MAX_PORTS];
	struct vni_table *vnis;
	struct vxd_view_sock socks[VXD_MAX_SOCKS];
	struct vxd_dp_knobs knobs;
	bool link_down[VXD_MAX_PORTS]; /* a frame port whose link is down (links.c): frames to it are dropped */
	/* The port has egress rules (switch/flower_hook.h): dp_output() runs
	 * them (dp_egress.c); the one branch a port without them pays. */
	bool egress_rules[VXD_MAX_PORTS];
	/* The flower rules (switch/flower_table.h), immutable too; NULL: none.
	 * Owned by the control thread, which frees a table only once no view
	 * holding it can be read any more. */
	const struct flower_table *flower;
};

/* Counters of one port, copied out by VXD_REQ_SNAPSHOT. */
struct vxd_port_snap {
	bool present;
	uint64_t lost_ns;        /* frame port: its device went away then (worker clock); 0: there */
	uint64_t lost_events;
	struct port_stats stats;
	struct tap_port_info tap;
	struct afpacket_port_info afp;
	struct vxlan_port_info vx;
	struct vxlan_sock_stats sock;
	struct fdb_port_stats fdb;   /* MACs learned behind it, its max-macs */
	uint32_t fdb_vni_learned;    /* MACs learned in its VNI, behind any port */
};

/* What went to and came from one remote VTEP of one vxlan port, so that
 * `diagnose` can tell a remote that never answers (a wrong address, a
 * dstport or VNI the peer does not serve, a firewall): datagrams go out,
 * none come back.  Kept by the worker in dp_output() (tx: frames sent to
 * the VTEP, flood copies included) and dp_datagram() (rx: datagrams of the
 * port's VNI whose outer source is the VTEP).  Times: the worker clock. */
struct vxd_vtep_stats {
	uint16_t port;               /* the vxlan port */
	uint8_t family;              /* 4 or 6 */
	uint8_t addr[16];
	uint64_t tx_frames, rx_datagrams;
	uint64_t first_ns;           /* first traffic either way */
	uint64_t last_tx_ns, last_rx_ns; /* 0: never */
	uint64_t tx_since_rx;        /* frames sent since the last datagram came from it */
	uint64_t unanswered_ns;      /* when the first of those was sent (0: none) */
};

struct vxd_rx_csum_stats {
	uint64_t good, finished, bad, not_checked;
};

/* One worker's own figures (stats "workers", diagnose, metrics). */
struct vxd_worker_snap {
	unsigned index;
	int cpu_pinned;              /* the CPU it is pinned to; -1: not pinned */
	int cpu_last;                /* the CPU it ran on when the snapshot was taken */
	int node;                    /* NUMA node of cpu_pinned (placement); -1: unknown */
	uint64_t cpu_user_us, cpu_sys_us;
	uint64_t rx_frames, rx_bytes; /* read from its lanes of every port */
	uint64_t loops;
	uint64_t polls, poll_hits;   /* poll-us: busy polls, and those that found work */
	uint64_t cpu_run_ns, cpu_wait_ns; /* schedstat: on a CPU, runnable but waiting */
};

/* What the datapath holds of captures, for `stats` (capture.*): with no
 * capture running every count is 0, so a capture that ended left no
 * per-batch branch taken.  Taken by the worker into its snapshot
 * (vxd_capture_get_state). */
struct vxd_capture_state {
	uint32_t port_caps;        /* captures attached to ports (sum of n_caps) */
	uint32_t ports_tapped;     /* ports with n_caps > 0 */
	uint32_t sock_caps;        /* n_sock_caps: socket batches looked at */
	uint32_t gro_caps;         /* n_gro_caps: decapsulated frames taken as GRO completes them */
};

/* Every counter of the workers at one instant (one worker's, or the sum
 * of all: snapshot.c). */
struct vxd_snapshot {
	uint64_t taken_ns;
	struct vxd_port_snap ports[VXD_MAX_PORTS];
	uint64_t drops[DROP_REASON_COUNT]; /* drops no port can be blamed for */
	struct vxd_rx_csum_stats rx_csum;  /* inner checksums the kernel did not vouch for */
	uint64_t whole_big_tcp_marked;     /* gro_mark_big_tcp() on the way to a tap */
	uint64_t gro_pool_low_flushes;     /* runs completed mid-poll: buffers ran low */
	uint64_t loops, requests;          /* loop turns, requests executed */
	struct gro_stats gro;              /* including tables replaced by knob changes */
	struct fwd_stats fwd;
	struct fdb_stats fdb;
	struct pkt_pool_stats pool;
	uint32_t pool_size;
	/* The worker thread's CPU time (getrusage(RUSAGE_THREAD) taken by the
	 * worker while it copies the counters: the user/system split, which
	 * its thread CPU clock does not give); zeros once the thread stopped. */
	uint64_t cpu_user_us, cpu_sys_us;
	/* ... and the scheduler's account of it (util/schedstat.h): on a CPU,
	 * and runnable but waiting for one (a quota, other tasks). */
	uint64_t cpu_run_ns, cpu_wait_ns;
	struct vxd_vtep_stats vteps[VXD_MAX_VTEPS];
	unsigned n_vteps;
	uint64_t vteps_untracked;          /* frames of VTEPs that found the table full */
	struct flow_cache_stats flow_cache; /* flower verdicts: hits = fast path */
	struct vxd_worker_snap workers[VXD_MAX_WORKERS];
	unsigned n_workers;
	struct vxd_capture_state capture;  /* capture.h */
};

struct vxd_capture;

enum vxd_req_kind {
	VXD_REQ_PORT_ATTACH = 1, /* port_id, port: set up its io */
	VXD_REQ_PORT_DETACH,     /* port_id: flush its queue, free its io, forget its FDB entries;
				    value 1: its socket goes too, give its kept receive buffers back */
	VXD_REQ_SOCK_RELEASE,    /* sock: give its lane's kept receive buffers back to the pool */
	VXD_REQ_GRO_CONFIG,      /* gro: rebuild the table with these limits */
	VXD_REQ_SNAPSHOT,        /* snap */
	VXD_REQ_CAPTURE_START,   /* capture: attach it to its port (capture.h) */
	VXD_REQ_CAPTURE_STOP,    /* capture: let it go; the worker no longer touches it */
	VXD_REQ_PORT_LOST,       /* port_id: netlink says its device is gone: mark it lost as
				    EPOLLERR would (an afpacket socket says nothing when its
				    link was already down, or goes down just before) */
};

struct vxd_req {
	enum vxd_req_kind kind;
	int64_t result;          /* 0 / count, or a negative errno */
	uint16_t port_id;
	struct port *port;
	struct vxlan_sock *sock;
	uint64_t value;
	struct {
		uint32_t max_size;
		uint64_t hold_ns;
	} gro;
	struct vxd_snapshot *snap;
	struct flower_counters *fcounters; /* SNAPSHOT: also the rule counters, when set */
	struct vxd_capture *capture;
	/* Internal to worker.c. */
	struct vxd_req *next;
	bool done;
};

/* What the worker reads the time with; tests warp it. */
typedef uint64_t vxd_clock_fn(void);
uint64_t vxd_now_ns(void);

struct vxd_worker_config {
	struct qsbr *qsbr;
	struct vxd_view *_Atomic *view;  /* the control thread's publication slot */
	uint32_t pool_size;
	struct fdb *fdb;                 /* shared; the caller's (outlives the worker) */
	unsigned index;                  /* its lane */
	int cpu;                         /* pin to this CPU; -1: not pinned */
	int node;                        /* the CPU's NUMA node, for stats; -1: unknown */
	vxd_clock_fn *clock;             /* NULL: CLOCK_MONOTONIC */
};

struct vxd_worker;

/* Creates the worker's state and starts its thread.  0 or -errno. */
int vxd_worker_create(const struct vxd_worker_config *cfg, struct vxd_worker **out);
/* Stops the thread (after its current batch), frees everything it owns
 * (its io of every port; ports themselves belong to the caller). */
void vxd_worker_destroy(struct vxd_worker *w);

/* Runs `req` on the worker between two batches and waits for it; returns
 * req->result.  With the thread stopped, runs it here. */
int64_t vxd_worker_call(struct vxd_worker *w, struct vxd_req *req);

/* Event sources: a frame port's fd (tap, afpacket; index = port id) or a shared socket's fd
 * (index = socket slot of the view). */
enum vxd_src_kind {
	VXD_SRC_FRAME = 1,
	VXD_SRC_SOCK,
	VXD_SRC_WAKE,
};
int vxd_worker_watch(struct vxd_worker *w, enum vxd_src_kind kind, unsigned index, int fd);
void vxd_worker_unwatch(struct vxd_worker *w, int fd);

/* Runs reqs[i] on worker i, all at once: each is queued before any is
 * waited for, so the workers serve them in parallel (a snapshot of N
 * workers costs one wake-up's latency, not N).  Results in reqs[i]. */
void vxd_workers_call_each(struct vxd_worker *const *ws, unsigned n, struct vxd_req *reqs);

/* Runs `req` on each of the n workers in turn (a copy each) and returns
 * the first negative result, else the sum of the results.  Stops at the
 * first failure: *failed_at (may be NULL) says which (n: none). */
int64_t vxd_workers_call(struct vxd_worker *const *ws, unsigned n, const struct vxd_req *req, unsigned *failed_at);

#endif
