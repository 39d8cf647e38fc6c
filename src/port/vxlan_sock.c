/* The shared UDP socket of the vxlan ports: open, knobs, stats, path MTU
 * probes and the receive side (vxlan.h says what; vxlan_internal.h who
 * writes which field). */
#include "port/vxlan_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "packet/hdr.h"
#include "util/vlog.h"

enum vxlan_rx_limits {
	VXLAN_RX_CMSG_SPACE = 128, /* UDP_GRO, SO_RXQ_OVFL, TOS/TCLASS, TTL/HOPLIMIT */
	/* Below this a payload is copied rather than referenced. */
	VXLAN_RX_MIN_VIEW_PAYLOAD = 256,
};

/* ---- addresses ------------------------------------------------------------ */

socklen_t vxlan_sockaddr(const struct vxlan_addr *addr, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (addr->family == 6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, addr->bytes, 16);
		return sizeof(*sin6);
	}
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	memcpy(&sin->sin_addr, addr->bytes, 4);
	return sizeof(*sin);
}

int vxlan_af(const struct vxlan_addr *addr)
{
	return addr->family == 6 ? AF_INET6 : AF_INET;
}

/* ---- the shared socket ---------------------------------------------------- */

int vxlan_sock_open(const struct vxlan_addr *local, uint16_t port, struct vxlan_sock **out)
{
	struct vxlan_options opts = { .local = *local };
	return vxlan_sock_open_opts(&opts, port, out);
}

/* The options a bound socket asks the kernel for, each one probed: a
 * refusal is logged and leaves that feature off, never fails the open. */
