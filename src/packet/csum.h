/* Internet checksum (RFC 1071) over buffers and pkt chains, pseudo-headers,
 * incremental update (RFC 1624) and completing a partial checksum the way a
 * NIC does for CHECKSUM_PARTIAL / VIRTIO_NET_HDR_F_NEEDS_CSUM.
 *
 * Conventions: a "sum" is an unfolded 32-bit one's-complement accumulator of
 * 16-bit words read in memory order (so it works on raw network-order bytes
 * on any host).  csum_fold() returns the finished checksum, already
 * complemented, as a value to store with memcpy into the header field.  No
 * byte swapping is ever needed by callers for fields that they also read
 * from the wire.  Pure functions: no I/O, no globals. */
#ifndef VX_PACKET_CSUM_H
#define VX_PACKET_CSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pkt;

/* Adds `len` bytes at `buf` to `sum`.  An odd length is padded with a zero
 * byte, as RFC 1071 says; to continue a sum across pieces where one piece has
 * odd length, use csum_pkt() which keeps the byte phase right.
 *
 * The one checksum loop of vxswitch: GRO, GSO, rx-csum, encapsulation and
 * csum_pkt() all come here, so a faster loop helps every path at once and
 * there is one loop to get right.  It picks, on each call, the AVX2 loop
 * when the CPU has it (one predictable branch on what the compiler's
 * runtime learnt at start-up) and the scalar one otherwise.  The two may
 * return different unfolded sums for the same bytes (they add in different
 * groupings); folded they are the same checksum, always (test_csum.c
 * checks this over random buffers, lengths and alignments). */
uint32_t csum_partial(const void *buf, size_t len, uint32_t sum);

/* The two loops csum_partial() chooses between, public so tests and
 * bench_csum can run each one on any machine that has it.
 *  - scalar: 32 bytes a round into two 64-bit accumulators, any x86-64 or
 *    other CPU;
 *  - AVX2: 64 bytes a round into 32-bit lanes, about twice the scalar
 *    speed on 1500-byte segments.  Call it only when
 *    csum_partial_avx2_supported() (elsewhere it is the scalar loop).
 *    Buffers of CSUM_AVX2_MAX_LEN or more go to the scalar loop, as its
 *    lanes could overflow. */
enum { CSUM_AVX2_MAX_LEN = 2u << 20 };
uint32_t csum_partial_scalar(const void *buf, size_t len, uint32_t sum);
uint32_t csum_partial_avx2(const void *buf, size_t len, uint32_t sum);
bool csum_partial_avx2_supported(void);

/* Folds to 16 bits and complements: the value that goes in the header. */
uint16_t csum_fold(uint32_t sum);

/* Folds to 16 bits without complementing (the pseudo-header "partial" value
 * a NEEDS_CSUM frame carries in its checksum field). */
uint16_t csum_fold_nocomplement(uint32_t sum);

/* Checksum of a whole buffer: csum_fold(csum_partial(buf, len, 0)). */
uint16_t csum_buf(const void *buf, size_t len);

/* Pseudo-header sums.  Addresses are raw network-order bytes (4 or 16),
 * `proto` is the IP protocol number, `l4_len` the L4 length in host order. */
uint32_t csum_pseudo_ipv4(const uint8_t src[4], const uint8_t dst[4], uint8_t proto, uint32_t l4_len);
uint32_t csum_pseudo_ipv6(const uint8_t src[16], const uint8_t dst[16], uint8_t proto, uint32_t l4_len);

/* RFC 1624 eqn. 3: the new checksum field when a 16-bit (or 32-bit) word
 * covered by it changes from old to new.  All values as stored in the
 * packet (network order bytes loaded with memcpy). */
uint16_t csum_update16(uint16_t csum_field, uint16_t old_word, uint16_t new_word);
uint16_t csum_update32(uint16_t csum_field, uint32_t old_word, uint32_t new_word);

/* Sum of `len` bytes of a pkt starting at `ofs`, across the linear part and
 * the frags, with correct handling of pieces of odd length. */
uint32_t csum_pkt(const struct pkt *pkt, uint32_t ofs, uint32_t len, uint32_t sum);

/* True if the IPv4 header at `ip` (ihl*4 bytes) has a valid checksum. */
bool csum_ipv4_hdr_ok(const void *ip, size_t ihl_bytes);
/* Recomputes and stores the IPv4 header checksum. */
void csum_ipv4_hdr_set(void *ip, size_t ihl_bytes);

/* Completes a partial checksum as a NIC would: folds everything from
 * `csum_start` to the end of the frame (linear and frags; the field holds the
 * pseudo-header sum) and stores the result at csum_start + csum_offset.
 * A UDP result of 0 is stored as 0xffff.  Returns 0, or -EINVAL if the field
 * does not lie inside the linear part. */
int csum_complete_partial(struct pkt *pkt, uint16_t csum_start, uint16_t csum_offset);

#endif
