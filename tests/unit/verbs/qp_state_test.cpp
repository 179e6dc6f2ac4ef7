// ibv_modify_qp's state machine for RC and UD queue pairs: every transition with the attributes
// it requires, a missing or an extra attribute (EINVAL), invalid transitions, bad values, and
// what ibv_query_qp reports afterwards.
#include "verbs_test_support.hpp"

#include <vector>

namespace {

using verbs_test::Address;
using verbs_test::Endpoint;
using verbs_test::Options;

constexpr int kRcInit = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
constexpr int kUdInit = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
constexpr int kRcRtr =
    IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
constexpr int kRcRts = IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;

// The bits of a mask, one by one.
std::vector<int> bits(int mask)
{
	std::vector<int> out;
	for (int bit = 1; bit != 0 && bit <= mask; bit <<= 1)
		if ((mask & bit) != 0)
			out.push_back(bit);
	return out;
}

class VerbsQpState : public ::testing::Test {
protected:
	// Attributes good for every transition of either type.
	ibv_qp_attr full_attr(ibv_qp_state state)
	{
		ibv_qp_attr attr = endpoint_.rtr_attr(self_);
		const ibv_qp_attr rts = endpoint_.rts_attr();
		attr.timeout = rts.timeout;
		attr.retry_cnt = rts.retry_cnt;
		attr.rnr_retry = rts.rnr_retry;
		attr.max_rd_atomic = rts.max_rd_atomic;
		attr.sq_psn = 7;
		attr.rq_psn = 9;
		attr.port_num = 1;
		attr.pkey_index = 0;
		attr.qkey = 0x1234;
		attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		attr.qp_state = state;
		return attr;
	}
	int modify(ibv_qp_state state, int mask)
	{
		ibv_qp_attr attr = full_attr(state);
		return ibv_modify_qp(endpoint_.qp, &attr, mask | IBV_QP_STATE);
	}
	// Each required bit left out, and each of `extra` added, fails with EINVAL and leaves the
	// state alone; then the transition with exactly `required` succeeds.
	void check_transition(ibv_qp_state to, int required, int extra)
	{
		const ibv_qp_state from = endpoint_.state();
		SCOPED_TRACE(testing::Message() << "from " << from << " to " << to);
		for (int bit : bits(required)) {
			EXPECT_EQ(modify(to, required & ~bit), EINVAL) << "without mask bit 0x" << std::hex << bit;
			EXPECT_EQ(endpoint_.state(), from);
		}
		for (int bit : bits(extra)) {
			EXPECT_EQ(modify(to, required | bit), EINVAL) << "with mask bit 0x" << std::hex << bit;
			EXPECT_EQ(endpoint_.state(), from);
		}
		ASSERT_EQ(modify(to, required), 0);
		EXPECT_EQ(endpoint_.state(), to);
		EXPECT_EQ(endpoint_.qp->state, to);
	}
	void make(ibv_qp_type type)
	{
		Options options;
		options.type = type;
		ASSERT_TRUE(endpoint_.create("mlx5_0", options));
		self_ = endpoint_.address();
	}

