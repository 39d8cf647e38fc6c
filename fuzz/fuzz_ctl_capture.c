/* Fuzz what vxctl decodes from the daemon's capture stream: the bytes as a
 * chunk body (ctl_capture_next over every record, then a summary line of
 * each frame), and the same bytes as one frame of every shape the summary
 * decodes (Ethernet, VLANs, IPv4/IPv6, TCP/UDP/ICMP, VXLAN and its inner
 * frame).  Nothing may read outside the input; a summary is one line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_capture.h"
#include "ctl/ctl_cmd.h"

static void check_line(const struct dp_capture_rec *rec, const uint8_t *frame)
{
	char line[512];
	int n = ctl_capture_summary(rec, frame, line, sizeof(line));
	if (n < 0 || (size_t)n >= sizeof(line) || strlen(line) != (size_t)n || strchr(line, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0, prev = 0;
	struct dp_capture_rec rec;
	const uint8_t *frame;
	int ret;
	while ((ret = ctl_capture_next(data, size, &off, &rec, &frame)) > 0) {
		if (off <= prev || off > size || frame + rec.caplen > data + size)
			abort();
		prev = off;
		check_line(&rec, frame);
	}
	/* The bytes as a frame, in a buffer of exactly their size. */
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	rec = (struct dp_capture_rec){ .caplen = (uint32_t)size, .len = (uint32_t)size, .dir = CTL_CAPTURE_IN };
	check_line(&rec, copy);
	free(copy);
	return 0;
}
