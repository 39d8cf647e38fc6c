/* gro_diff: the kernel's GRO, through a tap opened with IFF_NAPI and an
 * AF_PACKET socket with PACKET_VNET_HDR on it; one burst per case, retried
 * when a jiffy passed inside it (the method is explained in gro_diff.c). */
#include "gro_diff.h"

/* ---- the kernel's GRO ----------------------------------------------------- */


static int write_sysfs(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, value, strlen(value));
	int err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

int rig_open(struct kernel_rig *k)
{
	struct ifreq ifr;
	int ctl = -1, err;

	k->tap_fd = k->pkt_fd = -1;
	k->tap_fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (k->tap_fd < 0) {
		err = -errno;
		perror("gro_diff: /dev/net/tun");
		return err;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_NAPI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", TAP_NAME);
	if (ioctl(k->tap_fd, TUNSETIFF, &ifr) < 0) {
		err = -errno;
		perror("gro_diff: TUNSETIFF IFF_NAPI");
		if (err == -EINVAL)
			err = -EOPNOTSUPP;
		goto fail;
	}

	ctl = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ctl < 0) {
		err = -errno;
		goto fail;
	}
	if (ioctl(ctl, SIOCGIFHWADDR, &ifr) < 0 || ioctl(ctl, SIOCGIFINDEX, &ifr) < 0) {
		err = -errno;
		perror("gro_diff: tap hwaddr/index");
		goto fail;
	}
	/* SIOCGIFINDEX overwrote the union: read the address again. */
	k->ifindex = ifr.ifr_ifindex;
	if (ioctl(ctl, SIOCGIFHWADDR, &ifr) < 0) {
		err = -errno;
		goto fail;
	}
	memcpy(k->mac, ifr.ifr_hwaddr.sa_data, 6);

	/* An address (198.51.100.1/24) and up: the frames are addressed to
	 * this MAC, so the stack takes them in as a host would. */
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	memset(&ifr.ifr_addr, 0, sizeof(ifr.ifr_addr));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(0xc6336401); /* 198.51.100.1 */
	if (ioctl(ctl, SIOCSIFADDR, &ifr) < 0) {
		err = -errno;
		perror("gro_diff: SIOCSIFADDR");
		goto fail;
	}
	sin->sin_addr.s_addr = htonl(0xffffff00);
	if (ioctl(ctl, SIOCSIFNETMASK, &ifr) < 0) {
		err = -errno;
		goto fail;
	}
	if (ioctl(ctl, SIOCGIFFLAGS, &ifr) < 0) {
		err = -errno;
		goto fail;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(ctl, SIOCSIFFLAGS, &ifr) < 0) {
		err = -errno;
		perror("gro_diff: tap up");
		goto fail;
	}
	close(ctl);
	ctl = -1;

	char path[128], value[32];
	snprintf(path, sizeof(path), "/sys/class/net/%s/gro_flush_timeout", TAP_NAME);
	snprintf(value, sizeof(value), "%llu", FLUSH_TIMEOUT_NS);
	err = write_sysfs(path, value);
	if (err) {
		fprintf(stderr, "gro_diff: %s: %s\n", path, strerror(-err));
		goto fail;
	}

	k->pkt_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (k->pkt_fd < 0) {
		err = -errno;
		perror("gro_diff: AF_PACKET");
		goto fail;
	}
	int one = 1, rcvbuf = 64 << 20;
	if (setsockopt(k->pkt_fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) < 0) {
		err = -errno;
		perror("gro_diff: PACKET_VNET_HDR");
		goto fail;
	}
	/* Merged frames are chains of the written skbs: their truesize is
	 * large, the default rcvbuf would drop some. */
	if (setsockopt(k->pkt_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		perror("gro_diff: SO_RCVBUFFORCE (continuing)");
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = k->ifindex };
	if (bind(k->pkt_fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		err = -errno;
		perror("gro_diff: bind AF_PACKET");
		goto fail;
	}
	return 0;

fail:
	if (ctl >= 0)
		close(ctl);
	if (k->pkt_fd >= 0)
		close(k->pkt_fd);
	close(k->tap_fd);
	k->tap_fd = k->pkt_fd = -1;
	return err;
}

void rig_close(struct kernel_rig *k)
{
	if (k->pkt_fd >= 0)
		close(k->pkt_fd);
	if (k->tap_fd >= 0)
		close(k->tap_fd);
}

static uint64_t coarse_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Reads one frame within `timeout_ms`; 1 got one, 0 timeout, <0 error.
 * Frames the tap sends itself (IPv6 router solicitations...) are skipped. */
static int rig_recv(struct kernel_rig *k, int timeout_ms, struct out_frame *f, bool *ours)
{
	struct pollfd pfd = { .fd = k->pkt_fd, .events = POLLIN };
	int rc = poll(&pfd, 1, timeout_ms);
	if (rc <= 0)
		return rc < 0 ? -errno : 0;
	struct sockaddr_ll from;
	socklen_t from_len = sizeof(from);
	ssize_t n = recvfrom(k->pkt_fd, k->rx, sizeof(k->rx), MSG_TRUNC, (struct sockaddr *)&from,
			     &from_len);
	if (n < 0)
		return -errno;
	*ours = false;
	if ((size_t)n < sizeof(struct virtio_net_hdr) || (size_t)n > sizeof(k->rx) ||
	    from.sll_pkttype == PACKET_OUTGOING)
		return 1;
	struct virtio_net_hdr vh;
	memcpy(&vh, k->rx, sizeof(vh)); /* host order on a little-endian host */
	const uint8_t *frame = k->rx + sizeof(vh);
	size_t len = (size_t)n - sizeof(vh);
	frame_decap(&frame, &len);
	memset(f, 0, sizeof(*f));
	if (!frame_tcp_id(frame, len, &f->src_port, &f->seq, &f->payload))
		return 1;
	f->len = (uint32_t)len;
	f->gso_size = vh.gso_size;
	f->gso_type = vh.gso_type;
	*ours = true;
	return 1;
}

static void rig_drain(struct kernel_rig *k)
{
	struct out_frame f;
	bool mine;
	while (rig_recv(k, 0, &f, &mine) > 0)
		;
}


/* Writes the case as one burst and collects what the kernel's GRO made of
 * it.  BURST_TICK: a jiffy passed during the burst (retry); BURST_LOST:
 * frames missing after RX_TIMEOUT_MS. */
enum burst_status run_kernel_once(struct kernel_rig *k, const struct wire *w, struct result *res)
{
	memset(res, 0, sizeof(*res));
	rig_drain(k);

	uint64_t t0 = coarse_ns();
	for (unsigned i = 0; i < w->n; i++) {
		ssize_t n = write(k->tap_fd, w->bytes[i], w->len[i]);
		if (n != (ssize_t)w->len[i]) {
			perror("gro_diff: tap write");
			return BURST_LOST;
		}
	}
	uint64_t t1 = coarse_ns();

	/* All came back when the frames account for every input segment:
	 * a merged frame stands for ceil(payload / gso_size) of them. */
	uint64_t got_segments = 0;
	while (got_segments < w->n) {
		struct out_frame f;
		bool mine;
		int rc = rig_recv(k, RX_TIMEOUT_MS, &f, &mine);
		if (rc <= 0)
			return BURST_LOST;
		if (!mine)
			continue;
		result_add(res, &f);
		got_segments += frame_segments(&f);
	}
	/* Anything more would be a duplicate or a stray: wait a little. */
	struct out_frame extra;
	bool mine;
	while (rig_recv(k, 5, &extra, &mine) > 0)
		if (mine)
			result_add(res, &extra);
	return t0 == t1 ? BURST_OK : BURST_TICK;
}

/* Preflight: does the method work at all?  Four in-order segments must
 * come back as one frame in some clean burst. */
bool kernel_merges(struct kernel_rig *k, const struct fb_vxlan *vx)
{
	static struct seg_list segs;
	static struct wire wire;
	static struct result res;
	struct case_ctx ctx = { .l = &segs, .family = 4, .dst_mac = k->mac };
	struct stream s;

	memset(&segs, 0, sizeof(segs));
	if (vx)
		seg_list_set_outer(&segs, vx);
	one_stream(&ctx, &s);
	add_run(&segs, &s, 4, MSS);
	if (build_wire(&segs, vx != NULL, &wire) != 0)
		return false;
	for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++)
		if (run_kernel_once(k, &wire, &res) == BURST_OK)
			return res.n == 1 && res.f[0].gso_size == MSS;
	return false;
}