static void vxlan_sock_probe(struct vxlan_sock *sock)
{
	const struct vxlan_addr *local = &sock->local;
	int one = 1, err;
	/* Drops in the receive buffer, counted by the kernel, reported with
	 * each datagram (rx_queue_drops): what we did not read in time. */
	setsockopt(sock->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	sock->udp_gro_probed =
		setsockopt(sock->fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) == 0;
	atomic_init(&sock->udp_gro_on, sock->udp_gro_probed);
	/* The outer TOS and TTL of each datagram (all of a coalesced buffer
	 * share them: the kernel's GRO does not merge packets whose TOS or
	 * TTL differ), for flower's enc_tos and enc_ttl. */
	if (local->family == 6) {
		setsockopt(sock->fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
		setsockopt(sock->fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof(one));
	} else {
		setsockopt(sock->fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
		setsockopt(sock->fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one));
	}
	/* ICMP errors for what we send, port unreachable above all
	 * (vxlan_icmp.c). */
	sock->recverr = local->family == 6 ?
		setsockopt(sock->fd, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof(one)) == 0 :
		setsockopt(sock->fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one)) == 0;
	sock->rx_zero_csum = (struct udp_zero_csum){ .map_fd = -1 };
	if (local->family == 4 && (err = udp_zero_csum_attach(sock->fd, &sock->rx_zero_csum)) < 0)
		VLOG_INFO("vxlan", "zero UDP checksums not counted (eBPF socket filter: %s)", strerror(-err));
	if (!sock->udp_gro_probed)
		VLOG_WARN("vxlan", "UDP_GRO refused by the kernel (%s): datagrams arrive one by one",
			  strerror(errno));
	/* UDP_SEGMENT is really probed on the first send (EIO needs a route
	 * and a device); getsockopt tells whether the kernel knows it. */
	int seg = 0;
	socklen_t seglen = sizeof(seg);
	sock->udp_segment_probed =
		getsockopt(sock->fd, IPPROTO_UDP, UDP_SEGMENT, &seg, &seglen) == 0;
	atomic_init(&sock->udp_segment_on, sock->udp_segment_probed);
	if (!sock->udp_segment_probed)
		VLOG_WARN("vxlan", "UDP_SEGMENT refused by the kernel (%s): sending datagrams one by one",
			  strerror(errno));
}

int vxlan_sock_open_lane(const struct vxlan_options *opts, uint16_t port, bool reuseport, struct vxlan_sock **out)
{
	const struct vxlan_addr *local = &opts->local;
	if (local->family != 4 && local->family != 6)
		return -EAFNOSUPPORT;
	struct vxlan_sock *sock = calloc(1, sizeof(*sock));
	if (!sock)
		return -ENOMEM;
	sock->refcnt = 1;
	sock->n_lanes = 1;
	sock->lane[0] = sock;
	sock->local = *local;
	sock->port = port;
	int err;
	/* Non-blocking: a full send buffer must not stall the worker (what
	 * the kernel pushes back waits in the backlog, vxlan_backlog.c). */
	sock->fd = socket(vxlan_af(local), SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_UDP);
	if (sock->fd < 0) {
		err = -errno;
		goto err_free;
	}
	int one = 1, size = VXLAN_SOCK_BUF;
	if (local->family == 6)
		setsockopt(sock->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	/* One socket per worker in a reuseport group (vxlan_lanes.c); alone,
	 * a second bind of the port fails as it should. */
	if (reuseport && setsockopt(sock->fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) {
		err = -errno;
		goto err_close;
	}
	if (setsockopt(sock->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(sock->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (setsockopt(sock->fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(sock->fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));

	struct sockaddr_storage ss;
	socklen_t sslen = vxlan_sockaddr(local, port, &ss);
	if (bind(sock->fd, (struct sockaddr *)&ss, sslen) < 0) {
		err = -errno;
		goto err_close;
	}
	err = vxlan_txsock_open(sock, opts);
	if (err < 0)
		goto err_close;

	vxlan_sock_probe(sock);
	*out = sock;
	return 0;

err_close:
	close(sock->fd);
err_free:
	free(sock);
	return err;
}

void vxlan_sock_ref(struct vxlan_sock *sock)
{
	sock->refcnt++;
}

void vxlan_sock_close_lane(struct vxlan_sock *sock)
{
	vxlan_backlog_clear(sock);
	vxlan_sock_rx_release(sock);
	vxlan_txsock_close(sock);
	close(sock->fd);
	udp_zero_csum_close(&sock->rx_zero_csum);
	free(sock);
}

void vxlan_sock_unref(struct vxlan_sock *sock)
{
	if (!sock || --sock->refcnt > 0)
		return;
	for (unsigned i = 1; i < sock->n_lanes; i++)
		vxlan_sock_close_lane(sock->lane[i]);
	vxlan_sock_close_lane(sock);
}

int vxlan_sock_fd(const struct vxlan_sock *sock)
{
	return sock->fd;
}

bool vxlan_sock_matches(const struct vxlan_sock *sock, const struct vxlan_addr *local, uint16_t port)
{
	return sock->port == port && sock->local.family == local->family &&
	       memcmp(sock->local.bytes, local->bytes, 16) == 0;
}

static int vxlan_sock_set_udp_gro_lane(struct vxlan_sock *sock, bool on)
{
	/* Refused at open: it is off already, and the kernel would refuse
	 * the setsockopt that switches it off as well. */
	if (!sock->udp_gro_probed)
		return on ? -EOPNOTSUPP : 0;
	int val = on;
	if (setsockopt(sock->fd, IPPROTO_UDP, UDP_GRO, &val, sizeof(val)) < 0)
		return -errno;
	atomic_store_explicit(&sock->udp_gro_on, on, memory_order_relaxed);
	return 0;
}

int vxlan_sock_set_udp_gro(struct vxlan_sock *sock, bool on)
{
	int err = 0;
	for (unsigned i = 0; i < sock->n_lanes && !err; i++)
		err = vxlan_sock_set_udp_gro_lane(sock->lane[i], on);
	return err;
}

void vxlan_sock_set_udp_segment(struct vxlan_sock *sock, bool on)
{
	for (unsigned i = 0; i < sock->n_lanes; i++)
		atomic_store_explicit(&sock->lane[i]->udp_segment_on, on && sock->lane[i]->udp_segment_probed,
				      memory_order_relaxed);
}

void vxlan_sock_udp_segment_refused(struct vxlan_sock *sock, int err)
{
	/* The kernel refuses UDP_SEGMENT on this path (EIO: no checksum
	 * offload on the egress device).  Stop asking. */
	static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 10);
	if (atomic_exchange_explicit(&sock->udp_segment_on, false, memory_order_relaxed))
		VLOG_WARN_RL(&rl, "vxlan", "UDP_SEGMENT refused by the kernel (%s): sending datagrams one by one",
			     strerror(err));
	sock->stats.udp_segment_fallbacks++;
}

void vxlan_sock_get_stats(const struct vxlan_sock *sock, struct vxlan_sock_stats *out)
{
	*out = sock->stats;
	out->tx_backlog_len = sock->bl_count;
	out->rx_zero_csum = udp_zero_csum_read(&sock->rx_zero_csum);
	out->rx_zero_csum_counted = udp_zero_csum_counting(&sock->rx_zero_csum);
	out->udp_gro_probed = sock->udp_gro_probed;
	out->udp_gro_on = atomic_load_explicit(&sock->udp_gro_on, memory_order_relaxed);
	out->udp_segment_probed = sock->udp_segment_probed;
	out->udp_segment_on = atomic_load_explicit(&sock->udp_segment_on, memory_order_relaxed);
}

int vxlan_path_mtu(const struct vxlan_addr *local, const struct vxlan_addr *remote)
{
	int fd = socket(vxlan_af(remote), SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		return -errno;
	struct sockaddr_storage ss;
	socklen_t sslen;
	int err = 0, mtu = 0;
	socklen_t mtulen = sizeof(mtu);
	if (local && local->family == remote->family) {
		sslen = vxlan_sockaddr(local, 0, &ss);
		if (bind(fd, (struct sockaddr *)&ss, sslen) < 0) {
			err = -errno;
			goto out;
		}
	}
	sslen = vxlan_sockaddr(remote, VXLAN_DEFAULT_PORT, &ss);
	if (connect(fd, (struct sockaddr *)&ss, sslen) < 0) {
		err = -errno;
		goto out;
	}
	if (remote->family == 6)
		err = getsockopt(fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &mtulen);
	else
		err = getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &mtulen);
	err = err < 0 ? -errno : mtu;
out:
	close(fd);
	return err;
}

static uint64_t vxlan_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void vxlan_fill_tunnel(const struct vxlan_sock *sock, const struct sockaddr_storage *from,
			      struct pkt_tunnel *tun)
{
	memset(tun, 0, sizeof(*tun));
	tun->family = sock->local.family;
	memcpy(tun->dst, sock->local.bytes, 16);
	tun->dst_port = sock->port;
	if (from->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)from;
		memcpy(tun->src, &sin6->sin6_addr, 16);
		tun->src_port = ntohs(sin6->sin6_port);
	} else {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)from;
		memcpy(tun->src, &sin->sin_addr, 4);
		tun->src_port = ntohs(sin->sin_port);
	}
}

/* One int cmsg (IP_TTL, IPV6_TCLASS, IPV6_HOPLIMIT) as a byte. */
static uint8_t cmsg_int_byte(const struct cmsghdr *c)
{
	int v;
	memcpy(&v, CMSG_DATA(c), sizeof(v));
	return (uint8_t)v;
}

/* The gso_size the kernel reports for a coalesced buffer (0 if none),
 * the outer TOS and TTL into tos_ttl[0..1], and the socket's drop count
 * (SO_RXQ_OVFL: datagrams the kernel dropped because the receive buffer
 * was full, since the socket opened), which comes with every datagram
 * once a drop happened. */
static uint32_t vxlan_rx_cmsgs(struct vxlan_sock *sock, const struct msghdr *msg, uint8_t tos_ttl[2])
{
	uint32_t gso = 0;
	tos_ttl[0] = tos_ttl[1] = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)msg); c;
	     c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
			tos_ttl[0] = *(const uint8_t *)CMSG_DATA(c); /* one byte, unlike the others */
		} else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) {
			tos_ttl[1] = cmsg_int_byte(c);
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS) {
			tos_ttl[0] = cmsg_int_byte(c);
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT) {
			tos_ttl[1] = cmsg_int_byte(c);
		} else if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
			int size;
			memcpy(&size, CMSG_DATA(c), sizeof(size));
			gso = size > 0 ? (uint32_t)size : 0;
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
			uint32_t drops;
			memcpy(&drops, CMSG_DATA(c), sizeof(drops));
			sock->stats.rx_queue_drops = drops;
		}
	}
	return gso;
}

