/* afpacket port: see afpacket.h. */
#include "port/afpacket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "packet/vnet_hdr.h"
#include "port/ethtool.h"
#include "port/frame.h"
#include "port/rtnl.h"
#include "util/vlog.h"

#ifndef PACKET_VNET_HDR_SZ
#define PACKET_VNET_HDR_SZ 24 /* Linux 6.4, not yet in this libc's headers */
#endif

struct afpacket_port {
	struct port up;
	char dev[IF_NAMESIZE];
	char netns[AFP_NETNS_SIZE];
	int ifindex;
	unsigned hdr_size;
	int rcvbuf;
	/* Written by the control thread (open, link events), read by anyone:
	 * atomic, relaxed (it orders nothing). */
	atomic_bool link_tso;
};

/* An afpacket port's part of a port_io: counters and the mmsg scratch of
 * one batch (too big for the worker's stack with 64 frames of 66 iovecs). */
struct afpacket_io {
	struct frame_io_stats fs;
	uint64_t rx_truncated;
	struct mmsghdr msgs[PORT_BATCH];
	struct iovec iov[PORT_BATCH][FRAME_TX_IOV_MAX];
	uint8_t hdrs[PORT_BATCH][VNET_HDR_V1_LEN];
};

static const struct port_class afpacket_port_class;

bool port_is_afpacket(const struct port *port)
{
	return port && port->cls == &afpacket_port_class;
}

static struct afpacket_port *afp_cast(const struct port *port)
{
	return (struct afpacket_port *)port;
}

const char *port_frame_dev(const struct port *port)
{
	return port_is_afpacket(port) ? afp_cast(port)->dev : "";
}

static int afp_setopt(int fd, int level, int name, int value)
{
	return setsockopt(fd, level, name, &value, sizeof(value)) < 0 ? -errno : 0;
}

/* The header: 12 bytes where PACKET_VNET_HDR_SZ exists (6.4), else the
 * 10 of PACKET_VNET_HDR. */
static int afp_set_vnet_hdr(int fd, unsigned *hdr_size)
{
	if (afp_setopt(fd, SOL_PACKET, PACKET_VNET_HDR_SZ, VNET_HDR_V1_LEN) == 0) {
		*hdr_size = VNET_HDR_V1_LEN;
		return 0;
	}
	*hdr_size = VNET_HDR_LEN;
	return afp_setopt(fd, SOL_PACKET, PACKET_VNET_HDR, 1);
}

static void afp_set_bufs(struct afpacket_port *afp)
{
	int fd = afp->up.fd;
	if (afp_setopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, AFP_SOCK_BUF) < 0)
		afp_setopt(fd, SOL_SOCKET, SO_RCVBUF, AFP_SOCK_BUF);
	if (afp_setopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, AFP_SOCK_BUF) < 0)
		afp_setopt(fd, SOL_SOCKET, SO_SNDBUF, AFP_SOCK_BUF);
	socklen_t len = sizeof(afp->rcvbuf);
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &afp->rcvbuf, &len) < 0)
		afp->rcvbuf = 0;
}

/* Socket options, then bind: once bound, frames flow, and each must
 * already have its header. */
static int afp_setup_socket(struct afpacket_port *afp, char *why, size_t n)
{
	int fd = afp->up.fd;
	int err = afp_set_vnet_hdr(fd, &afp->hdr_size);
	if (err < 0)
		return port_why(why, n, err, "PACKET_VNET_HDR refused (%s): TSO frames could not pass", strerror(-err));
	err = afp_setopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1);
	if (err < 0)
		return port_why(why, n, err, "PACKET_IGNORE_OUTGOING refused (%s; Linux < 4.20?): the port would read "
			       "its own sends", strerror(-err));
	afp_set_bufs(afp);
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = afp->ifindex };
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		return port_why(why, n, -errno, "bind to %s: %s", afp->dev, strerror(errno));
	struct packet_mreq mr = { .mr_ifindex = afp->ifindex, .mr_type = PACKET_MR_PROMISC };
	if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
		return port_why(why, n, -errno, "promiscuous mode on %s: %s", afp->dev, strerror(errno));
	return 0;
}

