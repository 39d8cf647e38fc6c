/* Capture: copies of the frames a port receives or sends, taken on the
 * worker, streamed to a `vxctl capture` client by the control thread.
 *
 * Data flows one way:
 *
 *   worker (producer)                          control thread (consumer)
 *   batch of a tapped port --filter--> ring --> chunk --> ctl_stream --> vxctl
 *
 * - struct vxd_capture is shared: the control thread fills it before
 *   VXD_REQ_CAPTURE_START and frees it after VXD_REQ_CAPTURE_STOP returned
 *   (the worker then no longer holds it).  In between the worker reads its
 *   settings, writes the ring (single producer) and the counters; the
 *   control thread reads the ring (single consumer, util/rec_ring.h) and
 *   the counters (relaxed atomics).  With several workers each attaches
 *   the capture to its own side of the port, and they take turns at the
 *   ring's producer end (a spin flag held for one record's copy: paid
 *   only while a capture runs).
 * - The worker attaches a capture to its port (struct vxd_wport caps[]).
 *   The datapath checks the port's n_caps once per batch (tap rx batch,
 *   output queue flush), and the worker's n_sock_caps once per socket
 *   receive batch, and n_gro_caps once per call into GRO: with no capture
 *   running that is the whole cost.  A capture of the frames a vxlan port
 *   decapsulates (inner, in) takes what GRO completed (merged frames
 *   whole) just before the switch handles it.
 * - A frame is filtered (BPF from pcap_compile, bpf_filter()) before it
 *   is copied when its bytes are contiguous; a frame with frags, or an
 *   outer frame, is assembled in the ring first and given up there when
 *   the filter says no.
 * - The ring is bounded: a frame that does not fit is counted in
 *   `dropped` and forgotten; the worker never waits.  After a batch that
 *   added records it rings the control thread's eventfd, only when the
 *   control thread asked for it (want_wake: it has drained and has room to
 *   send more), so a slow reader costs no wake-ups.
 *
 * What is captured where:
 *   tap, in:     each frame read from the tap, before parsing;
 *   tap, out:    each frame handed to the tap (before its write);
 *   vxlan, in:   inner: the decapsulated frame, after GRO (merged frames up
 *                to 64 KB); outer: each datagram read from the socket, with
 *                Ethernet/IP/UDP headers rebuilt from its addresses and
 *                ports;
 *   vxlan, out:  each frame handed to the port to send; outer: with the
 *                VXLAN/UDP/IP/Ethernet headers the port gives it (a TSO
 *                frame shows as one datagram; the kernel cuts it on the
 *                wire).  Outer MACs are placeholders (02:00:00:00:00:01 for
 *                this host, :02 for the remote), outer IPv4 ID 0, UDP
 *                checksum recomputed. */
#ifndef VX_DP_CAPTURE_H
#define VX_DP_CAPTURE_H

#include <sys/types.h> /* pcap/bpf.h uses u_int */
#include <pcap/bpf.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "dp/capture_rec.h"
#include "offload/vxlan_encap.h"
#include "util/rec_ring.h"

enum vxd_capture_limits {
	VXD_CAPTURE_MAX = 4,               /* captures at once, over all ports */
	VXD_CAPTURE_RING = 4 << 20,        /* bytes of ring per capture */
};

struct vxd_capture {
	/* Settings: written before START, read-only after. */
	uint16_t port_id;
	uint8_t dirs;                /* DP_CAPTURE_IN | DP_CAPTURE_OUT */
	bool outer;                  /* vxlan ports only */
	bool vxlan;                  /* the port is a vxlan port */
	struct bpf_insn *insns;      /* NULL: every frame */
	unsigned n_insns;            /* its length (a kernel pre-filter copies it) */
	int64_t realtime_offset_ns;  /* CLOCK_REALTIME - the datapath's clock: set by
	                              * capture_start (dpif.h), which knows its clock */
	struct vxlan_encap tx_encap; /* vxlan: the outer headers of a sent
	                              * frame (dst_ip set per frame) */
	atomic_bool *want_wake;      /* the control thread's doorbell flag */
	int wake_fd;                 /* ... and its eventfd */

	struct rec_ring ring;        /* workers -> control */
	/* The ring has one producer: the workers take turns at it (only
	 * while a capture runs, around one record's copy). */
	atomic_flag producer;
	_Atomic uint64_t captured;   /* frames put in the ring */
	_Atomic uint64_t dropped;    /* frames the ring had no room for */
	_Atomic uint64_t prefiltered; /* the kernel datapath: frames its programs' filter kept from the
	                               * ring (not copied), set when the capture stops */
};

/* CLOCK_REALTIME minus a datapath's clock read now (`clock_now_ns`): what
 * turns the datapath's timestamps into a capture record's ts_ns. */
static inline int64_t vxd_capture_realtime_offset(uint64_t clock_now_ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec - (int64_t)clock_now_ns;
}

struct vxd_worker;
struct vxd_wport;
struct vxd_view_sock;
struct pkt;

/* ---- worker side (capture_dp.c) ---------------------------------------- */

/* Frames of one batch on a port with n_caps > 0, in direction `dir`. */
void vxd_capture_frames(struct vxd_worker *w, struct vxd_wport *wp, uint8_t dir,
			struct pkt *const *pkts, unsigned n);
/* Datagrams of one socket receive batch (n_sock_caps > 0): outer
 * captures, and inner ones while GRO is off. */
void vxd_capture_datagrams(struct vxd_worker *w, const struct vxd_view_sock *vs,
			   struct pkt *const *pkts, unsigned n, bool gro_on);
/* Decapsulated frames GRO completed in one call (n_gro_caps > 0): inner
 * captures of their vxlan ports. */
void vxd_capture_decapped(struct vxd_worker *w, struct pkt *const *pkts, unsigned n);
/* START / STOP requests (worker_req.c): 0 or -errno. */
int vxd_capture_attach(struct vxd_worker *w, struct vxd_capture *cap);
int vxd_capture_detach(struct vxd_worker *w, struct vxd_capture *cap);
/* A port goes: its captures are let go (the control side ends them). */
void vxd_capture_detach_port(struct vxd_worker *w, uint16_t port_id);

/* The datapath's capture state for the snapshot (worker.h). */
struct vxd_capture_state;
void vxd_capture_get_state(const struct vxd_worker *w, struct vxd_capture_state *out);

#endif
