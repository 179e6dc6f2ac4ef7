// DevX CQs and QPs through the C API: CREATE/QUERY/MODIFY/DESTROY_CQ over umems, CREATE_QP (RC)
// with its transitions translated to the backing verbs QP, QUERY_QP, wrong states, objects still in
// use; and mlx5dv_devx_{cq,qp}_{query,modify} on CQs and QPs made through verbs. (No WQE runs
// here: the work-queue engine's tests cover execution.)
#include "devx_support.hpp"

#include <array>
#include <cstring>

using namespace mlx5_test;

namespace {

constexpr uint64_t kDoorbells = 8192; // the doorbell records' offset in the test's umem

class DevxQueuesTest : public DevxTest {
protected:
	void SetUp() override
	{
		DevxTest::SetUp();
		memory_ = std::make_unique<Pages>(16384);
		umem_ = reg_umem(memory_->data, memory_->size);
		ASSERT_NE(umem_, nullptr);
		uar_ = alloc_uar();
		ASSERT_NE(uar_, nullptr);
		pd_ = alloc_pd(&pdn_);
		ASSERT_NE(pd_, nullptr);
	}

	// A CQ of 2^log_size CQEs at the start of the umem, its doorbell at kDoorbells.
	mlx5dv_devx_obj *make_cq(uint32_t log_size, uint32_t *cqn)
	{
		Mailbox out(16);
		mlx5dv_devx_obj *cq =
		    create(cq_in(log_size, umem_->umem_id, umem_->umem_id, kDoorbells, uar_->page_id), &out);
		*cqn = cq != nullptr ? id_of(out) : 0;
		return cq != nullptr ? keep(cq) : nullptr;
	}

	// A QP whose RQ (4 x 64 bytes) and SQ (8 x 64 bytes) lie at 4096 of the umem, doorbell at
	// kDoorbells + 64.
	Mailbox qp_mailbox(uint32_t cqn) const
	{
		Mailbox in = qp_in(pdn_, cqn, 3, 2, umem_->umem_id, umem_->umem_id, kDoorbells + 64, uar_->page_id);
		prm_set_bits(in.data(), 0x800, 64, 4096); // wq_umem_offset
		return in;
	}

	mlx5dv_devx_obj *make_qp(uint32_t cqn, uint32_t *qpn)
	{
		Mailbox out(16);
		mlx5dv_devx_obj *qp = create(qp_mailbox(cqn), &out);
		*qpn = qp != nullptr ? id_of(out) : 0;
		return qp != nullptr ? keep(qp) : nullptr;
	}

	// A transition inbox for `qpn` (272 bytes; 2ERR and 2RST are 16).
	static Mailbox transition(uint16_t opcode, uint32_t qpn)
	{
		Mailbox in = inbox(opcode, opcode == kOp2Err || opcode == kOp2Rst ? 16 : 272);
		prm_set_bits(in.data(), 0x48, 24, qpn);
		return in;
	}

	int modify(mlx5dv_devx_obj *qp, const Mailbox &in, Mailbox *out)
	{
		out->assign(16, 0xee);
		return mlx5dv_devx_obj_modify(qp, in.data(), in.size(), out->data(), out->size());
	}

	Mailbox query_qp(mlx5dv_devx_obj *qp, uint32_t qpn)
	{
		Mailbox in = inbox(kOpQueryQp);
		prm_set_bits(in.data(), 0x48, 24, qpn);
		Mailbox out(272, 0xee);
		EXPECT_EQ(mlx5dv_devx_obj_query(qp, in.data(), in.size(), out.data(), out.size()), 0);
		return out;
	}

