// CREATE_CQ / QUERY_CQ / MODIFY_CQ / DESTROY_CQ. A DevX CQ is a CQE buffer and a doorbell record in
// umems, served by the work-queue engine (wq/engine.hpp), over a backing verbs CQ of 2^log_cq_size
// entries whose handle is the cqn. QUERY_CQ and MODIFY_CQ also run on CQs made through verbs
// (mlx5dv_devx_cq_query / _modify).
#include "mlx5/devx/command_processor.hpp"

#include "mlx5/devx/prm.hpp"
#include "mlx5/wq/engine.hpp"

#include <array>
#include <cerrno>

namespace softdpu::mlx5::devx {

namespace {

constexpr uint64_t kCqeBytes = 64;

} // namespace

int CommandProcessor::create_cq(Command &command)
{
	using namespace prm::create_cq_in;
	if (command.inlen < kBytes)
		return EINVAL;
	if (command.op_mod != 0)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpMod);
	const uint8_t *cqc = command.in + kCqc / 8;
	if (prm::get(cqc, prm::cqc::cqe_sz) != prm::cqc::kCqeSize64)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeCqeSize);
	if (prm::get(cqc, prm::cqc::cqe_comp_en) != 0)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeCqeCompression);
	const uint32_t log_size = prm::get(cqc, prm::cqc::log_cq_size);
	if (log_size > log2_floor(uint64_t{caps_.max_cqe} + 1))
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeCqSize);
	const uint32_t uar_page = prm::get(cqc, prm::cqc::uar_page);
	Uar *uar = find_uar(uar_page);
	if (uar == nullptr)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeBadUar);
	const uint32_t eqn = prm::get(cqc, prm::cqc::c_eqn);
	if (eqn >= static_cast<uint32_t>(context_->num_comp_vectors))
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeEqn);
	Umem *buffer = find_umem(prm::get(command.in, cq_umem_id));
	Umem *dbr = find_umem(prm::get(cqc, prm::cqc::dbr_umem_id));
	if (buffer == nullptr || dbr == nullptr)
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchUmem);
	const uint64_t buffer_offset = prm::get64(command.in, cq_umem_offset);
	const uint64_t dbr_offset = prm::get64(cqc, prm::cqc::dbr_addr);
	if (!buffer->holds(buffer_offset, kCqeBytes << log_size) || !dbr->holds(dbr_offset, kDoorbellBytes) ||
	    dbr_offset % kDoorbellBytes != 0)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeUmemRange);

	// The backing CQ holds 2^log_size completions (verbs reports one less: a slot stays free).
	const int entries = log_size == 0 ? 1 : static_cast<int>((1u << log_size) - 1);
	ibv_cq *backing = ibv_create_cq(context_, entries, nullptr, nullptr, static_cast<int>(eqn));
	if (backing == nullptr)
		return fail(command.out, command.outlen, prm::kStatusNoResources, kSyndromeNoResources);
	wq::CqConfig config;
	config.buffer = buffer->addr + buffer_offset;
	config.log_size = log_size;
	config.doorbell = reinterpret_cast<volatile uint32_t *>(dbr->addr + dbr_offset);
	config.cqn = backing->handle;
	config.backing = backing;
	// The CQ doorbell of its UAR page (reg_addr + MLX5_CQ_DOORBELL), where rdma-core's and DPDK's
	// arm writes the arm word and the cqn: the first arm of a fresh CQ is seen there.
	config.uar_doorbell =
	    reinterpret_cast<const volatile uint64_t *>(static_cast<uint8_t *>(uar->dv.reg_addr) + MLX5_CQ_DOORBELL);
	wq::Cq *engine = wq::Engine::instance().add_cq(config);
	if (engine == nullptr) {
		(void)ibv_destroy_cq(backing);
		return fail(command.out, command.outlen, prm::kStatusNoResources, kSyndromeNoResources);
	}
	Cq cq;
	cq.backing = backing;
	cq.engine = engine;
	cq.buffer_umem = buffer;
	cq.dbr_umem = dbr;
	cq.buffer_offset = buffer_offset;
	cq.dbr_offset = dbr_offset;
	cq.log_size = log_size;
	cq.uar_page = uar_page;
	cq.uar = uar;
	cq.eqn = eqn;
	cq.period = prm::get(cqc, prm::cqc::cq_period);
	cq.max_count = prm::get(cqc, prm::cqc::cq_max_count);
	try {
		cqs_.emplace(backing->handle, cq);
	} catch (...) {
		wq::Engine::instance().remove_cq(engine);
		(void)ibv_destroy_cq(backing);
		throw;
	}
	++buffer->users;
	++dbr->users;
	++uar->users;
	command.created_id = backing->handle;
	std::array<uint8_t, prm::kOutboxHeaderBytes> answer{};
	prm::set(answer.data(), prm::object_id, backing->handle);
	copy_out(answer.data(), answer.size(), command.out, command.outlen);
	return 0;
}

