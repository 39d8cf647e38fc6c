/* A vxlan socket's lanes: one socket per worker in a reuseport group, and
 * the classic BPF program that steers each datagram to one of them by its
 * flow (vxlan.h, "Lanes"). */
#include "port/vxlan_internal.h"

#include <errno.h>
#include <linux/filter.h>
#include <string.h>

#include "packet/bytes.h"
#include "util/vlog.h"

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF 51
#endif

/* Offsets in the UDP payload, where the program starts (the kernel pulls
 * the UDP header before it runs reuseport programs). */
enum {
	LANE_ETHERTYPE = 8 + 12,      /* VXLAN header, inner MACs */
	LANE_L3 = 8 + 14,
	LANE_V4_PROTO = LANE_L3 + 9,
	LANE_V4_SRC = LANE_L3 + 12,
	LANE_V4_DST = LANE_L3 + 16,
	LANE_V6_NH = LANE_L3 + 6,
	LANE_V6_SRC_LAST = LANE_L3 + 8 + 12,  /* last word of each address */
	LANE_V6_DST_LAST = LANE_L3 + 24 + 12,
	LANE_V6_PORTS = LANE_L3 + 40,
	LANE_HASH_MUL = 0x9e3779b1u,
};

/* Builds the program for an outer IPv4 or IPv6 socket; returns its length.
 * The layout (and vxlan_lane_pick() below, which must stay the same):
 *   inner IPv4:  saddr ^ daddr (^ the ports word for TCP and UDP)
 *   inner IPv6:  the last words of saddr and daddr (^ ports)
 *   otherwise:   the outer UDP source port
 * then h ^= h >> 16 (the ports word puts the client's port in the high
 * half, and Linux picks ephemeral ports of one parity), (h * golden) >>
 * 16, modulo the lanes. */
unsigned vxlan_lane_program(struct sock_filter *f, bool outer_v6, unsigned n_lanes)
{
	enum { V6 = 15, OUTER = 28, MIXM0 = 31, MIX = 32 };
	unsigned n = 0;
#define I(code, jt, jf, k) (f[n] = (struct sock_filter)BPF_JUMP(code, k, jt, jf), n++)
#define J(target) ((unsigned char)((target) - (n + 1)))
	I(BPF_LD | BPF_H | BPF_ABS, 0, 0, LANE_ETHERTYPE);          /*  0 */
	I(BPF_JMP | BPF_JEQ | BPF_K, 0, J(V6), 0x0800);              /*  1 */
	I(BPF_LD | BPF_W | BPF_ABS, 0, 0, LANE_V4_SRC);             /*  2 */
	I(BPF_MISC | BPF_TAX, 0, 0, 0);                              /*  3 */
	I(BPF_LD | BPF_W | BPF_ABS, 0, 0, LANE_V4_DST);             /*  4 */
	I(BPF_ALU | BPF_XOR | BPF_X, 0, 0, 0);                       /*  5 */
	I(BPF_ST, 0, 0, 0);                                          /*  6 */
	I(BPF_LD | BPF_B | BPF_ABS, 0, 0, LANE_V4_PROTO);           /*  7 */
	I(BPF_JMP | BPF_JEQ | BPF_K, J(10), 0, 6);                   /*  8 */
	I(BPF_JMP | BPF_JEQ | BPF_K, J(10), J(MIXM0), 17);           /*  9 */
	I(BPF_LDX | BPF_B | BPF_MSH, 0, 0, LANE_L3);                /* 10 */
	I(BPF_LD | BPF_W | BPF_IND, 0, 0, LANE_L3);                 /* 11 */
	I(BPF_LDX | BPF_MEM, 0, 0, 0);                               /* 12 */
	I(BPF_ALU | BPF_XOR | BPF_X, 0, 0, 0);                       /* 13 */
	I(BPF_JMP | BPF_JA, 0, 0, MIX - 15);                         /* 14 */
	I(BPF_JMP | BPF_JEQ | BPF_K, 0, J(OUTER), 0x86dd);           /* 15 */
	I(BPF_LD | BPF_W | BPF_ABS, 0, 0, LANE_V6_SRC_LAST);        /* 16 */
	I(BPF_MISC | BPF_TAX, 0, 0, 0);                              /* 17 */
	I(BPF_LD | BPF_W | BPF_ABS, 0, 0, LANE_V6_DST_LAST);        /* 18 */
	I(BPF_ALU | BPF_XOR | BPF_X, 0, 0, 0);                       /* 19 */
	I(BPF_ST, 0, 0, 0);                                          /* 20 */
	I(BPF_LD | BPF_B | BPF_ABS, 0, 0, LANE_V6_NH);              /* 21 */
	I(BPF_JMP | BPF_JEQ | BPF_K, J(24), 0, 6);                   /* 22 */
	I(BPF_JMP | BPF_JEQ | BPF_K, J(24), J(MIXM0), 17);           /* 23 */
	I(BPF_LD | BPF_W | BPF_ABS, 0, 0, LANE_V6_PORTS);           /* 24 */
	I(BPF_LDX | BPF_MEM, 0, 0, 0);                               /* 25 */
	I(BPF_ALU | BPF_XOR | BPF_X, 0, 0, 0);                       /* 26 */
	I(BPF_JMP | BPF_JA, 0, 0, MIX - 28);                         /* 27 */
	if (outer_v6) {                                              /* 28, 29: source port */
		I(BPF_LD | BPF_H | BPF_ABS, 0, 0, (uint32_t)(SKF_NET_OFF + 40));
		I(BPF_JMP | BPF_JA, 0, 0, 0);
	} else {
		I(BPF_LDX | BPF_B | BPF_MSH, 0, 0, (uint32_t)SKF_NET_OFF);
		I(BPF_LD | BPF_H | BPF_IND, 0, 0, (uint32_t)SKF_NET_OFF);
	}
	I(BPF_JMP | BPF_JA, 0, 0, MIX - 31);                         /* 30 */
	I(BPF_LD | BPF_MEM, 0, 0, 0);                                /* 31 */
	I(BPF_MISC | BPF_TAX, 0, 0, 0);                              /* 32: h ^= h >> 16 */
	I(BPF_ALU | BPF_RSH | BPF_K, 0, 0, 16);                      /* 33 */
	I(BPF_ALU | BPF_XOR | BPF_X, 0, 0, 0);                       /* 34 */
	I(BPF_ALU | BPF_MUL | BPF_K, 0, 0, LANE_HASH_MUL);           /* 35 */
	I(BPF_ALU | BPF_RSH | BPF_K, 0, 0, 16);                      /* 36 */
	I(BPF_ALU | BPF_MOD | BPF_K, 0, 0, n_lanes);                 /* 37 */
	I(BPF_RET | BPF_A, 0, 0, 0);                                 /* 38 */
#undef I
#undef J
	return n;
}

