// What softdpu's libmlx5 reports about a device (QUERY_HCA_CAP, mlx5dv_query_device): taken from
// the verbs queries of the same context (ibv_query_device_ex, ibv_query_port), so that DevX and
// verbs always agree.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace softdpu::mlx5::devx {

struct DeviceCaps {
	uint32_t vhca_id = 0; // the device's index among softdpu's devices (ibv_get_device_index)
	uint32_t max_qp = 0;
	uint32_t max_qp_wr = 0;
	uint32_t max_sge = 0;
	uint32_t max_srq = 0;
	uint32_t max_srq_wr = 0;
	uint32_t max_cq = 0;
	uint32_t max_cqe = 0;
	uint32_t max_mr = 0;
	uint32_t max_pd = 0;
	uint32_t max_qp_rd_atom = 0;      // responder resources per QP
	uint32_t max_qp_init_rd_atom = 0; // outstanding reads and atomics per QP as requester
	uint32_t max_msg_sz = 0;
	uint32_t gid_table_len = 0;
	uint32_t pkey_table_len = 0;
	uint32_t num_ports = 0;
	bool atomic = false;
	bool ethernet = false; // port 1's link layer

	// Fills `caps` from the context's verbs queries. 0 or an errno value.
	static int query(ibv_context *context, DeviceCaps *caps) noexcept;
};

// floor(log2(value)), 0 for 0: the PRM's log_max_* encoding of a limit.
uint32_t log2_floor(uint64_t value) noexcept;
// ceil(log2(value)), 0 for 0 and 1: the log size of a queue that holds `value` entries.
uint32_t log2_ceil(uint64_t value) noexcept;

} // namespace softdpu::mlx5::devx
