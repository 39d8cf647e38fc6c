/* What the parts of gro_diff share (tests/tools/gro_diff.c: the driver,
 * the contract and the method; grodiff/cases.c: the segment sequences and
 * the case table; grodiff/result.c: frames on the wire, what GRO made of
 * them, and our GRO's run; grodiff/kernel.c: the kernel's GRO through an
 * IFF_NAPI tap).  Not a library: one program's parts. */
#ifndef VX_TEST_GRO_DIFF_H
#define VX_TEST_GRO_DIFF_H

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frame_builder.h"
#include "offload/gro.h"
#include "packet/hdr.h"
#include "packet/pkt.h"
#include "parse/flow_extract.h"

#include "frame_builder.h"

enum {
	/* Input frames per case.  Below the NAPI weight (64) on purpose: a
	 * poll that uses its whole budget flushes held runs by age (all of
	 * them when HZ < 1000), which would split a case. */
	MAX_SEGS = 63,
	MAX_OUT = MAX_SEGS,       /* output frames per case (never more than input) */
	FRAME_CAP = 2048,         /* one input segment */
	RX_CAP = 70000,           /* one received (merged) frame + vnet hdr */
	MSS = 1448,
	MAX_ATTEMPTS = 12,        /* kernel bursts tried per case (per round) */
	UNSTABLE_ROUNDS = 3,      /* rounds of bursts before a self-inconsistent kernel is UNSTABLE */
	RX_TIMEOUT_MS = 400,      /* give up waiting for the kernel's frames */
};

/* Kernel: the repoll timer that flushes the held runs after a burst.  Longer
 * than a jiffy at any HZ, so it never fires inside an accepted burst. */
#define FLUSH_TIMEOUT_NS 20000000ull
#define TAP_NAME "gdiff0"

extern bool gd_verbose; /* -v */

struct seg_list {
	struct fb_frame f[MAX_SEGS];
	unsigned n;
	/* VXLAN runs: outer headers of segment i in send order (outer IPv4
	 * ID advancing by one); VXLAN-only cases may change them. */
	struct fb_vxlan outer[MAX_SEGS];
};

struct stream {
	struct fb_frame t;
};

struct case_ctx {
	struct seg_list *l;
	uint8_t family;
	const uint8_t *dst_mac;
};

typedef void case_fn(const struct case_ctx *c);

enum { F4 = 1, F6 = 2, FVX = 4, VXO = 8 };

enum case_compare {
	CMP_EXACT,      /* per flow: the same frames in the same order */
	CMP_ANY_ORDER,  /* per flow: the same frames, order free (see note) */
	CMP_REPORT,     /* printed, never a failure (version-specific, see note) */
};

struct gd_case {
	const char *name;
	case_fn *build;
	unsigned families;
	enum case_compare compare;
	const char *note;
	/* CMP_REPORT cases: what ours must give anyway, by our documented
	 * rules (segments per frame, flows by port, e.g. "3,4"); NULL when
	 * that depends on our hash. */
	const char *ours_expect;
};

struct wire {
	uint8_t bytes[MAX_SEGS][FRAME_CAP];
	size_t len[MAX_SEGS];
	unsigned n;
};

struct out_frame {
	uint16_t src_port;   /* flow */
	uint32_t seq;        /* first segment */
	uint32_t len;        /* whole frame, Ethernet header included */
	uint16_t gso_size;
	uint8_t gso_type;    /* VIRTIO_NET_HDR_GSO_* incl. ECN */
	uint32_t payload;    /* TCP payload bytes */
};

struct result {
	struct out_frame f[MAX_OUT];
	unsigned n;
	bool overflow;
};

struct kernel_rig {
	int tap_fd;
	int pkt_fd;
	int ifindex;
	uint8_t mac[6];
	uint8_t rx[RX_CAP];
};

enum burst_status { BURST_OK, BURST_TICK, BURST_LOST };

extern const struct gd_case gd_cases[];
extern const size_t gd_n_cases;

void add_run(struct seg_list *l, struct stream *s, unsigned count, size_t payload);
void one_stream(const struct case_ctx *c, struct stream *s);
void seg_list_set_outer(struct seg_list *l, const struct fb_vxlan *vx);
void vxlan_outer(struct fb_vxlan *vx, const uint8_t *dst_mac);
int build_wire(const struct seg_list *l, bool vxlan, struct wire *w);
void frame_decap(const uint8_t **p, size_t *len);
unsigned frame_segments(const struct out_frame *f);
bool frame_tcp_id(const uint8_t *p, size_t len, uint16_t *src_port, uint32_t *seq,
			 uint32_t *payload);
void result_add(struct result *r, const struct out_frame *f);
bool result_equal(const struct result *a, const struct result *b);
void result_print(const char *who, const struct result *r, uint32_t seq_base);
void result_shape(const struct result *r, char *buf, size_t cap);
void result_sort(struct result *r);
void result_sort_seq(struct result *r);
int run_ours(const struct wire *w, struct result *res);
int rig_open(struct kernel_rig *k);
void rig_close(struct kernel_rig *k);
enum burst_status run_kernel_once(struct kernel_rig *k, const struct wire *w, struct result *res);
bool kernel_merges(struct kernel_rig *k, const struct fb_vxlan *vx);

#endif