static uint32_t lane_w(const uint8_t *p, size_t len, size_t off, bool *ok)
{
	if (off + 4 > len) {
		*ok = false;
		return 0;
	}
	return load_be32(p + off);
}

unsigned vxlan_lane_pick(const uint8_t *vx, size_t len, uint16_t sport, unsigned n_lanes)
{
	if (n_lanes <= 1)
		return 0;
	bool ok = true;
	uint32_t h;
	uint16_t et = len >= LANE_ETHERTYPE + 2 ? load_be16(vx + LANE_ETHERTYPE) : 0;
	if (len < LANE_ETHERTYPE + 2)
		return 0; /* the program's load fails: it returns 0 */
	if (et == 0x0800) {
		h = lane_w(vx, len, LANE_V4_SRC, &ok) ^ lane_w(vx, len, LANE_V4_DST, &ok);
		uint8_t proto = len > LANE_V4_PROTO ? vx[LANE_V4_PROTO] : 0;
		if (proto == 6 || proto == 17) {
			size_t ihl = len > LANE_L3 ? (size_t)(vx[LANE_L3] & 0xf) * 4 : 0;
			h ^= lane_w(vx, len, LANE_L3 + ihl, &ok);
		}
	} else if (et == 0x86dd) {
		h = lane_w(vx, len, LANE_V6_SRC_LAST, &ok) ^ lane_w(vx, len, LANE_V6_DST_LAST, &ok);
		uint8_t nh = len > LANE_V6_NH ? vx[LANE_V6_NH] : 0;
		if (nh == 6 || nh == 17)
			h ^= lane_w(vx, len, LANE_V6_PORTS, &ok);
	} else {
		h = sport;
	}
	if (!ok)
		return 0;
	h ^= h >> 16;
	return (unsigned)(((uint32_t)(h * LANE_HASH_MUL) >> 16) % n_lanes);
}

static int vxlan_lanes_steer(struct vxlan_sock *sock)
{
	struct sock_filter f[VXLAN_LANE_PROG_MAX];
	struct sock_fprog prog = { .len = (unsigned short)vxlan_lane_program(f, sock->local.family == 6, sock->n_lanes),
				   .filter = f };
	if (setsockopt(sock->fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)) < 0)
		return -errno;
	return 0;
}

int vxlan_sock_open_opts(const struct vxlan_options *opts, uint16_t port, struct vxlan_sock **out)
{
	unsigned n = opts->lanes ? opts->lanes : 1;
	if (n > VXLAN_MAX_LANES)
		return -EINVAL;
	struct vxlan_sock *sock;
	int err = vxlan_sock_open_lane(opts, port, n > 1, &sock);
	if (err < 0)
		return err;
	for (unsigned i = 1; i < n; i++) {
		err = vxlan_sock_open_lane(opts, port, true, &sock->lane[i]);
		if (err < 0)
			goto err_close;
		sock->n_lanes = i + 1;
	}
	if (n > 1) {
		err = vxlan_lanes_steer(sock);
		if (err < 0) {
			VLOG_ERR("vxlan", "SO_ATTACH_REUSEPORT_CBPF: %s", strerror(-err));
			goto err_close;
		}
	}
	*out = sock;
	return 0;

err_close:
	for (unsigned i = 1; i < sock->n_lanes; i++)
		vxlan_sock_close_lane(sock->lane[i]);
	vxlan_sock_close_lane(sock);
	return err;
}

struct vxlan_sock *vxlan_sock_lane(struct vxlan_sock *sock, unsigned lane)
{
	return lane < sock->n_lanes ? sock->lane[lane] : sock;
}

unsigned vxlan_sock_n_lanes(const struct vxlan_sock *sock)
{
	return sock->n_lanes;
}
