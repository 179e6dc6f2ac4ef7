#include "memif/connection.hpp"

#include "memif/database.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>

namespace softdpu::memif {
namespace {

// Creates a sealed memfd of `size` bytes mapped read/write; the client's shared memory.
int create_memfd_region(const char *name, uint64_t size, Region &out)
{
	UniqueFd fd(memfd_create(name, MFD_ALLOW_SEALING | MFD_CLOEXEC));
	if (!fd.valid())
		return errno_to_memif(errno);
	if (ftruncate(fd.get(), off_t(size)) < 0 || fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK) < 0)
		return errno_to_memif(errno);
	void *addr = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
	if (addr == MAP_FAILED)
		return errno_to_memif(errno);
	out.addr = static_cast<uint8_t *>(addr);
	out.size = size;
	out.fd = std::move(fd);
	out.external = false;
	return MEMIF_ERR_SUCCESS;
}

bool secrets_equal(const char *a, const char *b)
{
	const size_t length = strnlen(a, kSecretSize);
	return length == strnlen(b, kSecretSize) && std::memcmp(a, b, length) == 0;
}

} // namespace

Connection::Connection(Database &database, MemifSocket &socket, const memif_conn_args_t &args,
		       memif_connection_update_t *on_connect, memif_connection_update_t *on_disconnect,
		       memif_interrupt_t *on_interrupt, void *private_ctx)
    : database_(database), socket_(socket), args_(args), on_connect_(on_connect), on_disconnect_(on_disconnect),
      on_interrupt_(on_interrupt), private_ctx_(private_ctx), regions_(DbAllocator<Region>(&database.allocator())),
      datapath_(*this, database, args, private_ctx), outbox_(DbAllocator<Outgoing>(&database.allocator()))
{
}

Connection::~Connection()
{
	magic_ = 0;
}

void Connection::record_error(int error, const char *reason)
{
	last_error_ = error;
	copy_string_to_field(reason, reason_, kReasonSize);
	reason_[kReasonSize] = '\0';
}

int Connection::send(const Message &message, int fd)
{
	return send_message(control_.get(), message, fd);
}

// --- connection establishment ----------------------------------------------------------------

int Connection::request_connection()
{
	if (is_master())
		return MEMIF_ERR_INVAL_ARG;
	if (control_.valid())
		return MEMIF_ERR_ALREADY;
	UniqueFd channel;
	const int err = connect_to(socket_.address(), channel);
	if (err != MEMIF_ERR_SUCCESS)
		return err;
	const int watched = database_.watch(channel.get(), Database::FdKind::control, this);
	if (watched != MEMIF_ERR_SUCCESS)
		return watched;
	control_ = std::move(channel);
	state_ = State::await_hello;
	return MEMIF_ERR_SUCCESS;
}

int Connection::accept_init(UniqueFd channel, const InitMessage &init)
{
	// The channel's fd is watched by the socket as "pending"; from here on it is ours.
	const char *reason = nullptr;
	int err = MEMIF_ERR_SUCCESS;
	if (control_.valid()) {
		err = MEMIF_ERR_ALRCONN;
		reason = "Already connected";
	} else if (init.version != kProtocolVersion) {
		err = MEMIF_ERR_PROTO;
		reason = "Incompatible memif version";
	} else if (init.mode != uint8_t(args_.mode)) {
		err = MEMIF_ERR_MODE;
		reason = "Mode mismatch";
	} else if (args_.secret[0] != '\0' && init.secret[0] == '\0') {
		err = MEMIF_ERR_NOSECRET;
		reason = "Secret required";
	} else if (args_.secret[0] != '\0' &&
		   !secrets_equal(reinterpret_cast<const char *>(args_.secret), init.secret)) {
		err = MEMIF_ERR_SECRET;
		reason = "Incorrect secret";
	}
	if (err != MEMIF_ERR_SUCCESS) {
		// Refuse the channel; an already connected interface keeps its own connection.
		Message refusal;
		refusal.type = MessageType::disconnect;
		refusal.disconnect.code = uint32_t(err);
		copy_string_to_field(reason, refusal.disconnect.reason, kReasonSize);
		send_message(channel.get(), refusal);
		database_.unwatch(channel.get());
		if (err != MEMIF_ERR_ALRCONN)
			record_error(err, reason);
		return err;
	}
	database_.rebind(channel.get(), Database::FdKind::control, this);
	control_ = std::move(channel);
	copy_field_to_string(init.name, kNameSize, remote_app_name_);
	state_ = State::handshake;
	regions_.clear();
	datapath_.bounds_.clear();
	datapath_.s2m_.clear();
	datapath_.m2s_.clear();
	for (size_t i = 0; i < args_.num_s2m_rings; ++i)
		datapath_.s2m_.emplace_back(&database_.allocator());
	for (size_t i = 0; i < args_.num_m2s_rings; ++i)
		datapath_.m2s_.emplace_back(&database_.allocator());
	Message ack;
	ack.type = MessageType::ack;
	err = send(ack);
	if (err != MEMIF_ERR_SUCCESS)
		fail(err, "Failed to send ACK");
	return err;
}

