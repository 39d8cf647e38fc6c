/* The flow hash of flow_lane.h, three times: in C, as classic BPF for a
 * reuseport group, as eBPF for a tap's steering.  The three must agree;
 * tests/unit/port/test_flow_lane.c runs both programs against the C. */
#include "port/flow_lane.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/if_tun.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "packet/bytes.h"
#include "port/bpf_sys.h"

#ifndef TUNSETSTEERINGEBPF
#define TUNSETSTEERINGEBPF _IOR('T', 224, int)
#endif

/* Offsets in the Ethernet frame. */
enum {
	FL_ETHERTYPE = 12,
	FL_L3 = 14,
	FL_V4_PROTO = FL_L3 + 9,
	FL_V4_SRC = FL_L3 + 12,
	FL_V4_DST = FL_L3 + 16,
	FL_V6_NH = FL_L3 + 6,
	FL_V6_SRC_LAST = FL_L3 + 8 + 12,  /* last word of each address */
	FL_V6_DST_LAST = FL_L3 + 24 + 12,
	FL_V6_PORTS = FL_L3 + 40,
	FL_HASH_MUL = 0x9e3779b1u,
};

static uint32_t fl_word(const uint8_t *p, size_t len, size_t off, bool *ok)
{
	if (off + 4 > len) {
		*ok = false;
		return 0;
	}
	return load_be32(p + off);
}

static uint32_t fl_ports(uint32_t w)
{
	return (w ^ (w >> 16)) & 0xffff;
}

unsigned flow_lane_pick(const uint8_t *eth, size_t len, uint32_t fallback, unsigned n_lanes)
{
	if (n_lanes <= 1 || len < FL_ETHERTYPE + 2)
		return 0;
	bool ok = true;
	uint32_t h;
	uint16_t et = load_be16(eth + FL_ETHERTYPE);
	if (et == 0x0800) {
		h = fl_word(eth, len, FL_V4_SRC, &ok) ^ fl_word(eth, len, FL_V4_DST, &ok);
		uint8_t proto = len > FL_V4_PROTO ? eth[FL_V4_PROTO] : 0;
		if (ok && (proto == 6 || proto == 17)) {
			size_t ihl = (size_t)(eth[FL_L3] & 0xf) * 4;
			h ^= fl_ports(fl_word(eth, len, FL_L3 + ihl, &ok));
		}
	} else if (et == 0x86dd) {
		h = fl_word(eth, len, FL_V6_SRC_LAST, &ok) ^ fl_word(eth, len, FL_V6_DST_LAST, &ok);
		uint8_t nh = len > FL_V6_NH ? eth[FL_V6_NH] : 0;
		if (ok && (nh == 6 || nh == 17))
			h ^= fl_ports(fl_word(eth, len, FL_V6_PORTS, &ok));
	} else {
		h = fallback;
	}
	if (!ok)
		return 0;
	h ^= h >> 16;
	return (unsigned)(((uint32_t)(h * FL_HASH_MUL) >> 16) % n_lanes);
}

/* ---- classic BPF --------------------------------------------------------- */

struct cbpf {
	struct sock_filter *f;
	unsigned n;
};

static unsigned cb(struct cbpf *p, uint16_t code, uint32_t k)
{
	p->f[p->n] = (struct sock_filter)BPF_STMT(code, k);
	return p->n++;
}

/* A conditional jump whose targets are set later by cb_jt() / cb_jf()
 * (0: the next instruction). */
static unsigned cb_jeq(struct cbpf *p, uint32_t k)
{
	p->f[p->n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 0, 0);
	return p->n++;
}

static void cb_jt(struct cbpf *p, unsigned at, unsigned target)
{
	p->f[at].jt = (uint8_t)(target - at - 1);
}

/* Both "is TCP" and "is UDP" jump to the next instruction emitted. */
static void cb_jt_here(struct cbpf *p, unsigned tcp, unsigned udp)
{
	cb_jt(p, tcp, p->n);
	cb_jt(p, udp, p->n);
}

static void cb_jf(struct cbpf *p, unsigned at, unsigned target)
{
	p->f[at].jf = (uint8_t)(target - at - 1);
}

static void cb_ja(struct cbpf *p, unsigned at, unsigned target)
{
	p->f[at].k = target - at - 1;
}

/* A ^= M[0] ^ fold(ports word at X + base + FL_L3 (v4) or base +
 * FL_V6_PORTS (v6)), the A register holding the word on entry. */
static void cb_fold_ports(struct cbpf *p)
{
	cb(p, BPF_MISC | BPF_TAX, 0);
	cb(p, BPF_ALU | BPF_RSH | BPF_K, 16);
	cb(p, BPF_ALU | BPF_XOR | BPF_X, 0);
	cb(p, BPF_ALU | BPF_AND | BPF_K, 0xffff);
	cb(p, BPF_LDX | BPF_MEM, 0);
	cb(p, BPF_ALU | BPF_XOR | BPF_X, 0);
}

