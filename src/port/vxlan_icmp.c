/* The underlay socket's ICMP errors (vxlan_internal.h).  With IP_RECVERR
 * an unconnected UDP socket gets every ICMP error for a datagram it sent:
 * queued on its error queue (with the destination of that datagram and
 * the ICMP type and code) and set as its socket error, which the next
 * send or receive returns once.  So: a send that fails so is tried again
 * (its datagram was never sent), a receive that fails so reads the queue,
 * and whatever failed marks the queue for reading, since a queue left
 * full keeps EPOLLERR raised.  The counts say, per remote, that nothing
 * listens on the dstport there (diagnose's remote_silent). */
#include "port/vxlan_internal.h"

#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <string.h>

enum { VXLAN_ICMP_DRAIN_MAX = 64 }; /* messages per drain: the rest next time */

/* The errors an ICMP error leaves as the socket error (ip_icmp_error:
 * unreachable port, host, net; a protocol error). */
static bool vxlan_icmp_errno(int err)
{
	return err == ECONNREFUSED || err == EHOSTUNREACH || err == ENETUNREACH || err == EHOSTDOWN || err == EPROTO;
}

bool vxlan_icmp_send_failed(struct vxlan_sock *sock, int fd, int err)
{
	if (!sock->recverr || fd != sock->fd)
		return false;
	sock->err_pending = true;
	if (!vxlan_icmp_errno(err))
		return false;
	sock->stats.tx_icmp_retries++;
	return true;
}

static struct vxlan_icmp_remote *vxlan_icmp_remote(struct vxlan_sock *sock, const struct sockaddr_storage *to)
{
	struct vxlan_addr a = { 0 };
	if (to->ss_family == AF_INET) {
		a.family = 4;
		memcpy(a.bytes, &((const struct sockaddr_in *)to)->sin_addr, 4);
	} else if (to->ss_family == AF_INET6) {
		a.family = 6;
		memcpy(a.bytes, &((const struct sockaddr_in6 *)to)->sin6_addr, 16);
	} else {
		return NULL;
	}
	struct vxlan_sock_stats *st = &sock->stats;
	for (unsigned i = 0; i < st->n_icmp_remotes; i++)
		if (st->icmp_remotes[i].addr.family == a.family && memcmp(st->icmp_remotes[i].addr.bytes, a.bytes, 16) == 0)
			return &st->icmp_remotes[i];
	if (st->n_icmp_remotes == VXLAN_ICMP_REMOTES)
		return NULL; /* counted in the totals only */
	struct vxlan_icmp_remote *r = &st->icmp_remotes[st->n_icmp_remotes++];
	*r = (struct vxlan_icmp_remote){ .addr = a };
	return r;
}

static void vxlan_icmp_count(struct vxlan_sock *sock, const struct sockaddr_storage *to,
			     const struct sock_extended_err *ee)
{
	bool port = (ee->ee_origin == SO_EE_ORIGIN_ICMP && ee->ee_type == 3 && ee->ee_code == 3) ||
		    (ee->ee_origin == SO_EE_ORIGIN_ICMP6 && ee->ee_type == 1 && ee->ee_code == 4);
	sock->stats.rx_icmp_errors++;
	sock->stats.rx_icmp_port_unreach += port;
	struct vxlan_icmp_remote *r = vxlan_icmp_remote(sock, to);
	if (!r)
		return;
	if (port)
		r->port_unreach++;
	else
		r->other++;
	r->last_errno = (int)ee->ee_errno;
}

void vxlan_icmp_drain(struct vxlan_sock *sock)
{
	sock->err_pending = false;
	if (!sock->recverr)
		return;
	for (unsigned n = 0; n < VXLAN_ICMP_DRAIN_MAX; n++) {
		struct sockaddr_storage to;
		union {
			char buf[256];
			struct cmsghdr align;
		} cbuf;
		uint8_t data[64]; /* the start of the datagram: not needed */
		struct iovec iov = { data, sizeof(data) };
		struct msghdr mh = { .msg_name = &to, .msg_namelen = sizeof(to), .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf) };
		memset(&to, 0, sizeof(to));
		if (recvmsg(sock->fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			break;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if ((cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_RECVERR) ||
			    (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_RECVERR)) {
				struct sock_extended_err ee;
				memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
				vxlan_icmp_count(sock, &to, &ee);
			}
		}
	}
}

bool vxlan_icmp_recv_failed(struct vxlan_sock *sock, int err)
{
	/* EMSGSIZE too: "fragmentation needed" for a datagram with DF. */
	if (!sock->recverr || !(vxlan_icmp_errno(err) || err == EMSGSIZE))
		return false;
	vxlan_icmp_drain(sock);
	return true;
}
