/*
 * The PRM mailbox encoding the DevX sample writes and reads by hand.
 *
 * A DevX command is a firmware mailbox: a sequence of 32-bit big-endian words in which each field
 * is named by its bit offset (bit 0 is the top bit of the first word) and its width. A field of at
 * most 32 bits never crosses a word; 64-bit fields are whole big-endian words at a multiple of 64
 * bits. These are the rules of rdma-core's DEVX_SET/DEVX_GET (mlx5dv.h does not export the field
 * table: every DevX user keeps its own, as DPDK's mlx5_prm.h and UCX's do).
 *
 * The offsets below are the sample's own table of the fields it uses, written out from the PRM
 * structure layouts (the structures of rdma-core's providers/mlx5/mlx5_ifc.h and Linux's
 * include/linux/mlx5/mlx5_ifc.h, used here as interface data). Each name is
 * <STRUCTURE>_<FIELD>: an offset and a width in bits, relative to the start of the structure.
 */
#ifndef SAMPLES_DEVX_PRM_H
#define SAMPLES_DEVX_PRM_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

/* A field: bit offset and width. */
struct prm_field {
	uint32_t off;
	uint32_t width;
};
#define PRM_FIELD(off, width) ((struct prm_field){(off), (width)})
/* The same field inside a structure that starts `base` bits into the mailbox. */
#define PRM_AT(base, field) ((struct prm_field){(base) + (field).off, (field).width})

static inline void prm_set(void *box, struct prm_field f, uint32_t value)
{
	uint8_t *word_at = (uint8_t *)box + (f.off / 32) * 4;
	uint32_t word;
	memcpy(&word, word_at, 4);
	const uint32_t shift = 32 - f.width - (f.off % 32);
	const uint64_t mask = (f.width == 32) ? 0xffffffffull : ((1ull << f.width) - 1);
	uint64_t host = be32toh(word);
	host = (host & ~(mask << shift)) | (((uint64_t)value & mask) << shift);
	word = htobe32((uint32_t)host);
	memcpy(word_at, &word, 4);
}

static inline uint32_t prm_get(const void *box, struct prm_field f)
{
	uint32_t word;
	memcpy(&word, (const uint8_t *)box + (f.off / 32) * 4, 4);
	const uint32_t shift = 32 - f.width - (f.off % 32);
	const uint64_t mask = (f.width == 32) ? 0xffffffffull : ((1ull << f.width) - 1);
	return (uint32_t)((be32toh(word) >> shift) & mask);
}

static inline void prm_set64(void *box, struct prm_field f, uint64_t value)
{
	const uint64_t be = htobe64(value);
	memcpy((uint8_t *)box + f.off / 8, &be, 8);
}

static inline uint64_t prm_get64(const void *box, struct prm_field f)
{
	uint64_t be;
	memcpy(&be, (const uint8_t *)box + f.off / 8, 8);
	return be64toh(be);
}

/* The byte address of a field (raw byte arrays: GIDs, MACs). */
static inline uint8_t *prm_addr(void *box, struct prm_field f)
{
	return (uint8_t *)box + f.off / 8;
}

/* ---- Command opcodes ---- */
enum {
	PRM_CMD_QUERY_HCA_CAP = 0x100,
	PRM_CMD_CREATE_MKEY = 0x200,
	PRM_CMD_QUERY_MKEY = 0x201,
	PRM_CMD_DESTROY_MKEY = 0x202,
	PRM_CMD_CREATE_CQ = 0x400,
	PRM_CMD_DESTROY_CQ = 0x401,
	PRM_CMD_QUERY_CQ = 0x402,
	PRM_CMD_CREATE_QP = 0x500,
	PRM_CMD_DESTROY_QP = 0x501,
	PRM_CMD_RST2INIT_QP = 0x502,
	PRM_CMD_INIT2RTR_QP = 0x503,
	PRM_CMD_RTR2RTS_QP = 0x504,
	PRM_CMD_2ERR_QP = 0x507,
	PRM_CMD_QUERY_QP = 0x50b,
	PRM_CMD_QUERY_NIC_VPORT_CONTEXT = 0x754,
	PRM_CMD_ALLOC_PD = 0x800,
	PRM_CMD_DEALLOC_PD = 0x801,
};

/* QUERY_HCA_CAP op_mod: (capability type << 1) | current (1) or maximum (0). */
enum {
	PRM_CAP_GENERAL = 0x0,
	PRM_CAP_ROCE = 0x4,
	PRM_CAP_CURRENT = 0x1,
};

