/* Internet checksum (RFC 1071, RFC 1624).  See csum.h for the conventions.
 *
 * Why the sums work on native loads: the one's-complement sum of 16-bit
 * words is byte-order independent (RFC 1071 section 2(B)).  Summing words
 * loaded in host order and storing the folded result in host order gives
 * the same bytes as doing everything in network order, so no function here
 * swaps bytes except to account for an odd byte phase. */
#include "packet/csum.h"

#include <errno.h>
#include <string.h>

#include "packet/bytes.h"
#include "packet/pkt.h"

/* Folds a 64-bit one's-complement accumulator to 32 bits (end-around carry). */
static inline uint32_t fold64_to_32(uint64_t acc)
{
	acc = (acc & 0xffffffffu) + (acc >> 32);
	acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
}

static inline uint16_t fold32_to_16(uint32_t sum)
{
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)sum;
}

/* The two 32-bit halves of a 64-bit word, for adding to an accumulator that
 * must not overflow: each call adds less than 2^33. */
static inline uint64_t split64(uint64_t word)
{
	return (word & 0xffffffffu) + (word >> 32);
}

/* The hot loop.  32 bytes per iteration into two independent 64-bit
 * accumulators; a carry out of an accumulator is counted separately
 * (`acc < word` after the add) and added back at the end, which is the
 * end-around carry deferred.  Two chains keep two adders busy; on the
 * machines measured this beat 32-bit lanes into 64-bit accumulators, a
 * single __int128 accumulator and a four-chain 64-byte unroll (see
 * bench/bench_csum.c).  Carry counters cannot overflow: at most one carry
 * per 16 bytes. */
uint32_t csum_partial_scalar(const void *buf, size_t len, uint32_t sum)
{
	const uint8_t *p = buf;
	uint64_t acc_a = sum, acc_b = 0, carries_a = 0, carries_b = 0;

	while (len >= 32) {
		uint64_t w;
		w = load64(p);
		acc_a += w;
		carries_a += acc_a < w;
		w = load64(p + 8);
		acc_b += w;
		carries_b += acc_b < w;
		w = load64(p + 16);
		acc_a += w;
		carries_a += acc_a < w;
		w = load64(p + 24);
		acc_b += w;
		carries_b += acc_b < w;
		p += 32;
		len -= 32;
	}

	/* From here on every term is below 2^33 and there are few of them. */
	uint64_t acc = split64(acc_a) + split64(acc_b) + carries_a + carries_b;
	while (len >= 8) {
		acc += split64(load64(p));
		p += 8;
		len -= 8;
	}
	if (len & 4) {
		acc += load32(p);
		p += 4;
	}
	if (len & 2) {
		acc += load16(p);
		p += 2;
	}
	if (len & 1) {
		/* RFC 1071: pad with a zero byte, in memory order. */
		const uint8_t last[2] = { *p, 0 };
		acc += load16(last);
	}
	return fold64_to_32(acc);
}

#if defined(__x86_64__)
typedef uint32_t csum_u32x8 __attribute__((vector_size(32)));

/* The 16-bit words of 64 bytes a round are added into 32-bit lanes, low
 * and high halves of each 32-bit word apart so nothing carries out of a
 * lane; folded, that is the same one's complement sum.  A lane grows by at
 * most 2 * 0xffff a round, so it cannot overflow below 2 MB (longer buffers
 * take the scalar loop; frames are at most 64 KB).  The tail after the last
 * full round starts at an even offset, so the scalar loop finishing it pairs
 * bytes into the same words. */
__attribute__((target("avx2"))) uint32_t csum_partial_avx2(const void *buf, size_t len, uint32_t sum)
{
	const csum_u32x8 low = { 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff };
	const uint8_t *p = buf;
	csum_u32x8 acc0 = { 0 }, acc1 = { 0 };

	if (len >= CSUM_AVX2_MAX_LEN)
		return csum_partial_scalar(buf, len, sum);
	for (; len >= 64; p += 64, len -= 64) {
		csum_u32x8 a, b;
		memcpy(&a, p, sizeof(a));
		memcpy(&b, p + 32, sizeof(b));
		acc0 += (a & low) + (a >> 16);
		acc1 += (b & low) + (b >> 16);
	}
	acc0 += acc1;
	uint64_t total = sum;
	for (int i = 0; i < 8; i++)
		total += acc0[i];
	return csum_partial_scalar(p, len, fold64_to_32(total));
}

bool csum_partial_avx2_supported(void)
{
	return __builtin_cpu_supports("avx2");
}

/* One predictable branch on a word libgcc's constructor filled in at
 * start-up: cheaper than an indirect call, and no state of our own.  Below
 * CSUM_AVX2_MIN_LEN (headers, small datagrams) the AVX2 loop's final
 * reduction of its eight lanes costs more than it saves (bench_csum: 64 B,
 * scalar 12.8 GB/s, AVX2 8.8). */
enum { CSUM_AVX2_MIN_LEN = 128 };

uint32_t csum_partial(const void *buf, size_t len, uint32_t sum)
{
	if (len >= CSUM_AVX2_MIN_LEN && __builtin_cpu_supports("avx2"))
		return csum_partial_avx2(buf, len, sum);
	return csum_partial_scalar(buf, len, sum);
}
#else
uint32_t csum_partial_avx2(const void *buf, size_t len, uint32_t sum)
{
	return csum_partial_scalar(buf, len, sum);
}

bool csum_partial_avx2_supported(void)
{
	return false;
}

uint32_t csum_partial(const void *buf, size_t len, uint32_t sum)
{
	return csum_partial_scalar(buf, len, sum);
}
#endif