int Connection::handle_control_event(uint8_t events)
{
	if (!control_.valid())
		return MEMIF_ERR_NOCONN;
	ReceivedMessage received;
	const char *reason = "Malformed message";
	int err = (events & MEMIF_FD_EVENT_READ) != 0 ? receive_message(control_.get(), received, &reason)
						      : MEMIF_ERR_DISCONNECTED;
	if (err == MEMIF_ERR_AGAIN) {
		if ((events & MEMIF_FD_EVENT_ERROR) == 0)
			return MEMIF_ERR_SUCCESS;
		err = MEMIF_ERR_DISCONNECTED;
	}
	if (err == MEMIF_ERR_DISCONNECTED) {
		disconnect(err, "Peer closed the connection", false, true);
		return err;
	}
	if (err != MEMIF_ERR_SUCCESS) {
		fail(err, reason);
		return err;
	}
	return handle_message(received);
}

int Connection::handle_message(ReceivedMessage &received)
{
	const Message &message = received.message;
	if (message.type == MessageType::disconnect) {
		char reason[kReasonSize + 1];
		copy_field_to_string(message.disconnect.reason, kReasonSize, reason);
		disconnect(MEMIF_ERR_DISCONNECT, reason, false, true);
		return MEMIF_ERR_DISCONNECT;
	}
	// Only ADD_REGION and ADD_RING may carry a descriptor; anything else passed is closed.
	const bool carries_fd = message.type == MessageType::add_region || message.type == MessageType::add_ring;
	if (!carries_fd)
		received.fd.reset();

	int err = MEMIF_ERR_SUCCESS;
	const char *reason = "Unexpected message";
	if (!is_master()) {
		if (state_ == State::await_hello && message.type == MessageType::hello)
			return client_handle_hello(message.hello);
		if (state_ == State::handshake && message.type == MessageType::ack)
			return client_send_next();
		if (state_ == State::await_connect && message.type == MessageType::connected)
			return client_handle_connected(message.name);
		err = MEMIF_ERR_MFMSG;
	} else if (state_ == State::handshake) {
		switch (message.type) {
		case MessageType::add_region:
			return server_handle_add_region(message.add_region, std::move(received.fd));
		case MessageType::add_ring:
			return server_handle_add_ring(message.add_ring, std::move(received.fd));
		case MessageType::connect:
			return server_handle_connect(message.name);
		default:
			err = MEMIF_ERR_MFMSG;
		}
	} else {
		err = MEMIF_ERR_MFMSG;
	}
	fail(err, reason);
	return err;
}

