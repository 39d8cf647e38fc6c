#include "port/tap.h"

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
#include "util/vlog.h"
#include "port/rtnl.h"

#ifndef TUN_F_USO4
#define TUN_F_USO4 0x20
#define TUN_F_USO6 0x40
#endif

struct tap_port {
	struct port up;
	int netns_fd;   /* namespace the device lives in, -1 = ours */
	unsigned tun_offload_mask; /* TUN_F_* accepted by the kernel */
	unsigned offloads_probed;  /* TAP_OL_*: set at open, read-only after */
	/* TAP_OL_* in force: written by the control thread (knob), read by
	 * anyone, hence atomic (relaxed: it orders nothing else). */
	atomic_uint offloads_active;
};

/* A tap's part of a port_io: the counters its worker writes. */
struct tap_io {
	uint64_t rx_gso_frames;
	uint64_t rx_partial_csum;
	uint64_t tx_gso_frames;
	uint64_t tx_errors;
	int last_tx_errno;
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
	const struct tap_io *t = io ? io->priv : NULL;
	if (t) {
		out->rx_gso_frames = t->rx_gso_frames;
		out->rx_partial_csum = t->rx_partial_csum;
		out->tx_gso_frames = t->tx_gso_frames;
		out->tx_errors = t->tx_errors;
		out->last_tx_errno = t->last_tx_errno;
	}
}

static int tap_io_init(struct port *port, struct port_io *io)
{
	(void)port;
	io->priv = calloc(1, sizeof(struct tap_io));
	return io->priv ? 0 : -ENOMEM;
}

static void tap_io_fini(struct port *port, struct port_io *io)
{
	(void)port;
	free(io->priv);
}

static int tap_open_fd(const char *name)
{
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct ifreq ifr = { 0 };
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
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

int tap_port_open(const struct tap_options *opts, struct port **out)
{
	if (!opts->name || !*opts->name || strlen(opts->name) >= IF_NAMESIZE)
		return -EINVAL;
	struct tap_port *tap = calloc(1, sizeof(*tap));
	if (!tap)
		return -ENOMEM;
	tap->up.cls = &tap_port_class;
	snprintf(tap->up.name, sizeof(tap->up.name), "%s", opts->name);
	tap->up.vni = opts->vni;
	tap->up.mtu = opts->mtu ? opts->mtu : 1500;
	tap->netns_fd = -1;

	int err = tap_open_fd(opts->name);
	if (err < 0)
		goto err_free;
	tap->up.fd = err;

	if (!opts->no_offload)
		tap_probe_offloads(tap);

	if (opts->netns) {
		err = rtnl_netns_open(opts->netns);
		if (err < 0)
			goto err_close;
		tap->netns_fd = err;
		err = rtnl_link_set_netns(opts->name, tap->netns_fd);
		if (err < 0)
			goto err_close_netns;
	}
	err = rtnl_link_configure(tap->netns_fd, opts->name, opts->mtu, true);
	if (err < 0)
		goto err_close_netns;
	*out = &tap->up;
	return 0;

err_close_netns:
	if (tap->netns_fd >= 0)
		close(tap->netns_fd);
err_close:
	close(tap->up.fd);
err_free:
	free(tap);
	return err;
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
		ssize_t got = readv(port->fd, iov, 2);
		if (got < 0) {
			pkt_free(pkt);
			if (errno == EINTR)
				continue;
			break; /* EAGAIN, or an error the next poll reports again */
		}
		if (vnet_hdr_read(hdr, (size_t)got, sizeof(hdr), &pkt->ol) != DROP_NONE) {
			port_count_drop(io, DROP_VNET_HDR_TRUNCATED);
			pkt_free(pkt);
			continue;
		}
		pkt->size = (uint32_t)got - sizeof(hdr);
		pkt->in_port = port->id;
		io->stats.rx_frames++;
		io->stats.rx_bytes += pkt->size;
		if (pkt->ol.gso_type != PKT_GSO_NONE)
			t->rx_gso_frames++;
		if (pkt->ol.flags & PKT_OL_NEEDS_CSUM)
			t->rx_partial_csum++;
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
		struct iovec iov[2 + PKT_MAX_FRAGS];
		unsigned iovcnt = 0;

		vnet_hdr_write(&pkt->ol, hdr, sizeof(hdr));
		iov[iovcnt++] = (struct iovec){ hdr, sizeof(hdr) };
		iov[iovcnt++] = (struct iovec){ pkt->data, pkt->size };
		for (uint16_t f = 0; f < pkt->nr_frags; f++)
			iov[iovcnt++] = (struct iovec){ (void *)pkt->frags[f].data, pkt->frags[f].size };

		ssize_t put;
		do
			put = writev(port->fd, iov, (int)iovcnt);
		while (put < 0 && errno == EINTR);
		if (put < 0) {
			t->tx_errors++;
			t->last_tx_errno = errno;
			port_count_drop(io, DROP_TX_ERROR);
		} else {
			port_count_tx(io, pkt_len(pkt));
			if (pkt->ol.gso_type != PKT_GSO_NONE)
				t->tx_gso_frames++;
		}
		pkt_free(pkt);
	}
}

static void tap_destroy(struct port *port)
{
	struct tap_port *tap = tap_port_cast(port);
	/* Closing the last fd of a non-persistent tap deletes the device,
	 * wherever its namespace is. */
	close(port->fd);
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
	.io_fini = tap_io_fini,
	.destroy = tap_destroy,
};
