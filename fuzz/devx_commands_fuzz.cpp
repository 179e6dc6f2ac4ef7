// Fuzz target: the DevX command interface of softdpu's libmlx5, as an application drives it (the
// public mlx5dv_devx_* calls on a device of the default topology). An input is a list of commands:
// each is sent as a general command, an object create, or a query, modify or destroy of an object
// an earlier command of the same input created; a second context sends some of them, so commands
// naming another context's objects are exercised. Whatever the bytes, every call returns one of
// its documented values, nothing crashes, and every object an input created can be destroyed at
// its end (dependents first), so nothing leaks across inputs.
//
// Input: records of
//   u8  op        bits 0-2: 0 general, 1 create, 2 query, 3 modify, 4 destroy, 5 general on the
//                 second context, 6 create on the second context, 7 query with the wrong length;
//                 bits 3-7: which live object (modulo their number)
//   u16 inlen     little-endian, at most kMaxMailbox
//   u16 outlen    little-endian, at most kMaxMailbox
//   inlen bytes   the inbox
// A 32-bit big-endian word of an inbox whose low 24 bits are 0xafe0NN has them replaced before
// sending (its top byte is kept, as PRM ids are 24-bit fields sharing a word): NN 01 the umem id,
// 02 the UAR page id, 03 the PD number of a verbs PD, 04 the event queue number; low bits 0xafe1NN:
// the id (outbox bits 0x48-0x5f) of the NN-th live object. The seeds in corpus/devx_commands use
// them to build valid chains (PD, MKEY over umem, CQ, QP and its transitions). With
// SOFTDPU_FUZZ_TRACE set, each call and its result are printed (for writing seeds).
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <endian.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kMaxMailbox = 8192;
constexpr size_t kUmemBytes = 1 << 20;

void require(bool condition)
{
	if (!condition)
		__builtin_trap();
}

// Values a DevX call may return: 0 or a positive errno the man page and the kernel document.
bool documented(int error)
{
	switch (error) {
	case 0:
	case EINVAL:
	case EREMOTEIO:
	case EOPNOTSUPP:
	case ENOMEM:
	case EBUSY:
	case ENOSPC:
	case EAGAIN:
	case EIO:
		return true;
	default:
		return false;
	}
}

struct Device {
	ibv_context *context = nullptr;
	ibv_context *other = nullptr;
	ibv_pd *pd = nullptr;
	void *memory = nullptr;
	mlx5dv_devx_umem *umem = nullptr;
	mlx5dv_devx_uar *uar = nullptr;
	uint32_t eqn = 0;
	bool ready = false;
};