int Connection::client_handle_hello(const HelloMessage &hello)
{
	copy_field_to_string(hello.name, kNameSize, remote_app_name_);
	if (hello.min_version > kProtocolVersion || hello.max_version < kProtocolVersion) {
		fail(MEMIF_ERR_PROTO, "Incompatible memif version");
		return MEMIF_ERR_PROTO;
	}
	if (hello.max_region < kBufferRegion) {
		fail(MEMIF_ERR_MAXREG, "Peer accepts too few regions");
		return MEMIF_ERR_MAXREG;
	}
	// HELLO's maxima are indexes: the peer takes max + 1 rings of each kind.
	const uint16_t num_s2m = uint16_t(std::min<uint32_t>(args_.num_s2m_rings, uint32_t(hello.max_s2m_ring) + 1));
	const uint16_t num_m2s = uint16_t(std::min<uint32_t>(args_.num_m2s_rings, uint32_t(hello.max_m2s_ring) + 1));
	const uint8_t log2_ring_size = std::min(args_.log2_ring_size, hello.max_log2_ring_size);
	if (log2_ring_size == 0) {
		fail(MEMIF_ERR_MAX_RING, "Peer accepts no ring size");
		return MEMIF_ERR_MAX_RING;
	}
	int err = client_create_regions_and_rings(num_s2m, num_m2s, log2_ring_size);
	if (err != MEMIF_ERR_SUCCESS) {
		fail(err, "Failed to create shared memory");
		return err;
	}

	outbox_.clear();
	outbox_next_ = 0;
	Outgoing init{};
	init.message.type = MessageType::init;
	init.message.init.version = kProtocolVersion;
	init.message.init.id = args_.interface_id;
	init.message.init.mode = uint8_t(args_.mode);
	std::memcpy(init.message.init.secret, args_.secret, kSecretSize);
	copy_string_to_field(database_.app_name(), init.message.init.name, kNameSize);
	init.fd = -1;
	outbox_.push_back(init);
	for (size_t i = 0; i < regions_.size(); ++i) {
		Outgoing region{};
		region.message.type = MessageType::add_region;
		region.message.add_region.index = uint16_t(i);
		region.message.add_region.size = regions_[i].size;
		region.fd = regions_[i].fd.get();
		outbox_.push_back(region);
	}
	for (int s2m = 1; s2m >= 0; --s2m) {
		const DbVector<Queue> &queues = s2m != 0 ? datapath_.s2m_ : datapath_.m2s_;
		for (size_t i = 0; i < queues.size(); ++i) {
			Outgoing ring{};
			ring.message.type = MessageType::add_ring;
			ring.message.add_ring.flags = s2m != 0 ? kRingFlagS2M : 0;
			ring.message.add_ring.index = uint16_t(i);
			ring.message.add_ring.region = queues[i].region;
			ring.message.add_ring.offset = queues[i].offset;
			ring.message.add_ring.log2_ring_size = queues[i].log2_ring_size;
			ring.fd = queues[i].event_fd.get();
			outbox_.push_back(ring);
		}
	}
	Outgoing connect{};
	connect.message.type = MessageType::connect;
	std::memcpy(connect.message.name.if_name, args_.interface_name, kNameSize);
	connect.fd = -1;
	outbox_.push_back(connect);

	state_ = State::handshake;
	return client_send_next();
}

int Connection::client_send_next()
{
	const Outgoing &next = outbox_[outbox_next_++];
	if (outbox_next_ == outbox_.size())
		state_ = State::await_connect;
	const int err = send(next.message, next.fd);
	if (err != MEMIF_ERR_SUCCESS)
		fail(err, "Failed to send a handshake message");
	return err;
}

