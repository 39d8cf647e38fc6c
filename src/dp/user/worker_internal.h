/* The worker's own state: shared by worker.c (thread, loop, requests),
 * the packet path (datapath.c: input; dp_rules.c, dp_egress.c: rules;
 * dp_output.c: output; dp_vtep.c: VTEP counters; capture_dp.c) and
 * worker_req.c (what requests do).  Only the worker thread touches any of
 * it while the thread runs; see worker.h. */
#ifndef VX_DP_USER_WORKER_INTERNAL_H
#define VX_DP_USER_WORKER_INTERNAL_H

#include <pthread.h>

#include "dp/capture.h"
#include "dp/user/worker.h"
#include "dp/user/txq.h"
#include "parse/flow.h"
#include "switch/flow_cache.h"

_Static_assert((int)TXQ_PORTS == (int)VXD_MAX_PORTS, "an output queue per port id");

enum vxd_worker_limits {
	VXD_RX_BATCH = 64,       /* tap reads per batch */
	VXD_SOCK_RX_MAX = 512,   /* datagrams per socket batch (8 x 64) */
	/* Datagrams parsed, then given to gro_receive_burst() at a time: what
	 * bench_gro -m burst32 measures; a whole batch of 512 would leave
	 * the first frames' headers and keys out of the L1 cache by the time
	 * GRO reads them. */
	VXD_GRO_BURST = 32,
	VXD_RX_ROUNDS = 8,       /* tap batches per loop turn: fairness */
	VXD_SOCK_POLL_BUDGET = 4096, /* datagrams per socket poll: fairness... */
	VXD_SOCK_POLL_ROUNDS = 64,   /* ...and recvmmsg calls, for datagrams that
					arrive one per message (not coalesced) */
	VXD_MAX_EVENTS = 64,
	VXD_IDLE_TIMEOUT_MS = 1000,  /* epoll timeout with nothing held: FDB ageing */
	/* A frame a mirred of an egress rule sends runs the target's egress
	 * rules, as the kernel's mirred runs the target's egress hook, at most
	 * this deep (the kernel's MIRRED_NEST_LIMIT): deeper, it is dropped. */
	DP_EGRESS_NEST_MAX = 4,
	DP_EGRESS_CACHE_ENTRIES = 2048,
};

/* What GRO completed during one call into it (gro_receive_burst(),
 * gro_flush()), in order.  GRO's emit (dp_gro_collect) appends here and
 * calls nothing else; the underlay input switches them once the call has
 * returned (datapath.c), so frames flow one way: parse -> GRO -> switch ->
 * output.  A key GRO owns is valid only during its emit and is copied
 * into own[]; one of the burst's (w->sock_keys) stays where it is until
 * the next burst is parsed, after these frames are switched.
 * Bound: a burst of n datagrams completes at most 2n frames (a held run
 * and the datagram itself), a flush at most the runs held. */
enum { DP_GRO_OUT_MAX = 2 * VXD_GRO_BURST + GRO_DEFAULT_MAX_FLOWS };
struct dp_gro_out {
	unsigned n;
	struct pkt *pkts[DP_GRO_OUT_MAX];
	const struct flow_key *keys[DP_GRO_OUT_MAX];
	struct flow_key own[DP_GRO_OUT_MAX];
};

/* The worker's side of one port. */
struct vxd_wport {
	struct port *port;           /* NULL: slot not attached */
	struct port_io io;
	uint64_t lost_ns;            /* frame port: when its device went away (0: it is there) */
	uint64_t lost_events;        /* times it went away */
	/* Captures of this port (capture.h): checked once per batch. */
	uint8_t n_caps;
	struct vxd_capture *caps[VXD_CAPTURE_MAX];
};

struct vxd_worker {
	struct qsbr *qsbr;
	struct qsbr_reader *reader;
	struct vxd_view *_Atomic *view_slot;
	const struct vxd_view *view; /* valid from online to the next quiescent point */
	vxd_clock_fn *clock;

	pthread_t thread;
	bool running;
	atomic_bool stop;
	int epfd;
	int wake_fd;                 /* eventfd: a request or stop is pending */

	unsigned index;              /* its lane (worker.h) */
	int cpu_pinned, node;        /* placement (-1: none / unknown) */
	struct pkt_pool *pool;
	uint32_t pool_size;
	struct fdb *fdb;             /* shared (worker.h) */
	struct fwd_switch fwd;
	struct fwd_result fwd_res;   /* scratch, too big for the stack per frame */
	struct gro_table *gro;
	struct gro_stats gro_base;   /* of GRO tables replaced by knob changes */
	bool gro_carried;

