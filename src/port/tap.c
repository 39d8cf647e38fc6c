#include "port/tap.h"

#define TAP_IFF_LOWER_UP 0x10000 /* linux/if.h IFF_LOWER_UP: carrier on */

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <stdatomic.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "packet/vnet_hdr.h"
#include "port/flow_lane.h"
#include "port/frame.h"
#include "port/rtnl.h"
#include "util/vlog.h"

#ifndef TUN_F_USO4
#define TUN_F_USO4 0x20
#define TUN_F_USO6 0x40
#endif

/* IFLA_IFALIAS of a tap a vxswitchd made: after a restart, `port del`
 * still knows the device is the switch's to delete. */
#define TAP_OWNER_ALIAS "vxswitchd"

struct tap_port {
	struct port up;
	int netns_fd;   /* namespace the device lives in, -1 = ours */
	int ifindex;    /* in that namespace */
	uint8_t mac[6]; /* the device's MAC when the port was opened */
	bool created;   /* this open made the device */
	bool owned;     /* a vxswitchd made it (now or before a restart) */
	bool delete_on_destroy; /* tap_port_set_delete(): destroy deletes an owned device */
	bool multi_queue; /* IFF_MULTI_QUEUE: up.queue_fd holds one fd per worker */
	bool steered;     /* flow_lane.h's program picks the queue of each frame */
	unsigned tun_offload_mask; /* TUN_F_* accepted by the kernel */
	unsigned offloads_probed;  /* TAP_OL_*: set at open, read-only after */
	/* TAP_OL_* in force: written by the control thread (knob), read by
	 * anyone, hence atomic (relaxed: it orders nothing else). */
	atomic_uint offloads_active;
};

/* A tap's part of a port_io: the counters its worker writes. */
struct tap_io {
	struct frame_io_stats fs;
};

static const struct port_class tap_port_class;

bool port_is_tap(const struct port *port)
{
	return port && port->cls == &tap_port_class;
}

static struct tap_port *tap_port_cast(const struct port *port)
{
	return (struct tap_port *)port;
}

/* Asks for `mask`; returns true if the kernel took it. */
static bool tap_try_offload(int fd, unsigned mask)
{
	return ioctl(fd, TUNSETOFFLOAD, (unsigned long)mask) == 0;
}

static void tap_probe_offloads(struct tap_port *tap)
{
	const unsigned tso = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;
	const unsigned uso = TUN_F_USO4 | TUN_F_USO6;
	int fd = tap->up.fd;

	if (tap_try_offload(fd, tso | uso)) {
		tap->tun_offload_mask = tso | uso;
		tap->offloads_probed = TAP_OL_CSUM | TAP_OL_TSO | TAP_OL_USO;
	} else if (tap_try_offload(fd, tso)) {
		VLOG_WARN("tap", "%s: TUNSETOFFLOAD refused USO (Linux < 6.2?): UDP from the VM arrives cut to MTU size",
			  tap->up.name);
		tap->tun_offload_mask = tso;
		tap->offloads_probed = TAP_OL_CSUM | TAP_OL_TSO;
	} else if (tap_try_offload(fd, TUN_F_CSUM)) {
		VLOG_WARN("tap", "%s: TUNSETOFFLOAD refused TSO and USO: frames from the VM arrive cut to MTU size",
			  tap->up.name);
		tap->tun_offload_mask = TUN_F_CSUM;
		tap->offloads_probed = TAP_OL_CSUM;
	} else {
		VLOG_WARN("tap", "%s: TUNSETOFFLOAD refused: checksum and segmentation offloads off",
			  tap->up.name);
		tap->tun_offload_mask = 0;
		tap->offloads_probed = 0;
		tap_try_offload(fd, 0);
	}
	atomic_store_explicit(&tap->offloads_active, tap->offloads_probed, memory_order_relaxed);
}

int tap_port_set_offload(struct port *port, bool on)
{
	struct tap_port *tap = tap_port_cast(port);
	unsigned mask = on ? tap->tun_offload_mask : 0;
	if (ioctl(port->fd, TUNSETOFFLOAD, (unsigned long)mask) < 0)
		return -errno;
	atomic_store_explicit(&tap->offloads_active, on ? tap->offloads_probed : 0,
			      memory_order_relaxed);
	return 0;
}