int Connection::client_create_regions_and_rings(uint16_t num_s2m, uint16_t num_m2s, uint8_t log2_ring_size)
{
	release_shared_memory();
	const uint16_t ring_size = uint16_t(1u << log2_ring_size);
	const size_t rings = size_t(num_s2m) + num_m2s;
	const uint64_t ring_area = rings * ring_bytes(log2_ring_size);
	const uint64_t buffer_area = uint64_t(args_.buffer_size) * ring_size * rings;

	regions_.emplace_back();
	int err = create_memfd_region("memif region 0", ring_area, regions_.back());
	if (err != MEMIF_ERR_SUCCESS) {
		regions_.clear();
		return err;
	}
	regions_.emplace_back();
	Region &buffers = regions_.back();
	if (database_.add_external_region() != nullptr) {
		void *addr = nullptr;
		int fd = -1;
		if (database_.add_external_region()(&addr, uint32_t(buffer_area), &fd, database_.private_ctx()) != 0 ||
		    addr == nullptr || fd < 0) {
			regions_.pop_back();
			return MEMIF_ERR_NOMEM;
		}
		buffers.addr = static_cast<uint8_t *>(addr);
		buffers.size = buffer_area;
		buffers.fd.reset(fd);
		buffers.external = true;
	} else {
		err = create_memfd_region("memif region 1", buffer_area, buffers);
		if (err != MEMIF_ERR_SUCCESS) {
			regions_.pop_back();
			return err;
		}
	}
	for (const Region &region : regions_)
		datapath_.bounds_.push_back(RegionBounds{region.addr, region.size});

	uint32_t ring_index = 0;
	for (int s2m = 1; s2m >= 0; --s2m) {
		DbVector<Queue> &queues = s2m != 0 ? datapath_.s2m_ : datapath_.m2s_;
		const uint16_t count = s2m != 0 ? num_s2m : num_m2s;
		for (uint16_t i = 0; i < count; ++i, ++ring_index) {
			queues.emplace_back(&database_.allocator());
			Queue &queue = queues.back();
			queue.log2_ring_size = log2_ring_size;
			queue.ring_size = ring_size;
			queue.region = 0;
			queue.offset = uint32_t(ring_index * ring_bytes(log2_ring_size));
			queue.ring = reinterpret_cast<RingHeader *>(regions_[0].addr + queue.offset);
			queue.event_fd.reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
			if (!queue.event_fd.valid())
				return errno_to_memif(errno);
			queue.buffer_offsets.resize(ring_size);
			RingHeader *ring = queue.ring;
			ring->cookie = kCookie;
			ring->flags = 0;
			ring->head = 0;
			ring->tail = 0;
			for (uint16_t slot = 0; slot < ring_size; ++slot) {
				const uint32_t offset =
				    uint32_t((uint64_t(ring_index) * ring_size + slot) * args_.buffer_size);
				queue.buffer_offsets[slot] = offset;
				ring->desc[slot] = Descriptor{0, kBufferRegion, args_.buffer_size, offset, 0};
			}
		}
	}
	return MEMIF_ERR_SUCCESS;
}

int Connection::client_handle_connected(const NameMessage &connected)
{
	copy_field_to_string(connected.if_name, kNameSize, remote_if_name_);
	for (DbVector<Queue> *queues : {&datapath_.s2m_, &datapath_.m2s_}) {
		for (Queue &queue : *queues) {
			store_release(queue.ring->head, 0);
			queue.last_head = queue.last_tail = queue.allocated = queue.peer_index = 0;
		}
	}
	for (size_t qid = 0; qid < datapath_.m2s_.size(); ++qid) {
		const bool polling = datapath_.polling(qid);
		store_relaxed(datapath_.m2s_[qid].ring->flags, polling ? kRingFlagMaskInt : 0);
	}
	const int err = register_interrupts();
	if (err != MEMIF_ERR_SUCCESS) {
		fail(err, "Failed to watch interrupt fds");
		return err;
	}
	state_ = State::connected;
	datapath_.active_ = true;
	record_error(MEMIF_ERR_SUCCESS, "");
	if (on_connect_ != nullptr)
		on_connect_(this, private_ctx_); // last use of `this`: the callback may delete us
	return MEMIF_ERR_SUCCESS;
}

int Connection::server_handle_add_region(const AddRegionMessage &message, UniqueFd fd)
{
	int err = MEMIF_ERR_SUCCESS;
	const char *reason = nullptr;
	if (message.index > kMaxRegionIndex) {
		err = MEMIF_ERR_MAXREG;
		reason = "Region index out of range";
	} else if (message.index != regions_.size()) {
		err = MEMIF_ERR_MFMSG;
		reason = "Invalid region index";
	} else if (!fd.valid()) {
		err = MEMIF_ERR_NO_SHMFD;
		reason = "Missing region fd";
	} else if (message.size == 0) {
		err = MEMIF_ERR_MFMSG;
		reason = "Empty region";
	}
	if (err != MEMIF_ERR_SUCCESS) {
		fail(err, reason);
		return err;
	}
	regions_.emplace_back();
	regions_.back().size = message.size;
	regions_.back().fd = std::move(fd);
	Message ack;
	ack.type = MessageType::ack;
	err = send(ack);
	if (err != MEMIF_ERR_SUCCESS)
		fail(err, "Failed to send ACK");
	return err;
}

