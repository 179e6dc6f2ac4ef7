// Helpers of the verbs tests, which use softdpu's libibverbs through the C API only, as an
// application would: opening a device of the host side of the default topology, an endpoint (a
// device context with its PD, CQs, registered buffer and one queue pair), the RESET -> INIT -> RTR
// -> RTS walk, posting and polling with a deadline, and exchanging addresses with a forked peer.
#pragma once

#include <gtest/gtest.h>

#include <infiniband/verbs.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "unit/device/rdma_transport/child.hpp"

namespace verbs_test {

// How long a completion that must come may take (the device retries and ticks every millisecond).
constexpr int kTimeoutMs = 10000;

inline uint64_t now_ms()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<uint64_t>(ts.tv_sec) * 1000u + static_cast<uint64_t>(ts.tv_nsec) / 1000000u;
}

// The device named `name` of ibv_get_device_list, opened; null when there is none.
inline ibv_context *open_device(const char *name)
{
	int count = 0;
	ibv_device **list = ibv_get_device_list(&count);
	if (list == nullptr)
		return nullptr;
	ibv_context *context = nullptr;
	for (int i = 0; i < count && context == nullptr; ++i)
		if (std::strcmp(ibv_get_device_name(list[i]), name) == 0)
			context = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return context;
}

// ibv_reg_mr with the access flags as an int: verbs.h's ibv_reg_mr macro ANDs them with an
// enumerator of another enumeration, which C++20 deprecates for an enumerator argument.
inline ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr(pd, addr, length, access);
}

// Polls until `count` completions arrived or timeout_ms passed; returns what arrived.
inline std::vector<ibv_wc> poll_n(ibv_cq *cq, size_t count, int timeout_ms = kTimeoutMs)
{
	std::vector<ibv_wc> out;
	const uint64_t deadline = now_ms() + static_cast<uint64_t>(timeout_ms);
	while (out.size() < count) {
		ibv_wc wc[16];
		const int n = ibv_poll_cq(cq, 16, wc);
		if (n < 0) {
			ADD_FAILURE() << "ibv_poll_cq returned " << n;
			break;
		}
		out.insert(out.end(), wc, wc + n);
		if (n == 0) {
			if (now_ms() >= deadline)
				break;
			usleep(200);
		}
	}
	return out;
}

// Everything that arrives within `ms` (to show that nothing does).
inline std::vector<ibv_wc> poll_for(ibv_cq *cq, int ms)
{
	std::vector<ibv_wc> out;
	const uint64_t deadline = now_ms() + static_cast<uint64_t>(ms);
	do {
		ibv_wc wc[16];
		const int n = ibv_poll_cq(cq, 16, wc);
		if (n > 0)
			out.insert(out.end(), wc, wc + n);
		else
			usleep(500);
	} while (now_ms() < deadline);
	return out;
}

// What a peer needs to reach an endpoint (sent as bytes between processes).
struct Address {
	uint32_t qpn = 0;
	uint32_t rkey = 0;
	uint64_t addr = 0;
	ibv_gid gid{};
};

struct Options {
	ibv_qp_type type = IBV_QPT_RC;
	uint32_t max_send_wr = 16;
	uint32_t max_recv_wr = 16;
	uint32_t max_send_sge = 4;
	uint32_t max_recv_sge = 4;
	uint32_t max_inline_data = 64;
	int sq_sig_all = 0;
	bool channel = false;   // the receive CQ reports to a completion channel
	bool send_ops = false;  // created through ibv_create_qp_ex with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS
	ibv_srq *srq = nullptr; // receives from this SRQ (made in `shared_pd`)
	ibv_pd *shared_pd = nullptr;
	size_t buffer_bytes = 8192;
	int access =
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	int gid_index = 1; // the link-local GID as RoCE v2
	uint32_t qkey = 0x11111111;
	uint8_t rnr_retry = 7;
	uint8_t retry_cnt = 7;
	uint8_t timeout = 14;
	int cqe = 64; // of both CQs
};

// A device context with its own PD (unless Options::shared_pd), a send CQ, a receive CQ (on a
// completion channel when asked), a registered buffer and one queue pair.
class Endpoint {
public:
	Endpoint() = default;
	Endpoint(const Endpoint &) = delete;
	Endpoint &operator=(const Endpoint &) = delete;
	~Endpoint() { destroy(); }

