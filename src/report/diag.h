/* `diagnose`'s judgement: pure functions from what the switch is (its
 * ports, their VNIs, MTUs, knobs) and two snapshots of its counters (now,
 * and the start of the recent window) to findings.  Nothing here reads a
 * clock, a socket or the daemon: diagnose.c builds the input, the unit
 * tests (tests/unit/report/test_diag.c) craft it.
 *
 * A finding names one cause with a stable key (`cause`, for scripts and
 * `vxctl -j diagnose`), the numbers that show it (fields) and one sentence
 * for the operator: the cause, the numbers, what to do.  A note is said but
 * is no problem (something the switch put right itself); only findings
 * make `vxctl diagnose` exit 1.  The causes are documented in
 * docs/DIAGNOSE.md and vxctl(8): add, never rename.
 *
 * Windows: each judgement says which counters it reads.  Frame sizes and
 * merging are judged on the window when it saw enough traffic, else on
 * everything since start; CPU on the window only; silence on the VTEP
 * counters as they are now; refusals, drops and errors on totals. */
#ifndef VX_REPORT_DIAG_H
#define VX_REPORT_DIAG_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "ctl/ctl_cmd.h"
#include "dp/user/worker.h"

#define DIAG_CAUSES(X)                                                    \
	X(REMOTE_SILENT, "remote_silent")                                 \
	X(VNI_NO_VXLAN, "vni_no_vxlan")                                   \
	X(MTU_UNDERLAY, "mtu_underlay")                                   \
	X(OFFLOAD_REFUSED, "offload_refused")                             \
	X(OFFLOAD_OFF, "offload_off")                                     \
	X(SMALL_FRAMES_GRO_OFF, "small_frames_gro_off")                   \
	X(SMALL_FRAMES_NO_UDP_GRO, "small_frames_no_udp_gro")             \
	X(SMALL_FRAMES_NO_TSO, "small_frames_no_tso")                     \
	X(ZERO_CSUM_PEER, "zero_csum_peer")                               \
	X(GRO_HOLD_SHORT, "gro_hold_short")                               \
	X(SMALL_FRAMES_UNMERGEABLE, "small_frames_unmergeable")           \
	X(FDB_FULL, "fdb_full")                                           \
	X(FDB_PORT_HOG, "fdb_port_hog")                                   \
	X(MAX_MACS, "max_macs")                                           \
	X(TAP_QUEUE_DROPS, "tap_queue_drops")                             \
	X(SOCKET_RX_DROPS, "socket_rx_drops")                             \
	X(RX_NO_BUFFER, "rx_no_buffer")                                   \
	X(CPU_SATURATED, "cpu_saturated")                                 \
	X(WORKER_OFF_NODE, "worker_off_node")                             \
	X(TAP_LOST, "tap_lost")                                           \
	X(LINK_DOWN, "link_down")                                         \
	X(TAP_TX_ERRORS, "tap_tx_errors")                                 \
	X(SOCKET_ERRORS, "socket_errors")                                 \
	X(UNDERLAY_BACKLOG, "underlay_backlog")                           \
	X(PORT_DROPS, "port_drops")                                       \
	X(INNER_CSUM_BAD, "inner_csum_bad")                               \
	X(UNKNOWN_VNI, "unknown_vni")                                     \
	X(EVPN_NO_ZEBRA, "evpn_no_zebra")                                 \
	X(EVPN_NO_REMOTES, "evpn_no_remotes")                             \
	X(EVPN_VTEP_NO_FLOOD, "evpn_vtep_no_flood")                       \
	X(EVPN_VNI_UNSEEN, "evpn_vni_unseen")                             \
	X(EVPN_MAC_FLAPPING, "evpn_mac_flapping")                         \
	/* the kernel datapath (diag_kdp.c) */                            \
	X(PROGRAM_NOT_ATTACHED, "program_not_attached")                   \
	X(UPCALLS_DROPPED, "upcalls_dropped")                             \
	X(SMALL_FRAMES_KERNEL, "small_frames_kernel")                     \
	X(RULES_CACHE_THRASHING, "rules_cache_thrashing")                 \
	X(KERNEL_DATAPATH_UNAVAILABLE, "kernel_datapath_unavailable")     \
	/* notes: said, but no problem */                                 \
	X(NOTE_CSUM_FINISHED, "csum_finished")                            \
	X(NOTE_VNI_NO_LOCAL_PORT, "vni_no_local_port")

enum diag_cause {
#define DIAG_CAUSE_ENUM(e, name) DIAG_##e,
	DIAG_CAUSES(DIAG_CAUSE_ENUM)
#undef DIAG_CAUSE_ENUM
	DIAG_CAUSE_COUNT
};

/* Thresholds, named so tests and docs can say them. */
#define DIAG_SILENT_NS (3ull * 1000000000ull) /* a remote unanswered this long... */
enum diag_thresholds {
	DIAG_SILENT_MIN_FRAMES = 5,   /* ...after this many frames sent to it */
	DIAG_MIN_FRAMES = 1000,       /* payload frames to judge sizes on */
	DIAG_SMALL_AVG = 3072,        /* payload frames to a VM average less: small (~2 segments) */
	DIAG_MIN_SEGS_PER_FRAME = 2,  /* TCP payload segments per frame below: GRO merges weakly
					 (a peer without TSO gives ~1; an OVS peer at 0.8 Gbit/s ~3) */
	DIAG_MTU_DGRAM = 2048,        /* datagrams this size or less: one segment each */
	DIAG_HOLD_DEFAULT_US = 50,    /* gro-hold-us advice comes in steps of this */
	DIAG_HOLD_MAX_US = 500,       /* ... up to this: datagrams farther apart are the peer's doing */
	DIAG_CPU_PERMILLE = 950,      /* worker CPU over the window, thousandths */
	DIAG_CPU_WAIT_PERMILLE = 750, /* ... or time runnable waiting for a CPU: held back (a loaded 2-vCPU host shows ~550) */
	DIAG_MIN_WINDOW_MS = 1000,
	DIAG_HOG_MIN_MACS = 64,       /* a port holding >= 3/4 of its VNI's MACs, and this many */
	DIAG_MAX_FIELDS = 8,
	DIAG_TEXT_SIZE = 480,
	DIAG_MAX_FINDINGS = 64,
};

