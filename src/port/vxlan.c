#include "port/vxlan.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "offload/gso.h"
#include "offload/vxlan_encap.h"
#include "packet/hdr.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

enum vxlan_sock_limits {
	VXLAN_RX_BURST = 8,            /* recvmmsg messages per call */
	VXLAN_RX_CMSG_SPACE = 64,
	/* Below this a payload is copied rather than referenced. */
	VXLAN_RX_MIN_VIEW_PAYLOAD = 256,
	VXLAN_SOCK_BUF = 8 << 20,      /* SO_RCVBUF / SO_SNDBUF */
	/* Messages queued for one sendmmsg.  A 64 KB TSO frame is two
	 * messages with UDP_SEGMENT, ~45 without. */
	VXLAN_TX_MSGS = 512,
	VXLAN_TX_IOVS = 2 + PKT_MAX_FRAGS,
	/* GSO trains go out as iovecs into the frame (gso_train_build_iov):
	 * header blocks (~70-100 bytes a segment) and iovecs (two a segment)
	 * of every train queued until the flush.  A 64 KB frame at MSS 1398
	 * takes ~3.5 KB and 94 iovecs. */
	VXLAN_TX_HDR_POOL = 256 << 10,
	VXLAN_TX_IOV_POOL = 8192,
	/* Most iovecs one datagram of the EIO fallback is cut into. */
	VXLAN_TX_SPLIT_IOVS = 4 + PKT_MAX_FRAGS,
};

struct vxlan_sock {
	int fd;
	unsigned refcnt;
	struct vxlan_addr local;
	uint16_t port;
	struct vxlan_sock_stats stats;
};

struct vxlan_tx_meta {
	struct pkt *pkt;       /* freed after the flush; NULL for train pieces */
	uint32_t bytes;        /* UDP payload bytes */
	uint16_t gso_size;     /* 0 without UDP_SEGMENT */
	uint16_t nr_segs;
};

struct vxlan_port {
	struct port up;
	struct vxlan_options opts;
	struct vxlan_sock *sock;
	struct vxlan_encap encap;
	bool gso_on;
	struct vxlan_port_info info;

