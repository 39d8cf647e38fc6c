/* The zero-checksum counter of udp_zero_csum.h: a six-instruction eBPF
 * socket filter over a mmap()ed one-slot array map, by raw bpf(2) calls
 * (bpf_sys.h). */
#include "port/udp_zero_csum.h"

#include "port/bpf_sys.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_ATTACH_BPF
#define SO_ATTACH_BPF 50
#endif

#define INSN BPF_INSN

static int udp_zero_csum_prog(int map_fd)
{
	/* r6 = ctx (LD_ABS wants it there); r0 = UDP check (offset 6, always
	 * within the 8-byte header the kernel validated); if zero: r1 =
	 * &map[0] (a direct value pointer), *r1 += 1 atomically.  Return
	 * 0xffffffff: keep the whole datagram. */
	struct bpf_insn prog[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),
		INSN(BPF_LD | BPF_ABS | BPF_H, 0, 0, 0, 6),
		INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 4, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_VALUE, 0, map_fd),
		INSN(0, 0, 0, 0, 0), /* second half of the 64-bit load: value offset 0 */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 1),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_1, BPF_REG_2, 0, BPF_ADD),
		INSN(BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, -1),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	return bpf_socket_filter_load(prog, sizeof(prog) / sizeof(prog[0]));
}

int udp_zero_csum_attach(int fd, struct udp_zero_csum *zc)
{
	zc->map_fd = -1;
	zc->count = NULL;
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 1;
	a.map_flags = BPF_F_MMAPABLE;
	int map_fd = (int)bpf_sys(BPF_MAP_CREATE, &a);
	if (map_fd < 0)
		return -errno;
	int err;
	void *mem = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		goto err_map;
	}
	int prog_fd = udp_zero_csum_prog(map_fd);
	if (prog_fd < 0) {
		err = prog_fd;
		goto err_unmap;
	}
	/* The socket holds the program (and the program the map) from here. */
	int ret = setsockopt(fd, SOL_SOCKET, SO_ATTACH_BPF, &prog_fd, sizeof(prog_fd));
	err = -errno;
	close(prog_fd);
	if (ret < 0)
		goto err_unmap;
	zc->map_fd = map_fd;
	zc->count = mem;
	return 0;

err_unmap:
	munmap(mem, (size_t)sysconf(_SC_PAGESIZE));
err_map:
	close(map_fd);
	return err;
}

uint64_t udp_zero_csum_read(const struct udp_zero_csum *zc)
{
	return zc->count ? __atomic_load_n(zc->count, __ATOMIC_RELAXED) : 0;
}

void udp_zero_csum_close(struct udp_zero_csum *zc)
{
	if (zc->count)
		munmap((void *)zc->count, (size_t)sysconf(_SC_PAGESIZE));
	if (zc->map_fd >= 0)
		close(zc->map_fd);
	zc->map_fd = -1;
	zc->count = NULL;
}
