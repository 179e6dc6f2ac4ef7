/*
 * softdpu: types shared by the DOCA libraries (Linux flavour).
 */
#ifndef DOCA_TYPES_H_
#define DOCA_TYPES_H_

#include <linux/types.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A file descriptor that becomes readable when there is something to do. */
typedef int doca_event_handle_t;
#define doca_event_invalid_handle -1

/* Type alias used with the progress engine. */
typedef doca_event_handle_t doca_notification_handle_t;

#define DOCA_GID_BYTE_LENGTH 16

/* Convenience type for representing opaque data. */
union doca_data {
	void *ptr;
	uint64_t u64;
};

/* A gather list element. */
struct doca_gather_list {
	void *addr;
	uint64_t len;
	struct doca_gather_list *next;
};

/*
 * Permission levels of a memory map. DOCA_ACCESS_FLAG_PCI_READ_ONLY and
 * DOCA_ACCESS_FLAG_PCI_READ_WRITE are mutually exclusive. Local reads are always allowed.
 */
enum doca_access_flag {
	DOCA_ACCESS_FLAG_LOCAL_READ_ONLY = 0,
	DOCA_ACCESS_FLAG_LOCAL_READ_WRITE = (1 << 0),
	DOCA_ACCESS_FLAG_RDMA_READ = (1 << 1),
	DOCA_ACCESS_FLAG_RDMA_WRITE = (1 << 2),
	DOCA_ACCESS_FLAG_RDMA_ATOMIC = (1 << 3),
	DOCA_ACCESS_FLAG_PCI_READ_ONLY = (1 << 4),
	DOCA_ACCESS_FLAG_PCI_READ_WRITE = (1 << 5),
	DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING = (1 << 6),
};

/* PCI function type of a device or representor. */
enum doca_pci_func_type {
	DOCA_PCI_FUNC_TYPE_PF = 0,
	DOCA_PCI_FUNC_TYPE_VF,
	DOCA_PCI_FUNC_TYPE_SF,
};

typedef __be16 doca_be16_t;
typedef __be32 doca_be32_t;
typedef __be64 doca_be64_t;

/* Type of memory the GPUNetIO library can allocate. */
enum doca_gpu_mem_type {
	DOCA_GPU_MEM_TYPE_GPU = 0,
	DOCA_GPU_MEM_TYPE_GPU_CPU = 1,
	DOCA_GPU_MEM_TYPE_CPU_GPU = 2,
};

/* Type of wait on time the network card can support. */
enum doca_eth_wait_on_time_type {
	DOCA_ETH_WAIT_ON_TIME_TYPE_NONE = 0,
	DOCA_ETH_WAIT_ON_TIME_TYPE_NATIVE = 1,
	DOCA_ETH_WAIT_ON_TIME_TYPE_DPDK = 2,
};

/* MTU size in bytes. */
enum doca_mtu_size {
	DOCA_MTU_SIZE_256_BYTES = 0x0,
	DOCA_MTU_SIZE_512_BYTES = 0x1,
	DOCA_MTU_SIZE_1K_BYTES = 0x2,
	DOCA_MTU_SIZE_2K_BYTES = 0x3,
	DOCA_MTU_SIZE_4K_BYTES = 0x4,
	DOCA_MTU_SIZE_RAW_ETHERNET = 0x5, /* reserved */
};

#ifdef __cplusplus
}
#endif

#endif /* DOCA_TYPES_H_ */
