// CREATE_MKEY / QUERY_MKEY / DESTROY_MKEY: memory keys over a registered umem (MTT access mode;
// the kernel forces mkey_umem_valid). The key, mkey_index << 8 | mkc.mkey_7_0, is registered in
// softdpu's transport memory table through libibverbs, so it works as the lkey and rkey of verbs
// work requests in its PD, in this process and from peers.
#include "mlx5/devx/command_processor.hpp"

#include "mlx5/devx/prm.hpp"
#include "verbs/softdpu_api.h"

#include <array>
#include <cerrno>

namespace softdpu::mlx5::devx {

namespace {

// mkc access bits <-> verbs access flags (local read is always allowed in verbs).
unsigned int verbs_access(const uint8_t *mkc) noexcept
{
	unsigned int access = 0;
	if (prm::get(mkc, prm::mkc::lw) != 0)
		access |= IBV_ACCESS_LOCAL_WRITE;
	if (prm::get(mkc, prm::mkc::rw) != 0)
		access |= IBV_ACCESS_REMOTE_WRITE;
	if (prm::get(mkc, prm::mkc::rr) != 0)
		access |= IBV_ACCESS_REMOTE_READ;
	if (prm::get(mkc, prm::mkc::a) != 0)
		access |= IBV_ACCESS_REMOTE_ATOMIC;
	return access;
}

} // namespace

int CommandProcessor::create_mkey(Command &command)
{
	using namespace prm::create_mkey_in;
	if (command.inlen < kBytes)
		return EINVAL;
	if (command.op_mod != 0)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpMod);
	const uint8_t *mkc = command.in + kMkc / 8;
	const uint32_t mode = prm::get(mkc, prm::mkc::access_mode_4_2) << 2 | prm::get(mkc, prm::mkc::access_mode_1_0);
	if (mode != prm::mkc::kAccessModeMtt)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeMkeyAccessMode);
	const uint64_t length = prm::get64(mkc, prm::mkc::len);
	if (prm::get(mkc, prm::mkc::length64) != 0 || length == 0)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeMkeyLength);
	const uint32_t pdn = prm::get(mkc, prm::mkc::pd);
	ibv_pd *pd = find_pd(pdn);
	if (pd == nullptr)
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchPd);
	Umem *umem = find_umem(prm::get(command.in, mkey_umem_id));
	if (umem == nullptr)
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchUmem);
	const uint64_t offset = prm::get64(command.in, mkey_umem_offset);
	if (!umem->holds(offset, length))
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeUmemRange);

	Mkey mkey;
	mkey.pd = pd;
	mkey.umem = umem;
	mkey.start_addr = prm::get64(mkc, prm::mkc::start_addr);
	mkey.length = length;
	mkey.umem_offset = offset;
	mkey.access_bits = prm::get(mkc, prm::mkc::a) << 4 | prm::get(mkc, prm::mkc::rw) << 3 |
			   prm::get(mkc, prm::mkc::rr) << 2 | prm::get(mkc, prm::mkc::lw) << 1 |
			   prm::get(mkc, prm::mkc::lr);
	mkey.qpn = prm::get(mkc, prm::mkc::qpn);
	mkey.log_page_size = prm::get(mkc, prm::mkc::log_page_size);
	const auto tag = static_cast<uint8_t>(prm::get(mkc, prm::mkc::mkey_7_0));
	const int error = softdpu_verbs_register_key(pd, umem->addr + offset, length, mkey.start_addr,
						     verbs_access(mkc), tag, &mkey.key);
	if (error == EINVAL)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeMkeyLength);
	if (error != 0)
		return fail(command.out, command.outlen, prm::kStatusNoResources, kSyndromeNoResources);
	const uint32_t index = mkey.key >> 8;
	try {
		mkeys_.emplace(index, mkey);
	} catch (...) {
		(void)softdpu_verbs_unregister_key(pd, mkey.key);
		throw;
	}
	++umem->users;
	command.created_id = index;
	std::array<uint8_t, prm::kOutboxHeaderBytes> answer{};
	prm::set(answer.data(), prm::object_id, index);
	copy_out(answer.data(), answer.size(), command.out, command.outlen);
	return 0;
}

int CommandProcessor::query_mkey(Command &command)
{
	if (command.op_mod != 0)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpMod);
	const auto found = mkeys_.find(prm::get(command.in, prm::object_id));
	if (found == mkeys_.end())
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchMkey);
	const Mkey &mkey = found->second;
	std::array<uint8_t, prm::query_mkey_out::kBytes> answer{};
	uint8_t *mkc = answer.data() + prm::query_mkey_out::kMkc / 8;
	prm::set(mkc, prm::mkc::access_mode_1_0, prm::mkc::kAccessModeMtt);
	prm::set(mkc, prm::mkc::a, mkey.access_bits >> 4 & 1);
	prm::set(mkc, prm::mkc::rw, mkey.access_bits >> 3 & 1);
	prm::set(mkc, prm::mkc::rr, mkey.access_bits >> 2 & 1);
	prm::set(mkc, prm::mkc::lw, mkey.access_bits >> 1 & 1);
	prm::set(mkc, prm::mkc::lr, mkey.access_bits & 1);
	prm::set(mkc, prm::mkc::qpn, mkey.qpn);
	prm::set(mkc, prm::mkc::mkey_7_0, mkey.key & 0xff);
	prm::set(mkc, prm::mkc::pd, mkey.pd->handle);
	prm::set64(mkc, prm::mkc::start_addr, mkey.start_addr);
	prm::set64(mkc, prm::mkc::len, mkey.length);
	prm::set(mkc, prm::mkc::log_page_size, mkey.log_page_size);
	copy_out(answer.data(), answer.size(), command.out, command.outlen);
	return 0;
}

int CommandProcessor::destroy_mkey(Command &command)
{
	const auto found = mkeys_.find(prm::get(command.in, prm::object_id));
	if (found == mkeys_.end())
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchMkey);
	Mkey &mkey = found->second;
	(void)softdpu_verbs_unregister_key(mkey.pd, mkey.key);
	--mkey.umem->users;
	mkeys_.erase(found);
	std::array<uint8_t, prm::kOutboxHeaderBytes> answer{};
	copy_out(answer.data(), answer.size(), command.out, command.outlen);
	return 0;
}

} // namespace softdpu::mlx5::devx