int Connection::server_handle_add_ring(const AddRingMessage &message, UniqueFd fd)
{
	const bool s2m = (message.flags & kRingFlagS2M) != 0;
	DbVector<Queue> &queues = s2m ? datapath_.s2m_ : datapath_.m2s_;
	int err = MEMIF_ERR_SUCCESS;
	const char *reason = nullptr;
	if (message.index >= queues.size()) {
		err = MEMIF_ERR_MAXRING;
		reason = "Invalid ring index";
	} else if (queues[message.index].present) {
		err = MEMIF_ERR_MFMSG;
		reason = "Duplicate ring index";
	} else if (!fd.valid()) {
		err = MEMIF_ERR_NO_INTFD;
		reason = "Missing interrupt fd";
	} else if (message.private_hdr_size != 0) {
		err = MEMIF_ERR_PRIVHDR;
		reason = "Private headers not supported";
	} else if (message.log2_ring_size > kMaxLog2RingSize) {
		err = MEMIF_ERR_MAX_RING;
		reason = "Ring size too large";
	}
	if (err != MEMIF_ERR_SUCCESS) {
		fail(err, reason);
		return err;
	}
	Queue &queue = queues[message.index];
	queue.present = true;
	queue.log2_ring_size = message.log2_ring_size;
	queue.ring_size = uint16_t(1u << message.log2_ring_size);
	queue.region = message.region;
	queue.offset = message.offset;
	queue.event_fd = std::move(fd);
	Message ack;
	ack.type = MessageType::ack;
	err = send(ack);
	if (err != MEMIF_ERR_SUCCESS)
		fail(err, "Failed to send ACK");
	return err;
}

int Connection::server_map_regions_and_rings()
{
	for (size_t i = 0; i < regions_.size(); ++i) {
		Region &region = regions_[i];
		struct stat info {};
		if (fstat(region.fd.get(), &info) < 0 || uint64_t(info.st_size) < region.size) {
			record_error(MEMIF_ERR_MFMSG, "Region larger than its file");
			return MEMIF_ERR_MFMSG;
		}
		if (i != 0 && database_.get_external_region_addr() != nullptr) {
			if (region.size > UINT32_MAX) {
				record_error(MEMIF_ERR_MFMSG, "External region too large");
				return MEMIF_ERR_MFMSG;
			}
			void *addr = database_.get_external_region_addr()(uint32_t(region.size), region.fd.get(),
									  database_.private_ctx());
			if (addr == nullptr) {
				record_error(MEMIF_ERR_NOMEM, "External region not available");
				return MEMIF_ERR_NOMEM;
			}
			region.addr = static_cast<uint8_t *>(addr);
			region.external = true;
		} else {
			void *addr = mmap(nullptr, region.size, PROT_READ | PROT_WRITE, MAP_SHARED, region.fd.get(), 0);
			if (addr == MAP_FAILED) {
				const int err = errno_to_memif(errno);
				record_error(err, "Failed to map a region");
				return err;
			}
			region.addr = static_cast<uint8_t *>(addr);
		}
	}
	datapath_.bounds_.clear();
	for (const Region &region : regions_)
		datapath_.bounds_.push_back(RegionBounds{region.addr, region.size});

	for (DbVector<Queue> *queues : {&datapath_.s2m_, &datapath_.m2s_}) {
		// The client may offer fewer rings than we allow; it must offer them from index 0 on.
		size_t present = 0;
		while (present < queues->size() && (*queues)[present].present)
			++present;
		for (size_t i = present; i < queues->size(); ++i) {
			if ((*queues)[i].present) {
				record_error(MEMIF_ERR_MFMSG, "Ring indexes not contiguous");
				return MEMIF_ERR_MFMSG;
			}
		}
		if (present == 0) {
			record_error(MEMIF_ERR_MFMSG, "No ring in one direction");
			return MEMIF_ERR_MFMSG;
		}
		queues->erase(queues->begin() + ptrdiff_t(present), queues->end());
		for (Queue &queue : *queues) {
			if (queue.region >= regions_.size() ||
			    uint64_t(queue.offset) + ring_bytes(queue.log2_ring_size) > regions_[queue.region].size) {
				record_error(MEMIF_ERR_MFMSG, "Ring outside its region");
				return MEMIF_ERR_MFMSG;
			}
			if (queue.offset % alignof(RingHeader) != 0) { // the indexes are accessed atomically
				record_error(MEMIF_ERR_MFMSG, "Ring misaligned");
				return MEMIF_ERR_MFMSG;
			}
			queue.ring = reinterpret_cast<RingHeader *>(regions_[queue.region].addr + queue.offset);
			if (std::atomic_ref<uint32_t>(queue.ring->cookie).load(std::memory_order_relaxed) != kCookie) {
				record_error(MEMIF_ERR_COOKIE, "Wrong ring cookie");
				return MEMIF_ERR_COOKIE;
			}
		}
	}
	return MEMIF_ERR_SUCCESS;
}