/* Bytes of headers at the start of a VXLAN datagram that carries TCP:
 * VXLAN, Ethernet, up to two VLAN tags, IPv4 (with options) or IPv6 (no
 * extension headers) and the TCP header.  0 for anything else.  Only a
 * guess at where to cut: the parser validates everything afterwards. */
static uint32_t vxlan_rx_tcp_hdr_len(const uint8_t *d, uint32_t len)
{
	uint32_t ofs = VXLAN_HDR_LEN + ETH_HDR_LEN;
	if (len < ofs)
		return 0;
	uint16_t type = (uint16_t)(d[ofs - 2] << 8 | d[ofs - 1]);
	for (int tags = 0; tags < 2 && (type == ETH_TYPE_VLAN || type == ETH_TYPE_QINQ); tags++) {
		if (len < ofs + VLAN_HDR_LEN)
			return 0;
		type = (uint16_t)(d[ofs + 2] << 8 | d[ofs + 3]);
		ofs += VLAN_HDR_LEN;
	}
	uint8_t proto;
	if (type == ETH_TYPE_IPV4 && len >= ofs + IPV4_HDR_LEN) {
		proto = d[ofs + 9];
		ofs += (uint32_t)(d[ofs] & 0xf) * 4;
	} else if (type == ETH_TYPE_IPV6 && len >= ofs + IPV6_HDR_LEN) {
		proto = d[ofs + 6];
		ofs += IPV6_HDR_LEN;
	} else {
		return 0;
	}
	if (proto != IP_PROTO_TCP || len < ofs + TCP_HDR_LEN)
		return 0;
	ofs += (uint32_t)(d[ofs + 12] >> 4) * 4;
	return ofs <= len ? ofs : 0;
}

