/* What tap and afpacket ports share: see frame.h. */
#include "port/frame.h"

#include <errno.h>
#include <stdlib.h>

#include "packet/vnet_hdr.h"

unsigned frame_tx_iov(const struct pkt *pkt, uint8_t *hdr, size_t hdr_size, struct iovec *iov)
{
	unsigned n = 0;
	vnet_hdr_write(&pkt->ol, hdr, hdr_size);
	iov[n++] = (struct iovec){ hdr, hdr_size };
	iov[n++] = (struct iovec){ pkt->data, pkt->size };
	for (uint16_t f = 0; f < pkt->nr_frags && f < PKT_MAX_FRAGS; f++)
		iov[n++] = (struct iovec){ (void *)pkt->frags[f].data, pkt->frags[f].size };
	return n;
}

bool frame_rx_accept(struct port *port, struct port_io *io, struct frame_io_stats *fs, struct pkt *pkt,
		     const uint8_t *hdr, size_t got, size_t hdr_size)
{
	if (vnet_hdr_read(hdr, got, hdr_size, &pkt->ol) != DROP_NONE) {
		port_count_drop(io, DROP_VNET_HDR_TRUNCATED);
		return false;
	}
	pkt->size = (uint32_t)(got - hdr_size);
	pkt->in_port = port->id;
	io->stats.rx_frames++;
	io->stats.rx_bytes += pkt->size;
	if (pkt->ol.gso_type != PKT_GSO_NONE)
		fs->rx_gso_frames++;
	if (pkt->ol.flags & PKT_OL_NEEDS_CSUM)
		fs->rx_partial_csum++;
	return true;
}

void frame_tx_count(struct port_io *io, struct frame_io_stats *fs, const struct pkt *pkt, int err)
{
	if (err) {
		fs->tx_errors++;
		fs->last_tx_errno = err;
		port_count_drop(io, DROP_TX_ERROR);
		return;
	}
	port_count_tx(io, pkt_len(pkt));
	if (pkt->ol.gso_type != PKT_GSO_NONE)
		fs->tx_gso_frames++;
}

int frame_io_alloc(struct port_io *io, size_t size)
{
	io->priv = calloc(1, size);
	return io->priv ? 0 : -ENOMEM;
}

void frame_io_free(struct port *port, struct port_io *io)
{
	(void)port;
	free(io->priv);
}

bool port_is_frame(const struct port *port)
{
	return port && (port->cls->kind == PORT_KIND_TAP || port->cls->kind == PORT_KIND_AFPACKET);
}
