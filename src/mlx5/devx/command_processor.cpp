// The DevX command path: the kernel's checks (uid, method whitelists, object identity, saved
// destroy commands, umem_valid forcing; notes §6), then the device's dispatch by opcode. The
// commands themselves are in commands_*.cpp.
#include "mlx5/devx/command_processor.hpp"

#include "mlx5/devx/prm.hpp"
#include "mlx5/wq/engine.hpp"
#include "verbs/softdpu_api.h"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <vector>

namespace softdpu::mlx5::devx {

int fail(void *out, size_t outlen, uint8_t status, uint32_t syndrome) noexcept
{
	std::array<uint8_t, prm::kOutboxHeaderBytes> header{};
	prm::set(header.data(), prm::outbox::status, status);
	prm::set(header.data(), prm::outbox::syndrome, syndrome);
	copy_out(header.data(), header.size(), out, outlen);
	return EREMOTEIO;
}

void copy_out(const uint8_t *answer, size_t answer_bytes, void *out, size_t outlen) noexcept
{
	const size_t copied = std::min(answer_bytes, outlen);
	std::memcpy(out, answer, copied);
	std::memset(static_cast<uint8_t *>(out) + copied, 0, outlen - copied);
}

int answer_id(void *out, size_t outlen, uint32_t id) noexcept
{
	std::array<uint8_t, prm::kOutboxHeaderBytes> answer{};
	prm::set(answer.data(), prm::object_id, id);
	copy_out(answer.data(), answer.size(), out, outlen);
	return 0;
}

int status_errno(uint8_t status) noexcept
{
	switch (status) {
	case prm::kStatusOk:
		return 0;
	case prm::kStatusResBusy:
		return EBUSY;
	case prm::kStatusLimits:
		return ENOMEM;
	case prm::kStatusNoResources:
		return EAGAIN;
	case 0x01: // INT_ERR
	case 0x04: // BAD_SYS_STATE_ERR
	case 0x50: // BAD_INP_LEN_ERR
	case 0x51: // BAD_OUTP_LEN_ERR
		return EIO;
	default:
		return EINVAL;
	}
}

namespace {

// The uid of each DevX context (the kernel's CREATE_UCTX): 1..0xfffe, 0 for a context without one.
uint16_t next_uid() noexcept
{
	static std::atomic<uint32_t> next{1};
	return static_cast<uint16_t>(next.fetch_add(1) % 0xfffe + 1);
}

// Whether every page of [start, start + size) is mapped in this process (mincore answers ENOMEM
// for a range with a hole), without touching it.
bool range_mapped(uintptr_t start, size_t size) noexcept
{
	constexpr uintptr_t kPage = 4096;
	const uintptr_t first = start & ~(kPage - 1);
	const uintptr_t end = (start + size + kPage - 1) & ~(kPage - 1);
	std::array<unsigned char, 256> resident{};
	for (uintptr_t at = first; at < end;) {
		const uintptr_t chunk = std::min<uintptr_t>(end - at, resident.size() * kPage);
		if (mincore(reinterpret_cast<void *>(at), chunk, resident.data()) != 0)
			return false;
		at += chunk;
	}
	return true;
}

// ---- The kernel's whitelists (devx.c; notes §6.2) ----

bool is_create_opcode(uint32_t opcode, uint32_t op_mod) noexcept
{
	switch (opcode) {
	case 0xa00: // CREATE_GENERAL_OBJECT
	case prm::kCreateMkey:
	case prm::kCreateCq:
	case prm::kAllocPd:
	case prm::kAllocTransportDomain:
	case prm::kAllocUar: // not in the kernel's list (it hands UARs out through its UAR verb): softdpu's
			     // addition, as rdma-core's VFIO driver issues it
	case 0x90c:          // CREATE_RMP
	case 0x904:          // CREATE_SQ
	case 0x908:          // CREATE_RQ
	case 0x916:          // CREATE_RQT
	case 0x900:          // CREATE_TIR
	case 0x912:          // CREATE_TIS
	case 0x771:          // ALLOC_Q_COUNTER
	case 0x930:          // CREATE_FLOW_TABLE
	case 0x933:          // CREATE_FLOW_GROUP
	case 0x939:          // ALLOC_FLOW_COUNTER
	case 0x93d:          // ALLOC_PACKET_REFORMAT_CONTEXT
	case 0x940:          // ALLOC_MODIFY_HEADER_CONTEXT
	case 0x782:          // CREATE_SCHEDULING_ELEMENT
	case 0x827:          // ADD_VXLAN_UDP_DPORT
	case 0x829:          // SET_L2_TABLE_ENTRY
	case prm::kCreateQp:
	case 0x700: // CREATE_SRQ
	case 0x705: // CREATE_XRC_SRQ
	case 0x710: // CREATE_DCT
	case 0x717: // CREATE_XRQ
	case 0x806: // ATTACH_TO_MCG
	case 0x80e: // ALLOC_XRCD
	case 0x600: // CREATE_PSV
		return true;
	case 0x936: // SET_FLOW_TABLE_ENTRY, op_mod 0
		return op_mod == 0;
	default:
		return false;
	}
}

bool is_qp_transition(uint32_t opcode) noexcept
{
	switch (opcode) {
	case prm::kRst2InitQp:
	case prm::kInit2RtrQp:
	case prm::kInit2InitQp:
	case prm::kRtr2RtsQp:
	case prm::kRts2RtsQp:
	case prm::kSqerr2RtsQp:
	case prm::k2ErrQp:
	case prm::k2RstQp:
		return true;
	default:
		return false;
	}
}

bool is_modify_opcode(uint32_t opcode, uint32_t op_mod) noexcept
{
	if (is_qp_transition(opcode))
		return true;
	switch (opcode) {
	case 0xa01: // MODIFY_GENERAL_OBJECT
	case prm::kModifyCq:
	case 0x90d: // MODIFY_RMP
	case 0x905: // MODIFY_SQ
	case 0x909: // MODIFY_RQ
	case 0x917: // MODIFY_RQT
	case 0x901: // MODIFY_TIR
	case 0x913: // MODIFY_TIS
	case 0x93c: // MODIFY_FLOW_TABLE
	case 0x785: // MODIFY_SCHEDULING_ELEMENT
	case 0x703: // ARM_RQ
	case 0x708: // ARM_XRC_SRQ
	case 0x714: // ARM_DCT_FOR_KEY_VIOLATION
	case 0x71a: // ARM_XRQ
	case 0x72a: // MODIFY_XRQ
	case 0x726: // SET_XRQ_DC_PARAMS_ENTRY
	case 0x729: // RELEASE_XRQ_ERROR
		return true;
	case 0x936: // SET_FLOW_TABLE_ENTRY, op_mod 1
		return op_mod == 1;
	default:
		return false;
	}
}

bool is_query_opcode(uint32_t opcode) noexcept
{
	switch (opcode) {
	case 0xa02: // QUERY_GENERAL_OBJECT
	case prm::kQueryMkey:
	case prm::kQueryCq:
	case 0x90f: // QUERY_RMP
	case 0x907: // QUERY_SQ
	case 0x90b: // QUERY_RQ
	case 0x919: // QUERY_RQT
	case 0x903: // QUERY_TIR
	case 0x915: // QUERY_TIS
	case 0x773: // QUERY_Q_COUNTER
	case 0x932: // QUERY_FLOW_TABLE
	case 0x935: // QUERY_FLOW_GROUP
	case 0x937: // QUERY_FLOW_TABLE_ENTRY
	case 0x93b: // QUERY_FLOW_COUNTER
	case prm::kQueryQp:
	case 0x702: // QUERY_SRQ
	case 0x707: // QUERY_XRC_SRQ
	case 0x713: // QUERY_DCT
	case 0x719: // QUERY_XRQ
	case 0x725: // QUERY_XRQ_DC_PARAMS_ENTRY
	case 0x727: // QUERY_XRQ_ERROR_PARAMS
	case 0x93f: // QUERY_PACKET_REFORMAT_CONTEXT
		return true;
	default:
		return false;
	}
}

bool is_general_opcode(uint32_t opcode) noexcept
{
	if (opcode >= 0xb00 && opcode < 0xd00)
		return true;
	switch (opcode) {
	case prm::kQueryHcaCap:
	case prm::kQueryHcaVportContext:
	case prm::kQueryHcaVportGid:
	case 0x752: // QUERY_ESW_VPORT_CONTEXT
	case 0x750: // QUERY_VPORT_STATE
	case 0x101: // QUERY_ADAPTER
	case 0x10a: // QUERY_ISSI
	case prm::kQueryNicVportContext:
	case 0x760: // QUERY_ROCE_ADDRESS
	case 0x76f: // QUERY_VNIC_ENV
	case 0x770: // QUERY_VPORT_COUNTER
	case 0x80a: // GET_DROPPED_PACKET_LOG
	case 0x80d: // NOP
	case 0x822: // QUERY_CONG_STATUS
	case 0x824: // QUERY_CONG_PARAMS
	case 0x826: // QUERY_CONG_STATISTICS
	case 0x842: // QUERY_LAG
	case 0x740: // QUERY_ESW_FUNCTIONS
		return true;
	default:
		return false;
	}
}

// The general commands the kernel runs for a context without a uid (under the shared uid).
bool allowed_without_uid(uint32_t opcode) noexcept
{
	return opcode == prm::kQueryHcaCap || opcode == prm::kQueryHcaVportContext || opcode == 0x752 ||
	       opcode == 0x740;
}

bool whitelisted(Method method, uint32_t opcode, uint32_t op_mod) noexcept
{
	switch (method) {
	case Method::create:
		return is_create_opcode(opcode, op_mod);
	case Method::modify:
		return is_modify_opcode(opcode, op_mod);
	case Method::query:
		return is_query_opcode(opcode);
	case Method::general:
		return is_general_opcode(opcode);
	case Method::destroy:
		return true; // the saved destroy commands only
	}
	return false;
}

// The create opcode of the object a query or modify command names (the kernel's obj_id type,
// §6.3), or 0 for a command on an object the device never makes (then no handle matches).
uint32_t object_opcode_of(uint32_t opcode) noexcept
{
	switch (opcode) {
	case prm::kQueryMkey:
		return prm::kCreateMkey;
	case prm::kQueryCq:
	case prm::kModifyCq:
		return prm::kCreateCq;
	case prm::kQueryQp:
		return prm::kCreateQp;
	default:
		return is_qp_transition(opcode) ? prm::kCreateQp : 0;
	}
}

// The destroy command the kernel saves for a created object (§6.4): opcode, uid, id at 0x48.
uint32_t destroy_opcode_of(uint32_t create_opcode) noexcept
{
	switch (create_opcode) {
	case prm::kAllocPd:
		return prm::kDeallocPd;
	case prm::kAllocTransportDomain:
		return prm::kDeallocTransportDomain;
	case prm::kAllocUar:
		return prm::kDeallocUar;
	case prm::kCreateMkey:
		return prm::kDestroyMkey;
	case prm::kCreateCq:
		return prm::kDestroyCq;
	case prm::kCreateQp:
		return prm::kDestroyQp;
	default:
		return 0;
	}
}

// Inboxes copied on the stack by CommandProcessor::run; larger ones (creates with long address
// lists) are copied to the heap.
constexpr size_t kInlineInboxBytes = 2048;

// The kernel makes every umem-capable create name its buffers by umem (§6.5).
void force_umem_valid(uint8_t *in, size_t inlen, uint32_t opcode) noexcept
{
	switch (opcode) {
	case prm::kCreateMkey:
		if (inlen >= prm::create_mkey_in::kBytes)
			prm::set(in, prm::create_mkey_in::mkey_umem_valid, 1);
		break;
	case prm::kCreateCq:
		if (inlen >= prm::create_cq_in::kBytes) {
			prm::set(in, prm::create_cq_in::cq_umem_valid, 1);
			prm::set(in, prm::cqc::dbr_umem_valid.at(prm::create_cq_in::kCqc), 1);
		}
		break;
	case prm::kCreateQp:
		if (inlen >= prm::create_qp_in::kBytes) {
			prm::set(in, prm::create_qp_in::wq_umem_valid, 1);
			prm::set(in, prm::qpc::dbr_umem_valid.at(prm::create_qp_in::kQpc), 1);
		}
		break;
	default:
		break;
	}
}

} // namespace

CommandProcessor::CommandProcessor(ibv_context *context, const DeviceCaps &caps, bool devx) noexcept
    : context_(context), caps_(caps), devx_(devx), uid_(devx ? next_uid() : 0)
{
}

CommandProcessor::~CommandProcessor()
{
	release_all();
}

int CommandProcessor::run(Method method, uint32_t target_opcode, uint32_t target_id, const void *in, size_t inlen,
			  void *out, size_t outlen, uint32_t *created_id) noexcept
{
	if (in == nullptr || out == nullptr || inlen < prm::kInboxHeaderBytes || outlen < prm::kOutboxHeaderBytes)
		return EINVAL;
	if (prm::get(in, prm::inbox::vhca_tunnel_id) != 0)
		return EINVAL;
	const uint32_t opcode = prm::get(in, prm::inbox::opcode);
	const uint32_t op_mod = prm::get(in, prm::inbox::op_mod);
	if (!devx_ && !(method == Method::general && allowed_without_uid(opcode)))
		return EOPNOTSUPP;
	if (!whitelisted(method, opcode, op_mod))
		return EINVAL;
	if (method == Method::query || method == Method::modify) {
		// The object the command names must be the handle's ("object id not owned by this handle").
		if (inlen < prm::object_id.end_byte() || object_opcode_of(opcode) != target_opcode ||
		    prm::get(in, prm::object_id) != target_id)
			return EINVAL;
	}
	// The command as the device sees it: the caller's inbox with the uid (and umem_valid) the
	// kernel writes. Inboxes up to kInlineInboxBytes (every command but a create with a long
	// address list) are copied on the stack, so a command allocates nothing here.
	std::array<uint8_t, kInlineInboxBytes> inline_copy;
	std::vector<uint8_t> heap_copy;
	uint8_t *copy = inline_copy.data();
	if (inlen > inline_copy.size()) {
		try {
			heap_copy.resize(inlen);
		} catch (const std::bad_alloc &) {
			return ENOMEM;
		}
		copy = heap_copy.data();
	}
	std::memcpy(copy, in, inlen);
	prm::set(copy, prm::inbox::uid, uid_);
	if (method == Method::create)
		force_umem_valid(copy, inlen, opcode);
	Command command;
	command.in = copy;
	command.inlen = inlen;
	command.out = out;
	command.outlen = outlen;
	command.opcode = opcode;
	command.op_mod = op_mod;
	const int result = dispatch(command);
	if (result == 0 && created_id != nullptr)
		*created_id = command.created_id;
	return result;
}

int CommandProcessor::dispatch(Command &command) noexcept
{
	Handler handler = nullptr;
	switch (command.opcode) {
	case prm::kQueryHcaCap:
		handler = &CommandProcessor::query_hca_cap;
		break;
	case prm::kQueryNicVportContext:
		handler = &CommandProcessor::query_nic_vport_context;
		break;
	case prm::kQueryHcaVportContext:
		handler = &CommandProcessor::query_hca_vport_context;
		break;
	case prm::kQueryHcaVportGid:
		handler = &CommandProcessor::query_hca_vport_gid;
		break;
	case prm::kAllocPd:
		handler = &CommandProcessor::alloc_pd;
		break;
	case prm::kDeallocPd:
		handler = &CommandProcessor::dealloc_pd;
		break;
	case prm::kAllocTransportDomain:
		handler = &CommandProcessor::alloc_transport_domain;
		break;
	case prm::kDeallocTransportDomain:
		handler = &CommandProcessor::dealloc_transport_domain;
		break;
	case prm::kAllocUar:
		handler = &CommandProcessor::alloc_uar_command;
		break;
	case prm::kDeallocUar:
		handler = &CommandProcessor::dealloc_uar_command;
		break;
	case prm::kCreateMkey:
		handler = &CommandProcessor::create_mkey;
		break;
	case prm::kQueryMkey:
		handler = &CommandProcessor::query_mkey;
		break;
	case prm::kDestroyMkey:
		handler = &CommandProcessor::destroy_mkey;
		break;
	case prm::kCreateCq:
		handler = &CommandProcessor::create_cq;
		break;
	case prm::kQueryCq:
		handler = &CommandProcessor::query_cq;
		break;
	case prm::kModifyCq:
		handler = &CommandProcessor::modify_cq;
		break;
	case prm::kDestroyCq:
		handler = &CommandProcessor::destroy_cq;
		break;
	case prm::kCreateQp:
		handler = &CommandProcessor::create_qp;
		break;
	case prm::kQueryQp:
		handler = &CommandProcessor::query_qp;
		break;
	case prm::kRst2InitQp:
	case prm::kInit2RtrQp:
	case prm::kRtr2RtsQp:
	case prm::kRts2RtsQp:
	case prm::kInit2InitQp:
	case prm::kSqerr2RtsQp:
	case prm::k2ErrQp:
	case prm::k2RstQp:
		handler = &CommandProcessor::modify_qp;
		break;
	case prm::kDestroyQp:
		handler = &CommandProcessor::destroy_qp;
		break;
	default:
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpcode);
	}
	try {
		return (this->*handler)(command);
	} catch (const std::bad_alloc &) {
		return fail(command.out, command.outlen, prm::kStatusNoResources, kSyndromeNoResources);
	}
}