/* M[0] = word at a ^ word at b; A = the byte at proto.  Returns the two
 * jumps "is TCP" and "is UDP": the first's false branch falls to the
 * second, whose false branch is to be set to the mix. */
static void cb_addrs(struct cbpf *p, unsigned base, unsigned a, unsigned b, unsigned proto, unsigned *tcp, unsigned *udp)
{
	cb(p, BPF_LD | BPF_W | BPF_ABS, base + a);
	cb(p, BPF_MISC | BPF_TAX, 0);
	cb(p, BPF_LD | BPF_W | BPF_ABS, base + b);
	cb(p, BPF_ALU | BPF_XOR | BPF_X, 0);
	cb(p, BPF_ST, 0);
	cb(p, BPF_LD | BPF_B | BPF_ABS, base + proto);
	*tcp = cb_jeq(p, 6);
	*udp = cb_jeq(p, 17);
}

unsigned flow_lane_cbpf(struct sock_filter *f, unsigned base, bool outer_v6, unsigned n_lanes)
{
	struct cbpf p = { .f = f };
	unsigned tcp4, udp4, tcp6, udp6;
	cb(&p, BPF_LD | BPF_H | BPF_ABS, base + FL_ETHERTYPE);
	unsigned is_v4 = cb_jeq(&p, 0x0800);
	cb_addrs(&p, base, FL_V4_SRC, FL_V4_DST, FL_V4_PROTO, &tcp4, &udp4);
	cb_jt_here(&p, tcp4, udp4);
	cb(&p, BPF_LDX | BPF_B | BPF_MSH, base + FL_L3);
	cb(&p, BPF_LD | BPF_W | BPF_IND, base + FL_L3);
	cb_fold_ports(&p);
	unsigned ja4 = cb(&p, BPF_JMP | BPF_JA, 0);

	unsigned v6 = p.n;
	cb_jf(&p, is_v4, v6);
	unsigned is_v6 = cb_jeq(&p, 0x86dd);
	cb_addrs(&p, base, FL_V6_SRC_LAST, FL_V6_DST_LAST, FL_V6_NH, &tcp6, &udp6);
	cb_jt_here(&p, tcp6, udp6);
	cb(&p, BPF_LD | BPF_W | BPF_ABS, base + FL_V6_PORTS);
	cb_fold_ports(&p);
	unsigned ja6 = cb(&p, BPF_JMP | BPF_JA, 0);

	unsigned other = p.n; /* the outer UDP source port */
	cb_jf(&p, is_v6, other);
	if (outer_v6) {
		cb(&p, BPF_LD | BPF_H | BPF_ABS, (uint32_t)(SKF_NET_OFF + 40));
	} else {
		cb(&p, BPF_LDX | BPF_B | BPF_MSH, (uint32_t)SKF_NET_OFF);
		cb(&p, BPF_LD | BPF_H | BPF_IND, (uint32_t)SKF_NET_OFF);
	}
	unsigned ja_other = cb(&p, BPF_JMP | BPF_JA, 0);

	unsigned no_ports = p.n; /* A = M[0] */
	cb_jf(&p, udp4, no_ports);
	cb_jf(&p, udp6, no_ports);
	cb(&p, BPF_LD | BPF_MEM, 0);

	unsigned mix = p.n;
	cb_ja(&p, ja4, mix);
	cb_ja(&p, ja6, mix);
	cb_ja(&p, ja_other, mix);
	cb(&p, BPF_MISC | BPF_TAX, 0);
	cb(&p, BPF_ALU | BPF_RSH | BPF_K, 16);
	cb(&p, BPF_ALU | BPF_XOR | BPF_X, 0);
	cb(&p, BPF_ALU | BPF_MUL | BPF_K, FL_HASH_MUL);
	cb(&p, BPF_ALU | BPF_RSH | BPF_K, 16);
	cb(&p, BPF_ALU | BPF_MOD | BPF_K, n_lanes);
	cb(&p, BPF_RET | BPF_A, 0);
	return p.n;
}

/* ---- eBPF ------------------------------------------------------------------ */

struct ebpf {
	struct bpf_insn *f;
	unsigned n;
};

static unsigned eb(struct ebpf *p, struct bpf_insn insn)
{
	p->f[p->n] = insn;
	return p->n++;
}

static void eb_target(struct ebpf *p, unsigned at, unsigned target)
{
	p->f[at].off = (int16_t)(target - at - 1);
}