uint16_t csum_fold_nocomplement(uint32_t sum)
{
	return fold32_to_16(sum);
}

uint16_t csum_fold(uint32_t sum)
{
	return (uint16_t)~fold32_to_16(sum);
}

uint16_t csum_buf(const void *buf, size_t len)
{
	return csum_fold(csum_partial(buf, len, 0));
}

/* A host-order 16-bit value as the word it forms in network byte order,
 * loaded in host order: what the summing loop would have read. */
static inline uint32_t be16_word(uint16_t host_value)
{
	const uint8_t bytes[2] = { (uint8_t)(host_value >> 8), (uint8_t)host_value };
	return load16(bytes);
}

uint32_t csum_pseudo_ipv4(const uint8_t src[4], const uint8_t dst[4], uint8_t proto, uint32_t l4_len)
{
	uint64_t acc = (uint64_t)load32(src) + load32(dst);
	acc += be16_word(proto);
	/* The IPv4 pseudo-header length is 16 bits; a larger value only comes
	 * from a caller bug, and adding its high half keeps the sum the same
	 * as the IPv6 form rather than silently truncating. */
	acc += be16_word((uint16_t)l4_len) + be16_word((uint16_t)(l4_len >> 16));
	return fold64_to_32(acc);
}

uint32_t csum_pseudo_ipv6(const uint8_t src[16], const uint8_t dst[16], uint8_t proto, uint32_t l4_len)
{
	uint64_t acc = 0;
	for (int i = 0; i < 16; i += 4)
		acc += (uint64_t)load32(src + i) + load32(dst + i);
	acc += be16_word(proto);
	acc += be16_word((uint16_t)l4_len) + be16_word((uint16_t)(l4_len >> 16));
	return fold64_to_32(acc);
}

/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'). */
uint16_t csum_update16(uint16_t csum_field, uint16_t old_word, uint16_t new_word)
{
	uint32_t sum = (uint32_t)(uint16_t)~csum_field + (uint16_t)~old_word + new_word;
	return csum_fold(sum);
}

uint16_t csum_update32(uint16_t csum_field, uint32_t old_word, uint32_t new_word)
{
	/* The two halves of a native 32-bit load are the two 16-bit words at
	 * those bytes, whatever the host order. */
	uint32_t sum = (uint32_t)(uint16_t)~csum_field;
	sum += (uint16_t)~(uint16_t)old_word + (uint16_t)~(uint16_t)(old_word >> 16);
	sum += (uint16_t)new_word + (uint16_t)(new_word >> 16);
	return csum_fold(sum);
}

static inline uint16_t swap16(uint16_t v)
{
	return (uint16_t)(v << 8 | v >> 8);
}

/* Adds the sum of one piece that starts at byte `phase` of the running sum:
 * a piece starting at an odd position has its bytes in the other halves of
 * the 16-bit words, which in one's complement is the byte-swapped sum. */
static inline uint32_t add_piece(uint32_t sum, const uint8_t *data, uint32_t size, uint32_t phase)
{
	uint32_t piece = csum_partial(data, size, 0);
	if (phase & 1)
		piece = swap16(fold32_to_16(piece));
	uint64_t acc = (uint64_t)sum + piece;
	return fold64_to_32(acc);
}

uint32_t csum_pkt(const struct pkt *pkt, uint32_t ofs, uint32_t len, uint32_t sum)
{
	uint32_t done = 0;

	/* Bytes past the end of the frame do not exist and are not summed;
	 * callers check lengths against the parse first. */
	if (ofs < pkt->size) {
		uint32_t n = pkt->size - ofs < len ? pkt->size - ofs : len;
		sum = add_piece(sum, pkt->data + ofs, n, 0);
		done = n;
		ofs = 0;
	} else {
		ofs -= pkt->size;
	}
	for (uint16_t i = 0; i < pkt->nr_frags && done < len; i++) {
		const struct pkt_frag *frag = &pkt->frags[i];
		if (ofs >= frag->size) {
			ofs -= frag->size;
			continue;
		}
		uint32_t n = frag->size - ofs < len - done ? frag->size - ofs : len - done;
		sum = add_piece(sum, frag->data + ofs, n, done);
		done += n;
		ofs = 0;
	}
	return sum;
}

bool csum_ipv4_hdr_ok(const void *ip, size_t ihl_bytes)
{
	return csum_buf(ip, ihl_bytes) == 0;
}

enum { IPV4_CSUM_FIELD_OFS = 10 };

void csum_ipv4_hdr_set(void *ip, size_t ihl_bytes)
{
	uint8_t *hdr = ip;
	const uint16_t zero = 0;
	memcpy(hdr + IPV4_CSUM_FIELD_OFS, &zero, sizeof(zero));
	uint16_t csum = csum_buf(hdr, ihl_bytes);
	memcpy(hdr + IPV4_CSUM_FIELD_OFS, &csum, sizeof(csum));
}

/* Like the kernel's skb_checksum_help(): a result of 0 is stored as 0xffff
 * (CSUM_MANGLED_0) for every protocol.  For UDP that is required (0 means
 * "no checksum"); for TCP and others +0 and -0 are the same one's-complement
 * value, so receivers accept either. */
int csum_complete_partial(struct pkt *pkt, uint16_t csum_start, uint16_t csum_offset)
{
	uint32_t field = (uint32_t)csum_start + csum_offset;
	if (field + sizeof(uint16_t) > pkt->size)
		return -EINVAL;

	uint32_t sum = csum_pkt(pkt, csum_start, pkt_len(pkt) - csum_start, 0);
	uint16_t csum = csum_fold(sum);
	if (csum == 0)
		csum = 0xffff;
	memcpy(pkt->data + field, &csum, sizeof(csum));
	return 0;
}