	std::unique_ptr<Pages> memory_;
	mlx5dv_devx_umem *umem_ = nullptr;
	mlx5dv_devx_uar *uar_ = nullptr;
	mlx5dv_devx_obj *pd_ = nullptr;
	uint32_t pdn_ = 0;
};

TEST_F(DevxQueuesTest, CqCreateQueryModifyDestroy)
{
	uint32_t cqn = 0;
	mlx5dv_devx_obj *cq = make_cq(4, &cqn);
	ASSERT_NE(cq, nullptr) << errno;
	EXPECT_NE(cqn, 0u);

	Mailbox in = inbox(kOpQueryCq);
	prm_set_bits(in.data(), 0x48, 24, cqn);
	Mailbox out(272, 0xee);
	ASSERT_EQ(mlx5dv_devx_obj_query(cq, in.data(), in.size(), out.data(), out.size()), 0);
	EXPECT_EQ(status_of(out), 0);
	EXPECT_EQ(prm_bits(out.data(), kCqcIn + 0x63, 5), 4u);             // log_cq_size
	EXPECT_EQ(prm_bits(out.data(), kCqcIn + 0x08, 3), 0u);             // cqe_sz: 64 bytes
	EXPECT_EQ(prm_bits(out.data(), kCqcIn + 0x68, 24), uar_->page_id); // uar_page
	EXPECT_EQ(prm_bits(out.data(), kCqcIn + 0x20, 32), umem_->umem_id);
	EXPECT_EQ(prm_bits(out.data(), kCqcIn + 0x1c0, 64), kDoorbells);

	// MODIFY_CQ (op_mod 0): moderation, as the field select says.
	Mailbox modify_in = inbox(kOpModifyCq, 272);
	prm_set_bits(modify_in.data(), 0x48, 24, cqn);
	prm_set_bits(modify_in.data(), 0x60, 32, 0x3);          // period and count
	prm_set_bits(modify_in.data(), kCqcIn + 0x84, 12, 16);  // cq_period
	prm_set_bits(modify_in.data(), kCqcIn + 0x90, 16, 100); // cq_max_count
	Mailbox modified(16);
	ASSERT_EQ(mlx5dv_devx_obj_modify(cq, modify_in.data(), modify_in.size(), modified.data(), modified.size()), 0);
	ASSERT_EQ(mlx5dv_devx_obj_query(cq, in.data(), in.size(), out.data(), out.size()), 0);
	EXPECT_EQ(prm_bits(out.data(), kCqcIn + 0x84, 12), 16u);
	EXPECT_EQ(prm_bits(out.data(), kCqcIn + 0x90, 16), 100u);
	// Resizing (op_mod 1) is not offered.
	prm_set_bits(modify_in.data(), 0x30, 16, 1);
	EXPECT_EQ(mlx5dv_devx_obj_modify(cq, modify_in.data(), modify_in.size(), modified.data(), modified.size()),
		  EREMOTEIO);
	EXPECT_EQ(status_of(modified), kBadOp);
	// The CQ's buffer and doorbell hold the umem.
	EXPECT_EQ(mlx5dv_devx_umem_dereg(umem_), EBUSY);
}

TEST_F(DevxQueuesTest, CqChecks)
{
	struct Case {
		const char *what;
		Mailbox in;
		uint8_t status;
		uint32_t syndrome;
	};
	std::vector<Case> cases;
	Mailbox big_cqe = cq_in(4, umem_->umem_id, umem_->umem_id, kDoorbells, uar_->page_id);
	prm_set_bits(big_cqe.data(), kCqcIn + 0x08, 3, 1);
	cases.push_back({"128-byte CQEs", big_cqe, kBadParam, 0x5d000023});
	cases.push_back({"unallocated UAR", cq_in(4, umem_->umem_id, umem_->umem_id, kDoorbells, uar_->page_id + 1000),
			 kBadParam, 0x5d000016});
	cases.push_back({"no such EQ", cq_in(4, umem_->umem_id, umem_->umem_id, kDoorbells, uar_->page_id, 200),
			 kBadParam, 0x5d000025});
	cases.push_back({"CQEs past the umem", cq_in(9, umem_->umem_id, umem_->umem_id, kDoorbells, uar_->page_id),
			 kBadParam, 0x5d000020});
	cases.push_back({"doorbell past the umem", cq_in(4, umem_->umem_id, umem_->umem_id, 16380, uar_->page_id),
			 kBadParam, 0x5d000020});
	cases.push_back({"no such umem", cq_in(4, umem_->umem_id + 1000, umem_->umem_id, kDoorbells, uar_->page_id),
			 kBadRes, 0x5d000012});
	Mailbox out(16);
	for (const Case &c : cases) {
		out.assign(16, 0);
		errno = 0;
		EXPECT_EQ(create(c.in, &out), nullptr) << c.what;
		EXPECT_EQ(errno, EREMOTEIO) << c.what;
		EXPECT_EQ(status_of(out), c.status) << c.what;
		EXPECT_EQ(syndrome_of(out), c.syndrome) << c.what;
	}
	Mailbox shortened = cq_in(4, umem_->umem_id, umem_->umem_id, kDoorbells, uar_->page_id);
	shortened.resize(64);
	errno = 0;
	EXPECT_EQ(create(shortened, &out), nullptr);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(DevxQueuesTest, QpLifeAndTransitions)
{
	uint32_t cqn = 0;
	mlx5dv_devx_obj *cq = make_cq(4, &cqn);
	ASSERT_NE(cq, nullptr);
	uint32_t qpn = 0;
	mlx5dv_devx_obj *qp = make_qp(cqn, &qpn);
	ASSERT_NE(qp, nullptr) << errno;
	EXPECT_NE(qpn, 0u);

	Mailbox out = query_qp(qp, qpn);
	const uint8_t *qpc = out.data();
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x00, 4), 0u); // RST
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x28, 24), pdn_);
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x51, 4), 3u); // log_sq_size
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x49, 4), 2u); // log_rq_size
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x3e8, 24), cqn);
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x4e8, 24), cqn);
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x720, 32), umem_->umem_id);

	// A transition from the wrong state: BAD_QP_STATE.
	Mailbox result;
	EXPECT_EQ(modify(qp, transition(kOpInit2Rtr, qpn), &result), EREMOTEIO);
	EXPECT_EQ(status_of(result), kBadQpState);
	EXPECT_EQ(syndrome_of(result), 0x5d00002bu);

	Mailbox init = transition(kOpRst2Init, qpn);
	prm_set_bits(init.data(), kQpcIn + 0x490, 2, 0x3); // rre, rwe
	prm_set_bits(init.data(), kAds + 0x128, 8, 1);     // vhca_port_num
	ASSERT_EQ(modify(qp, init, &result), 0) << int(status_of(result));
	EXPECT_EQ(prm_bits(query_qp(qp, qpn).data(), kQpcIn, 4), 1u); // INIT

	ibv_gid gid{};
	ASSERT_EQ(ibv_query_gid(context_, 1, 0, &gid), 0);
	Mailbox rtr = transition(kOpInit2Rtr, qpn);
	prm_set_bits(rtr.data(), kQpcIn + 0x40, 3, IBV_MTU_1024);
	prm_set_bits(rtr.data(), kQpcIn + 0xa8, 24, qpn); // connected to itself
	prm_set_bits(rtr.data(), kQpcIn + 0x4a8, 24, 0x123);
	prm_set_bits(rtr.data(), kQpcIn + 0x4a3, 5, 12);
	prm_set_bits(rtr.data(), kQpcIn + 0x488, 3, 0); // log_rra_max: 1
	std::memcpy(rtr.data() + (kAds + 0x80) / 8, gid.raw, 16);
	prm_set_bits(rtr.data(), kAds + 0x58, 8, 64); // hop_limit
	prm_set_bits(rtr.data(), kAds + 0x128, 8, 1);
	ASSERT_EQ(modify(qp, rtr, &result), 0) << int(status_of(result)) << " " << std::hex << syndrome_of(result);

	Mailbox rts = transition(kOpRtr2Rts, qpn);
	prm_set_bits(rts.data(), kQpcIn + 0x3c8, 24, 0x456);
	prm_set_bits(rts.data(), kQpcIn + 0x38d, 3, 7);
	prm_set_bits(rts.data(), kQpcIn + 0x390, 3, 7);
	prm_set_bits(rts.data(), kAds + 0x40, 5, 14);
	ASSERT_EQ(modify(qp, rts, &result), 0) << int(status_of(result));
	ASSERT_EQ(modify(qp, transition(kOpRts2Rts, qpn), &result), 0);

	out = query_qp(qp, qpn);
	qpc = out.data();
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x00, 4), 3u); // RTS
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x40, 3), static_cast<uint64_t>(IBV_MTU_1024));
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0xa8, 24), qpn);
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x4a8, 24), 0x123u);
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x3c8, 24), 0x456u);
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x4a3, 5), 12u);
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x38d, 3), 7u);
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x390, 3), 7u);
	EXPECT_EQ(prm_bits(qpc, kQpcIn + 0x490, 3), 0x6u); // rre rwe, no rae
	EXPECT_EQ(prm_bits(qpc, kAds + 0x40, 5), 14u);
	EXPECT_EQ(prm_bits(qpc, kAds + 0x58, 8), 64u);
	EXPECT_EQ(prm_bits(qpc, kAds + 0x128, 8), 1u);
	EXPECT_EQ(std::memcmp(qpc + (kAds + 0x80) / 8, gid.raw, 16), 0);

	// A modify naming another QP than the handle's.
	EXPECT_EQ(modify(qp, transition(kOp2Err, qpn + 1), &result), EINVAL);
	ASSERT_EQ(modify(qp, transition(kOp2Err, qpn), &result), 0);
	EXPECT_EQ(prm_bits(query_qp(qp, qpn).data(), kQpcIn, 4), 6u); // ERR
	ASSERT_EQ(modify(qp, transition(kOp2Rst, qpn), &result), 0);
	EXPECT_EQ(prm_bits(query_qp(qp, qpn).data(), kQpcIn, 4), 0u); // RST

	// The QP holds its CQ and PD: RES_BUSY, EBUSY.
	EXPECT_EQ(mlx5dv_devx_obj_destroy(cq), EBUSY);
	EXPECT_EQ(mlx5dv_devx_obj_destroy(pd_), EBUSY);
	EXPECT_EQ(mlx5dv_devx_obj_destroy(qp), 0);
	forget(qp);
	EXPECT_EQ(mlx5dv_devx_obj_destroy(cq), 0);
	forget(cq);
}

