#include "port/port.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

const uint32_t port_hist_bounds[PORT_HIST_BUCKETS - 1] = {
	1536, 8192, 16384, 32768, 65536,
};

const char *const port_hist_names[PORT_HIST_BUCKETS] = {
	"<1.5K", "1.5K-8K", "8K-16K", "16K-32K", "32K-64K", ">=64K",
};

unsigned port_hist_bucket(uint32_t len)
{
	unsigned i = 0;
	while (i < PORT_HIST_BUCKETS - 1 && len >= port_hist_bounds[i])
		i++;
	return i;
}

void port_count_tx(struct port_io *io, uint32_t len)
{
	unsigned bucket = port_hist_bucket(len);
	io->stats.tx_frames++;
	io->stats.tx_bytes += len;
	io->stats.tx_hist_frames[bucket]++;
	io->stats.tx_hist_bytes[bucket] += len;
	if (len < PORT_TINY_FRAME) {
		io->stats.tx_tiny_frames++;
		io->stats.tx_tiny_bytes += len;
	}
}

void port_drop_batch(struct port_io *io, struct pkt **pkts, unsigned n, enum drop_reason reason)
{
	for (unsigned i = 0; i < n; i++) {
		port_count_drop(io, reason);
		pkt_free(pkts[i]);
	}
}

int port_io_init(struct port *port, struct port_io *io, unsigned lane)
{
	memset(io, 0, sizeof(*io));
	io->lane = lane;
	if (!port->cls->io_init)
		return 0;
	int err = port->cls->io_init(port, io);
	if (err < 0)
		io->priv = NULL;
	return err;
}

void port_io_fini(struct port *port, struct port_io *io)
{
	if (io->priv && port->cls->io_fini)
		port->cls->io_fini(port, io);
	io->priv = NULL;
}

void port_destroy(struct port *port)
{
	if (!port)
		return;
	port->cls->destroy(port);
}

int port_why(char *why, size_t size, int err, const char *fmt, ...)
{
	if (why && size) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, size, fmt, ap);
		va_end(ap);
	}
	return err;
}