int Connection::server_handle_connect(const NameMessage &connect)
{
	copy_field_to_string(connect.if_name, kNameSize, remote_if_name_);
	int err = server_map_regions_and_rings();
	if (err != MEMIF_ERR_SUCCESS) {
		char reason[kReasonSize + 1];
		std::memcpy(reason, reason_, sizeof reason);
		fail(err, reason);
		return err;
	}
	for (DbVector<Queue> *queues : {&datapath_.s2m_, &datapath_.m2s_}) {
		for (Queue &queue : *queues) {
			store_release(queue.ring->tail, 0);
			queue.last_head = queue.last_tail = queue.allocated = queue.peer_index = 0;
		}
	}
	for (size_t qid = 0; qid < datapath_.s2m_.size(); ++qid) {
		const bool polling = datapath_.polling(qid);
		store_relaxed(datapath_.s2m_[qid].ring->flags, polling ? kRingFlagMaskInt : 0);
	}
	err = register_interrupts();
	if (err != MEMIF_ERR_SUCCESS) {
		fail(err, "Failed to watch interrupt fds");
		return err;
	}
	Message connected;
	connected.type = MessageType::connected;
	std::memcpy(connected.name.if_name, args_.interface_name, kNameSize);
	err = send(connected);
	if (err != MEMIF_ERR_SUCCESS) {
		fail(err, "Failed to send CONNECTED");
		return err;
	}
	state_ = State::connected;
	datapath_.active_ = true;
	record_error(MEMIF_ERR_SUCCESS, "");
	if (on_connect_ != nullptr)
		on_connect_(this, private_ctx_); // last use of `this`
	return MEMIF_ERR_SUCCESS;
}

int Connection::register_interrupts()
{
	if (on_interrupt_ == nullptr)
		return MEMIF_ERR_SUCCESS;
	DbVector<Queue> &queues = datapath_.rx_queues();
	for (size_t qid = 0; qid < queues.size(); ++qid) {
		const int err =
		    database_.watch(queues[qid].event_fd.get(), Database::FdKind::interrupt, this, uint16_t(qid));
		if (err != MEMIF_ERR_SUCCESS) {
			for (size_t undo = 0; undo < qid; ++undo)
				database_.unwatch(queues[undo].event_fd.get());
			return err;
		}
	}
	interrupts_registered_ = true;
	return MEMIF_ERR_SUCCESS;
}

void Connection::release_shared_memory()
{
	if (interrupts_registered_) {
		for (Queue &queue : datapath_.rx_queues())
			if (queue.event_fd.valid())
				database_.unwatch(queue.event_fd.get());
		interrupts_registered_ = false;
	}
	datapath_.clear(); // before the regions its rings point into go
	for (Region &region : regions_) {
		if (region.external) {
			if (database_.del_external_region() != nullptr)
				database_.del_external_region()(region.addr, uint32_t(region.size), region.fd.get(),
								database_.private_ctx());
			// The client's external fd belongs to the application; a received one is ours.
			if (!is_master())
				region.fd.release();
		} else if (region.addr != nullptr) {
			munmap(region.addr, region.size);
		}
	}
	regions_.clear();
	outbox_.clear();
	outbox_next_ = 0;
}

void Connection::disconnect(int error, const char *reason, bool send_reason, bool notify)
{
	const bool was_connected = state_ == State::connected;
	if (control_.valid()) {
		if (send_reason) {
			Message message;
			message.type = MessageType::disconnect;
			message.disconnect.code = uint32_t(error);
			copy_string_to_field(reason, message.disconnect.reason, kReasonSize);
			send(message);
		}
		database_.unwatch(control_.get());
		control_.reset();
	}
	release_shared_memory();
	state_ = State::idle;
	record_error(error, reason);
	if (notify && was_connected && on_disconnect_ != nullptr)
		on_disconnect_(this, private_ctx_); // last use of `this`
}