// The transitions' optional parameters (opt_param_mask, the kernel's table for RC: INIT2INIT
// RRE/RAE/RWE/PKEY_INDEX/PRI_PORT; INIT2RTR RRE/RAE/RWE/PKEY_INDEX; RTR2RTS and RTS2RTS
// RRE/RAE/RWE/RNR_TIMEOUT/PM_STATE; RST2INIT none), INIT2INIT and SQERR2RTS; QUERY_QP after each.
TEST_F(DevxQueuesTest, TransitionsTakeTheirOptionalParameters)
{
	constexpr uint32_t kAlt = 1u << 0, kRre = 1u << 1, kRae = 1u << 2, kRwe = 1u << 3, kPkey = 1u << 4,
			   kRnr = 1u << 6, kPm = 1u << 10, kRetry = 1u << 12, kRnrRetry = 1u << 13,
			   kAckTimeout = 1u << 14, kPort = 1u << 16;
	uint32_t cqn = 0;
	ASSERT_NE(make_cq(4, &cqn), nullptr);
	uint32_t qpn = 0;
	mlx5dv_devx_obj *qp = make_qp(cqn, &qpn);
	ASSERT_NE(qp, nullptr);
	const auto with = [&](uint16_t opcode, uint32_t optional) {
		Mailbox in = transition(opcode, qpn);
		prm_set_bits(in.data(), 0x80, 32, optional);
		return in;
	};
	const auto refused = [&](const Mailbox &in, uint8_t status, uint32_t syndrome, const char *what) {
		Mailbox result;
		EXPECT_EQ(modify(qp, in, &result), EREMOTEIO) << what;
		EXPECT_EQ(status_of(result), status) << what;
		EXPECT_EQ(syndrome_of(result), syndrome) << what;
	};
	Mailbox result;

	// RST2INIT takes no optional parameter.
	Mailbox init = with(kOpRst2Init, kRre);
	prm_set_bits(init.data(), kQpcIn + 0x491, 1, 1); // rwe
	refused(init, kBadParam, 0x5d00002f, "RST2INIT with an optional parameter");
	EXPECT_EQ(prm_bits(query_qp(qp, qpn).data(), kQpcIn, 4), 0u);
	prm_set_bits(init.data(), 0x80, 32, 0);
	ASSERT_EQ(modify(qp, init, &result), 0);

	// INIT2INIT: RRE given (set), RWE not (kept), the port.
	Mailbox init2init = with(0x50e, kRre | kPkey | kPort);
	prm_set_bits(init2init.data(), kQpcIn + 0x490, 2, 0x2); // rre 1, rwe 0: rwe is not selected
	prm_set_bits(init2init.data(), kAds + 0x128, 8, 1);
	ASSERT_EQ(modify(qp, init2init, &result), 0) << std::hex << syndrome_of(result);
	Mailbox out = query_qp(qp, qpn);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn, 4), 1u);           // INIT
	EXPECT_EQ(prm_bits(out.data(), kQpcIn + 0x490, 3), 0x6u); // rre rwe
	refused(with(0x50e, kRnr), kBadParam, 0x5d00002f, "INIT2INIT with RNR_TIMEOUT");

	ibv_gid gid{};
	ASSERT_EQ(ibv_query_gid(context_, 1, 0, &gid), 0);
	Mailbox rtr = with(kOpInit2Rtr, kRae | kRwe);
	prm_set_bits(rtr.data(), kQpcIn + 0x40, 3, IBV_MTU_1024);
	prm_set_bits(rtr.data(), kQpcIn + 0xa8, 24, qpn);
	prm_set_bits(rtr.data(), kQpcIn + 0x4a3, 5, 12);
	prm_set_bits(rtr.data(), kQpcIn + 0x491, 2, 0x3); // rwe, rae
	std::memcpy(rtr.data() + (kAds + 0x80) / 8, gid.raw, 16);
	prm_set_bits(rtr.data(), kAds + 0x58, 8, 64);
	prm_set_bits(rtr.data(), kAds + 0x128, 8, 1);
	Mailbox rtr_alt = rtr;
	prm_set_bits(rtr_alt.data(), 0x80, 32, kRae | kAlt);
	refused(rtr_alt, kBadParam, 0x5d00002f, "INIT2RTR with an alternate path");
	ASSERT_EQ(modify(qp, rtr, &result), 0) << std::hex << syndrome_of(result);
	out = query_qp(qp, qpn);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn, 4), 2u); // RTR
	EXPECT_EQ(prm_bits(out.data(), kQpcIn + 0x490, 3), 0x7u);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn + 0x4a3, 5), 12u);

	Mailbox rts = with(kOpRtr2Rts, kRnr);
	prm_set_bits(rts.data(), kQpcIn + 0x3c8, 24, 0x456);
	prm_set_bits(rts.data(), kQpcIn + 0x38d, 3, 7);
	prm_set_bits(rts.data(), kQpcIn + 0x390, 3, 6);
	prm_set_bits(rts.data(), kAds + 0x40, 5, 14);
	prm_set_bits(rts.data(), kQpcIn + 0x4a3, 5, 20); // min_rnr_nak
	ASSERT_EQ(modify(qp, rts, &result), 0) << std::hex << syndrome_of(result);
	out = query_qp(qp, qpn);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn, 4), 3u); // RTS
	EXPECT_EQ(prm_bits(out.data(), kQpcIn + 0x4a3, 5), 20u);

	// RTS2RTS without optional parameters changes nothing, whatever the qpc says.
	Mailbox plain = with(kOpRts2Rts, 0);
	prm_set_bits(plain.data(), kQpcIn + 0x38d, 3, 1);
	prm_set_bits(plain.data(), kQpcIn + 0x4a3, 5, 3);
	ASSERT_EQ(modify(qp, plain, &result), 0);
	out = query_qp(qp, qpn);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn + 0x38d, 3), 7u);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn + 0x4a3, 5), 20u);

	// RTS2RTS: min_rnr_nak and the access bits, as verbs allows in RTS; a path migration
	// state of MIGRATED (pm_state 3) is accepted.
	Mailbox rts2rts = with(kOpRts2Rts, kRnr | kRre | kPm);
	prm_set_bits(rts2rts.data(), kQpcIn + 0x4a3, 5, 5);
	prm_set_bits(rts2rts.data(), kQpcIn + 0x490, 1, 0); // rre off
	prm_set_bits(rts2rts.data(), kQpcIn + 0x13, 2, 3);  // pm_state: migrated
	ASSERT_EQ(modify(qp, rts2rts, &result), 0) << std::hex << syndrome_of(result);
	out = query_qp(qp, qpn);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn, 4), 3u);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn + 0x4a3, 5), 5u);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn + 0x490, 3), 0x3u); // rwe rae, rre cleared
	EXPECT_EQ(prm_bits(out.data(), kQpcIn + 0x38d, 3), 7u);   // retry_count kept
	EXPECT_EQ(prm_bits(out.data(), kQpcIn + 0x390, 3), 6u);   // rnr_retry kept
	EXPECT_EQ(prm_bits(out.data(), kAds + 0x40, 5), 14u);     // ack_timeout kept

	// Retry counts and the ACK timeout are fixed once in RTS (IB: RTS->RTS takes the access
	// flags, the alternate path, the migration state and the RNR timer only): refused.
	for (uint32_t bit : {kRetry, kRnrRetry, kAckTimeout, kPkey, 1u << 31}) {
		Mailbox in = with(kOpRts2Rts, bit);
		prm_set_bits(in.data(), kQpcIn + 0x38d, 3, 2);
		refused(in, kBadParam, 0x5d00002f, "RTS2RTS with a parameter it does not take");
	}
	Mailbox armed = with(kOpRts2Rts, kPm);
	prm_set_bits(armed.data(), kQpcIn + 0x13, 2, 0); // pm_state: armed
	refused(armed, kBadParam, 0x5d00002f, "path migration armed");
	out = query_qp(qp, qpn);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn + 0x38d, 3), 7u);
	EXPECT_EQ(prm_bits(out.data(), kAds + 0x40, 5), 14u);

	// SQERR2RTS from RTS (an RC QP never reaches SQER: a send error moves it to ERR) and
	// INIT2INIT from RTS: the wrong state.
	refused(with(0x506, 0), kBadQpState, 0x5d00002b, "SQERR2RTS from RTS");
	refused(with(0x50e, 0), kBadQpState, 0x5d00002b, "INIT2INIT from RTS");
	ASSERT_EQ(modify(qp, transition(kOp2Err, qpn), &result), 0);
	refused(with(0x506, 0), kBadQpState, 0x5d00002b, "SQERR2RTS from ERR");
	EXPECT_EQ(prm_bits(query_qp(qp, qpn).data(), kQpcIn, 4), 6u);
}