/* In the link's namespace: its index, whether it takes TSO, the socket. */
static int afp_open_in(struct afpacket_port *afp, int netns_fd, char *why, size_t n)
{
	int home;
	int err = rtnl_netns_enter(netns_fd, &home);
	if (err < 0)
		return port_why(why, n, err, "netns %s: %s", afp->netns, strerror(-err));
	afp->ifindex = (int)if_nametoindex(afp->dev);
	if (!afp->ifindex) {
		err = port_why(why, n, -ENODEV, "no link %s%s%s", afp->dev, afp->netns[0] ? " in netns " : "",
			      afp->netns);
	} else {
		atomic_store_explicit(&afp->link_tso, ethtool_tso(afp->dev) == 1, memory_order_relaxed);
		afp->up.fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (afp->up.fd < 0)
			err = port_why(why, n, -errno, "AF_PACKET socket: %s", strerror(errno));
	}
	rtnl_netns_leave(home);
	return err < 0 ? err : afp_setup_socket(afp, why, n);
}

int afpacket_port_open(const struct afpacket_options *opts, struct port **out, char *why, size_t why_size)
{
	if (!opts->name || !*opts->name || strlen(opts->name) >= IF_NAMESIZE || !opts->dev || !*opts->dev ||
	    strlen(opts->dev) >= IF_NAMESIZE)
		return port_why(why, why_size, -EINVAL, "bad port or device name");
	struct afpacket_port *afp = calloc(1, sizeof(*afp));
	if (!afp)
		return -ENOMEM;
	afp->up.cls = &afpacket_port_class;
	snprintf(afp->up.name, sizeof(afp->up.name), "%s", opts->name);
	snprintf(afp->dev, sizeof(afp->dev), "%s", opts->dev);
	snprintf(afp->netns, sizeof(afp->netns), "%s", opts->netns ? opts->netns : "");
	afp->up.vni = opts->vni;
	afp->up.fd = -1;
	int netns_fd = -1, err = 0;
	if (opts->netns) {
		netns_fd = rtnl_netns_open(opts->netns);
		if (netns_fd < 0) {
			err = port_why(why, why_size, netns_fd, "netns %s: %s", opts->netns, strerror(-netns_fd));
			goto err_free;
		}
	}
	err = afp_open_in(afp, netns_fd, why, why_size);
	struct rtnl_link_info li;
	if (err == 0) {
		err = rtnl_link_get(netns_fd, NULL, afp->ifindex, &li);
		if (err < 0)
			port_why(why, why_size, err, "cannot read link %s: %s", afp->dev, strerror(-err));
	}
	if (netns_fd >= 0)
		close(netns_fd);
	if (err < 0)
		goto err_free;
	afp->up.mtu = li.mtu;
	*out = &afp->up;
	return 0;

err_free:
	if (afp->up.fd >= 0)
		close(afp->up.fd);
	free(afp);
	return err;
}

void afpacket_port_get_info(const struct port *port, const struct port_io *io, struct afpacket_port_info *out)
{
	const struct afpacket_port *afp = afp_cast(port);
	memset(out, 0, sizeof(*out));
	memcpy(out->dev, afp->dev, sizeof(out->dev));
	memcpy(out->netns, afp->netns, sizeof(out->netns));
	out->ifindex = afp->ifindex;
	out->hdr_size = afp->hdr_size;
	out->rcvbuf = afp->rcvbuf;
	out->link_tso = atomic_load_explicit(&afp->link_tso, memory_order_relaxed);
	const struct afpacket_io *a = io ? io->priv : NULL;
	if (a) {
		out->rx_gso_frames = a->fs.rx_gso_frames;
		out->rx_partial_csum = a->fs.rx_partial_csum;
		out->tx_gso_frames = a->fs.tx_gso_frames;
		out->rx_truncated = a->rx_truncated;
		out->tx_errors = a->fs.tx_errors;
		out->last_tx_errno = a->fs.last_tx_errno;
	}
}

void afpacket_port_refresh_link(struct port *port)
{
	struct afpacket_port *afp = afp_cast(port);
	int ns = -1, home;
	if (afp->netns[0] && (ns = rtnl_netns_open(afp->netns)) < 0)
		return;
	if (rtnl_netns_enter(ns, &home) == 0) {
		int tso = ethtool_tso(afp->dev);
		rtnl_netns_leave(home);
		if (tso >= 0)
			atomic_store_explicit(&afp->link_tso, tso == 1, memory_order_relaxed);
	}
	if (ns >= 0)
		close(ns);
}

static int afp_io_init(struct port *port, struct port_io *io)
{
	(void)port;
	return frame_io_alloc(io, sizeof(struct afpacket_io));
}

/* One recvmmsg straight into pkt buffers.  Only an io made by
 * port_io_init() has the scratch: without it nothing is read. */
