/* csum_reference: the Internet checksum (RFC 1071) the obvious way, to check
 * src/packet/csum.c and everything that fills in checksums against.  Test
 * code only (unit tests, fuzz targets, benchmarks' "plain" figure);
 * header-only so fuzz/ and bench/ can use it without linking test support.
 *
 * Deliberately independent of the code under test: nothing here includes or
 * calls packet/csum.c.  Two equivalent views of the same sum:
 *   csum_ref_sum()     16-bit words as they lie in memory (host-order
 *                      loads), the convention of csum.h: its result compares
 *                      with csum_fold_nocomplement(csum_partial(...));
 *   csum_ref_sum_be()  16-bit words as network-order values, unfolded: for
 *                      building and checking header fields read with
 *                      big-endian loads. */
#ifndef VX_TESTS_CSUM_REFERENCE_H
#define VX_TESTS_CSUM_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* One 16-bit word at a time, in memory order, an odd last byte padded with
 * zero; `sum` is added in, the result is folded to 16 bits (not
 * complemented). */
static inline uint32_t csum_ref_sum(const void *buf, size_t len, uint32_t sum)
{
	const uint8_t *p = buf;
	uint64_t acc = sum;
	size_t i;
	for (i = 0; i + 1 < len; i += 2) {
		uint16_t w;
		memcpy(&w, p + i, 2);
		acc += w;
	}
	if (len & 1) {
		const uint8_t last[2] = { p[len - 1], 0 };
		uint16_t w;
		memcpy(&w, last, 2);
		acc += w;
	}
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint32_t)acc;
}

/* Sum of big-endian 16-bit words, odd last byte padded with zero; not
 * folded (fine below 128 KB of data). */
static inline uint32_t csum_ref_sum_be(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

/* Folds to 16 bits (end-around carry), not complemented. */
static inline uint16_t csum_ref_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Pseudo-header sum (csum_ref_sum_be convention) for `family` 4 or 6. */
static inline uint32_t csum_ref_pseudo(int family, const uint8_t *src, const uint8_t *dst,
				       uint8_t proto, uint32_t l4_len)
{
	size_t alen = family == 4 ? 4 : 16;
	uint32_t sum = csum_ref_sum_be(src, alen, 0);
	sum = csum_ref_sum_be(dst, alen, sum);
	sum += proto;
	sum += l4_len >> 16;
	sum += l4_len & 0xffff;
	return sum;
}

/* The same, with the addresses taken from the IP header at l3 (an IPv4
 * header without options, or a fixed IPv6 header). */
static inline uint32_t csum_ref_pseudo_l3(int version, const uint8_t *l3, uint8_t proto, uint32_t l4_len)
{
	if (version == 4)
		return csum_ref_pseudo(4, l3 + 12, l3 + 16, proto, l4_len);
	return csum_ref_pseudo(6, l3 + 8, l3 + 24, proto, l4_len);
}

/* True if the L4 checksum of the datagram at l3 (IP) / l4 is right. */
static inline bool csum_ref_l4_ok(int version, const uint8_t *l3, const uint8_t *l4,
				  uint32_t l4_len, uint8_t proto)
{
	uint32_t sum = csum_ref_pseudo_l3(version, l3, proto, l4_len);
	return csum_ref_fold(csum_ref_sum_be(l4, l4_len, sum)) == 0xffff;
}

/* True if the IPv4 header checksum (options included) is right. */
static inline bool csum_ref_ipv4_hdr_ok(const uint8_t *ip)
{
	return csum_ref_fold(csum_ref_sum_be(ip, (size_t)(ip[0] & 0xf) * 4, 0)) == 0xffff;
}

#endif /* VX_TESTS_CSUM_REFERENCE_H */