	Endpoint endpoint_;
	Address self_;
};

TEST_F(VerbsQpState, RcTransitionsRequireExactlyTheirAttributes)
{
	make(IBV_QPT_RC);
	// Not reachable from RESET.
	EXPECT_EQ(modify(IBV_QPS_RTR, kRcRtr), EINVAL);
	EXPECT_EQ(modify(IBV_QPS_RTS, kRcRts), EINVAL);
	EXPECT_EQ(modify(IBV_QPS_SQD, 0), EINVAL);
	EXPECT_EQ(endpoint_.state(), IBV_QPS_RESET);
	check_transition(IBV_QPS_INIT, kRcInit, IBV_QP_QKEY | IBV_QP_AV | IBV_QP_SQ_PSN | IBV_QP_DEST_QPN);
	// INIT -> INIT takes the INIT attributes, all optional; INIT -> RTS is no transition.
	EXPECT_EQ(modify(IBV_QPS_INIT, 0), 0);
	EXPECT_EQ(modify(IBV_QPS_INIT, IBV_QP_ACCESS_FLAGS), 0);
	EXPECT_EQ(modify(IBV_QPS_INIT, IBV_QP_QKEY), EINVAL);
	EXPECT_EQ(modify(IBV_QPS_RTS, kRcRts), EINVAL);
	check_transition(IBV_QPS_RTR, kRcRtr, IBV_QP_SQ_PSN | IBV_QP_QKEY | IBV_QP_TIMEOUT | IBV_QP_PORT);
	// Optional at INIT -> RTR: access flags, pkey index (checked above by succeeding without).
	check_transition(IBV_QPS_RTS, kRcRts, IBV_QP_DEST_QPN | IBV_QP_AV | IBV_QP_RQ_PSN | IBV_QP_QKEY);
	// RTS -> RTS changes optional attributes only.
	EXPECT_EQ(modify(IBV_QPS_RTS, IBV_QP_MIN_RNR_TIMER), 0);
	EXPECT_EQ(modify(IBV_QPS_RTS, IBV_QP_SQ_PSN), EINVAL);
	// The current state, when given, must be the current state.
	ibv_qp_attr attr = full_attr(IBV_QPS_RTS);
	attr.cur_qp_state = IBV_QPS_RTR;
	EXPECT_EQ(ibv_modify_qp(endpoint_.qp, &attr, IBV_QP_STATE | IBV_QP_CUR_STATE), EINVAL);
	attr.cur_qp_state = IBV_QPS_RTS;
	EXPECT_EQ(ibv_modify_qp(endpoint_.qp, &attr, IBV_QP_STATE | IBV_QP_CUR_STATE), 0);

	// What was set is what query_qp reports.
	ibv_qp_attr queried{};
	ibv_qp_init_attr init{};
	ASSERT_EQ(ibv_query_qp(endpoint_.qp, &queried, kRcRtr | kRcRts | IBV_QP_STATE, &init), 0);
	EXPECT_EQ(queried.qp_state, IBV_QPS_RTS);
	EXPECT_EQ(queried.dest_qp_num, self_.qpn);
	EXPECT_EQ(queried.path_mtu, IBV_MTU_1024);
	EXPECT_EQ(queried.sq_psn, 7u);
	EXPECT_EQ(queried.rq_psn, 9u);
	EXPECT_EQ(queried.max_dest_rd_atomic, 4);
	EXPECT_EQ(queried.ah_attr.is_global, 1);
	EXPECT_EQ(std::memcmp(queried.ah_attr.grh.dgid.raw, self_.gid.raw, 16), 0);

	// Any state -> ERR -> RESET -> INIT again.
	check_transition(IBV_QPS_ERR, 0, IBV_QP_PORT | IBV_QP_AV);
	EXPECT_EQ(modify(IBV_QPS_RTS, kRcRts), EINVAL) << "ERR -> RTS";
	EXPECT_EQ(modify(IBV_QPS_INIT, kRcInit), EINVAL) << "ERR -> INIT";
	check_transition(IBV_QPS_RESET, 0, IBV_QP_PORT);
	check_transition(IBV_QPS_INIT, kRcInit, 0);
	check_transition(IBV_QPS_ERR, 0, 0);
	check_transition(IBV_QPS_RESET, 0, 0);
	EXPECT_EQ(modify(IBV_QPS_ERR, 0), 0) << "RESET -> ERR";
	EXPECT_EQ(modify(IBV_QPS_RESET, 0), 0);
	EXPECT_EQ(modify(IBV_QPS_RESET, 0), 0) << "RESET -> RESET";
}

TEST_F(VerbsQpState, UdTransitionsRequireExactlyTheirAttributes)
{
	make(IBV_QPT_UD);
	check_transition(IBV_QPS_INIT, kUdInit, IBV_QP_ACCESS_FLAGS | IBV_QP_AV);
	// INIT -> RTR needs nothing for UD; address, path and peer attributes are RC's.
	check_transition(IBV_QPS_RTR, 0, IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_SQ_PSN);
	EXPECT_EQ(endpoint_.state(), IBV_QPS_RTR);
	check_transition(IBV_QPS_RTS, IBV_QP_SQ_PSN, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY);
	EXPECT_EQ(modify(IBV_QPS_RTS, IBV_QP_QKEY), 0) << "RTS -> RTS may change the Q_Key";
	ibv_qp_attr queried{};
	ibv_qp_init_attr init{};
	ASSERT_EQ(ibv_query_qp(endpoint_.qp, &queried, IBV_QP_QKEY, &init), 0);
	EXPECT_EQ(queried.qkey, 0x1234u);
	EXPECT_EQ(init.qp_type, IBV_QPT_UD);
	check_transition(IBV_QPS_ERR, 0, 0);
	check_transition(IBV_QPS_RESET, 0, 0);
}

TEST_F(VerbsQpState, BadValuesAreRefused)
{
	make(IBV_QPT_RC);
	ibv_qp_attr attr = full_attr(IBV_QPS_INIT);
	attr.port_num = 2;
	EXPECT_EQ(ibv_modify_qp(endpoint_.qp, &attr, IBV_QP_STATE | kRcInit), EINVAL) << "port 2";
	attr.port_num = 0;
	EXPECT_EQ(ibv_modify_qp(endpoint_.qp, &attr, IBV_QP_STATE | kRcInit), EINVAL) << "port 0";
	attr.port_num = 1;
	attr.pkey_index = 5;
	EXPECT_EQ(ibv_modify_qp(endpoint_.qp, &attr, IBV_QP_STATE | kRcInit), EINVAL) << "pkey index beyond the table";
	attr.pkey_index = 0;
	attr.qp_state = IBV_QPS_UNKNOWN;
	EXPECT_EQ(ibv_modify_qp(endpoint_.qp, &attr, IBV_QP_STATE | kRcInit), EINVAL) << "not a state to move to";
	ASSERT_EQ(modify(IBV_QPS_INIT, kRcInit), 0);

	auto rtr = [&](auto &&change) {
		ibv_qp_attr a = full_attr(IBV_QPS_RTR);
		change(a);
		const int error = ibv_modify_qp(endpoint_.qp, &a, IBV_QP_STATE | kRcRtr);
		EXPECT_EQ(endpoint_.state(), IBV_QPS_INIT);
		return error;
	};
	EXPECT_EQ(rtr([](ibv_qp_attr &a) { a.path_mtu = static_cast<ibv_mtu>(0); }), EINVAL);
	EXPECT_EQ(rtr([](ibv_qp_attr &a) { a.path_mtu = static_cast<ibv_mtu>(6); }), EINVAL);
	EXPECT_EQ(rtr([](ibv_qp_attr &a) { a.ah_attr.is_global = 0; }), EINVAL) << "RoCE needs a GRH";
	EXPECT_EQ(rtr([](ibv_qp_attr &a) { a.ah_attr.port_num = 2; }), EINVAL);
	EXPECT_EQ(rtr([](ibv_qp_attr &a) { a.ah_attr.grh.sgid_index = 200; }), EINVAL) << "no such source GID";
	EXPECT_EQ(rtr([](ibv_qp_attr &a) { a.dest_qp_num = 1u << 24; }), EINVAL) << "QPNs have 24 bits";
	EXPECT_EQ(rtr([](ibv_qp_attr &a) { a.max_dest_rd_atomic = 255; }), EINVAL);
	EXPECT_EQ(rtr([](ibv_qp_attr &a) { a.min_rnr_timer = 32; }), EINVAL);
}

TEST_F(VerbsQpState, BadRtsValuesAreRefused)
{
	make(IBV_QPT_RC);
	ASSERT_EQ(modify(IBV_QPS_INIT, kRcInit), 0);
	ASSERT_EQ(modify(IBV_QPS_RTR, kRcRtr), 0);
	auto rts = [&](auto &&change) {
		ibv_qp_attr a = full_attr(IBV_QPS_RTS);
		change(a);
		return ibv_modify_qp(endpoint_.qp, &a, IBV_QP_STATE | kRcRts);
	};
	EXPECT_EQ(rts([](ibv_qp_attr &a) { a.retry_cnt = 8; }), EINVAL);
	EXPECT_EQ(rts([](ibv_qp_attr &a) { a.rnr_retry = 8; }), EINVAL);
	EXPECT_EQ(rts([](ibv_qp_attr &a) { a.timeout = 32; }), EINVAL);
	EXPECT_EQ(rts([](ibv_qp_attr &a) { a.max_rd_atomic = 255; }), EINVAL);
	EXPECT_EQ(endpoint_.state(), IBV_QPS_RTR);
	EXPECT_EQ(rts([](ibv_qp_attr &) {}), 0);
	EXPECT_EQ(endpoint_.state(), IBV_QPS_RTS);
}

} // namespace
