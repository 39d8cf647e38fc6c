/* The send sockets of a vxlan socket and its outer-header settings
 * (udpcsum, df, srcport; vxlan.h says what each does on the wire and why
 * it is done with sockets).  Settings are fixed at open; the one thing
 * that changes afterwards is the DF state of a send socket under df
 * inherit, which only the worker touches. */
#include "port/vxlan_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "packet/hdr.h"
#include "util/vlog.h"

#ifndef UDP_NO_CHECK6_TX
#define UDP_NO_CHECK6_TX 101
#endif
#ifndef UDP_NO_CHECK6_RX
#define UDP_NO_CHECK6_RX 102
#endif

/* Zero outer UDP checksums on fd, or computed ones. */
static int vxlan_txsock_set_nocsum(const struct vxlan_sock *sock, int fd, bool zero)
{
	int on = zero;
	int r = sock->local.family == 6 ? setsockopt(fd, IPPROTO_UDP, UDP_NO_CHECK6_TX, &on, sizeof(on))
					 : setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &on, sizeof(on));
	return r < 0 ? -errno : 0;
}

/* Checksum and DF settings of one send socket. */
static int vxlan_txsock_apply(const struct vxlan_sock *sock, int fd)
{
	int r = sock->zero_csum ? vxlan_txsock_set_nocsum(sock, fd, true) : 0;
	if (r < 0)
		return r;
	if (sock->local.family == 4) {
		int pmtu = sock->df == VXLAN_DF_UNSET ? IP_PMTUDISC_DONT : IP_PMTUDISC_DO;
		if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) < 0)
			return -errno;
	}
	return 0;
}

/* A send socket bound to (local, port): SO_REUSEPORT, so that ranges of
 * two sockets (two dstports) may overlap; it is never read, so its
 * receive buffer is the smallest the kernel gives. */