enum diag_port_kind { DIAG_PORT_NONE = 0, DIAG_PORT_TAP, DIAG_PORT_VXLAN };

/* What a port is (not its counters: those are in the snapshots). */
struct diag_port {
	enum diag_port_kind kind;
	bool internal;             /* a slow-path link's end (control/kdp_slowpath.c): no VM
	                            * behind it, so no tap offload findings */
	char name[IF_NAMESIZE];
	uint32_t vni;
	uint32_t mtu;              /* tap: the VM-facing MTU */
	/* tap: what the kernel counts for the device (kernel_ok: it could be read) */
	bool kernel_ok;
	uint64_t kernel_tx_dropped;
	/* vxlan */
	uint16_t dst_port;
	uint8_t family;            /* underlay: 4 or 6 */
	uint32_t inner_mtu_fit, underlay_mtu;
	bool csum_unfinished;      /* its underlay is a veth with tx checksum offload and
	                            * udpcsum is on: checksums leave unfinished (ethtool.h) */
	/* its device (a tap's link, a vxlan port's underlay link) */
	bool link_down;
	uint64_t link_down_s, link_down_events;
	char link_dev[IF_NAMESIZE];
	char netns[64];            /* a tap's namespace ("" = the daemon's) */
	/* vxlan with `evpn` (control/evpn.h) */
	bool evpn;
	bool evpn_zebra;           /* a zebra process runs in the daemon's namespace */
	uint32_t evpn_vteps;       /* flood VTEPs from EVPN */
	uint32_t n_remotes;        /* the port's static remotes */
	uint32_t evpn_macs_no_flood; /* EVPN MACs behind a VTEP with no flood entry */
	char evpn_no_flood_vtep[48]; /* one such VTEP */
	const char *evpn_fault;    /* why zebra does not see the VNI (evpn_shadow_fault_name), NULL: fine */
	char evpn_shadow_vx[16], evpn_shadow_br[16];
	uint32_t evpn_macs_flapping; /* MACs moved 5 times within 180 s (FRR's DAD defaults) */
	char evpn_flap_mac[18];
	uint32_t evpn_flap_moves;
	char evpn_flap_vtep[48];
};

struct diag_input {
	const struct vxd_snapshot *now;
	const struct vxd_snapshot *then; /* start of the recent window; NULL: none */
	uint32_t knobs[CTL_KNOB_COUNT];
	struct diag_port ports[VXD_MAX_PORTS];
	const char *only;                /* findings of this port only (NULL: all) */
	int underlay_node;               /* placement.h: the underlay's NUMA node (-1: unknown) */
	const char *underlay;            /* its name ("" unknown) */
	/* The kernel datapath was asked for (or is the default) but the
	 * userspace one runs: why (vxd.h, kdp_why); NULL: not so. */
	const char *kernel_unavailable;
};

struct diag_field {
	const char *key;
	bool is_str;
	uint64_t num;
	char str[48];
};

struct diag_finding {
	enum diag_cause cause;
	char port[IF_NAMESIZE];          /* "" when it belongs to no port */
	unsigned n_fields;
	struct diag_field fields[DIAG_MAX_FIELDS];
	char text[DIAG_TEXT_SIZE];
};

struct diag_report {
	unsigned n;
	struct diag_finding f[DIAG_MAX_FINDINGS];
	unsigned left_out;               /* findings past DIAG_MAX_FINDINGS */
};

/* Judges `in` into `out` (emptied first). */
void diag_judge(const struct diag_input *in, struct diag_report *out);

const char *diag_cause_name(enum diag_cause cause);
bool diag_cause_is_note(enum diag_cause cause);
/* Findings that are problems (notes left out). */
unsigned diag_problems(const struct diag_report *r);
/* The first finding of `cause` (NULL: none); tests. */
const struct diag_finding *diag_find(const struct diag_report *r, enum diag_cause cause);
/* Field `key` of f, numeric (0 if absent); tests. */
uint64_t diag_field_num(const struct diag_finding *f, const char *key);

/* ---- for the diag_*.c files ---- */

/* Adds a finding of `port` (NULL: the switch) unless in->only names
 * another port; NULL when it is left out. */
struct diag_finding *diag_add(struct diag_report *r, const struct diag_input *in, enum diag_cause cause,
			      const char *port, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void diag_num(struct diag_finding *f, const char *key, uint64_t value);
void diag_str(struct diag_finding *f, const char *key, const char *value);
/* now - then of a counter (now itself when it went back: a new port). */
static inline uint64_t diag_delta(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : now;
}
/* The snapshot a judgement of recent traffic subtracts: in->then when the
 * window saw `enough`, else one of zeros (everything since start). */
const struct vxd_snapshot *diag_base(const struct diag_input *in, bool enough);

/* diag_switch.c: how the switch is built (VNIs, MTUs, offloads, FDB). */
void diag_judge_config(const struct diag_input *in, struct diag_report *r);
/* diag_evpn.c: EVPN ports (zebra there, flood lists). */
void diag_judge_evpn(const struct diag_input *in, struct diag_report *r);
/* diag_traffic.c: what its traffic shows (remotes, frame sizes, drops, CPU). */
void diag_judge_traffic(const struct diag_input *in, struct diag_report *r);

#endif
