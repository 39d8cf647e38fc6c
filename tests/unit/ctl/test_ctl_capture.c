/* Unit tests for src/ctl/ctl_capture.c: records of a chunk decoded in
 * order, every malformed shape refused, and the summary line of ICMP, UDP
 * and VXLAN (outer) frames, reading nothing past caplen. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctl/ctl_capture.h"
#include "ctl/ctl_cmd.h"

static size_t ip4(uint8_t *p, uint8_t proto, const uint8_t *payload, size_t len)
{
	uint8_t h[20] = { 0x45, 0, 0, (uint8_t)(20 + len), 0, 0, 0x40, 0, 64, proto, 0, 0,
			  192, 0, 2, 1, 192, 0, 2, 2 };
	memcpy(p, h, 20);
	memcpy(p + 20, payload, len);
	return 20 + len;
}

static size_t eth(uint8_t *p, uint16_t type)
{
	static const uint8_t macs[12] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1 };
	memcpy(p, macs, 12);
	p[12] = (uint8_t)(type >> 8);
	p[13] = (uint8_t)type;
	return 14;
}

static size_t icmp_frame(uint8_t *f)
{
	uint8_t echo[12] = { 8, 0 };
	size_t n = eth(f, 0x0800);
	return n + ip4(f + n, 1, echo, sizeof(echo));
}

static size_t put_rec(uint8_t *body, const uint8_t *frame, uint32_t len, uint8_t dir)
{
	struct dp_capture_rec rec = { .ts_ns = 1, .caplen = len, .len = len, .dir = dir };
	memcpy(body, &rec, sizeof(rec));
	memcpy(body + sizeof(rec), frame, len);
	return dp_capture_rec_size(len);
}

static void test_records(void **state)
{
	(void)state;
	uint8_t frame[64], body[256] = { 0 };
	size_t len = icmp_frame(frame);
	size_t size = put_rec(body, frame, (uint32_t)len, CTL_CAPTURE_IN);
	size += put_rec(body + size, frame, 20, CTL_CAPTURE_OUT);
	size_t off = 0;
	struct dp_capture_rec rec;
	const uint8_t *f;
	assert_int_equal(ctl_capture_next(body, size, &off, &rec, &f), 1);
	assert_int_equal(rec.caplen, len);
	assert_int_equal(rec.dir, CTL_CAPTURE_IN);
	assert_memory_equal(f, frame, len);
	assert_int_equal(ctl_capture_next(body, size, &off, &rec, &f), 1);
	assert_int_equal(rec.caplen, 20);
	assert_int_equal(rec.dir, CTL_CAPTURE_OUT);
	assert_int_equal(ctl_capture_next(body, size, &off, &rec, &f), 0);
	assert_int_equal(off, size);

	/* truncated header, truncated frame, bad dir, caplen over len or snaplen */
	off = 0;
	assert_int_equal(ctl_capture_next(body, 10, &off, &rec, &f), -EPROTO);
	off = 0;
	assert_int_equal(ctl_capture_next(body, sizeof(rec) + len - 1, &off, &rec, &f), -EPROTO);
	struct dp_capture_rec bad = { .caplen = 4, .len = 4, .dir = 3 };
	memcpy(body, &bad, sizeof(bad));
	off = 0;
	assert_int_equal(ctl_capture_next(body, 64, &off, &rec, &f), -EPROTO);
	bad = (struct dp_capture_rec){ .caplen = 5, .len = 4, .dir = 1 };
	memcpy(body, &bad, sizeof(bad));
	off = 0;
	assert_int_equal(ctl_capture_next(body, 64, &off, &rec, &f), -EPROTO);
	bad = (struct dp_capture_rec){ .caplen = CTL_CAPTURE_SNAPLEN + 1, .len = CTL_CAPTURE_SNAPLEN + 1, .dir = 1 };
	memcpy(body, &bad, sizeof(bad));
	off = 0;
	assert_int_equal(ctl_capture_next(body, 64, &off, &rec, &f), -EPROTO);
}

static void test_summaries(void **state)
{
	(void)state;
	uint8_t f[256];
	char line[512];
	size_t len = icmp_frame(f);
	struct dp_capture_rec rec = { .ts_ns = 0, .caplen = (uint32_t)len, .len = (uint32_t)len,
				       .dir = CTL_CAPTURE_IN };
	ctl_capture_summary(&rec, f, line, sizeof(line));
	assert_non_null(strstr(line, " in  02:00:00:00:00:01 > 02:00:00:00:00:02, IPv4 192.0.2.1 > 192.0.2.2: ICMP echo request, length 46"));

	/* UDP to port 9 */
	uint8_t udp[12] = { 0x04, 0xd2, 0, 9, 0, 12 };
	len = eth(f, 0x0800);
	len += ip4(f + len, 17, udp, sizeof(udp));
	rec.caplen = rec.len = (uint32_t)len;
	rec.dir = CTL_CAPTURE_OUT;
	ctl_capture_summary(&rec, f, line, sizeof(line));
	assert_non_null(strstr(line, " out 02:00:00:00:00:01 > 02:00:00:00:00:02, IPv4 192.0.2.1.1234 > 192.0.2.2.9: UDP"));

	/* VXLAN: outer UDP to 4789, VNI 99, the inner ICMP frame */
	uint8_t inner[64], dgram[128] = { 0xc0, 0x00, 0x12, 0xb5 };
	size_t ilen = icmp_frame(inner);
	uint8_t vxh[8] = { 0x08, 0, 0, 0, 0, 0, 99, 0 };
	memcpy(dgram + 8, vxh, 8);
	memcpy(dgram + 16, inner, ilen);
	len = eth(f, 0x0800);
	len += ip4(f + len, 17, dgram, 16 + ilen);
	rec.caplen = rec.len = (uint32_t)len;
	ctl_capture_summary(&rec, f, line, sizeof(line));
	assert_non_null(strstr(line, "UDP VXLAN vni 99: 02:00:00:00:00:01 > 02:00:00:00:00:02, IPv4 192.0.2.1 > 192.0.2.2: ICMP echo request"));

	/* Cut short: nothing read past caplen (ASan watches), still one line. */
	for (uint32_t cut = 0; cut < len; cut++) {
		uint8_t *exact = malloc(cut ? cut : 1);
		memcpy(exact, f, cut);
		rec.caplen = cut;
		int n = ctl_capture_summary(&rec, exact, line, sizeof(line));
		assert_true(n > 0 && !strchr(line, '\n'));
		free(exact);
	}
	/* A small buffer truncates, NUL-terminated. */
	rec.caplen = (uint32_t)len;
	assert_true(ctl_capture_summary(&rec, f, line, 10) <= 9);
	assert_true(strlen(line) <= 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_summaries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