#define R0 BPF_REG_0
#define R1 BPF_REG_1
#define R6 BPF_REG_6
#define R7 BPF_REG_7 /* the hash being built */
#define R8 BPF_REG_8 /* the IPv4 header length */
#define LD(size, off) BPF_INSN(BPF_LD | BPF_ABS | (size), 0, 0, 0, (int32_t)(off))
#define ALU_K(op, d, k) BPF_INSN(BPF_ALU | (op) | BPF_K, d, 0, 0, (int32_t)(k))
#define ALU_X(op, d, s) BPF_INSN(BPF_ALU | (op) | BPF_X, d, s, 0, 0)
#define JEQ(d, k) BPF_INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, 0, (int32_t)(k))
#define JNE(d, k) BPF_INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, 0, (int32_t)(k))
#define JA() BPF_INSN(BPF_JMP | BPF_JA, 0, 0, 0, 0)
#define EXIT() BPF_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* R7 = word at a ^ word at b; R0 = the byte at proto; jumps to `ports`
 * for TCP and UDP, else to the mix (returned, to be set). */
static unsigned eb_addrs(struct ebpf *p, unsigned a, unsigned b, unsigned proto, unsigned *to_ports)
{
	eb(p, LD(BPF_W, a));
	eb(p, ALU_X(BPF_MOV, R7, R0));
	eb(p, LD(BPF_W, b));
	eb(p, ALU_X(BPF_XOR, R7, R0));
	eb(p, LD(BPF_B, proto));
	*to_ports = eb(p, JEQ(R0, 6));
	return eb(p, JNE(R0, 17));
}

unsigned flow_lane_ebpf(struct bpf_insn *f, unsigned n_lanes)
{
	struct ebpf p = { .f = f };
	unsigned tcp4, tcp6;
	eb(&p, BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_X, R6, R1, 0, 0)); /* LD_ABS wants ctx in R6 */
	eb(&p, LD(BPF_H, FL_ETHERTYPE));
	unsigned is_v4 = eb(&p, JEQ(R0, 0x0800));
	unsigned is_v6 = eb(&p, JEQ(R0, 0x86dd));
	eb(&p, ALU_K(BPF_MOV, R0, 0)); /* not IP: lane 0 */
	eb(&p, EXIT());

	eb_target(&p, is_v4, p.n);
	unsigned mix4 = eb_addrs(&p, FL_V4_SRC, FL_V4_DST, FL_V4_PROTO, &tcp4);
	eb_target(&p, tcp4, p.n);
	eb(&p, LD(BPF_B, FL_L3));
	eb(&p, ALU_K(BPF_AND, R0, 0xf));
	eb(&p, ALU_K(BPF_LSH, R0, 2));
	eb(&p, ALU_X(BPF_MOV, R8, R0));
	eb(&p, BPF_INSN(BPF_LD | BPF_IND | BPF_W, 0, R8, 0, FL_L3));
	unsigned ja4 = eb(&p, JA());

	eb_target(&p, is_v6, p.n);
	unsigned mix6 = eb_addrs(&p, FL_V6_SRC_LAST, FL_V6_DST_LAST, FL_V6_NH, &tcp6);
	eb_target(&p, tcp6, p.n);
	eb(&p, LD(BPF_W, FL_V6_PORTS));

	eb_target(&p, ja4, p.n); /* R7 ^= fold(R0) */
	eb(&p, ALU_X(BPF_MOV, R1, R0));
	eb(&p, ALU_K(BPF_RSH, R1, 16));
	eb(&p, ALU_X(BPF_XOR, R0, R1));
	eb(&p, ALU_K(BPF_AND, R0, 0xffff));
	eb(&p, ALU_X(BPF_XOR, R7, R0));

	eb_target(&p, mix4, p.n);
	eb_target(&p, mix6, p.n);
	eb(&p, ALU_X(BPF_MOV, R0, R7));
	eb(&p, ALU_X(BPF_MOV, R1, R0));
	eb(&p, ALU_K(BPF_RSH, R1, 16));
	eb(&p, ALU_X(BPF_XOR, R0, R1));
	eb(&p, ALU_K(BPF_MUL, R0, FL_HASH_MUL));
	eb(&p, ALU_K(BPF_RSH, R0, 16));
	eb(&p, ALU_K(BPF_MOD, R0, n_lanes ? n_lanes : 1));
	eb(&p, EXIT());
	return p.n;
}

int flow_lane_tap_attach(int tap_fd, unsigned n_lanes)
{
	struct bpf_insn prog[FLOW_LANE_PROG_MAX];
	int prog_fd = bpf_socket_filter_load(prog, flow_lane_ebpf(prog, n_lanes));
	if (prog_fd < 0)
		return prog_fd;
	/* The device holds the program from here. */
	int err = ioctl(tap_fd, TUNSETSTEERINGEBPF, &prog_fd) < 0 ? -errno : 0;
	close(prog_fd);
	return err;
}