void tap_port_get_info(const struct port *port, const struct port_io *io, struct tap_port_info *out)
{
	struct tap_port *tap = tap_port_cast(port);
	memset(out, 0, sizeof(*out));
	out->offloads_probed = tap->offloads_probed;
	out->offloads_active = atomic_load_explicit(&tap->offloads_active, memory_order_relaxed);
	out->created = tap->created;
	out->owned = tap->owned;
	memcpy(out->mac, tap->mac, 6);
	out->queues = port->n_queues;
	out->multi_queue = tap->multi_queue;
	out->steered = tap->steered;
	const struct tap_io *t = io ? io->priv : NULL;
	if (t) {
		out->rx_gso_frames = t->fs.rx_gso_frames;
		out->rx_partial_csum = t->fs.rx_partial_csum;
		out->tx_gso_frames = t->fs.tx_gso_frames;
		out->tx_errors = t->fs.tx_errors;
		out->last_tx_errno = t->fs.last_tx_errno;
	}
}

static int tap_io_init(struct port *port, struct port_io *io)
{
	(void)port;
	return frame_io_alloc(io, sizeof(struct tap_io));
}

static int tap_open_fd(const char *name, bool multi_queue)
{
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct ifreq ifr = { 0 };
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | (multi_queue ? IFF_MULTI_QUEUE : 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	int hdr_size = VNET_HDR_V1_LEN;
	int err = 0;
	if (ioctl(fd, TUNSETIFF, &ifr) < 0 || ioctl(fd, TUNSETVNETHDRSZ, &hdr_size) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* Queue 0, and whether the device is multi-queue.  A tap is single- or
 * multi-queue for life and TUNSETIFF refuses the other kind (EINVAL):
 * ask for the kind wanted, then the other one for a device that exists. */
static int tap_open_first(const char *name, bool want_mq, bool existed, bool *mq)
{
	*mq = want_mq;
	int fd = tap_open_fd(name, want_mq);
	if (fd == -EINVAL && existed) {
		*mq = !want_mq;
		fd = tap_open_fd(name, !want_mq);
	}
	return fd;
}

/* Queue i is read by worker i: the frames of one flow, both ways, go to
 * the worker its datagrams from the underlay go to (flow_lane.h).  Without
 * the program the kernel's own choice stays (per flow too, but it may move
 * a flow once, and not where the underlay side sends it). */
static void tap_steer(struct tap_port *tap, const char *name)
{
	int err = flow_lane_tap_attach(tap->up.queue_fd[0], tap->up.n_queues);
	tap->steered = err == 0;
	if (err < 0)
		VLOG_WARN("tap", "%s: TUNSETSTEERINGEBPF: %s: the kernel picks each frame's queue", name, strerror(-err));
}

/* TUNSETIFF looks the name up (and creates the device) in the namespace of
 * the thread that opened /dev/net/tun: open it inside the tap's namespace.
 * *existed says whether NAME was there before.  With `no_create`, a NAME
 * that is not there is not created (-ENOENT).  Opens up to `queues` fds
 * into tap->up.queue_fd (one when the device is single-queue). */
static int tap_open_in(struct tap_port *tap, const char *name, unsigned queues, bool no_create, bool *existed)
{
	int home;
	int err = rtnl_netns_enter(tap->netns_fd, &home);
	if (err < 0)
		return err;
	*existed = if_nametoindex(name) != 0;
	bool mq = false;
	int fd = *existed || !no_create ? tap_open_first(name, queues > 1, *existed, &mq) : -ENOENT;
	if (fd >= 0) {
		tap->up.fd = tap->up.queue_fd[0] = fd;
		tap->up.n_queues = 1;
		tap->multi_queue = mq;
		while (mq && tap->up.n_queues < queues && tap->up.n_queues < PORT_MAX_QUEUES) {
			int q = tap_open_fd(name, true);
			if (q < 0) {
				VLOG_WARN("tap", "%s: queue %u: %s: %u queues", name, tap->up.n_queues, strerror(-q),
					  tap->up.n_queues);
				break;
			}
			tap->up.queue_fd[tap->up.n_queues++] = q;
		}
		if (tap->up.n_queues > 1)
			tap_steer(tap, name);
	}
	rtnl_netns_leave(home);
	return fd < 0 ? fd : 0;
}

static void tap_close_queues(struct tap_port *tap)
{
	for (unsigned q = 0; q < tap->up.n_queues; q++)
		close(tap->up.queue_fd[q]);
	tap->up.n_queues = 0;
	tap->up.fd = -1;
}

static void tap_mac_str(const uint8_t *m, char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* A device this open made: persistent (it outlives the daemon), marked as
 * a vxswitchd's, given its MAC and MTU, up. */
static int tap_setup_created(struct tap_port *tap, const struct tap_options *opts, char *why, size_t n)
{
	const char *name = opts->name;
	if (ioctl(tap->up.fd, TUNSETPERSIST, 1UL) < 0)
		return port_why(why, n, -errno, "TUNSETPERSIST: %s", strerror(errno));
	tap->owned = true;
	int err = rtnl_link_set_mac_alias(tap->netns_fd, name, opts->mac, TAP_OWNER_ALIAS);
	if (err < 0)
		return port_why(why, n, err, "cannot set %s of the new tap: %s", opts->mac ? "the MAC and alias" : "the alias",
			       strerror(-err));
	uint32_t mtu = opts->mtu ? opts->mtu : opts->default_mtu;
	err = rtnl_link_configure(tap->netns_fd, name, mtu, true);
	if (err < 0)
		return port_why(why, n, err, "cannot set mtu %u or bring the new tap up: %s", mtu, strerror(-err));
	return 0;
}

/* A device that was there (`ip tuntap add`, or left by an earlier
 * vxswitchd): its MAC, MTU, addresses and namespace stay; only an explicit
 * `mtu` is applied; a `mac` it does not have already is refused. */
static int tap_setup_existing(struct tap_port *tap, const struct tap_options *opts, char *why, size_t n)
{
	struct rtnl_link_info li;
	int err = rtnl_link_get(tap->netns_fd, opts->name, 0, &li);
	if (err < 0)
		return port_why(why, n, err, "cannot read the existing tap: %s", strerror(-err));
	tap->owned = strcmp(li.alias, TAP_OWNER_ALIAS) == 0;
	if (opts->mac && memcmp(opts->mac, li.mac, 6) != 0) {
		char want[18], has[18];
		tap_mac_str(opts->mac, want);
		tap_mac_str(li.mac, has);
		return port_why(why, n, -EEXIST, "\"mac %s\" would change the MAC of the existing tap (it has %s, "
			       "and the VM behind it may rely on it): leave out mac, or delete the tap first", want, has);
	}
	err = rtnl_link_configure(tap->netns_fd, opts->name, opts->mtu, true);
	if (err < 0)
		return port_why(why, n, err, "cannot set mtu %u or bring the existing tap up: %s", opts->mtu, strerror(-err));
	return 0;
}

static int tap_open_refused(const struct tap_options *opts, int err, bool existed, char *why, size_t n)
{
	const char *in = opts->netns ? " in netns " : "";
	const char *ns = opts->netns ? opts->netns : "";
	if (err == -ENOENT)
		return port_why(why, n, -EEXIST, "a device %s exists in the daemon's namespace but not in netns %s, and the switch "
			       "does not move an existing tap: move it (ip link set %s netns %s) or leave out netns",
			       opts->name, ns, opts->name, ns);
	if (err == -EBUSY && existed)
		return port_why(why, n, err, "tap %s%s%s is held open by another process, e.g. QEMU; a tap has one reader: "
			       "give the switch a tap of its own, or switch this one from its netdev side "
			       "(type afpacket dev %s)", opts->name, in, ns, opts->name);
	if (err == -EINVAL && existed)
		return port_why(why, n, err, "%s%s%s exists and is not a tap (a tun or "
			       "another kind of link)", opts->name, in, ns);
	return port_why(why, n, err, "cannot open tap: %s", strerror(-err));
}

int tap_port_open(const struct tap_options *opts, struct port **out, char *why, size_t why_size)
{
	if (!opts->name || !*opts->name || strlen(opts->name) >= IF_NAMESIZE)
		return port_why(why, why_size, -EINVAL, "bad tap name");
	struct tap_port *tap = calloc(1, sizeof(*tap));
	if (!tap)
		return -ENOMEM;
	tap->up.cls = &tap_port_class;
	snprintf(tap->up.name, sizeof(tap->up.name), "%s", opts->name);
	tap->up.vni = opts->vni;
	tap->up.fd = -1;
	tap->netns_fd = -1;

	int err = 0;
	if (opts->netns) {
		err = rtnl_netns_open(opts->netns);
		if (err < 0) {
			port_why(why, why_size, err, "netns %s: %s", opts->netns, strerror(-err));
			goto err_free;
		}
		tap->netns_fd = err;
	}
	bool here = opts->netns && if_nametoindex(opts->name) != 0;
	bool existed = false;
	err = tap_open_in(tap, opts->name, opts->queues, here, &existed);
	if (err < 0) {
		tap_open_refused(opts, err, existed, why, why_size);
		goto err_free;
	}
	tap->created = !existed;
	err = existed ? tap_setup_existing(tap, opts, why, why_size) : tap_setup_created(tap, opts, why, why_size);
	struct rtnl_link_info li;
	if (err == 0) {
		err = rtnl_link_get(tap->netns_fd, opts->name, 0, &li);
		if (err < 0)
			port_why(why, why_size, err, "cannot read the tap back: %s", strerror(-err));
	}
	if (err < 0)
		goto err_free;
	tap->ifindex = li.ifindex;
	tap->up.mtu = li.mtu;
	memcpy(tap->mac, li.mac, 6);
	if (!opts->no_offload)
		tap_probe_offloads(tap);
	*out = &tap->up;
	return 0;

err_free:
	/* A device this open made goes again with the fd. */
	if (tap->up.fd >= 0 && tap->created)
		ioctl(tap->up.fd, TUNSETPERSIST, 0UL);
	tap_close_queues(tap);
	if (tap->netns_fd >= 0)
		close(tap->netns_fd);
	free(tap);
	return err;
}

void tap_port_set_delete(struct port *port, bool on)
{
	tap_port_cast(port)->delete_on_destroy = on;
}

int tap_port_kernel_stats(const struct port *port, struct tap_kernel_stats *out)
{
	const struct tap_port *tap = tap_port_cast(port);
	struct rtnl_link_info li;
	memset(out, 0, sizeof(*out));
	int err = rtnl_link_get(tap->netns_fd, port->name, tap->ifindex, &li);
	if (err < 0)
		return err;
	if (!li.has_stats)
		return -ENODATA;
	out->tx_dropped = li.tx_dropped;
	out->rx_dropped = li.rx_dropped;
	return 0;
}

static int tap_rx_batch(struct port *port, struct port_io *io, struct pkt_pool *pool,
			struct pkt **out, unsigned max)
{
	/* An io made without port_io_init() still works; the tap's own
	 * counters are then not kept. */
	struct tap_io discard, *t = io->priv ? io->priv : &discard;
	unsigned n = 0;
	while (n < max) {
		struct pkt *pkt = pkt_alloc(pool);
		if (!pkt) {
			/* Leave the frame in the device queue: it is read on
			 * the next round, when buffers are back. */
			break;
		}
		uint8_t hdr[VNET_HDR_V1_LEN];
		struct iovec iov[2] = {
			{ hdr, sizeof(hdr) },
			{ pkt->data, PKT_MAX_FRAME },
		};
		ssize_t got = readv(port_io_fd(port, io), iov, 2);
		if (got < 0) {
			pkt_free(pkt);
			if (errno == EINTR)
				continue;
			break; /* EAGAIN, or an error the next poll reports again */
		}
		if (!frame_rx_accept(port, io, &t->fs, pkt, hdr, (size_t)got, sizeof(hdr))) {
			pkt_free(pkt);
			continue;
		}
		out[n++] = pkt;
	}
	return (int)n;
}

static void tap_tx_batch(struct port *port, struct port_io *io, struct pkt **pkts, unsigned n)
{
	/* An io made without port_io_init() still works; the tap's own
	 * counters are then not kept. */
	struct tap_io discard, *t = io->priv ? io->priv : &discard;
	for (unsigned i = 0; i < n; i++) {
		struct pkt *pkt = pkts[i];
		uint8_t hdr[VNET_HDR_V1_LEN];
		struct iovec iov[FRAME_TX_IOV_MAX];
		unsigned iovcnt = frame_tx_iov(pkt, hdr, sizeof(hdr), iov);
		ssize_t put;
		do
			put = writev(port_io_fd(port, io), iov, (int)iovcnt);
		while (put < 0 && errno == EINTR);
		frame_tx_count(io, &t->fs, pkt, put < 0 ? errno : 0);
		pkt_free(pkt);
	}
}

static void tap_destroy(struct port *port)
{
	struct tap_port *tap = tap_port_cast(port);
	/* The device outlives the port (it is persistent) unless `port del`
	 * asked for it to go and a vxswitchd made it: then it stops being
	 * persistent, and closing its only fd deletes it, wherever its
	 * namespace is. */
	if (tap->delete_on_destroy && tap->owned && ioctl(port->fd, TUNSETPERSIST, 0UL) < 0)
		VLOG_WARN("tap", "%s: TUNSETPERSIST 0: %s: the device stays", port->name, strerror(errno));
	tap_close_queues(tap);
	if (tap->netns_fd >= 0)
		close(tap->netns_fd);
	free(tap);
}

static const struct port_class tap_port_class = {
	.kind_name = "tap",
	.kind = PORT_KIND_TAP,
	.rx_batch = tap_rx_batch,
	.tx_batch = tap_tx_batch,
	.io_init = tap_io_init,
	.io_fini = frame_io_free,
	.destroy = tap_destroy,
};

bool tap_device_free(const char *name, const char *netns)
{
	struct rtnl_link_info li;
	return rtnl_link_get_in(netns, name, 0, &li) == 0 && !(li.flags & TAP_IFF_LOWER_UP);
}