	::testing::AssertionResult create(const char *device, const Options &options = {})
	{
		options_ = options;
		ctx = options.shared_pd != nullptr ? options.shared_pd->context : open_device(device);
		if (ctx == nullptr)
			return ::testing::AssertionFailure()
			       << "cannot open " << device << ": " << std::strerror(errno);
		owns_ctx_ = options.shared_pd == nullptr;
		pd = options.shared_pd != nullptr ? options.shared_pd : ibv_alloc_pd(ctx);
		owns_pd_ = options.shared_pd == nullptr;
		if (pd == nullptr)
			return ::testing::AssertionFailure() << "ibv_alloc_pd: " << std::strerror(errno);
		if (options.channel) {
			channel = ibv_create_comp_channel(ctx);
			if (channel == nullptr)
				return ::testing::AssertionFailure()
				       << "ibv_create_comp_channel: " << std::strerror(errno);
		}
		send_cq = ibv_create_cq(ctx, options.cqe, nullptr, nullptr, 0);
		recv_cq = ibv_create_cq(ctx, options.cqe, this, channel, 0);
		if (send_cq == nullptr || recv_cq == nullptr)
			return ::testing::AssertionFailure() << "ibv_create_cq: " << std::strerror(errno);
		storage_.assign((options.buffer_bytes + 7) / 8, 0);
		mr = ibv_reg_mr(pd, buf(), options.buffer_bytes, options.access);
		if (mr == nullptr)
			return ::testing::AssertionFailure() << "ibv_reg_mr: " << std::strerror(errno);
		ibv_qp_init_attr_ex init{};
		init.qp_type = options.type;
		init.send_cq = send_cq;
		init.recv_cq = recv_cq;
		init.srq = options.srq;
		init.sq_sig_all = options.sq_sig_all;
		init.cap.max_send_wr = options.max_send_wr;
		init.cap.max_recv_wr = options.max_recv_wr;
		init.cap.max_send_sge = options.max_send_sge;
		init.cap.max_recv_sge = options.max_recv_sge;
		init.cap.max_inline_data = options.max_inline_data;
		init.comp_mask = IBV_QP_INIT_ATTR_PD;
		init.pd = pd;
		if (options.send_ops) {
			init.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
			init.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
					      IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
					      IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
					      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
		}
		qp = ibv_create_qp_ex(ctx, &init);
		if (qp == nullptr)
			return ::testing::AssertionFailure() << "ibv_create_qp_ex: " << std::strerror(errno);
		return ::testing::AssertionSuccess();
	}

	void destroy()
	{
		auto check = [](int result, const char *what) {
			if (result != 0)
				ADD_FAILURE() << what << " failed: " << std::strerror(result);
		};
		if (qp != nullptr)
			check(ibv_destroy_qp(qp), "ibv_destroy_qp");
		if (mr != nullptr)
			check(ibv_dereg_mr(mr), "ibv_dereg_mr");
		if (send_cq != nullptr)
			check(ibv_destroy_cq(send_cq), "ibv_destroy_cq");
		if (recv_cq != nullptr)
			check(ibv_destroy_cq(recv_cq), "ibv_destroy_cq");
		if (channel != nullptr)
			check(ibv_destroy_comp_channel(channel), "ibv_destroy_comp_channel");
		if (pd != nullptr && owns_pd_)
			check(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
		if (ctx != nullptr && owns_ctx_)
			check(ibv_close_device(ctx), "ibv_close_device");
		qp = nullptr;
		mr = nullptr;
		send_cq = recv_cq = nullptr;
		channel = nullptr;
		pd = nullptr;
		ctx = nullptr;
	}

	uint8_t *buf() { return reinterpret_cast<uint8_t *>(storage_.data()); }
	uint64_t addr(size_t offset = 0) { return reinterpret_cast<uint64_t>(buf() + offset); }

	Address address()
	{
		Address a;
		a.qpn = qp->qp_num;
		a.rkey = mr->rkey;
		a.addr = addr();
		EXPECT_EQ(ibv_query_gid(ctx, 1, options_.gid_index, &a.gid), 0);
		return a;
	}

	int to_init()
	{
		ibv_qp_attr attr{};
		attr.qp_state = IBV_QPS_INIT;
		attr.pkey_index = 0;
		attr.port_num = 1;
		if (options_.type == IBV_QPT_UD) {
			attr.qkey = options_.qkey;
			return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
		}
		attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	}

	// RC: the attributes of INIT -> RTR toward `remote`.
	ibv_qp_attr rtr_attr(const Address &remote) const
	{
		ibv_qp_attr attr{};
		attr.qp_state = IBV_QPS_RTR;
		attr.path_mtu = IBV_MTU_1024;
		attr.dest_qp_num = remote.qpn;
		attr.rq_psn = 0;
		attr.max_dest_rd_atomic = 4;
		attr.min_rnr_timer = 1;
		attr.ah_attr.is_global = 1;
		attr.ah_attr.grh.dgid = remote.gid;
		attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(options_.gid_index);
		attr.ah_attr.grh.hop_limit = 64;
		attr.ah_attr.port_num = 1;
		return attr;
	}
	static constexpr int kRtrMask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	static constexpr int kRtsMask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;

	ibv_qp_attr rts_attr() const
	{
		ibv_qp_attr attr{};
		attr.qp_state = IBV_QPS_RTS;
		attr.timeout = options_.timeout;
		attr.retry_cnt = options_.retry_cnt;
		attr.rnr_retry = options_.rnr_retry;
		attr.sq_psn = 0;
		attr.max_rd_atomic = 4;
		return attr;
	}

	// RC: RESET -> INIT -> RTR -> RTS toward `remote`; UD: to RTS. 0 or the first failure.
	int connect(const Address &remote = {})
	{
		if (int error = to_init())
			return error;
		if (options_.type == IBV_QPT_UD) {
			ibv_qp_attr attr{};
			attr.qp_state = IBV_QPS_RTR;
			if (int error = ibv_modify_qp(qp, &attr, IBV_QP_STATE))
				return error;
			attr.qp_state = IBV_QPS_RTS;
			attr.sq_psn = 0;
			return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
		}
		ibv_qp_attr rtr = rtr_attr(remote);
		if (int error = ibv_modify_qp(qp, &rtr, kRtrMask))
			return error;
		ibv_qp_attr rts = rts_attr();
		return ibv_modify_qp(qp, &rts, kRtsMask);
	}

	ibv_qp_state state()
	{
		ibv_qp_attr attr{};
		ibv_qp_init_attr init{};
		EXPECT_EQ(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init), 0);
		return attr.qp_state;
	}