/* Command status (outbox byte 0). */
enum {
	PRM_STATUS_OK = 0x00,
	PRM_STATUS_BAD_OP = 0x02,
	PRM_STATUS_BAD_PARAM = 0x03,
};

/* ---- Every inbox and outbox begins with a 16-byte header ---- */
#define PRM_HEADER_BYTES 16
#define IN_OPCODE PRM_FIELD(0x00, 16)
#define IN_UID PRM_FIELD(0x10, 16) /* written by the device layer, never by the user */
#define IN_OP_MOD PRM_FIELD(0x30, 16)
#define IN_OBJ_ID PRM_FIELD(0x48, 24) /* the object of a destroy/query/modify (pd, cqn, qpn ...) */
#define OUT_STATUS PRM_FIELD(0x00, 8)
#define OUT_SYNDROME PRM_FIELD(0x20, 32)
#define OUT_OBJ_ID PRM_FIELD(0x48, 24) /* what a create returns: pd, mkey_index, cqn, qpn */

/* ---- QUERY_HCA_CAP: a 16-byte inbox, a 4112-byte outbox: the capability at byte 16 ---- */
#define QUERY_HCA_CAP_OUT_BYTES (PRM_HEADER_BYTES + 4096)
#define QUERY_HCA_CAP_OUT_CAPABILITY 0x80 /* bit offset of the capability structure */
/* cmd_hca_cap (general device capabilities) */
#define HCA_CAP_VHCA_ID PRM_FIELD(0x30, 16)
#define HCA_CAP_LOG_MAX_QP_SZ PRM_FIELD(0x88, 8)
#define HCA_CAP_LOG_MAX_QP PRM_FIELD(0x9b, 5)
#define HCA_CAP_LOG_MAX_CQ_SZ PRM_FIELD(0xc8, 8)
#define HCA_CAP_LOG_MAX_CQ PRM_FIELD(0xdb, 5)
#define HCA_CAP_LOG_MAX_MKEY PRM_FIELD(0xea, 6)
#define HCA_CAP_LOG_MAX_RA_REQ_QP PRM_FIELD(0x14a, 6)
#define HCA_CAP_LOG_MAX_RA_RES_QP PRM_FIELD(0x15a, 6)
#define HCA_CAP_GID_TABLE_SIZE PRM_FIELD(0x170, 16)
#define HCA_CAP_PORT_TYPE PRM_FIELD(0x1b6, 2) /* 1: Ethernet (RoCE) */
#define HCA_CAP_NUM_PORTS PRM_FIELD(0x1b8, 8)
#define HCA_CAP_LOG_MAX_MSG PRM_FIELD(0x1c3, 5)
#define HCA_CAP_CQE_VERSION PRM_FIELD(0x1fc, 4)
#define HCA_CAP_ROCE PRM_FIELD(0x21d, 1)
#define HCA_CAP_ATOMIC PRM_FIELD(0x21e, 1)
#define HCA_CAP_LOG_PG_SZ PRM_FIELD(0x258, 8)
#define HCA_CAP_LOG_MAX_PD PRM_FIELD(0x32b, 5)
/* roce_cap */
#define ROCE_CAP_L3_TYPE PRM_FIELD(0x8c, 4)
#define ROCE_CAP_ROCE_VERSION PRM_FIELD(0x98, 8)
#define ROCE_CAP_R_ROCE_DEST_UDP_PORT PRM_FIELD(0xb0, 16)

/* ---- QUERY_NIC_VPORT_CONTEXT: 16-byte inbox; outbox: nic_vport_context at byte 16 ---- */
#define QUERY_NIC_VPORT_CONTEXT_OUT_BYTES (PRM_HEADER_BYTES + 256)
#define QUERY_NIC_VPORT_CONTEXT_OUT_CONTEXT 0x80
#define NIC_VPORT_CONTEXT_ROCE_EN PRM_FIELD(0x1f, 1)
#define NIC_VPORT_CONTEXT_MTU PRM_FIELD(0x130, 16)
/* permanent_address: a mac_address_layout (16 reserved bits, then the 48-bit MAC) */
#define NIC_VPORT_CONTEXT_PERMANENT_ADDRESS PRM_FIELD(0x7a0, 64)

/* ---- ALLOC_PD: 16-byte inbox; outbox: pd at OUT_OBJ_ID ---- */