// uid rules: a QP of this context naming a CQ (DevX or verbs) or a PD of another context gets
// BAD_RES, as the firmware answers for another uid's resource; a query or modify whose inbox names
// another object than its handle (another id, another kind, the other context's) gets EINVAL.
TEST_F(DevxQueuesTest, AQpCannotNameAnotherContextsCq)
{
	mlx5dv_context_attr attr{};
	attr.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
	ibv_context *other = mlx5dv_open_device(devices_[0], &attr);
	ASSERT_NE(other, nullptr);
	Pages memory(16384);
	mlx5dv_devx_umem *their_umem = reg_umem(memory.data, memory.size, other);
	ASSERT_NE(their_umem, nullptr);
	mlx5dv_devx_uar *their_uar = mlx5dv_devx_alloc_uar(other, MLX5DV_UAR_ALLOC_TYPE_NC);
	ASSERT_NE(their_uar, nullptr);
	Mailbox out(16);
	mlx5dv_devx_obj *their_cq =
	    create(cq_in(4, their_umem->umem_id, their_umem->umem_id, kDoorbells, their_uar->page_id), &out, other);
	ASSERT_NE(their_cq, nullptr) << errno;
	const uint32_t their_cqn = id_of(out);
	ibv_cq *their_verbs_cq = ibv_create_cq(other, 15, nullptr, nullptr, 0);
	ASSERT_NE(their_verbs_cq, nullptr);
	uint32_t their_pdn = 0;
	mlx5dv_devx_obj *their_pd = alloc_pd(&their_pdn, other);
	ASSERT_NE(their_pd, nullptr);

	uint32_t cqn = 0;
	mlx5dv_devx_obj *cq = make_cq(4, &cqn);
	ASSERT_NE(cq, nullptr);
	ASSERT_NE(cqn, their_cqn);
	ASSERT_NE(cqn, their_verbs_cq->handle);
	for (uint32_t foreign : {their_cqn, their_verbs_cq->handle}) {
		Mailbox send_cq = qp_mailbox(cqn);
		prm_set_bits(send_cq.data(), kQpcIn + 0x3e8, 24, foreign);
		Mailbox recv_cq = qp_mailbox(cqn);
		prm_set_bits(recv_cq.data(), kQpcIn + 0x4e8, 24, foreign);
		for (const Mailbox *in : {&send_cq, &recv_cq}) {
			out.assign(16, 0);
			errno = 0;
			EXPECT_EQ(create(*in, &out), nullptr) << foreign;
			EXPECT_EQ(errno, EREMOTEIO);
			EXPECT_EQ(status_of(out), kBadRes);
			EXPECT_EQ(syndrome_of(out), 0x5d000014u);
		}
	}
	Mailbox their_pd_qp = qp_mailbox(cqn);
	prm_set_bits(their_pd_qp.data(), kQpcIn + 0x28, 24, their_pdn);
	EXPECT_EQ(create(their_pd_qp, &out), nullptr);
	EXPECT_EQ(status_of(out), kBadRes);
	EXPECT_EQ(syndrome_of(out), 0x5d000010u);

	// The identity check of query and modify.
	uint32_t qpn = 0;
	mlx5dv_devx_obj *qp = make_qp(cqn, &qpn);
	ASSERT_NE(qp, nullptr);
	Mailbox query = inbox(kOpQueryCq);
	Mailbox answer(272, 0xee);
	prm_set_bits(query.data(), 0x48, 24, cqn);
	EXPECT_EQ(mlx5dv_devx_obj_query(cq, query.data(), query.size(), answer.data(), answer.size()), 0);
	prm_set_bits(query.data(), 0x48, 24, their_cqn); // the other context's CQ, through ours
	EXPECT_EQ(mlx5dv_devx_obj_query(cq, query.data(), query.size(), answer.data(), answer.size()), EINVAL);
	prm_set_bits(query.data(), 0x48, 24, cqn); // ours, through the other context's handle
	EXPECT_EQ(mlx5dv_devx_obj_query(their_cq, query.data(), query.size(), answer.data(), answer.size()), EINVAL);
	prm_set_bits(query.data(), 0x48, 24, qpn); // QUERY_CQ naming the QP, through the QP's handle
	EXPECT_EQ(mlx5dv_devx_obj_query(qp, query.data(), query.size(), answer.data(), answer.size()), EINVAL);
	Mailbox query_qp_in = inbox(kOpQueryQp);
	prm_set_bits(query_qp_in.data(), 0x48, 24, cqn); // QUERY_QP naming the CQ's number, on the CQ
	EXPECT_EQ(mlx5dv_devx_obj_query(cq, query_qp_in.data(), query_qp_in.size(), answer.data(), answer.size()),
		  EINVAL);
	Mailbox result;
	EXPECT_EQ(modify(qp, transition(kOpRst2Init, qpn + 1), &result), EINVAL);
	EXPECT_EQ(prm_bits(query_qp(qp, qpn).data(), kQpcIn, 4), 0u) << "nothing ran";

	EXPECT_EQ(mlx5dv_devx_obj_destroy(their_pd), 0);
	EXPECT_EQ(ibv_destroy_cq(their_verbs_cq), 0);
	EXPECT_EQ(mlx5dv_devx_obj_destroy(their_cq), 0);
	mlx5dv_devx_free_uar(their_uar);
	EXPECT_EQ(mlx5dv_devx_umem_dereg(their_umem), 0);
	EXPECT_EQ(ibv_close_device(other), 0);
}