Device &device()
{
	static Device made = [] {
		Device d;
		int count = 0;
		ibv_device **list = ibv_get_device_list(&count);
		if (list == nullptr || count == 0)
			return d;
		mlx5dv_context_attr attr{};
		attr.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
		d.context = mlx5dv_open_device(list[0], &attr);
		d.other = mlx5dv_open_device(list[0], &attr);
		ibv_free_device_list(list);
		if (d.context == nullptr || d.other == nullptr)
			return d;
		d.pd = ibv_alloc_pd(d.context);
		if (posix_memalign(&d.memory, 4096, kUmemBytes) != 0)
			return d;
		std::memset(d.memory, 0, kUmemBytes);
		d.umem =
		    mlx5dv_devx_umem_reg(d.context, d.memory, kUmemBytes,
					 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
		d.uar = mlx5dv_devx_alloc_uar(d.context, MLX5DV_UAR_ALLOC_TYPE_NC);
		(void)mlx5dv_devx_query_eqn(d.context, 0, &d.eqn);
		d.ready = d.pd != nullptr && d.umem != nullptr && d.uar != nullptr;
		return d;
	}();
	return made;
}

struct Live {
	mlx5dv_devx_obj *obj;
	uint32_t id;
};

uint32_t get_be32(const uint8_t *at)
{
	uint32_t word = 0;
	std::memcpy(&word, at, sizeof(word));
	return be32toh(word);
}

void put_be32(uint8_t *at, uint32_t value)
{
	const uint32_t word = htobe32(value);
	std::memcpy(at, &word, sizeof(word));
}

void substitute(std::vector<uint8_t> &inbox, const Device &d, const std::vector<Live> &live)
{
	for (size_t at = 0; at + 4 <= inbox.size(); at += 4) {
		const uint32_t word = get_be32(inbox.data() + at);
		if ((word & 0xffe000) != 0xafe000)
			continue;
		const uint32_t which = word & 0xff;
		uint32_t value = word & 0xffffff;
		if ((word & 0xff00) == 0xe000) {
			if (which == 1)
				value = d.umem->umem_id;
			else if (which == 2)
				value = d.uar->page_id;
			else if (which == 3)
				value = d.pd->handle;
			else if (which == 4)
				value = d.eqn;
		} else if ((word & 0xff00) == 0xe100 && which < live.size()) {
			value = live[which].id;
		}
		put_be32(inbox.data() + at, (word & 0xff000000) | (value & 0xffffff));
	}
}

// Destroys what an input left, dependents (created later) first; an object another one still
// uses is retried after it. Everything must go.
void destroy_all(std::vector<Live> &live)
{
	while (!live.empty()) {
		bool progress = false;
		for (size_t i = live.size(); i-- > 0;) {
			const int error = mlx5dv_devx_obj_destroy(live[i].obj);
			require(documented(error));
			if (error == 0) {
				live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
				progress = true;
			}
		}
		require(progress);
	}
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Device &d = device();
	if (!d.ready)
		return 0;
	std::vector<Live> live;
	std::vector<uint8_t> out(kMaxMailbox + 64);
	size_t at = 0;
	while (at + 5 <= size && live.size() < 64) {
		const uint8_t op = data[at];
		size_t inlen = data[at + 1] | (size_t{data[at + 2]} << 8);
		size_t outlen = data[at + 3] | (size_t{data[at + 4]} << 8);
		at += 5;
		inlen = std::min({inlen, kMaxMailbox, size - at});
		outlen = std::min(outlen, kMaxMailbox);
		std::vector<uint8_t> inbox(data + at, data + at + inlen);
		at += inlen;
		substitute(inbox, d, live);
		const uint32_t kind = op & 7;
		Live *target = live.empty() ? nullptr : &live[(op >> 3) % live.size()];
		std::memset(out.data(), 0xa5, out.size());
		int error = 0;
		switch (kind) {
		case 0:
		case 5:
			error = mlx5dv_devx_general_cmd(kind == 0 ? d.context : d.other, inbox.data(), inbox.size(),
							out.data(), outlen);
			break;
		case 1:
		case 6: {
			mlx5dv_devx_obj *obj = mlx5dv_devx_obj_create(kind == 1 ? d.context : d.other, inbox.data(),
								      inbox.size(), out.data(), outlen);
			if (obj == nullptr) {
				error = errno;
				break;
			}
			if (kind == 6) { // the second context's objects do not outlive the record
				require(documented(mlx5dv_devx_obj_destroy(obj)));
				break;
			}
			require(outlen >= 16);
			live.push_back({obj, outlen >= 12 ? get_be32(out.data() + 8) & 0xffffff : 0});
			break;
		}
		case 2:
		case 7:
			if (target == nullptr)
				break;
			error = mlx5dv_devx_obj_query(target->obj, inbox.data(),
						      kind == 2 ? inbox.size() : inbox.size() / 2, out.data(), outlen);
			break;
		case 3:
			if (target != nullptr)
				error =
				    mlx5dv_devx_obj_modify(target->obj, inbox.data(), inbox.size(), out.data(), outlen);
			break;
		case 4:
			if (target != nullptr) {
				error = mlx5dv_devx_obj_destroy(target->obj);
				if (error == 0)
					live.erase(live.begin() + (target - live.data()));
			}
			break;
		default:
			break;
		}
		if (std::getenv("SOFTDPU_FUZZ_TRACE") != nullptr)
			std::fprintf(stderr, "op %u opcode 0x%x inlen %zu outlen %zu: %d (status 0x%x syndrome 0x%x)\n",
				     kind, inbox.size() >= 2 ? (inbox[0] << 8 | inbox[1]) : 0u, inbox.size(), outlen,
				     error, out[0], outlen >= 8 ? get_be32(out.data() + 4) : 0u);
		require(documented(error));
		// Nothing is written past the caller's outbox.
		for (size_t i = outlen; i < out.size(); ++i)
			require(out[i] == 0xa5);
	}
	destroy_all(live);
	return 0;
}