	/* Send queue, flushed with one sendmmsg at the end of tx_batch(). */
	unsigned n_msgs;
	struct mmsghdr msgs[VXLAN_TX_MSGS];
	struct vxlan_tx_meta meta[VXLAN_TX_MSGS];
	struct iovec iovs[VXLAN_TX_MSGS][VXLAN_TX_IOVS];
	struct sockaddr_storage names[VXLAN_TX_MSGS];
	union {
		char buf[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} cmsgs[VXLAN_TX_MSGS];
	/* Header blocks and iovecs of the queued GSO trains. */
	uint32_t hdr_used, iov_used;
	uint8_t *hdr_pool;
	struct iovec *iov_pool;
	struct gso_iov_train train; /* scratch of vxlan_tx_gso() */
};

static const struct port_class vxlan_port_class;

static struct vxlan_port *vxlan_port_cast(const struct port *port)
{
	return (struct vxlan_port *)port;
}

bool port_is_vxlan(const struct port *port)
{
	return port && port->cls == &vxlan_port_class;
}

/* ---- addresses ------------------------------------------------------------ */

static socklen_t vxlan_sockaddr(const struct vxlan_addr *addr, uint16_t port,
				struct sockaddr_storage *ss)
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

static int vxlan_af(const struct vxlan_addr *addr)
{
	return addr->family == 6 ? AF_INET6 : AF_INET;
}

/* ---- the shared socket ---------------------------------------------------- */

int vxlan_sock_open(const struct vxlan_addr *local, uint16_t port, struct vxlan_sock **out)
{
	if (local->family != 4 && local->family != 6)
		return -EAFNOSUPPORT;
	struct vxlan_sock *sock = calloc(1, sizeof(*sock));
	if (!sock)
		return -ENOMEM;
	sock->refcnt = 1;
	sock->local = *local;
	sock->port = port;
	int err;
	/* Blocking for sends (a full socket buffer pushes back instead of
	 * dropping); every receive uses MSG_DONTWAIT. */
	sock->fd = socket(vxlan_af(local), SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (sock->fd < 0) {
		err = -errno;
		goto err_free;
	}
	int one = 1, size = VXLAN_SOCK_BUF;
	if (local->family == 6)
		setsockopt(sock->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
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

	sock->stats.udp_gro_probed =
		setsockopt(sock->fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) == 0;
	sock->stats.udp_gro_on = sock->stats.udp_gro_probed;
	if (!sock->stats.udp_gro_probed)
		fprintf(stderr, "vxlan socket: UDP_GRO refused by the kernel (%s): datagrams arrive one by one\n",
			strerror(errno));
	/* UDP_SEGMENT is really probed on the first send (EIO needs a route
	 * and a device); getsockopt tells whether the kernel knows it. */
	int seg = 0;
	socklen_t seglen = sizeof(seg);
	sock->stats.udp_segment_probed =
		getsockopt(sock->fd, IPPROTO_UDP, UDP_SEGMENT, &seg, &seglen) == 0;
	sock->stats.udp_segment_on = sock->stats.udp_segment_probed;
	if (!sock->stats.udp_segment_probed)
		fprintf(stderr, "vxlan socket: UDP_SEGMENT refused by the kernel (%s): sending datagrams one by one\n",
			strerror(errno));
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

void vxlan_sock_unref(struct vxlan_sock *sock)
{
	if (!sock || --sock->refcnt > 0)
		return;
	close(sock->fd);
	free(sock);
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

int vxlan_sock_set_udp_gro(struct vxlan_sock *sock, bool on)
{
	/* Refused at open: it is off already, and the kernel would refuse
	 * the setsockopt that switches it off as well. */
	if (!sock->stats.udp_gro_probed)
		return on ? -EOPNOTSUPP : 0;
	int val = on;
	if (setsockopt(sock->fd, IPPROTO_UDP, UDP_GRO, &val, sizeof(val)) < 0)
		return -errno;
	sock->stats.udp_gro_on = on;
	return 0;
}

void vxlan_sock_set_udp_segment(struct vxlan_sock *sock, bool on)
{
	sock->stats.udp_segment_on = on && sock->stats.udp_segment_probed;
}

void vxlan_sock_get_stats(const struct vxlan_sock *sock, struct vxlan_sock_stats *out)
{
	*out = sock->stats;
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

/* The gso_size the kernel reports for a coalesced buffer; 0 if none. */
static uint32_t vxlan_rx_gso_size(const struct msghdr *msg)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)msg); c;
	     c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
		if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
			int size;
			memcpy(&size, CMSG_DATA(c), sizeof(size));
			return size > 0 ? (uint32_t)size : 0;
		}
	}
	return 0;
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

int vxlan_sock_rx_batch(struct vxlan_sock *sock, struct pkt_pool *pool, struct pkt **out, unsigned max)
{
	/* A coalesced buffer holds at most 64 datagrams (UDP_GRO_CNT_MAX). */
	unsigned burst = max / 64;
	if (burst == 0)
		burst = 1;
	if (burst > VXLAN_RX_BURST)
		burst = VXLAN_RX_BURST;

	struct pkt *bufs[VXLAN_RX_BURST];
	struct mmsghdr msgs[VXLAN_RX_BURST];
	struct iovec iovs[VXLAN_RX_BURST];
	struct sockaddr_storage from[VXLAN_RX_BURST];
	union {
		char buf[VXLAN_RX_CMSG_SPACE];
		struct cmsghdr align;
	} cmsgs[VXLAN_RX_BURST];
	unsigned nbufs = 0;
	for (; nbufs < burst; nbufs++) {
		bufs[nbufs] = pkt_alloc(pool);
		if (!bufs[nbufs])
			break;
		iovs[nbufs] = (struct iovec){ bufs[nbufs]->data, PKT_MAX_FRAME };
		msgs[nbufs].msg_hdr = (struct msghdr){
			.msg_name = &from[nbufs], .msg_namelen = sizeof(from[nbufs]),
			.msg_iov = &iovs[nbufs], .msg_iovlen = 1,
			.msg_control = cmsgs[nbufs].buf, .msg_controllen = sizeof(cmsgs[nbufs].buf),
		};
		msgs[nbufs].msg_len = 0;
	}
	if (nbufs == 0)
		return 0;

	int got = recvmmsg(sock->fd, msgs, nbufs, MSG_DONTWAIT, NULL);
	unsigned n = 0;
	uint64_t now = vxlan_now_ns();
	for (int i = 0; i < got; i++) {
		struct pkt *buf = bufs[i];
		uint32_t len = msgs[i].msg_len;
		uint32_t seg = vxlan_rx_gso_size(&msgs[i].msg_hdr);
		if (seg == 0 || seg > len)
			seg = len;
		sock->stats.rx_calls++;
		if (seg < len)
			sock->stats.rx_gro_buffers++;
		for (uint32_t ofs = 0; ofs < len; ofs += seg) {
			uint32_t dlen = len - ofs < seg ? len - ofs : seg;
			sock->stats.rx_datagrams++;
			sock->stats.rx_bytes += dlen;
			if (dlen < VXLAN_HDR_LEN) {
				sock->stats.rx_too_short++;
				continue;
			}
			struct pkt *pkt = n < max ? pkt_alloc(pool) : NULL;
			if (!pkt) {
				sock->stats.rx_no_buffer++;
				continue;
			}
			/* A TCP datagram with a real payload becomes a view:
			 * its headers are copied (the parser and GRO edit
			 * them), its payload stays in the receive buffer as a
			 * frag that holds a reference on it, so GRO chains
			 * payloads without one copy.  Anything else is small
			 * and simply copied. */
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
			/* The kernel coalesces only datagrams whose non-zero
			 * outer UDP checksum it verified, and that checksum
			 * covers the inner frame: trust the inner checksum as
			 * the kernel's own vxlan does (csum_level), and spare
			 * GRO a pass over every payload. */
			if (seg < len)
				pkt->ol.flags |= PKT_OL_DATA_VALID;
			vxlan_fill_tunnel(sock, &from[i], &pkt->tunnel);
			pkt->timestamp_ns = now;
			out[n++] = pkt;
		}
	}
	/* Receive buffers still referenced by views live on until the last
	 * frame pointing into them has been written out. */
	for (unsigned i = 0; i < nbufs; i++)
		pkt_free(bufs[i]);
	return (int)n;
}

int64_t vxlan_pkt_vni(const struct pkt *pkt)
{
	const uint8_t *h = pkt_at(pkt, 0, VXLAN_HDR_LEN);
	if (!h)
		return -1;
	return ((uint32_t)h[4] << 16) | ((uint32_t)h[5] << 8) | h[6];
}

/* ---- the port --------------------------------------------------------------- */

struct vxlan_sock *vxlan_port_sock(const struct port *port)
{
	return vxlan_port_cast(port)->sock;
}

const struct vxlan_options *vxlan_port_options(const struct port *port)
{
	return &vxlan_port_cast(port)->opts;
}

void vxlan_port_get_info(const struct port *port, struct vxlan_port_info *out)
{
	*out = vxlan_port_cast(port)->info;
}

void vxlan_port_set_gso(struct port *port, bool on)
{
	vxlan_port_cast(port)->gso_on = on;
}

int vxlan_port_open(const struct vxlan_options *opts, struct vxlan_sock *sock, struct port **out)
{
	if (opts->n_remotes > VXLAN_MAX_REMOTES || opts->vni > VXLAN_VNI_MAX)
		return -EINVAL;
	struct vxlan_port *vp = calloc(1, sizeof(*vp));
	if (!vp)
		return -ENOMEM;
	int err;
	vp->up.cls = &vxlan_port_class;
	vp->up.vni = opts->vni;
	vp->up.fd = -1;
	vp->opts = *opts;
	if (!vp->opts.dst_port)
		vp->opts.dst_port = VXLAN_DEFAULT_PORT;
	vp->gso_on = true;
	if (sock) {
		vxlan_sock_ref(sock);
	} else {
		err = vxlan_sock_open(&opts->local, vp->opts.dst_port, &sock);
		if (err < 0)
			goto err_free;
	}
	vp->sock = sock;
	vp->info.sock = sock;

	uint32_t encap_len = opts->local.family == 6 ? VXLAN_ENCAP_LEN_IPV6 : VXLAN_ENCAP_LEN_IPV4;
	/* On top of an inner L3 packet the underlay's L3 MTU must carry the
	 * inner Ethernet header, VXLAN, UDP and the outer IP header: 50 bytes
	 * for IPv4, 70 for IPv6, the same numbers as the full encap (whose
	 * outer Ethernet header the underlay MTU does not count). */
	uint32_t outer_overhead = encap_len;
	vp->info.underlay_mtu = 1500;
	if (opts->n_remotes > 0) {
		int mtu = vxlan_path_mtu(&opts->local, &opts->remotes[0]);
		if (mtu > 0)
			vp->info.underlay_mtu = (uint32_t)mtu;
	}
	vp->info.inner_mtu_fit = vp->info.underlay_mtu - outer_overhead;
	vp->up.mtu = opts->mtu ? opts->mtu : vp->info.inner_mtu_fit;

	vp->encap.vni = opts->vni;
	vp->encap.family = opts->local.family;
	memcpy(vp->encap.src_ip, opts->local.bytes, 16);
	if (opts->n_remotes)
		memcpy(vp->encap.dst_ip, opts->remotes[0].bytes, 16);
	vp->encap.dst_port = vp->opts.dst_port;

	vp->hdr_pool = malloc(VXLAN_TX_HDR_POOL);
	vp->iov_pool = calloc(VXLAN_TX_IOV_POOL, sizeof(*vp->iov_pool));
	if (!vp->hdr_pool || !vp->iov_pool) {
		err = -ENOMEM;
		goto err_free_pools;
	}
	*out = &vp->up;
	return 0;

err_free_pools:
	free(vp->hdr_pool);
	free(vp->iov_pool);
	vxlan_sock_unref(sock);
err_free:
	free(vp);
	return err;
}

static void vxlan_destroy(struct port *port)
{
	struct vxlan_port *vp = vxlan_port_cast(port);
	free(vp->hdr_pool);
	free(vp->iov_pool);
	vxlan_sock_unref(vp->sock);
	free(vp);
}

static bool vxlan_pkt_dst(const struct pkt *pkt, struct vxlan_addr *dst)
{
	if (pkt->tunnel.family != 4 && pkt->tunnel.family != 6)
		return false;
	dst->family = pkt->tunnel.family;
	memcpy(dst->bytes, pkt->tunnel.dst, 16);
	return true;
}

/* Queues one message; returns its index. */
static unsigned vxlan_queue_msg(struct vxlan_port *vp, const struct vxlan_addr *dst, uint16_t gso_size)
{
	unsigned i = vp->n_msgs++;
	struct msghdr *mh = &vp->msgs[i].msg_hdr;
	memset(mh, 0, sizeof(*mh));
	mh->msg_name = &vp->names[i];
	mh->msg_namelen = vxlan_sockaddr(dst, vp->opts.dst_port, &vp->names[i]);
	mh->msg_iov = vp->iovs[i];
	if (gso_size) {
		mh->msg_control = vp->cmsgs[i].buf;
		mh->msg_controllen = sizeof(vp->cmsgs[i].buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(mh);
		c->cmsg_level = IPPROTO_UDP;
		c->cmsg_type = UDP_SEGMENT;
		c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
		memcpy(CMSG_DATA(c), &gso_size, sizeof(gso_size));
	}
	vp->meta[i] = (struct vxlan_tx_meta){ .gso_size = gso_size };
	return i;
}

/* Resends message i, which the kernel refused with UDP_SEGMENT, as one
 * message per datagram: its iovecs cut at every gso_size bytes. */
static void vxlan_send_unsegmented(struct vxlan_port *vp, unsigned i)
{
	struct vxlan_sock *sock = vp->sock;
	const struct vxlan_tx_meta *m = &vp->meta[i];
	struct msghdr mh = vp->msgs[i].msg_hdr;
	const struct iovec *src = mh.msg_iov;
	size_t n_src = mh.msg_iovlen, k = 0, k_ofs = 0;
	mh.msg_control = NULL;
	mh.msg_controllen = 0;
	for (uint32_t ofs = 0; ofs < m->bytes; ofs += m->gso_size) {
		uint32_t len = m->bytes - ofs < m->gso_size ? m->bytes - ofs : m->gso_size;
		struct iovec iov[VXLAN_TX_SPLIT_IOVS];
		size_t n = 0;
		for (uint32_t left = len; left > 0 && k < n_src && n < VXLAN_TX_SPLIT_IOVS;) {
			size_t avail = src[k].iov_len - k_ofs;
			size_t take = avail < left ? avail : left;
			iov[n++] = (struct iovec){ (uint8_t *)src[k].iov_base + k_ofs, take };
			left -= (uint32_t)take;
			k_ofs += take;
			if (k_ofs == src[k].iov_len) {
				k++;
				k_ofs = 0;
			}
		}
		mh.msg_iov = iov;
		mh.msg_iovlen = n;
		sock->stats.tx_sends++;
		if (sendmsg(sock->fd, &mh, 0) < 0) {
			sock->stats.tx_errors++;
			sock->stats.last_tx_errno = errno;
			port_count_drop(&vp->up, DROP_TX_ERROR);
		} else {
			sock->stats.tx_datagrams++;
			sock->stats.tx_bytes += len;
		}
	}
}

static void vxlan_flush(struct vxlan_port *vp)
{
	struct vxlan_sock *sock = vp->sock;
	unsigned i = 0;
	while (i < vp->n_msgs) {
		int sent = sendmmsg(sock->fd, &vp->msgs[i], vp->n_msgs - i, 0);
		if (sent > 0) {
			for (int k = 0; k < sent; k++, i++) {
				const struct vxlan_tx_meta *m = &vp->meta[i];
				sock->stats.tx_sends++;
				sock->stats.tx_gso_sends += m->gso_size != 0;
				sock->stats.tx_datagrams += m->nr_segs;
				sock->stats.tx_bytes += m->bytes;
			}
			continue;
		}
		int err = errno;
		if (err == EINTR)
			continue;
		if (vp->meta[i].gso_size && (err == EIO || err == EINVAL)) {
			/* The kernel refuses UDP_SEGMENT on this path (EIO: no
			 * checksum offload on the egress device).  Stop asking,
			 * resend this one unsegmented. */
			if (sock->stats.udp_segment_on)
				fprintf(stderr, "vxlan socket: UDP_SEGMENT refused by the kernel (%s): sending datagrams one by one\n",
					strerror(err));
			sock->stats.udp_segment_on = false;
			sock->stats.udp_segment_fallbacks++;
			vxlan_send_unsegmented(vp, i);
		} else {
			sock->stats.tx_errors++;
			sock->stats.last_tx_errno = err;
			port_count_drop(&vp->up, err == EMSGSIZE ? DROP_MTU_EXCEEDED : DROP_TX_ERROR);
		}
		i++;
	}
	for (unsigned k = 0; k < vp->n_msgs; k++)
		pkt_free(vp->meta[k].pkt);
	vp->n_msgs = 0;
	vp->hdr_used = 0;
	vp->iov_used = 0;
}

/* Builds the iovec train of `pkt` into the free part of the pools. */
static int vxlan_build_train(struct vxlan_port *vp, const struct pkt *pkt)
{
	struct gso_iov_train *t = &vp->train;
	t->hdr_buf = vp->hdr_pool + vp->hdr_used;
	t->hdr_cap = VXLAN_TX_HDR_POOL - vp->hdr_used;
	t->iov = vp->iov_pool + vp->iov_used;
	t->iov_cap = VXLAN_TX_IOV_POOL - vp->iov_used;
	return gso_train_build_iov(pkt, GSO_TRAIN_VXLAN_UDP, &vp->encap, t);
}

/* A frame with TSO metadata: cut into one train of VXLAN datagrams whose
 * payload iovecs point into the frame, which lives until the flush. */
static void vxlan_tx_gso(struct vxlan_port *vp, struct pkt *pkt, const struct vxlan_addr *dst)
{
	struct vxlan_sock *sock = vp->sock;
	struct gso_iov_train *t = &vp->train;
	if (vp->n_msgs + 64 > VXLAN_TX_MSGS)
		vxlan_flush(vp);
	int err = vxlan_build_train(vp, pkt);
	if (err == -ENOSPC && vp->n_msgs > 0) {
		vxlan_flush(vp);
		err = vxlan_build_train(vp, pkt);
	}
	if (err < 0) {
		port_count_drop(&vp->up, err == -ENOSPC ? DROP_GSO_NO_BUFFER : gso_drop_reason(err));
		pkt_free(pkt);
		return;
	}
	/* Each datagram of the train must fit the underlay as it is: a VM
	 * MTU larger than what fits gives segments that would only cross as
	 * IP fragments (and make the kernel refuse UDP_SEGMENT). */
	uint32_t ip_udp = (dst->family == 6 ? IPV6_HDR_LEN : IPV4_HDR_LEN) + UDP_HDR_LEN;
	if (t->stride + ip_udp > vp->info.underlay_mtu) {
		port_count_drop(&vp->up, DROP_MTU_EXCEEDED);
		pkt_free(pkt);
		return;
	}
	uint32_t hdr_base = vp->hdr_used, iov_base = vp->iov_used;
	vp->hdr_used += t->hdr_used;
	vp->iov_used += t->n_iov;
	vp->info.tx_gso_frames++;
	vp->info.tx_gso_segments += t->nr_segs;
	port_count_tx(&vp->up, pkt_len(pkt));

	/* Without UDP_SEGMENT: one message per datagram. */
	uint32_t max_bytes = dst->family == 6 ? GSO_UDP_SEND_MAX_BYTES_IPV6 : GSO_UDP_SEND_MAX_BYTES_IPV4;
	uint32_t max_segs = sock->stats.udp_segment_on ? GSO_UDP_MAX_SEGMENTS_OLD : 1;
	struct gso_iov_send sends[GSO_MAX_SEGS];
	int n_sends = gso_iov_train_sends(t, max_bytes, max_segs, sends, GSO_MAX_SEGS);
	if (n_sends < 0) {
		port_count_drop(&vp->up, gso_drop_reason(n_sends));
		vp->hdr_used = hdr_base;
		vp->iov_used = iov_base;
		pkt_free(pkt);
		return;
	}
	for (int s = 0; s < n_sends; s++) {
		if (vp->n_msgs == VXLAN_TX_MSGS) {
			/* Only without UDP_SEGMENT does a train outgrow the
			 * queue.  The flush empties the pools, but the rest of
			 * this train still lives in them: keep it reserved. */
			vxlan_flush(vp);
			vp->hdr_used = hdr_base + t->hdr_used;
			vp->iov_used = iov_base + t->n_iov;
		}
		uint16_t gso_size = sends[s].nr_segs > 1 ? sends[s].gso_size : 0;
		unsigned i = vxlan_queue_msg(vp, dst, gso_size);
		vp->msgs[i].msg_hdr.msg_iov = t->iov + sends[s].iov_first;
		vp->msgs[i].msg_hdr.msg_iovlen = sends[s].iov_count;
		vp->meta[i].bytes = sends[s].len;
		vp->meta[i].nr_segs = sends[s].nr_segs;
		/* The last message of the train frees the frame after the
		 * flush that sends it. */
		if (s + 1 == n_sends)
			vp->meta[i].pkt = pkt;
	}
}

static void vxlan_tx_batch(struct port *port, struct pkt **pkts, unsigned n)
{
	struct vxlan_port *vp = vxlan_port_cast(port);
	for (unsigned k = 0; k < n; k++) {
		struct pkt *pkt = pkts[k];
		struct vxlan_addr dst;
		if (!vxlan_pkt_dst(pkt, &dst) || dst.family != vp->opts.local.family) {
			port_count_drop(port, DROP_FDB_DST_UNKNOWN);
			pkt_free(pkt);
			continue;
		}
		if (pkt->ol.gso_type != PKT_GSO_NONE) {
			if (!vp->gso_on) {
				port_count_drop(port, DROP_GSO_UNSUPPORTED);
				pkt_free(pkt);
				continue;
			}
			vxlan_tx_gso(vp, pkt, &dst);
			continue;
		}
		uint32_t l3_len = pkt_len(pkt) - (pkt->l3_ofs != PKT_OFS_NONE ? pkt->l3_ofs : ETH_HDR_LEN);
		if (l3_len > port->mtu) {
			port_count_drop(port, DROP_MTU_EXCEEDED);
			pkt_free(pkt);
			continue;
		}
		if (gso_csum_complete(pkt) < 0) {
			port_count_drop(port, DROP_VNET_HDR_CSUM_START);
			pkt_free(pkt);
			continue;
		}
		uint8_t *hdr = pkt_push(pkt, VXLAN_HDR_LEN);
		if (!hdr) {
			port_count_drop(port, DROP_NO_BUFFER);
			pkt_free(pkt);
			continue;
		}
		vxlan_hdr_write(hdr, vp->opts.vni);
		if (vp->n_msgs == VXLAN_TX_MSGS)
			vxlan_flush(vp);
		unsigned i = vxlan_queue_msg(vp, &dst, 0);
		unsigned iovcnt = 0;
		vp->iovs[i][iovcnt++] = (struct iovec){ pkt->data, pkt->size };
		for (uint16_t f = 0; f < pkt->nr_frags; f++)
			vp->iovs[i][iovcnt++] = (struct iovec){ (void *)pkt->frags[f].data, pkt->frags[f].size };
		vp->msgs[i].msg_hdr.msg_iovlen = iovcnt;
		vp->meta[i].pkt = pkt;
		vp->meta[i].bytes = pkt_len(pkt);
		vp->meta[i].nr_segs = 1;
		vp->info.tx_plain_frames++;
		port_count_tx(port, pkt_len(pkt) - VXLAN_HDR_LEN);
	}
	vxlan_flush(vp);
}

static const struct port_class vxlan_port_class = {
	.kind_name = "vxlan",
	.kind = PORT_KIND_VXLAN,
	.rx_batch = NULL,
	.tx_batch = vxlan_tx_batch,
	.destroy = vxlan_destroy,
};