	struct vxd_wport ports[VXD_MAX_PORTS];
	struct txq_set txqs;         /* output queues, by port id */
	/* EPOLLOUT asked for: on out_fd[i] (-1: none) of out_sock[i]. */
	struct vxlan_sock *out_sock[VXD_MAX_SOCKS];
	int out_fd[VXD_MAX_SOCKS];

	/* Remote VTEPs' traffic (worker.h: struct vxd_vtep_stats); last_vtep
	 * is where the previous lookup hit (frames come in trains). */
	struct vxd_vtep_stats vteps[VXD_MAX_VTEPS];
	unsigned n_vteps, last_vtep;
	uint64_t vteps_untracked;

	uint64_t drops[DROP_REASON_COUNT];
	struct vxd_rx_csum_stats rx_csum;
	uint64_t whole_big_tcp_marked;
	uint64_t gro_pool_low_flushes;
	uint64_t loops, requests;
	uint64_t polls, poll_hits;   /* poll-us (worker.c) */
	uint64_t poll_ns;            /* the knob, from the last view */
	uint64_t last_traffic_ns;
	uint64_t now_ns;
	uint64_t last_age_ns;

	struct pkt *sock_rx[VXD_SOCK_RX_MAX];
	/* The keys of one GRO burst of them, parsed once (datapath.c). */
	struct flow_key sock_keys[VXD_GRO_BURST];
	struct dp_gro_out gro_out;

	/* Flower rules (dp_rules.c): the verdict cache, the per-rule counters
	 * (read by the control side through VXD_REQ_SNAPSHOT), mirred scratch. */
	struct flow_cache *fcache;
	struct flower_counters *fcounters;
	struct fwd_result rule_res;
	struct flow_key rule_key;   /* the key after an ingress vlan action */
	/* Egress rules (dp_egress.c): their own verdict cache (an egress
	 * lookup runs inside an ingress verdict's actions, whose verdict must
	 * stay where it is), the mirred nesting depth and a mirred scratch per
	 * depth. */
	struct flow_cache *fcache_egress;
	unsigned egress_nest;
	struct fwd_result egress_res[DP_EGRESS_NEST_MAX];

	/* Captures (capture.h): on vxlan ports (checked once per socket
	 * batch), and of decapsulated frames (checked once per GRO call). */
	unsigned n_sock_caps, n_gro_caps;

	pthread_mutex_t req_lock;
	pthread_cond_t req_cond;
	struct vxd_req *req_head, **req_tail;
	atomic_bool req_pending;
};

/* dp_rules.c: a frame whose ingress port has rules (ft is the view's
 * table); true when the rules consumed it, false: on to L2 switching,
 * with *key the frame's key as the rules left it (w->rule_key when a
 * vlan action edited it). */
bool dp_rules(struct vxd_worker *w, const struct flower_table *ft, struct pkt *pkt,
	      const struct flow_key **key);

/* dp_rules.c, for the egress rules too: a mirred's outputs (none when the
 * port is gone), the tunnel_key set on a frame to a vxlan port, and vlan
 * push/pop/modify (false: the frame was dropped). */
void dp_rule_outputs(const struct vxd_worker *w, uint16_t id, const struct flower_action *tun,
		     struct fwd_result *res);
void dp_rule_tunnel_key(const struct vxd_worker *w, struct pkt *out, uint16_t id,
			const struct flower_action *tun);
bool dp_rule_vlan(struct vxd_worker *w, struct pkt *pkt, const struct flower_action *a);

/* Where an action list runs: an ingress hook (the frame then goes on to
 * L2 switching) or a port's egress (it goes on out of that port). */
struct dp_act_site {
	bool egress;            /* mirreds go through the target's egress rules, one level deeper */
	uint16_t drop_port;     /* whose rule_drop counts a drop */
	struct flow_key *edit;  /* where the key goes once a vlan action edited the frame */
};
/* dp_rules.c: v's actions on pkt in order, one interpreter for both sites
 * (docs/FLOWER.md): true when they consumed it (drop, redirect, no buffer
 * for a tag); false: it goes on, *key as the actions left it (site->edit
 * after a vlan edit) and *tun the tunnel_key set in force (NULL: none, or
 * unset) for an egress site to apply. */