void vxlan_rx_datagram(struct pkt *pkt, struct pkt *buf, uint32_t ofs, uint32_t dlen, bool coalesced)
{
	/* A TCP datagram with a real payload becomes a view: its headers are
	 * copied (the parser and GRO edit them), its payload stays in the
	 * receive buffer as a frag that holds a reference on it, so GRO
	 * chains payloads without one copy.  Anything else is small and
	 * simply copied. */
	const uint8_t *dgram = buf->data + ofs;
	uint32_t hdr = vxlan_rx_tcp_hdr_len(dgram, dlen);
	if (hdr && dlen - hdr >= VXLAN_RX_MIN_VIEW_PAYLOAD) {
		memcpy(pkt->data, dgram, hdr);
		pkt->size = hdr;
		pkt_add_frag(pkt, dgram + hdr, dlen - hdr, buf);
	} else {
		memcpy(pkt->data, dgram, dlen);
		pkt->size = dlen;
	}
	/* The kernel coalesces only datagrams whose non-zero outer UDP
	 * checksum it verified, and that checksum covers the inner frame:
	 * trust the inner checksum as the kernel's own vxlan does
	 * (csum_level), and spare GRO a pass over every payload. */
	if (coalesced)
		pkt->ol.flags |= PKT_OL_DATA_VALID;
}

void vxlan_sock_rx_release(struct vxlan_sock *sock)
{
	for (unsigned i = 0; i < sock->n_rx_bufs; i++)
		pkt_free(sock->rx_bufs[i]);
	sock->n_rx_bufs = 0;
	sock->rx_pool = NULL;
}

/* Tops the socket's receive buffers up to `burst` from `pool`; returns how
 * many of them this read may use. */
static unsigned vxlan_rx_refill(struct vxlan_sock *sock, struct pkt_pool *pool, unsigned burst)
{
	if (sock->rx_pool != pool) {
		vxlan_sock_rx_release(sock);
		sock->rx_pool = pool;
	}
	while (sock->n_rx_bufs < burst) {
		struct pkt *buf = pkt_alloc(pool);
		if (!buf)
			break;
		sock->rx_bufs[sock->n_rx_bufs++] = buf;
	}
	return sock->n_rx_bufs < burst ? sock->n_rx_bufs : burst;
}

/* Cuts one received buffer of `len` bytes (datagrams of `seg`, outer TOS
 * and TTL tos_ttl) into pkts stored at out (at most max); returns how many. */
