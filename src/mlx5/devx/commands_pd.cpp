// ALLOC_PD / DEALLOC_PD (a verbs PD underneath: pdn = its handle, so verbs and DevX objects share
// it), ALLOC_TRANSPORT_DOMAIN / DEALLOC_TRANSPORT_DOMAIN (a number: softdpu's device has no
// loopback filtering a domain would select), ALLOC_UAR / DEALLOC_UAR (a UAR page, as
// mlx5dv_devx_alloc_uar makes).
#include "mlx5/devx/command_processor.hpp"

#include "mlx5/devx/prm.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <new>

namespace softdpu::mlx5::devx {

int CommandProcessor::alloc_pd(Command &command)
{
	if (command.op_mod != 0)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpMod);
	ibv_pd *pd = ibv_alloc_pd(context_);
	if (pd == nullptr)
		return fail(command.out, command.outlen, prm::kStatusNoResources, kSyndromeNoResources);
	try {
		pds_.emplace(pd->handle, Pd{pd});
	} catch (const std::bad_alloc &) {
		(void)ibv_dealloc_pd(pd);
		return fail(command.out, command.outlen, prm::kStatusNoResources, kSyndromeNoResources);
	}
	command.created_id = pd->handle;
	return answer_id(command.out, command.outlen, pd->handle);
}

int CommandProcessor::dealloc_pd(Command &command)
{
	const uint32_t pdn = prm::get(command.in, prm::object_id);
	const auto found = pds_.find(pdn);
	if (found == pds_.end())
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchPd);
	// A PD that mkeys, QPs or verbs objects still use: the firmware answers RES_BUSY.
	if (ibv_dealloc_pd(found->second.pd) != 0)
		return fail(command.out, command.outlen, prm::kStatusResBusy, kSyndromePdBusy);
	pds_.erase(found);
	return answer_id(command.out, command.outlen, 0);
}

int CommandProcessor::alloc_transport_domain(Command &command)
{
	if (command.op_mod != 0)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpMod);
	static std::atomic<uint32_t> next_td{1};
	const uint32_t td = next_td.fetch_add(1) & 0xffffff;
	tds_.insert(td);
	command.created_id = td;
	return answer_id(command.out, command.outlen, td);
}

int CommandProcessor::dealloc_transport_domain(Command &command)
{
	const uint32_t td = prm::get(command.in, prm::object_id);
	if (tds_.erase(td) == 0)
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchTd);
	return answer_id(command.out, command.outlen, 0);
}

// ALLOC_UAR as a DevX create (softdpu's addition: the kernel hands UARs out only through
// mlx5dv_devx_alloc_uar): a UAR page of this context whose number CQs and QPs may name; the page
// itself is not handed out (as with rdma-core's VFIO driver, which maps it itself).
int CommandProcessor::alloc_uar_command(Command &command)
{
	if (command.op_mod != 0)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpMod);
	Uar *uar = make_uar_locked();
	if (uar == nullptr)
		return fail(command.out, command.outlen, prm::kStatusNoResources, kSyndromeNoResources);
	command.created_id = uar->dv.page_id;
	return answer_id(command.out, command.outlen, uar->dv.page_id);
}

int CommandProcessor::dealloc_uar_command(Command &command)
{
	Uar *uar = find_uar(prm::get(command.in, prm::object_id));
	if (uar == nullptr)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeBadUar);
	free_uar_locked(uar);
	return answer_id(command.out, command.outlen, 0);
}

} // namespace softdpu::mlx5::devx