bool dp_run_actions(struct vxd_worker *w, struct pkt *pkt, const struct flow_key **key,
		    const struct flower_verdict *v, const struct dp_act_site *site,
		    const struct flower_action **tun);

/* dp_egress.c: pkt is about to leave by *dst (a port of w->view with egress
 * rules), key the frame's key as parsed where it came in.  Runs the port's
 * egress rules; true when they consumed pkt (dropped, redirected), else
 * it goes on to *dst, which a tunnel_key set on a vxlan port's egress may
 * have changed (its remote). */
bool dp_egress(struct vxd_worker *w, struct pkt *pkt, const struct flow_key *key, struct fdb_dst *dst);
/* mirred from an egress rule: the frame (copy false) or a copy to port id,
 * through dp_output() and so through id's own egress rules. */
void dp_egress_mirred(struct vxd_worker *w, struct pkt *pkt, const struct flow_key *key, uint16_t id,
		      const struct flower_action *tun, bool copy);
/* The edit of vlan action a (push, pop, modify), as pkt_vlan.h makes it
 * in the frame, made in the frame's key: what later rules match. */
void dp_key_vlan(struct flow_key *k, const struct flower_action *a);

/* The port with id `id` in the published view (NULL: none). */
static inline struct port *dp_port(const struct vxd_worker *w, uint16_t id)
{
	return id < VXD_MAX_PORTS ? w->view->ports[id] : NULL;
}

/* dp_output.c: the output stage, the packet path's last. */
/* Sends pkt (consumed) to every output of res (a drop when it has none);
 * key: the frame's key (for the egress rules of the outputs). */
void dp_output(struct vxd_worker *w, struct pkt *pkt, const struct flow_key *key,
	       const struct fwd_result *res);
/* Sends every frame queued in this batch (end of a batch). */
void dp_flush_all(struct vxd_worker *w);

/* datapath.c: the input paths */
void dp_count_drop(struct vxd_worker *w, uint16_t port_id, enum drop_reason reason);
void dp_frame_input(struct vxd_worker *w, struct port *port);
/* EPOLLERR/EPOLLHUP on a frame port's fd.  The device is gone (a tap:
 * always; an afpacket port: when its poll_error says so -- a link only
 * down is not lost): out of the poll set, so nothing spins, and marked
 * lost until the control side replaces the port. */
void dp_frame_lost(struct vxd_worker *w, struct port *port);
void dp_sock_input(struct vxd_worker *w, unsigned sock_idx);
void dp_sock_writable(struct vxd_worker *w, unsigned sock_idx);
/* GRO's emit: appends to w->gro_out (above), nothing else. */
void dp_gro_collect(void *aux, struct pkt *pkt, const struct flow_key *key);
/* Completes held GRO runs whose hold time is over (all of them with
 * gro-hold-us 0, as the kernel does at the end of a NAPI poll), and
 * switches and sends them. */
void dp_gro_complete(struct vxd_worker *w, bool all);

/* dp_vtep.c: the counters of remote VTEP `addr` of vxlan port `port`,
 * made on first use; NULL (counted in vteps_untracked) when the table is
 * full. */
struct vxd_vtep_stats *dp_vtep(struct vxd_worker *w, uint16_t port, uint8_t family, const uint8_t addr[16]);
/* Port `port` is gone: its VTEPs' counters go too. */
void dp_vtep_forget(struct vxd_worker *w, uint16_t port);
/* A frame sent to VTEP dst; a datagram received from tun's source. */
void dp_vtep_tx(struct vxd_worker *w, const struct fdb_dst *dst);
void dp_vtep_rx(struct vxd_worker *w, uint16_t port, const struct pkt_tunnel *tun);

/* worker_req.c */
void vxd_worker_execute(struct vxd_worker *w, struct vxd_req *req);
int vxd_worker_gro_rebuild(struct vxd_worker *w, uint32_t max_size, uint64_t hold_ns);

/* worker.c: the calling thread's CPU time if it is the worker thread
 * (getrusage(RUSAGE_THREAD)); zeros on any other thread (requests served
 * by the caller once the worker stopped). */
void vxd_worker_cpu(uint64_t *user_us, uint64_t *sys_us);
/* The CPU the calling thread runs on now. */
int vxd_worker_cpu_now(void);

/* snapshot_sum.c: adds one worker's snapshot s into the sum d (counters
 * added, maxima kept, s's own figures appended to d->workers[]). */
void vxd_snapshot_add(struct vxd_snapshot *d, const struct vxd_snapshot *s);

#endif