static unsigned vxlan_rx_cut(struct vxlan_sock *sock, struct pkt_pool *pool, struct pkt *buf,
			     uint32_t len, uint32_t seg, const struct sockaddr_storage *from,
			     const uint8_t tos_ttl[2], uint64_t now, struct pkt **out, unsigned max)
{
	unsigned n = 0;
	/* At least once: an empty datagram is handed on too, so that the
	 * datapath counts it (truncated_vxlan) like any other short one. */
	uint32_t ofs = 0;
	do {
		uint32_t dlen = len - ofs < seg ? len - ofs : seg;
		sock->stats.rx_datagrams++;
		sock->stats.rx_bytes += dlen;
		if (dlen < VXLAN_HDR_LEN)
			sock->stats.rx_too_short++; /* still handed on: the datapath drops it by reason */
		struct pkt *pkt = n < max ? pkt_alloc(pool) : NULL;
		if (!pkt) {
			sock->stats.rx_no_buffer++;
			continue;
		}
		vxlan_rx_datagram(pkt, buf, ofs, dlen, seg < len);
		vxlan_fill_tunnel(sock, from, &pkt->tunnel);
		pkt->tunnel.tos = tos_ttl[0];
		pkt->tunnel.ttl = tos_ttl[1];
		pkt->timestamp_ns = now;
		out[n++] = pkt;
	} while ((ofs += seg) < len);
	return n;
}

int vxlan_sock_rx_batch(struct vxlan_sock *sock, struct pkt_pool *pool, struct pkt **out, unsigned max)
{
	/* A coalesced buffer holds at most 64 datagrams (UDP_GRO_CNT_MAX). */
	unsigned burst = max / 64;
	if (burst == 0)
		burst = 1;
	if (burst > VXLAN_RX_BURST)
		burst = VXLAN_RX_BURST;
	unsigned nbufs = vxlan_rx_refill(sock, pool, burst);
	if (nbufs == 0)
		return 0;

	struct mmsghdr msgs[VXLAN_RX_BURST];
	struct iovec iovs[VXLAN_RX_BURST];
	struct sockaddr_storage from[VXLAN_RX_BURST];
	union {
		char buf[VXLAN_RX_CMSG_SPACE];
		struct cmsghdr align;
	} cmsgs[VXLAN_RX_BURST];
	for (unsigned i = 0; i < nbufs; i++) {
		iovs[i] = (struct iovec){ sock->rx_bufs[i]->data, PKT_MAX_FRAME };
		msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &from[i], .msg_namelen = sizeof(from[i]),
			.msg_iov = &iovs[i], .msg_iovlen = 1,
			.msg_control = cmsgs[i].buf, .msg_controllen = sizeof(cmsgs[i].buf),
		};
		msgs[i].msg_len = 0;
	}
	if (sock->err_pending)
		vxlan_icmp_drain(sock);
	int got = recvmmsg(sock->fd, msgs, nbufs, MSG_DONTWAIT, NULL);
	if (got < 0 && vxlan_icmp_recv_failed(sock, errno))
		got = recvmmsg(sock->fd, msgs, nbufs, MSG_DONTWAIT, NULL);
	if (got < 0) {
		int err = errno;
		if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR)
			return 0;
		static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 10);
		VLOG_WARN_RL(&rl, "vxlan", "recvmmsg: %s", strerror(err));
		sock->stats.rx_errors++;
		sock->stats.last_rx_errno = err;
		return -err;
	}
	unsigned n = 0;
	uint64_t now = vxlan_now_ns();
	for (int i = 0; i < got; i++) {
		uint32_t len = msgs[i].msg_len;
		uint8_t tos_ttl[2];
		uint32_t seg = vxlan_rx_cmsgs(sock, &msgs[i].msg_hdr, tos_ttl);
		if (seg == 0 || seg > len)
			seg = len;
		sock->stats.rx_calls++;
		if (seg < len)
			sock->stats.rx_gro_buffers++;
		n += vxlan_rx_cut(sock, pool, sock->rx_bufs[i], len, seg, &from[i], tos_ttl, now, out + n,
				  max - n);
	}
	/* The buffers filled are given up (views into them keep them alive
	 * until the last frame pointing there is written out); the rest stay
	 * for the next read, so an empty read allocates nothing. */
	for (int i = 0; i < got; i++)
		pkt_free(sock->rx_bufs[i]);
	memmove(sock->rx_bufs, sock->rx_bufs + got, (sock->n_rx_bufs - (unsigned)got) * sizeof(sock->rx_bufs[0]));
	sock->n_rx_bufs -= (unsigned)got;
	return (int)n;
}

int64_t vxlan_pkt_vni(const struct pkt *pkt)
{
	const uint8_t *h = pkt_at(pkt, 0, VXLAN_HDR_LEN);
	if (!h)
		return -1;
	return ((uint32_t)h[4] << 16) | ((uint32_t)h[5] << 8) | h[6];
}
