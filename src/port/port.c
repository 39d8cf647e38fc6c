#include "port/port.h"

#include <stddef.h>

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

void port_count_tx(struct port *port, uint32_t len)
{
	unsigned bucket = port_hist_bucket(len);
	port->stats.tx_frames++;
	port->stats.tx_bytes += len;
	port->stats.tx_hist_frames[bucket]++;
	port->stats.tx_hist_bytes[bucket] += len;
}

void port_drop_batch(struct port *port, struct pkt **pkts, unsigned n, enum drop_reason reason)
{
	for (unsigned i = 0; i < n; i++) {
		port_count_drop(port, reason);
		pkt_free(pkts[i]);
	}
}

void port_destroy(struct port *port)
{
	if (!port)
		return;
	port->cls->destroy(port);
}
