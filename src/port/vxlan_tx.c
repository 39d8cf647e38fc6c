/* The vxlan send path: frames with TSO metadata become GSO trains of VXLAN
 * datagrams (one UDP_SEGMENT send per up to 64 segments), plain frames one
 * datagram each; everything a tx_batch() queues goes out in one sendmmsg
 * at its end.  The queue and its header scratch are the worker's: they
 * live in the port_io (struct vxlan_tx_io). */
#include "port/vxlan_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "packet/hdr.h"

enum vxlan_tx_limits {
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

struct vxlan_tx_meta {
	struct pkt *pkt;       /* freed after the flush; NULL for train pieces */
	uint32_t bytes;        /* UDP payload bytes */
	uint16_t gso_size;     /* 0 without UDP_SEGMENT */
	uint16_t nr_segs;
	uint8_t tx_idx;        /* send socket (srcport) */
	bool df;               /* DF wanted (df inherit) */
	bool zero_csum;        /* outer UDP checksum zero */
};

/* A vxlan port's part of a port_io: one worker's send queue and counters. */
struct vxlan_tx_io {
	uint64_t tx_gso_frames, tx_gso_segments, tx_plain_frames;

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

/* What one tx_batch() works with. */
struct vxlan_tx_ctx {
	struct vxlan_port *vp;
	struct vxlan_sock *sock;
	struct port_io *io;
	struct vxlan_tx_io *q;
	/* Of the frame being queued: its send socket and DF, and its tunnel
	 * key: the port's VNI, UDP port and checksum setting, or those a
	 * flower tunnel_key set chose (pkt.h, tunnel.tx_key). */
	uint8_t tx_idx;
	bool df;
	bool zero_csum;
	uint16_t dst_port;
	uint32_t vni;
};

int vxlan_tx_io_init(struct port *port, struct port_io *io)
{
	(void)port;
	struct vxlan_tx_io *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->hdr_pool = malloc(VXLAN_TX_HDR_POOL);
	q->iov_pool = calloc(VXLAN_TX_IOV_POOL, sizeof(*q->iov_pool));
	if (!q->hdr_pool || !q->iov_pool) {
		free(q->hdr_pool);
		free(q->iov_pool);
		free(q);
		return -ENOMEM;
	}
	io->priv = q;
	return 0;
}

void vxlan_tx_io_fini(struct port *port, struct port_io *io)
{
	(void)port;
	struct vxlan_tx_io *q = io->priv;
	for (unsigned k = 0; k < q->n_msgs; k++)
		pkt_free(q->meta[k].pkt);
	free(q->hdr_pool);
	free(q->iov_pool);
	free(q);
	io->priv = NULL;
}

void vxlan_tx_io_counters(const struct port_io *io, struct vxlan_port_info *out)
{
	const struct vxlan_tx_io *q = io ? io->priv : NULL;
	if (!q)
		return;
	out->tx_gso_frames = q->tx_gso_frames;
	out->tx_gso_segments = q->tx_gso_segments;
	out->tx_plain_frames = q->tx_plain_frames;
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
static unsigned vxlan_queue_msg(struct vxlan_tx_ctx *c, const struct vxlan_addr *dst, uint16_t gso_size)
{
	struct vxlan_tx_io *q = c->q;
	unsigned i = q->n_msgs++;
	struct msghdr *mh = &q->msgs[i].msg_hdr;
	memset(mh, 0, sizeof(*mh));
	mh->msg_name = &q->names[i];
	mh->msg_namelen = vxlan_sockaddr(dst, c->dst_port, &q->names[i]);
	mh->msg_iov = q->iovs[i];
	if (gso_size) {
		mh->msg_control = q->cmsgs[i].buf;
		mh->msg_controllen = sizeof(q->cmsgs[i].buf);
		struct cmsghdr *cm = CMSG_FIRSTHDR(mh);
		cm->cmsg_level = IPPROTO_UDP;
		cm->cmsg_type = UDP_SEGMENT;
		cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
		memcpy(CMSG_DATA(cm), &gso_size, sizeof(gso_size));
	}
	q->meta[i] = (struct vxlan_tx_meta){ .gso_size = gso_size, .tx_idx = c->tx_idx, .df = c->df,
					     .zero_csum = c->zero_csum };
	return i;
}

static bool vxlan_would_block(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS;
}

/* Puts message i into the socket's backlog from byte `skip` on; counts a
 * drop when the backlog is full. */
static void vxlan_backlog_msg(struct vxlan_tx_ctx *c, unsigned i, uint32_t skip)
{
	const struct vxlan_tx_meta *m = &c->q->meta[i];
	if (!vxlan_backlog_push(c->sock, &c->q->msgs[i].msg_hdr, m->bytes, skip, m->gso_size, m->tx_idx, m->df,
				m->zero_csum))
		port_count_drop(c->io, DROP_UNDERLAY_BACKLOG_FULL);
}

/* Resends message i, which the kernel refused with UDP_SEGMENT, as one
 * message per datagram: its iovecs cut at every gso_size bytes.  If the
 * kernel pushes back midway, the rest of the message goes to the backlog. */
static void vxlan_send_unsegmented(struct vxlan_tx_ctx *c, unsigned i)
{
	struct vxlan_sock *sock = c->sock;
	const struct vxlan_tx_meta *m = &c->q->meta[i];
	struct msghdr mh = c->q->msgs[i].msg_hdr;
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
		ssize_t r;
		int fd = vxlan_txsock_fd(sock, m->tx_idx, m->df, m->zero_csum);
		bool retried = false;
		for (;;) {
			r = sendmsg(fd, &mh, MSG_DONTWAIT);
			if (r >= 0 || (errno != EINTR && (retried || !vxlan_icmp_send_failed(sock, fd, errno))))
				break;
			retried |= errno != EINTR;
		}
		if (r >= 0) {
			sock->stats.tx_sends++;
			sock->stats.tx_datagrams++;
			sock->stats.tx_bytes += len;
		} else if (vxlan_would_block(errno)) {
			vxlan_backlog_msg(c, i, ofs);
			return;
		} else {
			sock->stats.tx_errors++;
			sock->stats.last_tx_errno = errno;
			port_count_drop(c->io, DROP_TX_ERROR);
		}
	}
}

/* How many messages from i on go on one send socket with one DF and one
 * checksum setting. */
static unsigned vxlan_run_len(const struct vxlan_tx_io *q, unsigned i)
{
	unsigned j = i + 1;
	while (j < q->n_msgs && q->meta[j].tx_idx == q->meta[i].tx_idx && q->meta[j].df == q->meta[i].df &&
	       q->meta[j].zero_csum == q->meta[i].zero_csum)
		j++;
	return j - i;
}

/* Sends the queue in one sendmmsg per run of messages on one send socket
 * (more after a refusal).  Once the socket is blocked -- the kernel pushed
 * back now, or its backlog was not empty to begin with -- every message
 * left goes behind the backlog, so nothing overtakes what waits there. */
static void vxlan_flush(struct vxlan_tx_ctx *c)
{
	struct vxlan_sock *sock = c->sock;
	struct vxlan_tx_io *q = c->q;
	unsigned i = 0, retry_at = UINT32_MAX;
	while (i < q->n_msgs) {
		if (vxlan_sock_tx_blocked(sock)) {
			vxlan_backlog_msg(c, i++, 0);
			continue;
		}
		int fd = vxlan_txsock_fd(sock, q->meta[i].tx_idx, q->meta[i].df, q->meta[i].zero_csum);
		int sent = sendmmsg(fd, &q->msgs[i], vxlan_run_len(q, i), MSG_DONTWAIT);
		if (sent > 0) {
			for (int k = 0; k < sent; k++, i++) {
				const struct vxlan_tx_meta *m = &q->meta[i];
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
		if (i != retry_at && vxlan_icmp_send_failed(sock, fd, err)) {
			retry_at = i; /* once: the error was a queued ICMP error's */
			continue;
		}
		if (vxlan_would_block(err)) {
			vxlan_backlog_msg(c, i++, 0);
		} else if (q->meta[i].gso_size && (err == EIO || err == EINVAL)) {
			vxlan_sock_udp_segment_refused(sock, err);
			vxlan_send_unsegmented(c, i++);
		} else {
			sock->stats.tx_errors++;
			sock->stats.last_tx_errno = err;
			port_count_drop(c->io, err == EMSGSIZE ? DROP_MTU_EXCEEDED : DROP_TX_ERROR);
			i++;
		}
	}
	for (unsigned k = 0; k < q->n_msgs; k++)
		pkt_free(q->meta[k].pkt);
	q->n_msgs = 0;
	q->hdr_used = 0;
	q->iov_used = 0;
}

/* Builds the iovec train of `pkt` into the free part of the pools. */
static int vxlan_build_train(struct vxlan_tx_ctx *c, const struct pkt *pkt)
{
	struct vxlan_tx_io *q = c->q;
	struct gso_iov_train *t = &q->train;
	t->hdr_buf = q->hdr_pool + q->hdr_used;
	t->hdr_cap = VXLAN_TX_HDR_POOL - q->hdr_used;
	t->iov = q->iov_pool + q->iov_used;
	t->iov_cap = VXLAN_TX_IOV_POOL - q->iov_used;
	if (c->vni == c->vp->encap.vni)
		return gso_train_build_iov(pkt, GSO_TRAIN_VXLAN_UDP, &c->vp->encap, t);
	struct vxlan_encap encap = c->vp->encap; /* a tunnel_key's VNI */
	encap.vni = c->vni;
	return gso_train_build_iov(pkt, GSO_TRAIN_VXLAN_UDP, &encap, t);
}

static void vxlan_tx_drop(struct vxlan_tx_ctx *c, struct pkt *pkt, enum drop_reason reason)
{
	port_count_drop(c->io, reason);
	pkt_free(pkt);
}

/* Queues the sends of the train just built for `pkt` (which the last of
 * them frees after the flush). */
static void vxlan_queue_train(struct vxlan_tx_ctx *c, struct pkt *pkt, const struct vxlan_addr *dst,
			      const struct gso_iov_send *sends, int n_sends,
			      uint32_t hdr_base, uint32_t iov_base)
{
	struct vxlan_tx_io *q = c->q;
	const struct gso_iov_train *t = &q->train;
	for (int s = 0; s < n_sends; s++) {
		if (q->n_msgs == VXLAN_TX_MSGS) {
			/* Only without UDP_SEGMENT does a train outgrow the
			 * queue.  The flush empties the pools, but the rest of
			 * this train still lives in them: keep it reserved. */
			vxlan_flush(c);
			q->hdr_used = hdr_base + t->hdr_used;
			q->iov_used = iov_base + t->n_iov;
		}
		uint16_t gso_size = sends[s].nr_segs > 1 ? sends[s].gso_size : 0;
		unsigned i = vxlan_queue_msg(c, dst, gso_size);
		q->msgs[i].msg_hdr.msg_iov = t->iov + sends[s].iov_first;
		q->msgs[i].msg_hdr.msg_iovlen = sends[s].iov_count;
		q->meta[i].bytes = sends[s].len;
		q->meta[i].nr_segs = sends[s].nr_segs;
		if (s + 1 == n_sends)
			q->meta[i].pkt = pkt;
	}
}

/* Path MTU towards `dst`: its own if it is one of the remotes probed at
 * open, else the smallest of them (an FDB entry may name any VTEP). */
static uint32_t vxlan_dst_path_mtu(const struct vxlan_port *vp, const struct vxlan_addr *dst)
{
	for (unsigned i = 0; i < vp->opts.n_remotes; i++)
		if (memcmp(vp->opts.remotes[i].bytes, dst->bytes, 16) == 0)
			return vp->remote_mtu[i];
	return vp->underlay_mtu;
}

/* Largest inner L3 packet towards `dst`: the configured mtu, and never
 * more than fits that path. */
static uint32_t vxlan_inner_limit(const struct vxlan_port *vp, const struct vxlan_addr *dst)
{
	uint32_t path = vxlan_dst_path_mtu(vp, dst);
	uint32_t fit = path > vp->encap_overhead ? path - vp->encap_overhead : 0;
	return vp->opts.mtu && vp->opts.mtu < fit ? vp->opts.mtu : fit;
}

/* Makes every segment of a TSO frame fit the inner limit towards `dst`
 * (which also keeps each datagram within that path): a TCP frame gets a
 * smaller gso_size (TCP takes segments of any size; the kernel's own GSO
 * does this for a route of smaller MTU), a UDP_L4 one cannot be cut
 * differently -- its segments are the application's datagrams -- and is
 * refused.  false: drop as mtu_exceeded. */
static bool vxlan_gso_fit(const struct vxlan_port *vp, struct pkt *pkt, const struct vxlan_addr *dst)
{
	struct gso_plan plan;
	if (gso_plan(pkt, &plan) < 0)
		return true; /* gso_train_build_iov names the error */
	uint32_t l3_hdr = plan.hdr_len - plan.l3_ofs;
	uint32_t limit = vxlan_inner_limit(vp, dst);
	uint32_t seg = plan.nr_segs > 1 ? plan.mss : plan.payload_len;
	if (l3_hdr + seg <= limit)
		return true;
	if (plan.l4_proto != IP_PROTO_TCP || limit < l3_hdr + 64)
		return false;
	pkt->ol.gso_size = (uint16_t)(limit - l3_hdr);
	return true;
}

/* A frame with TSO metadata: cut into one train of VXLAN datagrams whose
 * payload iovecs point into the frame, which lives until the flush. */
static void vxlan_tx_gso(struct vxlan_tx_ctx *c, struct pkt *pkt, const struct vxlan_addr *dst)
{
	struct vxlan_tx_io *q = c->q;
	struct gso_iov_train *t = &q->train;
	if (!vxlan_gso_fit(c->vp, pkt, dst)) {
		vxlan_tx_drop(c, pkt, DROP_MTU_EXCEEDED);
		return;
	}
	if (q->n_msgs + 64 > VXLAN_TX_MSGS)
		vxlan_flush(c);
	int err = vxlan_build_train(c, pkt);
	if (err == -ENOSPC && q->n_msgs > 0) {
		vxlan_flush(c);
		err = vxlan_build_train(c, pkt);
	}
	if (err < 0) {
		vxlan_tx_drop(c, pkt, err == -ENOSPC ? DROP_GSO_NO_BUFFER : gso_drop_reason(err));
		return;
	}
	/* Each datagram of the train must fit the path as it is (segments
	 * larger would only cross as IP fragments, and make the kernel refuse
	 * UDP_SEGMENT).  vxlan_gso_fit saw to it, but for inner VLAN tags,
	 * which the 50/70 bytes of overhead do not count. */
	uint32_t ip_udp = (dst->family == 6 ? IPV6_HDR_LEN : IPV4_HDR_LEN) + UDP_HDR_LEN;
	if (t->stride + ip_udp > vxlan_dst_path_mtu(c->vp, dst)) {
		vxlan_tx_drop(c, pkt, DROP_MTU_EXCEEDED);
		return;
	}
	/* Without UDP_SEGMENT: one message per datagram. */
	uint32_t max_bytes = dst->family == 6 ? GSO_UDP_SEND_MAX_BYTES_IPV6 : GSO_UDP_SEND_MAX_BYTES_IPV4;
	/* A zero checksum: the kernel refuses UDP_SEGMENT (vxlan.h), which
	 * would switch it off for the whole socket; one datagram a message. */
	bool seg_on = atomic_load_explicit(&c->sock->udp_segment_on, memory_order_relaxed) &&
		      (!c->zero_csum || c->sock->zero_csum);
	uint32_t max_segs = seg_on ? GSO_UDP_MAX_SEGMENTS_OLD : 1;
	struct gso_iov_send sends[GSO_MAX_SEGS];
	int n_sends = gso_iov_train_sends(t, max_bytes, max_segs, sends, GSO_MAX_SEGS);
	if (n_sends < 0) {
		vxlan_tx_drop(c, pkt, gso_drop_reason(n_sends));
		return;
	}
	uint32_t hdr_base = q->hdr_used, iov_base = q->iov_used;
	q->hdr_used += t->hdr_used;
	q->iov_used += t->n_iov;
	q->tx_gso_frames++;
	q->tx_gso_segments += t->nr_segs;
	port_count_tx(c->io, pkt_len(pkt));
	vxlan_queue_train(c, pkt, dst, sends, n_sends, hdr_base, iov_base);
}

/* A frame without TSO metadata: one datagram. */
static void vxlan_tx_plain(struct vxlan_tx_ctx *c, struct pkt *pkt, const struct vxlan_addr *dst)
{
	struct vxlan_tx_io *q = c->q;
	uint32_t l3_len = pkt_len(pkt) - (pkt->l3_ofs != PKT_OFS_NONE ? pkt->l3_ofs : ETH_HDR_LEN);
	/* The configured mtu (the operator's: larger than the path, the
	 * kernel fragments the datagram), else what fits towards `dst`. */
	uint32_t limit = c->vp->opts.mtu ? c->vp->opts.mtu : vxlan_inner_limit(c->vp, dst);
	if (l3_len > limit) {
		vxlan_tx_drop(c, pkt, DROP_MTU_EXCEEDED);
		return;
	}
	if (gso_csum_complete(pkt) < 0) {
		vxlan_tx_drop(c, pkt, DROP_VNET_HDR_CSUM_START);
		return;
	}
	uint8_t *hdr = pkt_push(pkt, VXLAN_HDR_LEN);
	if (!hdr) {
		vxlan_tx_drop(c, pkt, DROP_NO_BUFFER);
		return;
	}
	vxlan_hdr_write(hdr, c->vni);
	if (q->n_msgs == VXLAN_TX_MSGS)
		vxlan_flush(c);
	unsigned i = vxlan_queue_msg(c, dst, 0);
	unsigned iovcnt = 0;
	q->iovs[i][iovcnt++] = (struct iovec){ pkt->data, pkt->size };
	for (uint16_t f = 0; f < pkt->nr_frags; f++)
		q->iovs[i][iovcnt++] = (struct iovec){ (void *)pkt->frags[f].data, pkt->frags[f].size };
	q->msgs[i].msg_hdr.msg_iovlen = iovcnt;
	q->meta[i].pkt = pkt;
	q->meta[i].bytes = pkt_len(pkt);
	q->meta[i].nr_segs = 1;
	q->tx_plain_frames++;
	port_count_tx(c->io, pkt_len(pkt) - VXLAN_HDR_LEN);
}

/* The frame's VNI, UDP port and checksum: the port's, or its tunnel_key's. */
static void vxlan_tx_key(struct vxlan_tx_ctx *c, const struct pkt_tunnel *tun)
{
	bool key = tun->tx_key & PKT_TUN_TX_KEY;
	c->vni = key ? tun->vni : c->vp->opts.vni;
	c->dst_port = key && tun->dst_port ? tun->dst_port : c->vp->opts.dst_port;
	c->zero_csum = tun->tx_key & PKT_TUN_TX_NOCSUM ? true
		       : tun->tx_key & PKT_TUN_TX_CSUM ? false : c->sock->zero_csum;
}

void vxlan_tx_batch(struct port *port, struct port_io *io, struct pkt **pkts, unsigned n)
{
	struct vxlan_port *vp = vxlan_port_cast(port);
	struct vxlan_tx_ctx c = { .vp = vp, .sock = vxlan_sock_lane(vp->sock, io->lane), .io = io, .q = io->priv };
	if (!c.q) {
		/* An io without port_io_init(): nowhere to queue. */
		port_drop_batch(io, pkts, n, DROP_NO_BUFFER);
		return;
	}
	bool gso_on = atomic_load_explicit(&vp->gso_on, memory_order_relaxed);
	for (unsigned k = 0; k < n; k++) {
		struct pkt *pkt = pkts[k];
		struct vxlan_addr dst;
		c.tx_idx = (uint8_t)vxlan_txsock_pick(c.sock, pkt->data, pkt->size);
		c.df = vxlan_txsock_want_df(c.sock, pkt->data, pkt->size);
		vxlan_tx_key(&c, &pkt->tunnel);
		if (!vxlan_pkt_dst(pkt, &dst) || dst.family != vp->opts.local.family)
			vxlan_tx_drop(&c, pkt, DROP_FDB_DST_UNKNOWN);
		else if (pkt->ol.gso_type == PKT_GSO_NONE)
			vxlan_tx_plain(&c, pkt, &dst);
		else if (!gso_on)
			vxlan_tx_drop(&c, pkt, DROP_GSO_UNSUPPORTED);
		else
			vxlan_tx_gso(&c, pkt, &dst);
	}
	vxlan_flush(&c);
}