int Connection::handle_interrupt(uint16_t qid)
{
	if (on_interrupt_ == nullptr)
		return MEMIF_ERR_SUCCESS;
	return on_interrupt_(this, private_ctx_, qid);
}

// --- queries ----------------------------------------------------------------------------------

int Connection::get_details(memif_details_t *md, char *buf, ssize_t buflen) const
{
	std::memset(md, 0, sizeof *md);
	size_t used = 0;
	const size_t capacity = buflen > 0 ? size_t(buflen) : 0;
	bool fits = true;
	auto take = [&](size_t size, size_t alignment) -> char * {
		const size_t start = (used + alignment - 1) / alignment * alignment;
		if (start + size > capacity) {
			fits = false;
			return nullptr;
		}
		used = start + size;
		return buf + start;
	};
	auto put_string = [&](const char *text, size_t max) -> uint8_t * {
		const size_t length = strnlen(text, max);
		char *out = take(length + 1, 1);
		if (out == nullptr)
			return nullptr;
		std::memcpy(out, text, length);
		out[length] = '\0';
		return reinterpret_cast<uint8_t *>(out);
	};
	md->if_name = put_string(reinterpret_cast<const char *>(args_.interface_name), kNameSize);
	md->inst_name = put_string(database_.app_name(), kNameSize);
	md->remote_if_name = put_string(remote_if_name_, kNameSize);
	md->remote_inst_name = put_string(remote_app_name_, kNameSize);
	md->id = args_.interface_id;
	if (args_.secret[0] != '\0')
		md->secret = put_string(reinterpret_cast<const char *>(args_.secret), kSecretSize);
	md->role = is_master() ? 0 : 1;
	md->mode = uint8_t(args_.mode);
	md->socket_filename = put_string(socket_.filename(), sizeof(sockaddr_un::sun_path));
	md->error = put_string(reason_, kReasonSize);
	md->link_up_down = connected() ? 1 : 0;
	if (connected()) {
		md->regions_num = uint8_t(std::min<size_t>(regions_.size(), 255));
		auto *regions = reinterpret_cast<memif_region_details_t *>(
		    take(sizeof(memif_region_details_t) * md->regions_num, alignof(memif_region_details_t)));
		if (regions != nullptr) {
			for (size_t i = 0; i < md->regions_num; ++i)
				regions[i] =
				    memif_region_details_t{uint8_t(i), regions_[i].addr, uint32_t(regions_[i].size),
							   regions_[i].fd.get(), uint8_t(regions_[i].external)};
		}
		md->regions = regions;
		auto describe = [&](const DbVector<Queue> &queues, uint8_t &count) -> memif_queue_details_t * {
			count = uint8_t(std::min<size_t>(queues.size(), 255));
			auto *out = reinterpret_cast<memif_queue_details_t *>(
			    take(sizeof(memif_queue_details_t) * count, alignof(memif_queue_details_t)));
			if (out == nullptr)
				return nullptr;
			for (size_t i = 0; i < count; ++i) {
				const Queue &queue = queues[i];
				memif_queue_details_t &details = out[i];
				details.region = uint8_t(queue.region);
				details.qid = uint8_t(i);
				details.ring_size = queue.ring_size;
				details.flags = (load_relaxed(queue.ring->flags) & kRingFlagMaskInt) != 0
						    ? MEMIF_QUEUE_FLAG_POLLING
						    : 0;
				details.head = load_relaxed(queue.ring->head);
				details.tail = load_relaxed(queue.ring->tail);
				details.buffer_size = args_.buffer_size;
			}
			return out;
		};
		md->rx_queues = describe(datapath_.rx_queues(), md->rx_queues_num);
		md->tx_queues = describe(datapath_.tx_queues(), md->tx_queues_num);
	}
	return fits ? MEMIF_ERR_SUCCESS : MEMIF_ERR_NOBUF_DET;
}

} // namespace softdpu::memif