int CommandProcessor::general(const void *in, size_t inlen, void *out, size_t outlen) noexcept
{
	std::lock_guard lock(mutex_);
	return run(Method::general, 0, 0, in, inlen, out, outlen, nullptr);
}

Object *CommandProcessor::create(const void *in, size_t inlen, void *out, size_t outlen) noexcept
{
	std::lock_guard lock(mutex_);
	auto *object = new (std::nothrow) Object();
	if (object == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	uint32_t id = 0;
	const int error = run(Method::create, 0, 0, in, inlen, out, outlen, &id);
	if (error != 0) {
		delete object;
		errno = error;
		return nullptr;
	}
	const uint32_t opcode = prm::get(in, prm::inbox::opcode);
	object->owner = this;
	object->uid = uid_;
	object->create_opcode = static_cast<uint16_t>(opcode);
	object->id = id;
	prm::set(object->destroy_in.data(), prm::inbox::opcode, destroy_opcode_of(opcode));
	prm::set(object->destroy_in.data(), prm::inbox::uid, uid_);
	prm::set(object->destroy_in.data(), prm::object_id, id);
	try {
		objects_.insert(object);
	} catch (const std::bad_alloc &) {
		(void)destroy_locked(object->destroy_in.data());
		delete object;
		errno = ENOMEM;
		return nullptr;
	}
	return object;
}

int CommandProcessor::query(Object &object, const void *in, size_t inlen, void *out, size_t outlen) noexcept
{
	std::lock_guard lock(mutex_);
	return run(Method::query, object.create_opcode, object.id, in, inlen, out, outlen, nullptr);
}

int CommandProcessor::modify(Object &object, const void *in, size_t inlen, void *out, size_t outlen) noexcept
{
	std::lock_guard lock(mutex_);
	return run(Method::modify, object.create_opcode, object.id, in, inlen, out, outlen, nullptr);
}

int CommandProcessor::destroy_locked(const uint8_t *in) noexcept
{
	std::array<uint8_t, prm::kOutboxHeaderBytes> out{};
	Command command;
	command.in = in;
	command.inlen = prm::kInboxHeaderBytes;
	command.out = out.data();
	command.outlen = out.size();
	command.opcode = prm::get(in, prm::inbox::opcode);
	const int error = dispatch(command);
	if (error == EREMOTEIO)
		return status_errno(static_cast<uint8_t>(prm::get(out.data(), prm::outbox::status)));
	return error;
}

int CommandProcessor::destroy(Object *object) noexcept
{
	std::lock_guard lock(mutex_);
	const int error = destroy_locked(object->destroy_in.data());
	if (error != 0)
		return error;
	objects_.erase(object);
	object->magic = 0;
	delete object;
	return 0;
}

int CommandProcessor::on_verbs_cq(Method method, ibv_cq *cq, const void *in, size_t inlen, void *out,
				  size_t outlen) noexcept
{
	std::lock_guard lock(mutex_);
	verbs_cq_ = cq;
	const int error = run(method, prm::kCreateCq, cq->handle, in, inlen, out, outlen, nullptr);
	verbs_cq_ = nullptr;
	return error;
}

int CommandProcessor::on_verbs_qp(Method method, ibv_qp *qp, const void *in, size_t inlen, void *out,
				  size_t outlen) noexcept
{
	std::lock_guard lock(mutex_);
	verbs_qp_ = qp;
	const int error = run(method, prm::kCreateQp, qp->qp_num, in, inlen, out, outlen, nullptr);
	verbs_qp_ = nullptr;
	return error;
}

// ---- umems and UARs ----

Umem *CommandProcessor::register_umem(void *addr, size_t size, uint32_t access, uint64_t pgsz_bitmap) noexcept
{
	// The access flags the kernel accepts for a umem.
	constexpr uint32_t kAllowed =
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_RELAXED_ORDERING;
	const auto start = reinterpret_cast<uintptr_t>(addr);
	// The device maps 4 KiB pages: a page-size bitmap must offer 4 KiB or more.
	if (addr == nullptr || size == 0 || start + size < start || (access & ~kAllowed) != 0 ||
	    (pgsz_bitmap & ~uint64_t{0xfff}) == 0) {
		errno = EINVAL;
		return nullptr;
	}
	// The kernel pins the range and answers EFAULT when part of it is not mapped. softdpu cannot
	// pin: the range must stay mapped while commands name it (docs/mlx5.md).
	if (!range_mapped(start, size)) {
		errno = EFAULT;
		return nullptr;
	}
	static std::atomic<uint32_t> next_id{1};
	std::lock_guard lock(mutex_);
	auto umem = std::unique_ptr<Umem>(new (std::nothrow) Umem());
	if (umem == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	umem->owner = this;
	umem->addr = static_cast<uint8_t *>(addr);
	umem->size = size;
	umem->access = access;
	umem->dv.umem_id = next_id.fetch_add(1) & 0xffffff;
	Umem *made = umem.get();
	try {
		umems_.emplace(made->dv.umem_id, std::move(umem));
	} catch (const std::bad_alloc &) {
		errno = ENOMEM;
		return nullptr;
	}
	return made;
}

int CommandProcessor::deregister_umem(Umem *umem) noexcept
{
	std::lock_guard lock(mutex_);
	const auto found = umems_.find(umem->dv.umem_id);
	if (found == umems_.end() || found->second.get() != umem)
		return EINVAL;
	// DESTROY_UMEM of a umem an object still uses: the firmware answers RES_BUSY.
	if (umem->users != 0)
		return EBUSY;
	umems_.erase(found);
	return 0;
}

Uar *CommandProcessor::alloc_uar(uint32_t flags) noexcept
{
	// The allocation types rdma-core 44 knows (MLX5DV_UAR_ALLOC_TYPE_BF, _NC); anything else EINVAL.
	if (flags != MLX5DV_UAR_ALLOC_TYPE_BF && flags != MLX5DV_UAR_ALLOC_TYPE_NC) {
		errno = EINVAL;
		return nullptr;
	}
	std::lock_guard lock(mutex_);
	return make_uar_locked();
}

Uar *CommandProcessor::make_uar_locked() noexcept
{
	static std::atomic<uint32_t> next_page{1};
	constexpr size_t kPage = 4096;
	constexpr size_t kRegisterOffset = 0x800; // the first blue-flame register of an mlx5 UAR page
	auto uar = std::unique_ptr<Uar>(new (std::nothrow) Uar());
	if (uar == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	void *page = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		errno = ENOMEM;
		return nullptr;
	}
	uar->owner = this;
	uar->page = page;
	uar->dv.base_addr = page;
	uar->dv.reg_addr = static_cast<uint8_t *>(page) + kRegisterOffset;
	uar->dv.page_id = next_page.fetch_add(1) & 0xffffff;
	uar->dv.mmap_off = static_cast<off_t>(uint64_t{uar->dv.page_id} * kPage);
	uar->dv.comp_mask = 0;
	Uar *made = uar.get();
	try {
		uars_.emplace(made->dv.page_id, std::move(uar));
	} catch (const std::bad_alloc &) {
		munmap(page, kPage);
		errno = ENOMEM;
		return nullptr;
	}
	return made;
}

void CommandProcessor::free_uar(Uar *uar) noexcept
{
	std::lock_guard lock(mutex_);
	free_uar_locked(uar);
}

void CommandProcessor::free_uar_locked(Uar *uar) noexcept
{
	const auto found = uars_.find(uar->dv.page_id);
	if (found == uars_.end() || found->second.get() != uar || uar->freed)
		return;
	if (uar->users != 0) {
		// The engine still watches the CQ doorbell of CQs on this page: the page goes with the
		// last of them (destroy_cq); the page_id is no longer allocated from now on.
		uar->freed = true;
		return;
	}
	munmap(uar->page, 4096);
	uars_.erase(found);
}

wq::Cq *CommandProcessor::engine_cq(const Object &object) noexcept
{
	std::lock_guard lock(mutex_);
	if (object.create_opcode != prm::kCreateCq) {
		errno = EINVAL;
		return nullptr;
	}
	const auto found = cqs_.find(object.id);
	if (found == cqs_.end()) {
		errno = EINVAL;
		return nullptr;
	}
	return found->second.engine;
}

// ---- Lookups ----

ibv_pd *CommandProcessor::find_pd(uint32_t pdn) noexcept
{
	const auto found = pds_.find(pdn);
	if (found != pds_.end())
		return found->second.pd;
	// A PD made with ibv_alloc_pd on this context: the same number space.
	return softdpu_verbs_pd_of(context_, pdn);
}

Umem *CommandProcessor::find_umem(uint32_t umem_id) noexcept
{
	const auto found = umems_.find(umem_id);
	return found != umems_.end() ? found->second.get() : nullptr;
}

bool CommandProcessor::uar_allocated(uint32_t page_id) noexcept
{
	return find_uar(page_id) != nullptr;
}

Uar *CommandProcessor::find_uar(uint32_t page_id) noexcept
{
	const auto found = uars_.find(page_id);
	return found != uars_.end() && !found->second->freed ? found->second.get() : nullptr;
}

void CommandProcessor::release_uar(Uar *uar) noexcept
{
	if (uar == nullptr || --uar->users != 0 || !uar->freed)
		return;
	munmap(uar->page, 4096);
	uars_.erase(uar->dv.page_id);
}

ibv_qp *CommandProcessor::find_qp(uint32_t qpn, Qp **devx_qp) noexcept
{
	*devx_qp = nullptr;
	const auto found = qps_.find(qpn);
	if (found != qps_.end()) {
		*devx_qp = &found->second;
		return found->second.backing;
	}
	if (verbs_qp_ != nullptr && verbs_qp_->qp_num == qpn)
		return verbs_qp_;
	return nullptr;
}

// What a context leaves at close is freed as the kernel frees a closed file's objects: QPs first,
// then CQs, mkeys, PDs, transport domains, umems and UARs.
void CommandProcessor::release_all() noexcept
{
	std::lock_guard lock(mutex_);
	std::array<uint8_t, prm::kInboxHeaderBytes> in{};
	const auto replay = [&](uint32_t opcode, uint32_t id) {
		in.fill(0);
		prm::set(in.data(), prm::inbox::opcode, opcode);
		prm::set(in.data(), prm::object_id, id);
		(void)destroy_locked(in.data());
	};
	while (!qps_.empty())
		replay(prm::kDestroyQp, qps_.begin()->first);
	while (!cqs_.empty()) {
		const uint32_t cqn = cqs_.begin()->first;
		replay(prm::kDestroyCq, cqn);
		cqs_.erase(cqn); // never busy once the QPs are gone
	}
	while (!mkeys_.empty())
		replay(prm::kDestroyMkey, mkeys_.begin()->first);
	while (!pds_.empty()) {
		const uint32_t pdn = pds_.begin()->first;
		replay(prm::kDeallocPd, pdn);
		pds_.erase(pdn); // busy only with verbs objects the application left in it
	}
	tds_.clear();
	umems_.clear();
	for (auto &[page_id, uar] : uars_)
		munmap(uar->page, 4096);
	uars_.clear();
	for (Object *object : objects_) {
		object->magic = 0;
		delete object;
	}
	objects_.clear();
}

} // namespace softdpu::mlx5::devx