/* ---- CREATE_MKEY: a 272-byte inbox (then the translation entries, none over a umem) ---- */
#define CREATE_MKEY_IN_BYTES 272
#define CREATE_MKEY_IN_PG_ACCESS PRM_FIELD(0x60, 1)
#define CREATE_MKEY_IN_MKEY_UMEM_VALID PRM_FIELD(0x61, 1)
#define CREATE_MKEY_IN_MKC 0x80 /* bit offset of the mkey context (mkc, 64 bytes) */
#define CREATE_MKEY_IN_TRANSLATIONS_OCTWORD_ACTUAL_SIZE PRM_FIELD(0x300, 32)
#define CREATE_MKEY_IN_MKEY_UMEM_ID PRM_FIELD(0x320, 32)
#define CREATE_MKEY_IN_MKEY_UMEM_OFFSET PRM_FIELD(0x340, 64)
/* mkc */
#define MKC_A PRM_FIELD(0x11, 1)  /* remote atomic */
#define MKC_RW PRM_FIELD(0x12, 1) /* remote write */
#define MKC_RR PRM_FIELD(0x13, 1) /* remote read */
#define MKC_LW PRM_FIELD(0x14, 1) /* local write */
#define MKC_LR PRM_FIELD(0x15, 1) /* local read */
#define MKC_ACCESS_MODE_1_0 PRM_FIELD(0x16, 2)
#define MKC_QPN PRM_FIELD(0x20, 24)
#define MKC_MKEY_7_0 PRM_FIELD(0x38, 8)
#define MKC_PD PRM_FIELD(0x68, 24)
#define MKC_START_ADDR PRM_FIELD(0x80, 64)
#define MKC_LEN PRM_FIELD(0xc0, 64)
#define MKC_TRANSLATIONS_OCTWORD_SIZE PRM_FIELD(0x1a0, 32)
#define MKC_LOG_PAGE_SIZE PRM_FIELD(0x1db, 5)
enum { PRM_MKC_ACCESS_MODE_MTT = 0x1 };

/* ---- CREATE_CQ: a 272-byte inbox (then page addresses, none over a umem) ---- */
#define CREATE_CQ_IN_BYTES 272
#define CREATE_CQ_IN_CQC 0x80 /* bit offset of the CQ context (cqc, 64 bytes) */
#define CREATE_CQ_IN_CQ_UMEM_OFFSET PRM_FIELD(0x280, 64)
#define CREATE_CQ_IN_CQ_UMEM_ID PRM_FIELD(0x2c0, 32)
#define CREATE_CQ_IN_CQ_UMEM_VALID PRM_FIELD(0x2e0, 1)
/* cqc */
#define CQC_DBR_UMEM_VALID PRM_FIELD(0x06, 1)
#define CQC_CQE_SZ PRM_FIELD(0x08, 3) /* 0: 64-byte CQEs */
#define CQC_DBR_UMEM_ID PRM_FIELD(0x20, 32)
#define CQC_LOG_CQ_SIZE PRM_FIELD(0x63, 5)
#define CQC_UAR_PAGE PRM_FIELD(0x68, 24)
#define CQC_C_EQN PRM_FIELD(0xa0, 32)        /* c_eqn_or_apu_element; older layouts: 8 bits at 0xb8 */
#define CQC_LOG_PAGE_SIZE PRM_FIELD(0xc3, 5) /* log2(page size) - 12 */
#define CQC_DBR_ADDR PRM_FIELD(0x1c0, 64)    /* with dbr_umem_valid: the offset in the dbr umem */

