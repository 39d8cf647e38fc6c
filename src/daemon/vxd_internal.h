/* State of vxswitchd shared by datapath.c (the loop), control.c (the
 * commands), stats_print.c (stats, port show, fdb show) and diagnose.c.
 * Not an API: only src/daemon/ includes it. */
#ifndef VX_DAEMON_VXD_INTERNAL_H
#define VX_DAEMON_VXD_INTERNAL_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "ctl/ctl_cmd.h"
#include "daemon/datapath.h"
#include "offload/gro.h"
#include "packet/pkt.h"
#include "port/port.h"
#include "port/vxlan.h"
#include "switch/fdb.h"
#include "switch/forward.h"
#include "switch/vni.h"

enum vxd_limits {
	VXD_MAX_PORTS = 256,     /* port ids 1..255; 0 is never used */
	VXD_MAX_SOCKS = 32,      /* distinct (local IP, UDP port) sockets */
	VXD_SOCK_MAX_VNIS = 64,  /* vxlan ports (VNIs) sharing one socket */
	VXD_POOL_DEFAULT = 4096, /* pkts of PKT_BUF_SIZE; virtual memory is
				    touched only as far as frames are written */
	VXD_FDB_SIZE_DEFAULT = 65536, /* learned MACs over all VNIs (each VNI: fdb-max) */
	VXD_RX_BATCH = 64,       /* tap reads per batch */
	VXD_SOCK_RX_MAX = 512,   /* datagrams per socket batch (8 x 64) */
	VXD_RX_ROUNDS = 8,       /* tap batches per loop turn: fairness */
	VXD_SOCK_POLL_BUDGET = 4096, /* datagrams per socket poll: fairness... */
	VXD_SOCK_POLL_ROUNDS = 64,   /* ...and recvmmsg calls, for datagrams that
					arrive one per message (not coalesced) */
	VXD_TXQ_LEN = 512,
	VXD_MAX_EVENTS = 64,
};

enum vxd_src_kind {
	VXD_SRC_TAP = 1,
	VXD_SRC_SOCK,
	VXD_SRC_CTL,
};

struct vxd_sock_vni {
	uint32_t vni;
	uint16_t port_id;
};

/* Something epoll reports on: a tap, a shared underlay socket, the
 * control socket. */
struct vxd_src {
	enum vxd_src_kind kind;
	struct port *port;          /* TAP */
	struct vxlan_sock *sock;    /* SOCK; the src holds a reference */
	unsigned n_vnis;            /* SOCK: the vxlan ports reading it */
	struct vxd_sock_vni vnis[VXD_SOCK_MAX_VNIS];
};

struct vxd_txq {
	unsigned n;
	struct pkt *pkts[VXD_TXQ_LEN];
};

struct vxd {
	struct vxd_options opts;
	volatile sig_atomic_t stop;
	int epfd;
	struct pkt_pool *pool;
	uint32_t pool_size;
	struct ctl_server *ctl;
	struct vxd_src ctl_src;

	struct port *ports[VXD_MAX_PORTS];
	struct vxd_src *tap_srcs[VXD_MAX_PORTS];
	struct vxd_src *socks[VXD_MAX_SOCKS];

	struct vxd_txq txq[VXD_MAX_PORTS];
	uint16_t dirty[VXD_MAX_PORTS];
	unsigned n_dirty;

	struct fdb *fdb;
	struct vni_table_ref vni_ref;
	struct fwd_switch fwd;
	struct fwd_result fwd_res;  /* scratch, too big for the stack per frame */
	struct gro_table *gro;
	struct gro_stats gro_stats_base; /* of GRO tables replaced by knob changes */
	bool gro_stats_carried;

	uint32_t knobs[CTL_KNOB_COUNT];
	uint64_t drops[DROP_REASON_COUNT]; /* drops no port can be blamed for */
	struct vxd_rx_csum_stats {
		uint64_t good, finished, bad, not_checked;
	} rx_csum; /* inner checksums of datagrams the kernel did not vouch for */
	uint64_t whole_big_tcp_marked; /* gro_mark_big_tcp() on the way to a tap */
	uint64_t gro_pool_low_flushes;  /* runs completed mid-poll: buffers ran low */
	uint64_t now_ns;
	uint64_t last_age_ns;
	uint64_t start_ns;

	struct pkt *sock_rx[VXD_SOCK_RX_MAX];

	/* `diagnose` judges recent traffic: tx counters of every port at the
	 * start of the window (rotated every VXD_DIAG_WINDOW_NS, restarted by
	 * every `set`), so a knob change shows at once. */
	struct vxd_diag_snap {
		uint64_t tx_frames, tx_bytes;
	} diag_prev[VXD_MAX_PORTS], diag_cur[VXD_MAX_PORTS];
	uint64_t diag_cur_ns;
};

#define VXD_DIAG_WINDOW_NS (5ull * 1000000000ull)

/* Rotates the diagnose window (restart: both ends start now). */
void vxd_diag_snapshot(struct vxd *vxd, bool restart);

uint64_t vxd_now_ns(void);
void vxd_log(const struct vxd *vxd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vxd_flush_all(struct vxd *vxd);
int vxd_gro_rebuild(struct vxd *vxd);
/* Removes port `id` from the switch, epoll, the VNI table and the FDB, and
 * destroys it. */
void vxd_port_remove(struct vxd *vxd, uint16_t id);

/* control.c: a command's refusal, message in `err` (if any); returns `ret`. */
int vxd_refuse(struct ctl_err *err, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
struct port *vxd_port_by_name(const struct vxd *vxd, const char *name);

/* stats_print.c */
int vxd_stats(struct vxd *vxd, const struct ctl_port_ref *ref, struct ctl_print *p, struct ctl_err *err);
void vxd_port_show(const struct vxd *vxd, struct ctl_print *out);
/* vni: one VNI or FDB_VNI_ANY */
void vxd_fdb_show(struct vxd *vxd, uint32_t vni, struct ctl_print *out);
/* GRO counters including those of the tables knob changes replaced. */
void vxd_gro_stats(const struct vxd *vxd, struct gro_stats *st);

/* diagnose.c */
int vxd_diagnose(struct vxd *vxd, const struct ctl_port_ref *ref, struct ctl_print *p, struct ctl_err *err);

#endif
