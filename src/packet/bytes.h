/* Unaligned loads and stores of packet fields.
 *
 * Header fields sit at any byte offset (a VLAN tag or IPv4 options shift
 * everything after them), so they are read and written through memcpy(),
 * which the compiler turns into one plain (unaligned) move, plus a byte swap
 * for the network-order variants.
 *
 *   load16/32/64    native order: for sums and compares, where the byte
 *                   order does not matter (RFC 1071 section 2(B)), and for
 *                   copying a field as it is
 *   load_be16/32    network order to host order, for the value of a field
 *   store_be16/32   host order to network order
 *
 * Pure functions over buffers; static inline so every use compiles to the
 * moves themselves. */
#ifndef VX_PACKET_BYTES_H
#define VX_PACKET_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint16_t load16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t load32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t load64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BYTES_TO_BE16(v) (v)
#define BYTES_TO_BE32(v) (v)
#else
#define BYTES_TO_BE16(v) __builtin_bswap16(v)
#define BYTES_TO_BE32(v) __builtin_bswap32(v)
#endif

static inline uint16_t load_be16(const void *p)
{
	return BYTES_TO_BE16(load16(p));
}

static inline uint32_t load_be32(const void *p)
{
	return BYTES_TO_BE32(load32(p));
}

static inline void store_be16(void *p, uint16_t host)
{
	uint16_t v = BYTES_TO_BE16(host);
	memcpy(p, &v, sizeof(v));
}

static inline void store_be32(void *p, uint32_t host)
{
	uint32_t v = BYTES_TO_BE32(host);
	memcpy(p, &v, sizeof(v));
}

#endif /* VX_PACKET_BYTES_H */
