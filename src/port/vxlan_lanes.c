/* A vxlan socket's lanes: one socket per worker in a reuseport group, and
 * the classic BPF program that steers each datagram to one of them by its
 * flow (vxlan.h, "Lanes"; the program is flow_lane.h's). */
#include "port/vxlan_internal.h"

#include <errno.h>
#include <linux/filter.h>
#include <string.h>

#include "packet/bytes.h"
#include "port/flow_lane.h"
#include "util/vlog.h"

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF 51
#endif

unsigned vxlan_lane_pick(const uint8_t *vx, size_t len, uint16_t sport, unsigned n_lanes)
{
	return len < VXLAN_HDR_LEN ? 0 : flow_lane_pick(vx + VXLAN_HDR_LEN, len - VXLAN_HDR_LEN, sport, n_lanes);
}

static int vxlan_lanes_steer(struct vxlan_sock *sock)
{
	struct sock_filter f[FLOW_LANE_PROG_MAX];
	/* The kernel pulls the UDP header before it runs the program. */
	unsigned n = flow_lane_cbpf(f, VXLAN_HDR_LEN, sock->local.family == 6, sock->n_lanes);
	struct sock_fprog prog = { .len = (unsigned short)n,
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