static int afp_rx_batch(struct port *port, struct port_io *io, struct pkt_pool *pool, struct pkt **out,
			unsigned max)
{
	struct afpacket_io *a = io->priv;
	unsigned hs = afp_cast(port)->hdr_size, n = 0, want = 0;
	struct pkt *got_pkts[PORT_BATCH];
	if (!a)
		return 0;
	max = max < PORT_BATCH ? max : PORT_BATCH;
	while (want < max && (got_pkts[want] = pkt_alloc(pool)) != NULL) {
		a->iov[want][0] = (struct iovec){ a->hdrs[want], hs };
		a->iov[want][1] = (struct iovec){ got_pkts[want]->data, PKT_MAX_FRAME };
		a->msgs[want].msg_hdr = (struct msghdr){ .msg_iov = a->iov[want], .msg_iovlen = 2 };
		want++;
	}
	int got;
	do
		got = want ? recvmmsg(port->fd, a->msgs, want, MSG_DONTWAIT, NULL) : 0;
	while (got < 0 && errno == EINTR);
	for (unsigned i = 0; i < want; i++) {
		struct pkt *pkt = got_pkts[i];
		if ((int)i >= got) {
			pkt_free(pkt); /* not filled; EAGAIN or an error the next poll reports */
			continue;
		}
		if (a->msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
			a->rx_truncated++;
			port_count_drop(io, DROP_MTU_EXCEEDED);
			pkt_free(pkt);
			continue;
		}
		if (frame_rx_accept(port, io, &a->fs, pkt, a->hdrs[i], a->msgs[i].msg_len, hs))
			out[n++] = pkt;
		else
			pkt_free(pkt);
	}
	return (int)n;
}

/* sendmmsg of up to PORT_BATCH frames at a time.  A frame the kernel
 * refuses stops a sendmmsg; it is counted, and the rest go on. */
static void afp_tx_batch(struct port *port, struct port_io *io, struct pkt **pkts, unsigned n)
{
	struct afpacket_io *a = io->priv;
	unsigned hs = afp_cast(port)->hdr_size;
	if (!a) {
		port_drop_batch(io, pkts, n, DROP_TX_ERROR);
		return;
	}
	for (unsigned base = 0; base < n;) {
		unsigned m = n - base < PORT_BATCH ? n - base : PORT_BATCH;
		for (unsigned i = 0; i < m; i++) {
			unsigned cnt = frame_tx_iov(pkts[base + i], a->hdrs[i], hs, a->iov[i]);
			a->msgs[i].msg_hdr = (struct msghdr){ .msg_iov = a->iov[i], .msg_iovlen = cnt };
		}
		unsigned done = 0;
		while (done < m) {
			int sent = sendmmsg(port->fd, a->msgs + done, m - done, MSG_DONTWAIT);
			if (sent < 0 && errno == EINTR)
				continue;
			int err = sent < 0 ? errno : 0;
			unsigned ok = sent > 0 ? (unsigned)sent : 0;
			for (unsigned i = 0; i < ok; i++)
				frame_tx_count(io, &a->fs, pkts[base + done + i], 0);
			done += ok;
			if (err && done < m) /* the frame at `done` was refused */
				frame_tx_count(io, &a->fs, pkts[base + done++], err);
		}
		for (unsigned i = 0; i < m; i++)
			pkt_free(pkts[base + i]);
		base += m;
	}
}

static int afp_poll_error(struct port *port)
{
	int soerr = 0;
	socklen_t len = sizeof(soerr);
	getsockopt(port->fd, SOL_SOCKET, SO_ERROR, &soerr, &len); /* takes it */
	struct sockaddr_ll sll;
	len = sizeof(sll);
	if (getsockname(port->fd, (struct sockaddr *)&sll, &len) < 0 || sll.sll_ifindex <= 0)
		return -ENODEV; /* NETDEV_UNREGISTER unbound it: the link is gone */
	return 0;
}

static void afp_destroy(struct port *port)
{
	close(port->fd);
	free(afp_cast(port));
}

static const struct port_class afpacket_port_class = {
	.kind_name = "afpacket",
	.kind = PORT_KIND_AFPACKET,
	.rx_batch = afp_rx_batch,
	.tx_batch = afp_tx_batch,
	.io_init = afp_io_init,
	.io_fini = frame_io_free,
	.destroy = afp_destroy,
	.poll_error = afp_poll_error,
};