int CommandProcessor::query_cq(Command &command)
{
	if (command.op_mod != 0)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpMod);
	const uint32_t cqn = prm::get(command.in, prm::object_id);
	std::array<uint8_t, prm::query_cq_out::kBytes> answer{};
	uint8_t *cqc = answer.data() + prm::query_cq_out::kCqc / 8;
	const auto found = cqs_.find(cqn);
	if (found != cqs_.end()) {
		const Cq &cq = found->second;
		prm::set(cqc, prm::cqc::dbr_umem_valid, 1);
		prm::set(cqc, prm::cqc::cqe_sz, prm::cqc::kCqeSize64);
		prm::set(cqc, prm::cqc::log_cq_size, cq.log_size);
		prm::set(cqc, prm::cqc::uar_page, cq.uar_page);
		prm::set(cqc, prm::cqc::cq_period, cq.period);
		prm::set(cqc, prm::cqc::cq_max_count, cq.max_count);
		prm::set(cqc, prm::cqc::c_eqn, cq.eqn);
		prm::set(cqc, prm::cqc::dbr_umem_id, cq.dbr_umem->dv.umem_id);
		prm::set64(cqc, prm::cqc::dbr_addr, cq.dbr_offset);
	} else if (verbs_cq_ != nullptr && verbs_cq_->handle == cqn) {
		// A CQ made through verbs: its size (2^n slots for n = log2(cqe + 1)) and 64-byte CQEs.
		prm::set(cqc, prm::cqc::cqe_sz, prm::cqc::kCqeSize64);
		prm::set(cqc, prm::cqc::log_cq_size, log2_floor(static_cast<uint64_t>(verbs_cq_->cqe) + 1));
	} else {
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchCq);
	}
	copy_out(answer.data(), answer.size(), command.out, command.outlen);
	return 0;
}

int CommandProcessor::modify_cq(Command &command)
{
	using namespace prm::modify_cq_in;
	if (command.inlen < kBytes)
		return EINVAL;
	const uint32_t cqn = prm::get(command.in, prm::object_id);
	const auto found = cqs_.find(cqn);
	const bool verbs = found == cqs_.end() && verbs_cq_ != nullptr && verbs_cq_->handle == cqn;
	if (found == cqs_.end() && !verbs)
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchCq);
	// op_mod 0 changes the moderation (recorded: the engine writes every CQE at once); resizing
	// (op_mod 1) is not offered.
	if (command.op_mod != 0)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpMod);
	if (!verbs) {
		const uint8_t *cqc = command.in + kCqc / 8;
		const uint32_t select = prm::get(command.in, field_select);
		if ((select & kSelectPeriod) != 0)
			found->second.period = prm::get(cqc, prm::cqc::cq_period);
		if ((select & kSelectCount) != 0)
			found->second.max_count = prm::get(cqc, prm::cqc::cq_max_count);
	}
	return answer_id(command.out, command.outlen, 0);
}

int CommandProcessor::destroy_cq(Command &command)
{
	const auto found = cqs_.find(prm::get(command.in, prm::object_id));
	if (found == cqs_.end())
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchCq);
	Cq &cq = found->second;
	if (cq.users != 0)
		return fail(command.out, command.outlen, prm::kStatusResBusy, kSyndromeCqBusy);
	wq::Engine::instance().remove_cq(cq.engine);
	(void)ibv_destroy_cq(cq.backing);
	--cq.buffer_umem->users;
	--cq.dbr_umem->users;
	release_uar(cq.uar);
	cqs_.erase(found);
	return answer_id(command.out, command.outlen, 0);
}

} // namespace softdpu::mlx5::devx