TEST_F(DevxQueuesTest, QpChecks)
{
	uint32_t cqn = 0;
	ASSERT_NE(make_cq(4, &cqn), nullptr);
	struct Case {
		const char *what;
		Mailbox in;
		uint8_t status;
		uint32_t syndrome;
	};
	std::vector<Case> cases;
	Mailbox ud = qp_mailbox(cqn);
	prm_set_bits(ud.data(), kQpcIn + 0x08, 8, 2);
	cases.push_back({"UD service type", ud, kBadParam, 0x5d000027});
	Mailbox srq = qp_mailbox(cqn);
	prm_set_bits(srq.data(), kQpcIn + 0x565, 3, 1);
	cases.push_back({"SRQ receive queue", srq, kBadParam, 0x5d000029});
	Mailbox no_cq = qp_mailbox(cqn);
	prm_set_bits(no_cq.data(), kQpcIn + 0x3e8, 24, 0xfffff0);
	cases.push_back({"no such CQ", no_cq, kBadRes, 0x5d000014});
	Mailbox no_pd = qp_mailbox(cqn);
	prm_set_bits(no_pd.data(), kQpcIn + 0x28, 24, 0xfffff0);
	cases.push_back({"no such PD", no_pd, kBadRes, 0x5d000010});
	Mailbox bad_uar = qp_mailbox(cqn);
	prm_set_bits(bad_uar.data(), kQpcIn + 0x68, 24, uar_->page_id + 1000);
	cases.push_back({"unallocated UAR", bad_uar, kBadParam, 0x5d000016});
	Mailbox past = qp_mailbox(cqn);
	prm_set_bits(past.data(), 0x800, 64, 16000); // the WQ past the umem's end
	cases.push_back({"WQ past the umem", past, kBadParam, 0x5d000020});
	Mailbox out(16);
	for (const Case &c : cases) {
		out.assign(16, 0);
		errno = 0;
		EXPECT_EQ(create(c.in, &out), nullptr) << c.what;
		EXPECT_EQ(errno, EREMOTEIO) << c.what;
		EXPECT_EQ(status_of(out), c.status) << c.what;
		EXPECT_EQ(syndrome_of(out), c.syndrome) << c.what;
	}
	Mailbox shortened = qp_mailbox(cqn);
	shortened.resize(200);
	errno = 0;
	EXPECT_EQ(create(shortened, &out), nullptr);
	EXPECT_EQ(errno, EINVAL);

	// A transition with an op_mod it does not have: BAD_OP, and the QP stays where it was.
	uint32_t qpn = 0;
	mlx5dv_devx_obj *qp = make_qp(cqn, &qpn);
	ASSERT_NE(qp, nullptr);
	Mailbox to_init = transition(kOpRst2Init, qpn);
	prm_set_bits(to_init.data(), 0x30, 16, 1);
	EXPECT_EQ(modify(qp, to_init, &out), EREMOTEIO);
	EXPECT_EQ(status_of(out), 0x02);
	EXPECT_EQ(syndrome_of(out), 0x5d000004u);
	EXPECT_EQ(prm_bits(query_qp(qp, qpn).data(), kQpcIn, 4), 0u) << "still RESET";
}

