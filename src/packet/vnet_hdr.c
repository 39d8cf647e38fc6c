/* virtio_net_hdr read and write: the header bytes only.  See vnet_hdr.h;
 * the cross-check against a parse lives in parse/vnet_hdr_check.c. */
#include "packet/vnet_hdr.h"

/* Byte offsets inside struct virtio_net_hdr (virtio 1.0 section 5.1.6). */
enum vnet_hdr_field_ofs {
	VNET_OFS_FLAGS = 0,
	VNET_OFS_GSO_TYPE = 1,
	VNET_OFS_HDR_LEN = 2,
	VNET_OFS_GSO_SIZE = 4,
	VNET_OFS_CSUM_START = 6,
	VNET_OFS_CSUM_OFFSET = 8,
	VNET_OFS_NUM_BUFFERS = 10,
};

static inline uint16_t rd_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline void wr_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

enum drop_reason vnet_hdr_read(const uint8_t *buf, size_t len, size_t hdr_size,
			       struct pkt_offload *out)
{
	/* A header size below the 10-byte struct is a caller bug; treating it
	 * as truncated keeps us from reading fields that are not there. */
	if (hdr_size < VNET_HDR_LEN || len < hdr_size)
		return DROP_VNET_HDR_TRUNCATED;
	out->flags = buf[VNET_OFS_FLAGS];
	out->gso_type = buf[VNET_OFS_GSO_TYPE];
	out->hdr_len = rd_le16(buf + VNET_OFS_HDR_LEN);
	out->gso_size = rd_le16(buf + VNET_OFS_GSO_SIZE);
	out->csum_start = rd_le16(buf + VNET_OFS_CSUM_START);
	out->csum_offset = rd_le16(buf + VNET_OFS_CSUM_OFFSET);
	/* num_buffers (v1) is ignored on read: older kernels leave it
	 * uninitialised on a TAP (tun-udp-offload.md section 1). */
	return DROP_NONE;
}

void vnet_hdr_write(const struct pkt_offload *ol, uint8_t *buf, size_t hdr_size)
{
	buf[VNET_OFS_FLAGS] = ol->flags;
	buf[VNET_OFS_GSO_TYPE] = ol->gso_type;
	wr_le16(buf + VNET_OFS_HDR_LEN, ol->hdr_len);
	wr_le16(buf + VNET_OFS_GSO_SIZE, ol->gso_size);
	wr_le16(buf + VNET_OFS_CSUM_START, ol->csum_start);
	wr_le16(buf + VNET_OFS_CSUM_OFFSET, ol->csum_offset);
	for (size_t i = VNET_HDR_LEN; i < hdr_size; i++)
		buf[i] = 0;
	if (hdr_size >= VNET_HDR_V1_LEN)
		wr_le16(buf + VNET_OFS_NUM_BUFFERS, 1);
}