	ibv_sge sge(size_t offset, uint32_t length) { return {addr(offset), length, mr->lkey}; }

	// One send request (wr.rdma / wr.atomic filled for the one-sided opcodes).
	int post(ibv_wr_opcode opcode, std::vector<ibv_sge> sges, uint64_t remote_addr = 0, uint32_t rkey = 0,
		 unsigned int flags = IBV_SEND_SIGNALED, uint64_t wr_id = 1, uint32_t imm = 0, uint64_t compare_add = 0,
		 uint64_t swap = 0)
	{
		ibv_send_wr wr{};
		wr.wr_id = wr_id;
		wr.opcode = opcode;
		wr.send_flags = flags;
		wr.sg_list = sges.empty() ? nullptr : sges.data();
		wr.num_sge = static_cast<int>(sges.size());
		wr.imm_data = htobe32(imm);
		if (opcode == IBV_WR_ATOMIC_CMP_AND_SWP || opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr = remote_addr;
			wr.wr.atomic.rkey = rkey;
			wr.wr.atomic.compare_add = compare_add;
			wr.wr.atomic.swap = swap;
		} else {
			wr.wr.rdma.remote_addr = remote_addr;
			wr.wr.rdma.rkey = rkey;
		}
		ibv_send_wr *bad = nullptr;
		const int error = ibv_post_send(qp, &wr, &bad);
		if (error != 0 && bad != &wr)
			ADD_FAILURE() << "ibv_post_send failed (" << error << ") without pointing at the request";
		return error;
	}

	int post_recv(std::vector<ibv_sge> sges, uint64_t wr_id = 1)
	{
		ibv_recv_wr wr{};
		wr.wr_id = wr_id;
		wr.sg_list = sges.empty() ? nullptr : sges.data();
		wr.num_sge = static_cast<int>(sges.size());
		ibv_recv_wr *bad = nullptr;
		const int error = ibv_post_recv(qp, &wr, &bad);
		if (error != 0 && bad != &wr)
			ADD_FAILURE() << "ibv_post_recv failed (" << error << ") without pointing at the request";
		return error;
	}

	ibv_context *ctx = nullptr;
	ibv_comp_channel *channel = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *send_cq = nullptr;
	ibv_cq *recv_cq = nullptr;
	ibv_mr *mr = nullptr;
	ibv_qp *qp = nullptr;

private:
	Options options_;
	bool owns_ctx_ = true;
	bool owns_pd_ = true;
	std::vector<uint64_t> storage_; // 8-byte aligned, for atomics
};

// Two RC endpoints of this process connected to each other (A on mlx5_0, B on mlx5_1 unless
// said otherwise: the transport works within one process too).
struct RcPair {
	Endpoint a;
	Endpoint b;
	::testing::AssertionResult connect(const Options &options = {}, const char *device_a = "mlx5_0",
					   const char *device_b = "mlx5_1")
	{
		return connect(options, options, device_a, device_b);
	}
	::testing::AssertionResult connect(const Options &options_a, const Options &options_b, const char *device_a,
					   const char *device_b)
	{
		if (auto made = a.create(device_a, options_a); !made)
			return made;
		if (auto made = b.create(device_b, options_b); !made)
			return made;
		const Address address_a = a.address();
		const Address address_b = b.address();
		if (int error = a.connect(address_b))
			return ::testing::AssertionFailure() << "connecting A: " << std::strerror(error);
		if (int error = b.connect(address_a))
			return ::testing::AssertionFailure() << "connecting B: " << std::strerror(error);
		return ::testing::AssertionSuccess();
	}
};

// Bytes over the socket of a transport_test::Child.
template <typename T> bool send_value(int fd, const T &value)
{
	return transport_test::send_all(fd, &value, sizeof(value));
}
template <typename T> bool recv_value(int fd, T *value, int timeout_ms = 20000)
{
	return transport_test::recv_all(fd, value, sizeof(*value), timeout_ms);
}

} // namespace verbs_test