TEST_F(DevxQueuesTest, AQpMayCompleteIntoAVerbsCq)
{
	ibv_cq *verbs_cq = ibv_create_cq(context_, 16, nullptr, nullptr, 0);
	ASSERT_NE(verbs_cq, nullptr);
	uint32_t qpn = 0;
	mlx5dv_devx_obj *qp = make_qp(verbs_cq->handle, &qpn);
	ASSERT_NE(qp, nullptr) << errno;
	EXPECT_EQ(prm_bits(query_qp(qp, qpn).data(), kQpcIn + 0x3e8, 24), verbs_cq->handle);
	EXPECT_EQ(ibv_destroy_cq(verbs_cq), EBUSY) << "the DevX QP completes into it";
	EXPECT_EQ(mlx5dv_devx_obj_destroy(qp), 0);
	forget(qp);
	EXPECT_EQ(ibv_destroy_cq(verbs_cq), 0);
}

TEST_F(DevxQueuesTest, CommandsOnVerbsCqsAndQps)
{
	ibv_pd *pd = ibv_alloc_pd(context_);
	ASSERT_NE(pd, nullptr);
	ibv_cq *cq = ibv_create_cq(context_, 31, nullptr, nullptr, 0);
	ASSERT_NE(cq, nullptr);
	ibv_qp_init_attr init{};
	init.send_cq = cq;
	init.recv_cq = cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 8;
	init.cap.max_recv_wr = 8;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	ibv_qp *qp = ibv_create_qp(pd, &init);
	ASSERT_NE(qp, nullptr);

	Mailbox in = inbox(kOpQueryCq);
	prm_set_bits(in.data(), 0x48, 24, cq->handle);
	Mailbox out(272, 0xee);
	ASSERT_EQ(mlx5dv_devx_cq_query(cq, in.data(), in.size(), out.data(), out.size()), 0);
	EXPECT_EQ(prm_bits(out.data(), kCqcIn + 0x63, 5), log2_floor(static_cast<uint64_t>(cq->cqe) + 1));
	prm_set_bits(in.data(), 0x48, 24, cq->handle + 1);
	EXPECT_EQ(mlx5dv_devx_cq_query(cq, in.data(), in.size(), out.data(), out.size()), EINVAL);

	Mailbox rst2init = inbox(kOpRst2Init, 272);
	prm_set_bits(rst2init.data(), 0x48, 24, qp->qp_num);
	prm_set_bits(rst2init.data(), kQpcIn + 0x491, 1, 1); // rwe
	Mailbox result(16);
	ASSERT_EQ(mlx5dv_devx_qp_modify(qp, rst2init.data(), rst2init.size(), result.data(), result.size()), 0);
	ibv_qp_attr attr{};
	ibv_qp_init_attr got{};
	ASSERT_EQ(ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS, &got), 0);
	EXPECT_EQ(attr.qp_state, IBV_QPS_INIT);
	EXPECT_EQ(attr.qp_access_flags, static_cast<unsigned int>(IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(mlx5dv_devx_qp_modify(qp, rst2init.data(), rst2init.size(), result.data(), result.size()), EREMOTEIO);
	EXPECT_EQ(status_of(result), kBadQpState);

	Mailbox query = inbox(kOpQueryQp);
	prm_set_bits(query.data(), 0x48, 24, qp->qp_num);
	ASSERT_EQ(mlx5dv_devx_qp_query(qp, query.data(), query.size(), out.data(), out.size()), 0);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn, 4), 1u);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn + 0x28, 24), pd->handle);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn + 0x3e8, 24), cq->handle);
	// Another QP's number, and a command outside the query whitelist.
	prm_set_bits(query.data(), 0x48, 24, qp->qp_num + 1);
	EXPECT_EQ(mlx5dv_devx_qp_query(qp, query.data(), query.size(), out.data(), out.size()), EINVAL);
	Mailbox create_qp = inbox(kOpCreateQp, 272);
	EXPECT_EQ(mlx5dv_devx_qp_query(qp, create_qp.data(), create_qp.size(), out.data(), out.size()), EINVAL);

	EXPECT_EQ(ibv_destroy_qp(qp), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
}

} // namespace