/* ---- CREATE_QP: a 272-byte inbox; the QP transitions have the same shape ---- */
#define CREATE_QP_IN_BYTES 272
#define CREATE_QP_IN_OPT_PARAM_MASK PRM_FIELD(0x80, 32)
#define CREATE_QP_IN_QPC 0xc0 /* bit offset of the QP context (qpc, 232 bytes) */
#define CREATE_QP_IN_WQ_UMEM_OFFSET PRM_FIELD(0x800, 64)
#define CREATE_QP_IN_WQ_UMEM_ID PRM_FIELD(0x840, 32)
#define CREATE_QP_IN_WQ_UMEM_VALID PRM_FIELD(0x860, 1)
#define QP_MODIFY_IN_BYTES 272 /* rst2init_qp_in, init2rtr_qp_in, rtr2rts_qp_in */
#define QP_MODIFY_IN_QPN PRM_FIELD(0x48, 24)
#define QP_MODIFY_IN_OPT_PARAM_MASK PRM_FIELD(0x80, 32)
#define QP_MODIFY_IN_QPC 0xc0
#define QP_2ERR_IN_BYTES 16 /* 2err_qp_in: the header with the qpn */
#define QUERY_QP_IN_BYTES 16
#define QUERY_QP_OUT_BYTES 272
#define QUERY_QP_OUT_QPC 0xc0
/* qpc */
#define QPC_STATE PRM_FIELD(0x00, 4)
#define QPC_ST PRM_FIELD(0x08, 8) /* service type: 0 RC */
#define QPC_PM_STATE PRM_FIELD(0x13, 2)
#define QPC_PD PRM_FIELD(0x28, 24)
#define QPC_MTU PRM_FIELD(0x40, 3) /* IB MTU enumeration: 1 256 ... 5 4096 */
#define QPC_LOG_MSG_MAX PRM_FIELD(0x43, 5)
#define QPC_LOG_RQ_SIZE PRM_FIELD(0x49, 4)
#define QPC_LOG_RQ_STRIDE PRM_FIELD(0x4d, 3) /* log2(receive WQE bytes) - 4 */
#define QPC_NO_SQ PRM_FIELD(0x50, 1)
#define QPC_LOG_SQ_SIZE PRM_FIELD(0x51, 4) /* log2 of the send queue's 64-byte WQE basic blocks */
#define QPC_UAR_PAGE PRM_FIELD(0x68, 24)
#define QPC_USER_INDEX PRM_FIELD(0x88, 24)
#define QPC_LOG_PAGE_SIZE PRM_FIELD(0xa3, 5) /* log2(page size) - 12 */
#define QPC_REMOTE_QPN PRM_FIELD(0xa8, 24)
#define QPC_PRIMARY_ADDRESS_PATH 0xc0 /* bit offset of the primary address path (ads, 44 bytes) */
#define QPC_LOG_ACK_REQ_FREQ PRM_FIELD(0x380, 4)
#define QPC_LOG_SRA_MAX PRM_FIELD(0x388, 3) /* log2 of outstanding RDMA READs/atomics as initiator */
#define QPC_RETRY_COUNT PRM_FIELD(0x38d, 3)
#define QPC_RNR_RETRY PRM_FIELD(0x390, 3)
#define QPC_NEXT_SEND_PSN PRM_FIELD(0x3c8, 24)
#define QPC_CQN_SND PRM_FIELD(0x3e8, 24)
#define QPC_LOG_RRA_MAX PRM_FIELD(0x488, 3) /* log2 of RDMA READs/atomics accepted as responder */
#define QPC_RRE PRM_FIELD(0x490, 1)         /* remote read enable */
#define QPC_RWE PRM_FIELD(0x491, 1)         /* remote write enable */
#define QPC_RAE PRM_FIELD(0x492, 1)         /* remote atomic enable */
#define QPC_MIN_RNR_NAK PRM_FIELD(0x4a3, 5)
#define QPC_NEXT_RCV_PSN PRM_FIELD(0x4a8, 24)
#define QPC_CQN_RCV PRM_FIELD(0x4e8, 24)
#define QPC_DBR_ADDR PRM_FIELD(0x500, 64) /* with dbr_umem_valid: the offset in the dbr umem */
#define QPC_RQ_TYPE PRM_FIELD(0x565, 3)   /* 0: a regular receive queue */
#define QPC_DBR_UMEM_VALID PRM_FIELD(0x683, 1)
#define QPC_DBR_UMEM_ID PRM_FIELD(0x720, 32)
/* ads (address path), offsets within it */
#define ADS_PKEY_INDEX PRM_FIELD(0x10, 16)
#define ADS_GRH PRM_FIELD(0x28, 1)
#define ADS_ACK_TIMEOUT PRM_FIELD(0x40, 5) /* 4.096 us * 2^n */
#define ADS_SRC_ADDR_INDEX PRM_FIELD(0x48, 8)
#define ADS_HOP_LIMIT PRM_FIELD(0x58, 8)
#define ADS_RGID_RIP PRM_FIELD(0x80, 128) /* 16 raw bytes */
#define ADS_UDP_SPORT PRM_FIELD(0x110, 16)
#define ADS_VHCA_PORT_NUM PRM_FIELD(0x128, 8)
#define ADS_RMAC_47_32 PRM_FIELD(0x130, 16)
#define ADS_RMAC_31_0 PRM_FIELD(0x140, 32)

enum {
	PRM_QP_ST_RC = 0x0,
	PRM_QP_PM_MIGRATED = 0x3,
	PRM_QP_STATE_RST = 0x0,
	PRM_QP_STATE_INIT = 0x1,
	PRM_QP_STATE_RTR = 0x2,
	PRM_QP_STATE_RTS = 0x3,
	PRM_QP_STATE_ERR = 0x6,
};

#endif