static int vxlan_txsock_one(const struct vxlan_sock *sock, uint16_t port)
{
	int fd = socket(vxlan_af(&sock->local), SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_UDP);
	if (fd < 0)
		return -errno;
	int one = 1, small = 1, size = VXLAN_SOCK_BUF;
	if (sock->local.family == 6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	struct sockaddr_storage ss;
	socklen_t sslen = vxlan_sockaddr(&sock->local, port, &ss);
	if (bind(fd, (struct sockaddr *)&ss, sslen) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int vxlan_txsock_open(struct vxlan_sock *sock, const struct vxlan_options *opts)
{
	bool ranged = opts->src_port_min || opts->src_port_max;
	if (opts->df > VXLAN_DF_INHERIT || (opts->local.family == 6 && opts->df != VXLAN_DF_SET))
		return -EINVAL;
	if (ranged && (opts->src_port_min == 0 || opts->src_port_min > opts->src_port_max ||
		       opts->src_port_max - opts->src_port_min + 1 > VXLAN_SRCPORT_MAX_PORTS))
		return -EINVAL;
	sock->zero_csum = opts->udp_zero_csum;
	sock->df = opts->df;
	sock->sport_min = ranged ? opts->src_port_min : 0;
	sock->sport_max = ranged ? opts->src_port_max : 0;
	sock->n_tx = ranged ? (unsigned)(opts->src_port_max - opts->src_port_min + 1) : 1;
	int one = 1, err = 0;
	/* RFC 6936: a zero UDPv6 checksum is accepted only where configured. */
	if (sock->zero_csum && sock->local.family == 6 &&
	    setsockopt(sock->fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, &one, sizeof(one)) < 0)
		return -errno;
	for (unsigned i = 0; i < sock->n_tx; i++) {
		uint16_t port = ranged ? (uint16_t)(sock->sport_min + i) : sock->port;
		int fd = port == sock->port ? sock->fd : vxlan_txsock_one(sock, port);
		if (fd < 0) {
			err = fd;
			VLOG_WARN("vxlan", "srcport %u: cannot bind a send socket: %s", port, strerror(-err));
		}
		sock->tx_fd[i] = fd;
		if (!err)
			err = vxlan_txsock_apply(sock, fd);
		sock->tx_df_on[i] = sock->df != VXLAN_DF_UNSET;
		sock->tx_nocsum_on[i] = sock->zero_csum;
		if (err) {
			sock->n_tx = i + (fd >= 0);
			vxlan_txsock_close(sock);
			return err;
		}
	}
	return 0;
}

void vxlan_txsock_close(struct vxlan_sock *sock)
{
	for (unsigned i = 0; i < sock->n_tx; i++)
		if (sock->tx_fd[i] >= 0 && sock->tx_fd[i] != sock->fd)
			close(sock->tx_fd[i]);
	sock->n_tx = 0;
}

unsigned vxlan_txsock_pick(const struct vxlan_sock *sock, const uint8_t *frame, size_t len)
{
	if (sock->n_tx <= 1)
		return 0;
	struct vxlan_encap range = { .src_port_min = sock->sport_min, .src_port_max = sock->sport_max };
	return (unsigned)(vxlan_src_port(&range, vxlan_flow_hash(frame, len)) - sock->sport_min);
}

bool vxlan_txsock_want_df(const struct vxlan_sock *sock, const uint8_t *frame, size_t len)
{
	if (sock->df != VXLAN_DF_INHERIT)
		return sock->df == VXLAN_DF_SET;
	/* As the kernel's vxlan_xmit_one(): inner IPv6 sets it, inner IPv4
	 * copies it, anything else clears it.  VLAN tags are skipped. */
	size_t ofs = ETH_HDR_LEN;
	if (len < ofs)
		return false;
	uint16_t type = (uint16_t)(frame[ofs - 2] << 8 | frame[ofs - 1]);
	for (int tags = 0; tags < 2 && (type == ETH_TYPE_VLAN || type == ETH_TYPE_QINQ); tags++) {
		if (len < ofs + VLAN_HDR_LEN)
			return false;
		type = (uint16_t)(frame[ofs + 2] << 8 | frame[ofs + 3]);
		ofs += VLAN_HDR_LEN;
	}
	if (type == ETH_TYPE_IPV6)
		return true;
	return type == ETH_TYPE_IPV4 && len >= ofs + IPV4_HDR_LEN && (frame[ofs + 6] & 0x40);
}

int vxlan_txsock_fd(struct vxlan_sock *sock, unsigned idx, bool df, bool zero_csum)
{
	if (idx >= sock->n_tx)
		idx = 0;
	int fd = sock->tx_fd[idx];
	if (sock->df == VXLAN_DF_INHERIT && sock->tx_df_on[idx] != df) {
		int pmtu = df ? IP_PMTUDISC_DO : IP_PMTUDISC_DONT;
		if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) == 0)
			sock->tx_df_on[idx] = df;
	}
	if (sock->tx_nocsum_on[idx] != zero_csum && vxlan_txsock_set_nocsum(sock, fd, zero_csum) == 0)
		sock->tx_nocsum_on[idx] = zero_csum;
	return fd;
}

static const char *vxlan_df_name(uint8_t df)
{
	return df == VXLAN_DF_UNSET ? "unset" : df == VXLAN_DF_INHERIT ? "inherit" : "set";
}

int vxlan_sock_check_options(const struct vxlan_sock *sock, const struct vxlan_options *opts,
			     char *why, size_t size)
{
	const char *shared = "the other ports on this local address and dstport (they share one socket)";
	bool ranged = opts->src_port_min || opts->src_port_max;
	if (opts->udp_zero_csum != sock->zero_csum) {
		snprintf(why, size, "udpcsum %s differs from udpcsum %s of %s", opts->udp_zero_csum ? "off" : "on",
			 sock->zero_csum ? "off" : "on", shared);
		return -EINVAL;
	}
	if (opts->df != sock->df) {
		snprintf(why, size, "df %s differs from df %s of %s", vxlan_df_name(opts->df),
			 vxlan_df_name(sock->df), shared);
		return -EINVAL;
	}
	if ((ranged ? opts->src_port_min : 0) != sock->sport_min ||
	    (ranged ? opts->src_port_max : 0) != sock->sport_max) {
		if (sock->sport_min)
			snprintf(why, size, "srcport differs from srcport %u-%u of %s", sock->sport_min,
				 sock->sport_max, shared);
		else
			snprintf(why, size, "srcport differs from the fixed source port %u of %s", sock->port,
				 shared);
		return -EINVAL;
	}
	return 0;
}

void vxlan_sock_get_options(const struct vxlan_sock *sock, struct vxlan_options *out)
{
	out->udp_zero_csum = sock->zero_csum;
	out->df = sock->df;
	out->src_port_min = sock->sport_min;
	out->src_port_max = sock->sport_max;
}
