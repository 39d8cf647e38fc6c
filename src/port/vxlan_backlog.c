/* The send backlog of a vxlan socket: messages the kernel pushed back
 * (EAGAIN/ENOBUFS on a non-blocking send) wait here, in order, until
 * vxlan_sock_tx_resume() gets them out (vxlan.h says when). */
#include "port/vxlan_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "util/vlog.h"

bool vxlan_sock_tx_blocked(const struct vxlan_sock *sock)
{
	return sock->bl_count > 0;
}

int vxlan_sock_tx_wait_fd(const struct vxlan_sock *sock)
{
	if (!sock->bl_count)
		return -1;
	unsigned idx = sock->backlog[sock->bl_head]->tx_idx;
	return idx < sock->n_tx ? sock->tx_fd[idx] : sock->tx_fd[0];
}

bool vxlan_backlog_push(struct vxlan_sock *sock, const struct msghdr *mh, uint32_t bytes,
			uint32_t skip, uint16_t gso_size, unsigned tx_idx, bool df, bool zero_csum)
{
	uint32_t len = bytes - skip;
	struct vxlan_backlog_entry *e = NULL;
	if (sock->bl_count < VXLAN_BACKLOG_MAX && sock->bl_bytes + len <= VXLAN_BACKLOG_BYTES)
		e = malloc(sizeof(*e) + len);
	if (!e) {
		static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 10);
		VLOG_WARN_RL(&rl, "vxlan", "underlay send backlog full (%u messages, %u bytes): dropping (underlay_backlog_full)",
			     sock->bl_count, sock->bl_bytes);
		sock->stats.tx_backlog_drops++;
		return false;
	}
	memcpy(&e->name, mh->msg_name, mh->msg_namelen);
	e->namelen = mh->msg_namelen;
	e->len = len;
	e->sent = 0;
	e->gso_size = gso_size;
	e->tx_idx = (uint8_t)tx_idx;
	e->df = df;
	e->zero_csum = zero_csum;
	uint32_t at = 0;
	for (size_t k = 0; k < mh->msg_iovlen && at < len; k++) {
		const uint8_t *base = mh->msg_iov[k].iov_base;
		uint32_t n = (uint32_t)mh->msg_iov[k].iov_len;
		if (skip >= n) {
			skip -= n;
			continue;
		}
		base += skip;
		n -= skip;
		skip = 0;
		if (n > len - at)
			n = len - at;
		memcpy(e->data + at, base, n);
		at += n;
	}
	e->len = at;
	if (sock->bl_count == 0)
		sock->stats.tx_blocked_events++;
	sock->backlog[(sock->bl_head + sock->bl_count) % VXLAN_BACKLOG_MAX] = e;
	sock->bl_count++;
	sock->bl_bytes += e->len;
	sock->stats.tx_backlogged++;
	return true;
}

static void vxlan_backlog_pop(struct vxlan_sock *sock)
{
	struct vxlan_backlog_entry *e = sock->backlog[sock->bl_head];
	sock->backlog[sock->bl_head] = NULL;
	sock->bl_head = (sock->bl_head + 1) % VXLAN_BACKLOG_MAX;
	sock->bl_count--;
	sock->bl_bytes -= e->len;
	free(e);
}

void vxlan_backlog_clear(struct vxlan_sock *sock)
{
	while (sock->bl_count)
		vxlan_backlog_pop(sock);
}

/* Sends what is left of `e`: the rest of a train in one UDP_SEGMENT send
 * while that is on, else datagram by datagram (progress kept in e->sent,
 * so a push-back mid-train resumes where it stopped).  0 when all of it is
 * out, -EAGAIN when the kernel pushes back, another -errno when it refuses
 * (the rest of the entry is then dropped by the caller). */
static int vxlan_backlog_send(struct vxlan_sock *sock, struct vxlan_backlog_entry *e)
{
	while (e->sent < e->len) {
		uint32_t left = e->len - e->sent;
		bool seg = e->gso_size && left > e->gso_size &&
			   atomic_load_explicit(&sock->udp_segment_on, memory_order_relaxed);
		uint32_t len = seg || !e->gso_size || left < e->gso_size ? left : e->gso_size;
		struct iovec iov = { e->data + e->sent, len };
		union {
			char buf[CMSG_SPACE(sizeof(uint16_t))];
			struct cmsghdr align;
		} cbuf;
		struct msghdr mh = { .msg_name = &e->name, .msg_namelen = e->namelen,
				     .msg_iov = &iov, .msg_iovlen = 1 };
		if (seg) {
			mh.msg_control = cbuf.buf;
			mh.msg_controllen = sizeof(cbuf.buf);
			struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = IPPROTO_UDP;
			cm->cmsg_type = UDP_SEGMENT;
			cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
			memcpy(CMSG_DATA(cm), &e->gso_size, sizeof(e->gso_size));
		}
		int fd = vxlan_txsock_fd(sock, e->tx_idx, e->df, e->zero_csum);
		ssize_t r = sendmsg(fd, &mh, MSG_DONTWAIT);
		if (r < 0 && vxlan_icmp_send_failed(sock, fd, errno))
			r = sendmsg(fd, &mh, MSG_DONTWAIT); /* once: a queued ICMP error's */
		if (r >= 0) {
			sock->stats.tx_sends++;
			sock->stats.tx_gso_sends += seg;
			sock->stats.tx_datagrams += seg ? (len + e->gso_size - 1) / e->gso_size : 1;
			sock->stats.tx_bytes += len;
			e->sent += len;
			continue;
		}
		int err = errno;
		if (err == EINTR)
			continue;
		if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS)
			return -EAGAIN;
		if (seg && (err == EIO || err == EINVAL)) {
			vxlan_sock_udp_segment_refused(sock, err);
			continue;
		}
		static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 10);
		VLOG_WARN_RL(&rl, "vxlan", "sendmsg from the backlog: %s", strerror(err));
		sock->stats.tx_errors++;
		sock->stats.last_tx_errno = err;
		return -err;
	}
	return 0;
}

int vxlan_sock_tx_resume(struct vxlan_sock *sock)
{
	while (sock->bl_count) {
		if (vxlan_backlog_send(sock, sock->backlog[sock->bl_head]) == -EAGAIN)
			return -EAGAIN;
		vxlan_backlog_pop(sock);
	}
	return 0;
}
